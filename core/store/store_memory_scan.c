/*
 * store_memory_scan.c: the page of a scan of the embedded store (see
 * store_memory_int.h); the call itself is store_memory.c's.
 *
 * A scan lists the items in one order that does not depend on the table's
 * size: by their name's hash with its bits reversed, then by name. Bucket
 * b of a table of 2^k buckets holds exactly the items whose reversed hash
 * starts with the k bits of b reversed, so visiting the buckets in that
 * order and sorting each one's items gives the whole order. A page goes on
 * after its cursor, the last item of the page before (store_cursor_of its
 * name): never an item twice, and every item there from the first page to
 * the last, even when the table grows in between.
 */
#include "core/store/store_memory_int.h"

#include <stdlib.h>
#include <string.h>

static uint64_t bits_reversed(uint64_t x)
{
	x = (x >> 1 & 0x5555555555555555ull) | (x & 0x5555555555555555ull) << 1;
	x = (x >> 2 & 0x3333333333333333ull) | (x & 0x3333333333333333ull) << 2;
	x = (x >> 4 & 0x0f0f0f0f0f0f0f0full) | (x & 0x0f0f0f0f0f0f0f0full) << 4;
	return __builtin_bswap64(x);
}

static int scan_cmp(uint64_t ka, const char *na, uint64_t kb, const char *nb)
{
	if (ka != kb)
		return ka < kb ? -1 : 1;
	return strcmp(na, nb);
}

static int item_cmp(const void *a, const void *b)
{
	const struct mitem *x = *(const struct mitem *const *)a;
	const struct mitem *y = *(const struct mitem *const *)b;
	return scan_cmp(bits_reversed(x->hash), x->name, bits_reversed(y->hash), y->name);
}

/* The items after req.name (NULL: all), in scan order, at most limit.
 * Names longer than a lock name may be (no store_req with one passes the
 * core) are left out. */
bool mem_scan_page(struct mstore *ms, struct store_call *call)
{
	struct store_scan_result *res = call->page;
	const char *after = call->req.name;
	unsigned bits = (unsigned)__builtin_ctzll(ms->nbuckets); /* >= 10 */
	uint64_t after_key = after != NULL ? bits_reversed(call->hash) : 0;
	struct mitem **sorted = NULL, *last = NULL;
	size_t cap = 0;
	for (size_t j = (size_t)(after_key >> (64 - bits));
	     j < ms->nbuckets && res->count < call->limit; j++) {
		size_t n = 0;
		struct mitem *it = ms->buckets[bits_reversed(j) >> (64 - bits)];
		for (; it != NULL; it = it->next) {
			if (after != NULL &&
			    scan_cmp(bits_reversed(it->hash), it->name, after_key, after) <= 0)
				continue;
			if (n == cap) {
				size_t c = cap ? cap * 2 : 16;
				struct mitem **p = realloc(sorted, c * sizeof(*p));
				if (p == NULL) {
					free(sorted);
					return false;
				}
				sorted = p;
				cap = c;
			}
			sorted[n++] = it;
		}
		if (n > 1)
			qsort(sorted, n, sizeof(*sorted), item_cmp);
		for (size_t i = 0; i < n && res->count < call->limit; i++) {
			if (strlen(sorted[i]->name) > STORE_NAME_MAX)
				continue;
			struct store_scan_entry *e = &res->entries[res->count++];
			strcpy(e->name, sorted[i]->name);
			mem_copy_out(sorted[i], &e->item);
			last = sorted[i];
		}
	}
	free(sorted);
	if (res->count == call->limit)
		store_cursor_of(last->name, res->cursor);
	return true;
}
