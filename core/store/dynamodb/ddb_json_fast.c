/*
 * ddb_json_fast.c: the answers of the hot path (a renewal's UpdateItem, a
 * GetItem, a refusal's error with its Item, the replica sweep's
 * BatchGetItem of 100 lock items) read straight from the bytes,
 * without a cJSON tree: building and freeing that tree cost some forty
 * allocations and more CPU than the rest of reading the answer.
 *
 * It reads only the plain form DynamoDB writes (ddb_json_int.h): the whole
 * body is checked against that form first, then its attributes go, in
 * order, to ddb_item_attr(), the reader cJSON's path uses too. A body in
 * any other form, well-formed or not, is left to cJSON (DDB_FAST_OTHER),
 * which refuses or reads it as it always did. So this file decides nothing
 * about what a body means, and refuses nothing cJSON would read: every
 * body it reads is JSON that cJSON reads into the same members.
 */
#include "core/store/dynamodb/ddb_json_int.h"

#include <string.h>

#define FAST_MEMBERS 4 /* members of the top-level object */

/* A string of the body, not NUL-terminated. */
struct span {
	const char *p;
	size_t n;
};

/* A member of the top-level object: a string, or an attribute map (the
 * attributes doc->attrs[first .. first + count)). */
struct member {
	struct span name;
	bool is_map;
	struct span str;
	unsigned first, count;
};

struct doc {
	const char *p, *end;
	struct member m[FAST_MEMBERS];
	unsigned nm;
	struct ddb_attr attrs[DDB_FAST_ATTRS];
	unsigned na;
};

/* JSON's four whitespace bytes (cJSON skips any byte up to 32: such a body
 * is cJSON's) */
static void ws(struct doc *d)
{
	while (d->p < d->end && (*d->p == ' ' || *d->p == '\n' || *d->p == '\r' || *d->p == '\t'))
		d->p++;
}

/* Skips whitespace, then takes c. */
static bool take(struct doc *d, char c)
{
	ws(d);
	if (d->p == d->end || *d->p != c)
		return false;
	d->p++;
	return true;
}

/* Whitespace, then the next byte without taking it (0 at the end). */
static char peek(struct doc *d)
{
	ws(d);
	return d->p < d->end ? *d->p : 0;
}

/* A string without escapes and control characters (a NUL included). */
static bool string(struct doc *d, struct span *s)
{
	if (!take(d, '"'))
		return false;
	s->p = d->p;
	while (d->p < d->end) {
		unsigned char c = (unsigned char)*d->p;
		if (c == '"') {
			s->n = (size_t)(d->p - s->p);
			d->p++;
			return true;
		}
		if (c < 0x20 || c == '\\')
			return false;
		d->p++;
	}
	return false; /* cut short */
}

/* {"type": "value"} into a. */
static bool typed_value(struct doc *d, struct ddb_attr *a)
{
	struct span t, v;
	if (!take(d, '{') || !string(d, &t) || !take(d, ':') || !string(d, &v) || !take(d, '}'))
		return false;
	a->type = t.p, a->tlen = t.n;
	a->val = v.p, a->vlen = v.n;
	return true;
}

/* An attribute map, {} or {"name": {"type": "value"}, ...}, into
 * d->attrs. */
static bool attr_map(struct doc *d, struct member *m)
{
	m->is_map = true;
	m->first = d->na;
	if (!take(d, '{'))
		return false;
	if (peek(d) == '}')
		return take(d, '}');
	do {
		if (d->na == DDB_FAST_ATTRS)
			return false;
		struct ddb_attr *a = &d->attrs[d->na];
		struct span n;
		if (!string(d, &n) || !take(d, ':') || !typed_value(d, a))
			return false;
		a->name = n.p, a->nlen = n.n;
		d->na++;
		m->count++;
	} while (take(d, ','));
	return take(d, '}');
}

/* The whole body: an object of string and attribute-map members, then
 * whitespace to its end. */
static bool scan(struct doc *d, const char *body, size_t len)
{
	*d = (struct doc){.p = body, .end = body + len};
	if (!body || !take(d, '{'))
		return false;
	if (peek(d) != '}') {
		do {
			if (d->nm == FAST_MEMBERS)
				return false;
			struct member *m = &d->m[d->nm++];
			*m = (struct member){0};
			if (!string(d, &m->name) || !take(d, ':'))
				return false;
			bool ok = peek(d) == '"' ? string(d, &m->str) : attr_map(d, m);
			if (!ok)
				return false;
		} while (take(d, ','));
	}
	if (!take(d, '}'))
		return false;
	ws(d);
	return d->p == d->end;
}

