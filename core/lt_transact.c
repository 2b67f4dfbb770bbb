/*
 * lt_transact: fenced transactions on a lease (see locktable.h and
 * core/store/store_tx.h). A transaction keeps the lease's name, owner and token,
 * not the lease: the lease may be released or lost while the transaction
 * is in flight, and the check at commit decides. When the check fails and
 * the lease is still this locktable's, it is lost as a renewal would lose
 * it, through the normal loss path. When a table of the transaction does
 * not exist (DynamoDB does not say which), one read of the lock tells
 * whether it is the lock table or the client's, for the message.
 * A shared holder's transaction (lt_sh_transact) keeps its slot and mode
 * too, and its lease until the lease is freed (lt_tx_sh_gone): a refused
 * check ends the lease if it is still there.
 */
#include "core/lease.h"
#include "core/lt_shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/store_tx.h"

struct lt_tx {
	struct lt_tx *prev, *next; /* in t->txs */
	struct locktable *t;
	struct store_call *call;
	lt_tx_cb cb;
	void *arg;
	int64_t token;
	char owner[STORE_ID_MAX + 1];
	struct store_tx_result *missing; /* while the lock is read (probe) */
	/* a shared holder's: its mode and slot, and its lease until freed */
	bool shared;
	enum store_sh_mode mode;
	unsigned slot;
	struct sh_lease *sh;
	char name[];
};

static void unlink_tx(struct lt_tx *tx)
{
	if (tx->prev != NULL)
		tx->prev->next = tx->next;
	else
		tx->t->txs = tx->next;
	if (tx->next != NULL)
		tx->next->prev = tx->prev;
}

/* Why the check failed, as a renewal refused by item would say. */
static enum lt_loss loss_of(const struct lt_tx *tx, const struct lock_item *item)
{
	if (!item->exists)
		return LT_DELETED;
	if (item->freed == tx->token)
		return item->freed_forced ? LT_FORCED : LT_RELEASED;
	return LT_TAKEN_OVER;
}

static void tx_end(struct lt_tx *tx, const struct lt_tx_result *r)
{
	lt_tx_cb cb = tx->cb;
	void *cb_arg = tx->arg;
	free(tx->missing);
	free(tx);
	cb(cb_arg, r);
}

/* The message of a missing table, once the read of the lock (res) has
 * told whether the lock table is there. */
static void missing_error(const struct lt_tx *tx, const struct store_result *res,
			  struct lt_error *e)
{
	const struct store_tx_result *m = tx->missing;
	const char *lock = tx->t->store->table,
		   *what = m->ntables > 1 ? "one of the tables" : "table";
	e->status = STORE_FATAL;
	e->error_type = "ResourceNotFoundException";
	if (res->status == STORE_OK || res->status == STORE_REFUSED)
		snprintf(e->message, sizeof(e->message),
			 "fenced write: %s %.110s not found (DynamoDB TransactWriteItems: %.96s); "
			 "the "
			 "lock table '%.64s' is there",
			 what, m->tables, m->message, lock);
	else if (res->status == STORE_NO_TABLE) {
		e->status = STORE_NO_TABLE;
		snprintf(e->message, sizeof(e->message),
			 "fenced write: the lock table '%.64s' not found (DynamoDB "
			 "TransactWriteItems: %.96s; %s %.110s not checked)",
			 lock, m->message, what, m->tables);
	} else
		snprintf(e->message, sizeof(e->message),
			 "fenced write: %s %.64s or the lock table '%.64s' not found (DynamoDB "
			 "TransactWriteItems: %.64s; reading the lock to tell which failed: %.40s)",
			 what, m->tables, lock, m->message, res->message);
}

static void on_probe(void *arg, const struct store_result *res)
{
	struct lt_tx *tx = arg;
	struct lt_error err;
	unlink_tx(tx);
	missing_error(tx, res, &err);
	struct lt_tx_result r = {.status = LT_TX_ERROR, .err = &err};
	tx_end(tx, &r);
}

/* A table of the transaction is missing: the lock table when the items
 * name no other, else one read of the lock tells (the transaction stays
 * linked, its call the read's). False when the read cannot be sent. */
static bool probe_missing(struct lt_tx *tx, const struct store_tx_result *res)
{
	if (res->ntables == 0 || (tx->missing = malloc(sizeof(*tx->missing))) == NULL)
		return false;
	*tx->missing = *res;
	tx->missing->reasons = NULL;
	struct store_req req = {.op = STORE_READ, .name = tx->name};
	tx->call = store_submit(tx->t->store, &req, on_probe, tx);
	return tx->call != NULL;
}

/* The check refused tx at commit (res: the item that refused it, or
 * absent; a shared holder's: which check): the loss, the lease that is
 * still this locktable's ended through its normal path (its callbacks
 * run). */
