/*
 * lsess_index: a session's records by name (lsess_index.h).
 */
#include "gateway/lease/lsess_index.h"

#include <stdlib.h>
#include <string.h>

#include "gateway/lease/lsess_int.h"

#define FIRST_CAP 16
/* A session with at most this many records is scanned, with no table: the
 * common case (a client holding a lease or two) pays no hashing. */
#define SCAN_MAX 8

static uint32_t hash_of(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void push(struct ls_rec **slot, unsigned cap, struct ls_rec *rec)
{
	struct ls_rec **b = &slot[rec->hash & (cap - 1)];
	rec->hnext = *b;
	*b = rec;
}

/* A table of cap buckets for every record, oldest pushed first so that
 * each chain ends newest first. False (x unchanged) on out-of-memory. */
static int rebuild(struct ls_index *x, unsigned cap, struct ls_rec *newest)
{
	struct ls_rec **slot = calloc(cap, sizeof *slot);
	if (slot == NULL)
		return 0;
	struct ls_rec *r = newest;
	while (r != NULL && r->next != NULL)
		r = r->next;
	for (; r != NULL; r = r->prev) {
		r->hash = hash_of(r->name);
		push(slot, cap, r);
	}
	free(x->slot);
	x->slot = slot;
	x->cap = cap;
	return 1;
}

void ls_index_add(struct ls_index *x, struct ls_rec *rec, struct ls_rec *newest)
{
	x->n++;
	if (x->slot == NULL && x->n <= SCAN_MAX)
		return; /* few: the list is scanned */
	rec->hash = hash_of(rec->name);
	if (x->slot == NULL || x->n > x->cap) {
		/* rebuilt from the list, which holds rec already */
		if (rebuild(x, x->cap ? x->cap * 2 : FIRST_CAP, newest) || x->slot == NULL)
			return;
	}
	push(x->slot, x->cap, rec);
}

void ls_index_del(struct ls_index *x, struct ls_rec *rec)
{
	x->n--;
	if (x->slot == NULL)
		return;
	struct ls_rec **p = &x->slot[rec->hash & (x->cap - 1)];
	while (*p != NULL && *p != rec)
		p = &(*p)->hnext;
	if (*p != NULL)
		*p = rec->hnext;
	rec->hnext = NULL;
}

static int match(const struct ls_rec *r, enum ls_kind kind, const char *name, int64_t token)
{
	return r->kind == kind && (token == 0 || r->token == token) && strcmp(r->name, name) == 0;
}

struct ls_rec *ls_index_find(const struct ls_index *x, struct ls_rec *newest, enum ls_kind kind,
			     const char *name, int64_t token)
{
	if (x->slot == NULL) {
		for (struct ls_rec *r = newest; r != NULL; r = r->next)
			if (match(r, kind, name, token))
				return r;
		return NULL;
	}
	uint32_t h = hash_of(name);
	for (struct ls_rec *r = x->slot[h & (x->cap - 1)]; r != NULL; r = r->hnext)
		if (r->hash == h && match(r, kind, name, token))
			return r;
	return NULL;
}

void ls_index_free(struct ls_index *x)
{
	free(x->slot);
	memset(x, 0, sizeof *x);
}
