/*
 * lt_transact: fenced transactions on a lease (see locktable.h and
 * core/store_tx.h). A transaction keeps the lease's name, owner and token,
 * not the lease: the lease may be released or lost while the transaction
 * is in flight, and the check at commit decides. When the check fails and
 * the lease is still this locktable's, it is lost as a renewal would lose
 * it, through the normal loss path.
 */
#include "core/lease.h"

#include <stdlib.h>
#include <string.h>

#include "core/store_tx.h"

struct lt_tx {
	struct lt_tx *prev, *next; /* in t->txs */
	struct locktable *t;
	struct store_call *call;
	lt_tx_cb cb;
	void *arg;
	int64_t token;
	char owner[STORE_ID_MAX + 1];
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

static void on_tx(void *arg, const struct store_tx_result *res)
{
	struct lt_tx *tx = arg;
	struct locktable *t = tx->t;
	struct lt_tx_result r = {.status = LT_TX_OK};
	struct lt_error err;
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
		r.loss = loss_of(tx, &res->item);
		struct lease *l = lt_local_lease(t, tx->name);
		if (l != NULL && lease_token(l) == tx->token &&
		    strcmp(lease_owner(l), tx->owner) == 0)
			r.loss = lt_lease_refused(l, &res->item); /* its callbacks run */
		break;
	default: {
		struct store_result sr = {.status = res->status, .error_type = res->error_type};
		memcpy(sr.message, res->message, sizeof(sr.message));
		lt_error_from(&err, t, tx->name, &sr);
		r.status = LT_TX_ERROR;
		r.err = &err;
	}
	}
	lt_tx_cb cb = tx->cb;
	void *cb_arg = tx->arg;
	free(tx);
	cb(cb_arg, &r);
}

struct lt_tx *lt_transact(struct lease *l, const char *items, size_t len, lt_tx_cb cb, void *arg)
{
	struct locktable *t = l->t;
	size_t nlen = strlen(l->lock->name);
	struct lt_tx *tx = calloc(1, sizeof(*tx) + nlen + 1);
	if (tx == NULL)
		return NULL;
	tx->t = t;
	tx->cb = cb;
	tx->arg = arg;
	tx->token = l->token;
	memcpy(tx->owner, l->owner, sizeof(tx->owner));
	memcpy(tx->name, l->lock->name, nlen + 1);
	struct store_tx_req req = {
		.name = tx->name,
		.owner = tx->owner,
		.token = tx->token,
		.items = items,
		.items_len = len,
	};
	tx->call = store_transact(t->store, &req, on_tx, tx);
	if (tx->call == NULL) {
		free(tx);
		return NULL;
	}
	tx->next = t->txs;
	if (t->txs != NULL)
		t->txs->prev = tx;
	t->txs = tx;
	return tx;
}

void lt_transact_cancel(struct lt_tx *tx)
{
	if (tx == NULL)
		return;
	unlink_tx(tx);
	store_cancel(tx->t->store, tx->call);
	free(tx);
}

void lt_tx_free_all(struct locktable *t)
{
	while (t->txs != NULL)
		lt_transact_cancel(t->txs);
}