static bool span_is(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* The member named name, or NULL; a name given twice is not the plain
 * form (cJSON would take the first). */
static const struct member *find(const struct doc *d, const char *name, bool *twice)
{
	const struct member *found = NULL;
	for (unsigned i = 0; i < d->nm; i++)
		if (span_is(d->m[i].name, name)) {
			*twice |= found != NULL;
			found = &d->m[i];
		}
	return found;
}

bool ddb_item_read(const struct ddb_attr *attrs, unsigned n, const char *ttl_attr,
		   struct lock_item *item, char *err)
{
	memset(item, 0, sizeof *item);
	item->exists = true;
	for (unsigned i = 0; i < n; i++)
		if (!ddb_item_attr(item, &attrs[i], ttl_attr, err))
			return false;
	return ddb_item_end(item, err);
}

/* The attributes of map m into *item, as ddb_parse_item() reads them. */
static bool read_item(const struct doc *d, const struct member *m, const char *ttl_attr,
		      struct lock_item *item, char *err)
{
	return ddb_item_read(&d->attrs[m->first], m->count, ttl_attr, item, err);
}

enum ddb_fast ddb_fast_output(enum ddb_op op, const char *body, size_t len, const char *ttl_attr,
			      struct lock_item *item, char *err)
{
	const char *member = op == DDB_UPDATE_ITEM ? "Attributes"
			     : op == DDB_GET_ITEM  ? "Item"
						   : NULL;
	struct doc d;
	if (!member || !scan(&d, body, len))
		return DDB_FAST_OTHER;
	if (d.nm == 0 && op == DDB_GET_ITEM) {
		memset(item, 0, sizeof *item); /* no item */
		return DDB_FAST_OK;
	}
	if (d.nm != 1 || !d.m[0].is_map || !span_is(d.m[0].name, member))
		return DDB_FAST_OTHER;
	return read_item(&d, &d.m[0], ttl_attr, item, err) ? DDB_FAST_OK : DDB_FAST_REFUSED;
}

enum ddb_fast ddb_fast_error(const char *body, size_t len, const char *ttl_attr,
			     struct ddb_error *out, char *err)
{
	static const char *const known[] = {"__type", "message", "Message", "Item"};
	struct doc d;
	if (!scan(&d, body, len))
		return DDB_FAST_OTHER;
	const struct member *m[4];
	bool twice = false;
	for (unsigned i = 0; i < 4; i++)
		m[i] = find(&d, known[i], &twice);
	unsigned nknown = (m[0] != NULL) + (m[1] != NULL) + (m[2] != NULL) + (m[3] != NULL);
	if (twice || nknown != d.nm || (m[0] && m[0]->is_map) || (m[1] && m[1]->is_map) ||
	    (m[2] && m[2]->is_map) || (m[3] && !m[3]->is_map))
		return DDB_FAST_OTHER;
	memset(out, 0, sizeof *out);
	if (m[0])
		ddb_error_set_type(out, m[0]->str.p, m[0]->str.n);
	const struct member *msg = m[1] ? m[1] : m[2];
	if (msg)
		ddb_copy_text(out->message, sizeof out->message, msg->str.p, msg->str.n);
	if (!m[3])
		return DDB_FAST_OK;
	out->has_item = read_item(&d, m[3], ttl_attr, &out->item, err);
	return out->has_item ? DDB_FAST_OK : DDB_FAST_REFUSED;
}

/* A scan of a BatchGetItem answer: each item goes to each (NULL: the form
 * is only checked). */
struct batch_scan {
	const char *table;
	ddb_fast_item_fn each;
	void *arg;
	char *err;
	bool refused; /* each said no */
};

/* [] or [{attribute map}, ...], each item to s->each as it ends. */
static bool item_list(struct doc *d, struct batch_scan *s)
{
	if (!take(d, '['))
		return false;
	if (peek(d) == ']')
		return take(d, ']');
	do {
		struct member m = {0};
		d->na = 0; /* one item's attributes at a time */
		if (!attr_map(d, &m))
			return false;
		if (s->each != NULL && !s->each(s->arg, d->attrs, m.count, s->err)) {
			s->refused = true;
			return false;
		}
	} while (take(d, ','));
	return take(d, ']');
}

/* {"<table>": [items]}: the one table asked for, and no other. */
static bool responses(struct doc *d, struct batch_scan *s)
{
	struct span t;
	return take(d, '{') && string(d, &t) && span_is(t, s->table) && take(d, ':') &&
	       item_list(d, s) && take(d, '}');
}

/* The whole body: "Responses" once, "UnprocessedKeys" at most once and
 * {}, nothing else, then whitespace to its end. */
static bool scan_batch(struct doc *d, const char *body, size_t len, struct batch_scan *s)
{
	*d = (struct doc){.p = body, .end = body + len};
	bool seen[2] = {false, false}; /* Responses, UnprocessedKeys */
	if (body == NULL || !take(d, '{'))
		return false;
	do {
		struct span n;
		if (!string(d, &n) || !take(d, ':'))
			return false;
		unsigned k = span_is(n, "Responses") ? 0 : span_is(n, "UnprocessedKeys") ? 1 : 2;
		if (k == 2 || seen[k])
			return false;
		seen[k] = true;
		bool ok = k == 0 ? responses(d, s) : take(d, '{') && take(d, '}');
		if (!ok)
			return false;
	} while (take(d, ','));
	if (!seen[0] || !take(d, '}'))
		return false;
	ws(d);
	return d->p == d->end;
}

enum ddb_fast ddb_fast_batch(const char *body, size_t len, const char *table, ddb_fast_item_fn each,
			     void *arg, char *err)
{
	struct doc d;
	struct batch_scan s = {.table = table, .err = err};
	if (table == NULL || !scan_batch(&d, body, len, &s))
		return DDB_FAST_OTHER;
	/* the form holds to the end: now the items, in order */
	s.each = each, s.arg = arg;
	return scan_batch(&d, body, len, &s) ? DDB_FAST_OK : DDB_FAST_REFUSED;
}
