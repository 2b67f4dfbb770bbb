/*
 * fuzz_ddb: libFuzzer target for what DynamoDB (or anything at its
 * endpoint) answers, and for request bodies built around a fuzzed lock
 * name.
 *
 * The first byte picks: an UpdateItem or GetItem answer, an error body
 * (JSON or XML), a table description, a request with the rest as the
 * lock name, a Scan answer, a Scan request with the rest as its cursor, or
 * a channel's answer (ddb_parse_chan); a first byte of 128 or more that
 * would pick the UpdateItem answer picks a BatchGetItem answer of the
 * sweep (ddb_batch_answer, the fast reader first and cJSON alone: the same
 * verdict, message, read marks and items).
 * Contracts checked: every string of a parsed item or error is
 * NUL-terminated within its field; a successful UpdateItem parse has an
 * item; a built body is JSON whose key is "LOCK#" + the name, byte for
 * byte; a refused name or cursor comes with a message; a Scan page has at
 * most its limit of entries, lock names of 1..STORE_NAME_MAX bytes, and a
 * printable cursor that a next Scan request takes. Answers and errors are
 * read twice, by the public readers (the fast reader of ddb_json_fast.c
 * first) and by cJSON's alone: both must give the same verdict, message
 * and item.
 */
#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/ddb_json.h"
#include "core/store/dynamodb/ddb_json_int.h"
#include "core/store/store_batch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort(); /* a broken contract is the finding */
}

static void check_item(const struct lock_item *it)
{
	check(strnlen(it->owner, sizeof it->owner) < sizeof it->owner);
	check(strnlen(it->rvn, sizeof it->rvn) < sizeof it->rvn);
	check(strnlen(it->holder, sizeof it->holder) < sizeof it->holder);
	check(strnlen(it->type, sizeof it->type) < sizeof it->type);
	check(!it->has_lease || it->lease_ms > 0);
	check(!it->freed_forced || it->freed != 0);
}

/* A channel's answer (a GetItem's, or a publish's UpdateItem's): at most
 * STORE_CHAN_KEEP entries, each its message within bounds and its origin
 * a NUL-terminated string of at most STORE_ID_MAX bytes; never more
 * entries than messages counted; a refusal says BadResponse. */
static void fuzz_chan_answer(const char *body, size_t n, unsigned get)
{
	static unsigned char rows[STORE_CHAN_KEEP][DDB_CHAN_ROW];
	struct store_chan_result r = {.status = STORE_OK};
	unsigned total = 0;
	if (!ddb_parse_chan(body, n, get, &r, rows, &total)) {
		check(r.status == STORE_FATAL && r.n == 0 && total == 0);
		return;
	}
	check(r.n <= STORE_CHAN_KEEP && r.n <= total && (int64_t)total <= r.seq);
	check(r.found || (r.n == 0 && r.seq == 0));
	for (unsigned i = 0; i < r.n; i++) {
		check(r.e[i].len <= STORE_CHAN_MSG_MAX);
		check(strnlen(r.e[i].origin, STORE_ID_MAX + 1) <= STORE_ID_MAX);
		if (r.e[i].len > 0)
			check(((const unsigned char *)r.e[i].data)[r.e[i].len - 1] ==
			      rows[i][r.e[i].len - 1]);
	}
}

static const struct ddb_keys scan_keys[2] = {{"Locks", "pk", NULL, NULL},
					     {"Locks", "pk", "sk", "exp"}};

static void fuzz_scan_answer(const char *body, size_t n, unsigned which)
{
	static struct store_scan_entry entries[4];
	static struct store_scan_result res;
	const struct ddb_keys *k = &scan_keys[which];
	char err[DDB_ERR_MAX] = "";
	res.entries = entries;
	if (!ddb_parse_scan(body, n, k, 4, &res, err)) {
		check(err[0] != '\0' && res.count == 0 && res.cursor[0] == '\0');
		return;
	}
	check(res.count <= 4);
	for (unsigned i = 0; i < res.count; i++) {
		size_t len = strnlen(entries[i].name, sizeof entries[i].name);
		check(len >= 1 && len <= STORE_NAME_MAX);
		check(entries[i].item.exists);
		check_item(&entries[i].item);
	}
	size_t len = strnlen(res.cursor, sizeof res.cursor);
	check(len <= STORE_CURSOR_MAX);
	for (size_t i = 0; i < len; i++)
		check(res.cursor[i] >= 0x20 && res.cursor[i] <= 0x7e);
	if (len > 0) {
		size_t blen;
		char *next = ddb_build_scan(k, res.cursor, 4, &blen, err);
		check(next != NULL);
		ddb_body_free(next);
	}
}

static void fuzz_scan_cursor(const char *cursor, unsigned which)
{
	char err[DDB_ERR_MAX] = "";
	size_t len = 0;
	char *body = ddb_build_scan(&scan_keys[which], cursor, 10, &len, err);
	if (!body) {
		check(err[0] != '\0');
		return;
	}
	cJSON *root = cJSON_ParseWithLength(body, len);
	check(root != NULL);
	check(cJSON_GetObjectItemCaseSensitive(root, "ExclusiveStartKey") != NULL ||
	      cursor[0] == '\0');
	cJSON_Delete(root);
	ddb_body_free(body);
}

