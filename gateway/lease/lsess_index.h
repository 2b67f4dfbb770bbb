/*
 * lsess_index: a session's records by name, so that finding one costs the
 * same whether the session holds one lease or 100,000 (a scan of the list
 * cost a strcmp per lease held on every command and every answer: at
 * 100,000 leases on 100 connections, most of the gateway's CPU).
 *
 * Buckets of records chained through ls_rec.hnext, newest first as the
 * session's list is, so that a lookup finds the record the scan found;
 * made once a session has more than a few records (fewer are scanned:
 * hashing costs more than that scan). It never fails: a table that cannot grow keeps its size
 * (longer chains), and a session whose first table could not be made is scanned.
 */
#ifndef LG_LSESS_INDEX_H
#define LG_LSESS_INDEX_H

#include <stdint.h>

#include "gateway/lease/lsess.h"

struct ls_rec;

struct ls_index {
	struct ls_rec **slot; /* cap buckets; NULL: no table (scan the list) */
	unsigned cap, n;
};

/* Adds rec, the newest record of its session (the head of newest). */
void ls_index_add(struct ls_index *x, struct ls_rec *rec, struct ls_rec *newest);
void ls_index_del(struct ls_index *x, struct ls_rec *rec);
/* The newest record of kind and name (token 0: any token), from newest's
 * list when x has no table; NULL when none. */
struct ls_rec *ls_index_find(const struct ls_index *x, struct ls_rec *newest, enum ls_kind kind,
			     const char *name, int64_t token);
void ls_index_free(struct ls_index *x);

#endif