static enum lt_loss lost(struct lt_tx *tx, const struct store_tx_result *res)
{
	const struct lock_item *item = &res->item;
	bool header = res->check == 0;
	if (tx->shared)
		return tx->sh != NULL ? sh_lease_refused(tx->sh, item, header)
				      : lt_sh_refusal_loss(item, header);
	struct lease *l = lt_local_lease(tx->t, tx->name);
	if (l != NULL && lease_token(l) == tx->token && strcmp(lease_owner(l), tx->owner) == 0)
		return lt_lease_refused(l, item);
	return loss_of(tx, item);
}

static void on_tx(void *arg, const struct store_tx_result *res)
{
	struct lt_tx *tx = arg;
	struct locktable *t = tx->t;
	struct lt_tx_result r = {.status = LT_TX_OK};
	struct lt_error err;
	if (res->status == STORE_NO_TABLE && probe_missing(tx, res))
		return;
	unlink_tx(tx);
	switch (res->status) {
	case STORE_OK:
		break;
	case STORE_REFUSED:
		if (res->index > 0) {
			r.status = LT_TX_CANCELLED;
			r.index = res->index;
			r.reasons = res->reasons;
			break;
		}
		r.status = LT_TX_LOST;
		r.loss = lost(tx, res);
		break;
	default: {
		struct store_result sr = {.status = res->status, .error_type = res->error_type};
		memcpy(sr.message, res->message, sizeof(sr.message));
		lt_error_from(&err, t, tx->name, &sr);
		if (res->status == STORE_NO_TABLE && res->ntables == 0)
			snprintf(err.message, sizeof(err.message),
				 "fenced write: the lock table '%.64s' not found (DynamoDB "
				 "TransactWriteItems: %.200s)",
				 t->store->table, res->message);
		r.status = LT_TX_ERROR;
		r.err = &err;
	}
	}
	tx_end(tx, &r);
}

/* A transaction of the lease (name, owner, token) of t, not sent nor
 * linked yet; NULL on out-of-memory. */
static struct lt_tx *tx_new(struct locktable *t, const char *name, const char *owner, int64_t token,
			    lt_tx_cb cb, void *arg)
{
	size_t nlen = strlen(name);
	struct lt_tx *tx = calloc(1, sizeof(*tx) + nlen + 1);
	if (tx == NULL)
		return NULL;
	tx->t = t;
	tx->cb = cb;
	tx->arg = arg;
	tx->token = token;
	snprintf(tx->owner, sizeof(tx->owner), "%s", owner);
	memcpy(tx->name, name, nlen + 1);
	return tx;
}

/* Sends tx's transaction of the client's items and links it; false (tx
 * freed) on out-of-memory. */
static bool tx_send(struct lt_tx *tx, const char *items, size_t len, const char *client_token)
{
	struct locktable *t = tx->t;
	struct store_tx_req req = {
		.name = tx->name,
		.owner = tx->owner,
		.token = tx->token,
		.shared = tx->shared,
		.mode = tx->mode,
		.slot = tx->slot,
		.items = items,
		.items_len = len,
		.client_token = client_token,
	};
	tx->call = store_transact(t->store, &req, on_tx, tx);
	if (tx->call == NULL) {
		free(tx);
		return false;
	}
	tx->next = t->txs;
	if (t->txs != NULL)
		t->txs->prev = tx;
	t->txs = tx;
	return true;
}

struct lt_tx *lt_transact(struct lease *l, const char *items, size_t len, const char *client_token,
			  lt_tx_cb cb, void *arg)
{
	struct lt_tx *tx = tx_new(l->t, l->lock->name, l->owner, l->token, cb, arg);
	return tx != NULL && tx_send(tx, items, len, client_token) ? tx : NULL;
}

struct lt_tx *lt_sh_transact(struct sh_lease *l, const char *items, size_t len,
			     const char *client_token, lt_tx_cb cb, void *arg)
{
	struct lt_tx *tx = tx_new(sh_lease_table(l), sh_lease_name(l), sh_lease_owner(l),
				  sh_lease_token(l), cb, arg);
	if (tx == NULL)
		return NULL;
	tx->shared = true;
	tx->mode = sh_lease_mode(l);
	tx->slot = sh_lease_slot(l);
	tx->sh = l;
	return tx_send(tx, items, len, client_token) ? tx : NULL;
}

void lt_tx_sh_gone(struct locktable *t, const struct sh_lease *l)
{
	for (struct lt_tx *tx = t->txs; tx != NULL; tx = tx->next)
		if (tx->sh == l)
			tx->sh = NULL;
}

void lt_transact_cancel(struct lt_tx *tx)
{
	if (tx == NULL)
		return;
	unlink_tx(tx);
	store_cancel(tx->t->store, tx->call);
	free(tx->missing);
	free(tx);
}

void lt_tx_free_all(struct locktable *t)
{
	while (t->txs != NULL)
		lt_transact_cancel(t->txs);
}