static void fuzz_name(const char *name, size_t n)
{
	struct ddb_keys k = {"Locks", "pk", "sk", "exp"};
	struct store_req r = {.op = STORE_ACQUIRE,
			      .name = name,
			      .owner = "o",
			      .rvn = "r",
			      .lease_ms = 1000,
			      .ttl = 5};
	char err[DDB_ERR_MAX] = "";
	size_t len = 0;
	char *body = ddb_build_request(&k, &r, &len, err);
	if (!body) {
		check(err[0] != '\0');
		return;
	}
	check(n >= 1 && n <= STORE_NAME_MAX);
	cJSON *root = cJSON_ParseWithLength(body, len);
	check(root != NULL);
	const cJSON *pk = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "Key"),
						 "pk"),
		"S");
	check(cJSON_IsString(pk));
	check(strncmp(pk->valuestring, "LOCK#", 5) == 0 && strcmp(pk->valuestring + 5, name) == 0);
	cJSON_Delete(root);
	ddb_body_free(body);
}

/* A BatchGetItem answer for four names, read by both readers from the
 * same start (which: the first name already read, as in a second round). */
static void fuzz_batch_answer(const char *body, size_t n, unsigned which)
{
	static const char *const names[4] = {"a", "b", "jobs/42", "c"};
	static struct store_batch_entry e[2][4];
	struct store_batch_result r[2];
	char err[2][DDB_ERR_MAX] = {"", ""};
	bool ok[2], done[2];
	for (unsigned k = 0; k < 2; k++) {
		memset(e[k], 0, sizeof e[k]); /* as store_batch_read does */
		for (unsigned i = 0; i < 4; i++)
			e[k][i].name = names[i], e[k][i].read = which && i == 0;
		r[k] = (struct store_batch_result){.entries = e[k], .count = 4};
		ok[k] = ddb_batch_answer(&r[k], &scan_keys[1], body, n, k == 0, &done[k], err[k]);
	}
	check(ok[0] == ok[1] && done[0] == done[1] && (ok[0] || strcmp(err[0], err[1]) == 0));
	check(ok[0] || err[0][0] != '\0');
	for (unsigned i = 0; i < 4; i++) {
		check(e[0][i].read == e[1][i].read);
		check(memcmp(&e[0][i].item, &e[1][i].item, sizeof e[0][i].item) == 0);
		if (ok[0] && e[0][i].read && e[0][i].item.exists)
			check_item(&e[0][i].item);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned pick = data[0] % 8, which = data[0] / 8 % 2;
	const char *body = (const char *)data + 1;
	size_t n = size - 1;
	char err[DDB_ERR_MAX] = "";
	/* parsers take a length, but a copy with a NUL keeps strstr-style
	 * misuse visible to ASan */
	char *copy = malloc(n + 1);
	if (!copy)
		return 0;
	memcpy(copy, body, n);
	copy[n] = '\0';
	if (pick == 0 && data[0] >= 128) {
		fuzz_batch_answer(copy, n, which);
	} else if (pick == 0 || pick == 1) {
		struct lock_item it;
		enum ddb_op op = pick == 0 ? DDB_UPDATE_ITEM : DDB_GET_ITEM;
		bool ok = ddb_parse_output(op, copy, n, "exp", &it, err);
		struct lock_item slow;
		char serr[DDB_ERR_MAX] = "";
		check(ddb_parse_output_cjson(op, copy, n, "exp", &slow, serr) == ok);
		check(strcmp(err, serr) == 0);
		check(!ok || memcmp(&it, &slow, sizeof it) == 0);
		if (ok) {
			check_item(&it);
			check(op != DDB_UPDATE_ITEM || it.exists);
		} else {
			check(err[0] != '\0');
		}
	} else if (pick == 2) {
		struct ddb_error e;
		bool ok = ddb_parse_error(copy, n, "exp", &e, err);
		static struct ddb_error slow;
		char serr[DDB_ERR_MAX] = "";
		check(ddb_parse_error_cjson(copy, n, "exp", &slow, serr) == ok);
		check(strcmp(err, serr) == 0 && strcmp(e.type, slow.type) == 0 &&
		      strcmp(e.message, slow.message) == 0 && e.has_item == slow.has_item &&
		      e.nreasons == slow.nreasons);
		check(!ok || !e.has_item || memcmp(&e.item, &slow.item, sizeof e.item) == 0);
		check(strnlen(e.type, sizeof e.type) < sizeof e.type);
		check(strnlen(e.message, sizeof e.message) < sizeof e.message);
		check(e.nreasons <= DDB_REASONS_MAX);
		if (ok) {
			if (e.has_item)
				check_item(&e.item);
			for (unsigned i = 0; i < e.nreasons; i++)
				if (e.reasons[i].has_item)
					check_item(&e.reasons[i].item);
		} else {
			check(err[0] != '\0');
		}
	} else if (pick == 3) {
		struct ddb_table_desc d;
		if (ddb_parse_table(copy, n, &d, err)) {
			check(d.pk[0] != '\0');
			check(strnlen(d.pk, sizeof d.pk) < sizeof d.pk);
			check(strnlen(d.sk, sizeof d.sk) < sizeof d.sk);
			check(strnlen(d.status, sizeof d.status) < sizeof d.status);
		}
	} else if (pick == 4 && strlen(copy) == n) {
		fuzz_name(copy, n);
	} else if (pick == 5) {
		fuzz_scan_answer(copy, n, which);
	} else if (pick == 6 && strlen(copy) == n) {
		fuzz_scan_cursor(copy, which);
	} else if (pick == 7) {
		fuzz_chan_answer(copy, n, which);
	}
	free(copy);
	return 0;
}
