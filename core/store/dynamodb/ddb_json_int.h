/*
 * ddb_json_int.h: what the two readers of DynamoDB answers share, inside
 * core/dynamodb only (tests and the fuzz target use it too).
 *
 * An answer is read by the fast reader (ddb_json_fast.c) when it is in the
 * plain form DynamoDB writes for a lock item, else by cJSON
 * (ddb_json_parse.c). Both hand each attribute of an item, in the order of
 * the body, to ddb_item_attr(), so an item reads the same either way: the
 * fast reader only decides that a body is in its form, never what an
 * attribute means.
 */
#ifndef LG_DDB_JSON_INT_H
#define LG_DDB_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/store/dynamodb/ddb_json.h"

/* One attribute of an item, {"name": {"type": "value"}}. type and val are
 * NULL unless the attribute's value is an object of exactly one member
 * whose value is a string. The strings are not NUL-terminated and hold no
 * NUL byte. */
struct ddb_attr {
	const char *name, *type, *val;
	size_t nlen, tlen, vlen;
};

/* Reads one attribute into item (see ddb_parse_item for what it checks).
 * Returns false with a message in err on a wrong type, a bad number or an
 * oversized value of an attribute leasegate uses. */
bool ddb_item_attr(struct lock_item *item, const struct ddb_attr *a, const char *ttl_attr,
		   char *err) __attribute__((warn_unused_result));

/* The checks of a whole item, after its last attribute. */
bool ddb_item_end(struct lock_item *item, char *err) __attribute__((warn_unused_result));

/* What the fast reader made of a body. */
enum ddb_fast {
	DDB_FAST_OK,	  /* read: the result is final */
	DDB_FAST_REFUSED, /* read, and refused (message in err): final */
	DDB_FAST_OTHER,	  /* not in the fast reader's form: read it with cJSON */
};

/* ddb_parse_output() for a body in the plain form: a JSON object of one
 * member, "Attributes" (UpdateItem) or "Item" (GetItem), an attribute map
 * of at most DDB_FAST_ATTRS attributes each {"name":{"type":"value"}};
 * for GetItem also {}. Strings without escapes or control characters,
 * whitespace of JSON only, nothing after the object. Anything else, and
 * any other op, is DDB_FAST_OTHER; *item is then undefined. */
#define DDB_FAST_ATTRS 48
enum ddb_fast ddb_fast_output(enum ddb_op op, const char *body, size_t len, const char *ttl_attr,
			      struct lock_item *item, char *err)
	__attribute__((warn_unused_result));

/* ddb_parse_error() for a JSON body in the plain form: an object whose
 * members are "__type", "message" and "Message" (strings) and "Item" (an
 * attribute map as above), each at most once. Anything else (an XML body,
 * CancellationReasons...) is DDB_FAST_OTHER. */
enum ddb_fast ddb_fast_error(const char *body, size_t len, const char *ttl_attr,
			     struct ddb_error *out, char *err) __attribute__((warn_unused_result));

/* An item's attributes, in the order of the body, into *item: what
 * ddb_parse_item() does with a cJSON item (false with err as it). */
bool ddb_item_read(const struct ddb_attr *attrs, unsigned n, const char *ttl_attr,
		   struct lock_item *item, char *err) __attribute__((warn_unused_result));

/* Takes one item of a BatchGetItem answer (its n attributes); false with a
 * message in err stops the reading. */
typedef bool (*ddb_fast_item_fn)(void *arg, const struct ddb_attr *attrs, unsigned n, char *err);

/* A BatchGetItem answer in the plain form: an object of "Responses", whose
 * one member is table, an array of attribute maps (each as above), and at
 * most an "UnprocessedKeys" of {} (none left); no other member. The whole
 * body is checked first: DDB_FAST_OTHER (each never called) when it is
 * not in that form. Else each item, in order, goes to each: DDB_FAST_OK
 * when each took them all, DDB_FAST_REFUSED at the first it refused. */
enum ddb_fast ddb_fast_batch(const char *body, size_t len, const char *table, ddb_fast_item_fn each,
			     void *arg, char *err) __attribute__((warn_unused_result));

/* The cJSON readers alone (ddb_parse_output() and ddb_parse_error() try the
 * fast reader first): for tests and the fuzz target, which compare both. */
bool ddb_parse_output_cjson(enum ddb_op op, const char *body, size_t len, const char *ttl_attr,
			    struct lock_item *item, char *err) __attribute__((warn_unused_result));
bool ddb_parse_error_cjson(const char *body, size_t len, const char *ttl_attr,
			   struct ddb_error *out, char *err) __attribute__((warn_unused_result));

/* Shared by both readers of an error: "...#Type:..." -> "Type" into
 * e->type, and printable text (control characters as spaces, at most
 * cap-1 bytes). */
void ddb_error_set_type(struct ddb_error *e, const char *t, size_t n);
void ddb_copy_text(char *dst, size_t cap, const char *src, size_t n);

/* A BatchGetItem answer of the sweep's read into res (ddb_batch.c): each
 * item into the entry of its key, marked read, and, once all are taken,
 * every entry asked for and not left in UnprocessedKeys marked read; *done
 * when none was left. False with err (DDB_ERR_MAX) on a body that is no
 * JSON, no BatchGetItem answer, an item not asked for or a malformed one
 * (res is then partly filled). fast: the fast reader first, else cJSON
 * alone (the tests compare both). */
struct store_batch_result;
bool ddb_batch_answer(struct store_batch_result *res, const struct ddb_keys *keys, const char *body,
		      size_t len, bool fast, bool *done, char *err)
	__attribute__((warn_unused_result));

#endif
