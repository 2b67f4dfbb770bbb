/*
 * lt_scan: pages of the table's lock items for operators (LOCK.LIST
 * TABLE): store_scan, each item judged as lt_get_state judges one (items
 * that are no lock are left out) and shown as a struct lt_state.
 */
#include "core/lt_internal.h"

#include <stdlib.h>
#include <string.h>

struct lt_scan {
	struct lt_scan *prev, *next; /* in t->scans */
	struct locktable *t;
	struct store_call *call;
	lt_scan_cb cb;
	void *arg;
	struct lt_scan_entry *out;
	struct store_scan_result res; /* .entries: limit of them */
};

static void unlink_sc(struct lt_scan *sc)
{
	if (sc->prev != NULL)
		sc->prev->next = sc->next;
	else
		sc->t->scans = sc->next;
	if (sc->next != NULL)
		sc->next->prev = sc->prev;
}

static void sc_free(struct lt_scan *sc)
{
	free(sc->res.entries);
	free(sc->out);
	free(sc);
}

static void on_page(void *arg)
{
	struct lt_scan *sc = arg;
	struct store_scan_result *res = &sc->res;
	struct lt_error e;
	unsigned n = 0;
	sc->call = NULL;
	unlink_sc(sc);
	if (res->status != STORE_OK) {
		struct store_result r = {.status = res->status, .error_type = res->error_type};
		memcpy(r.message, res->message, sizeof(r.message));
		lt_error_from(&e, sc->t, "*", &r);
		sc->cb(sc->arg, NULL, 0, "", &e);
		sc_free(sc);
		return;
	}
	for (unsigned i = 0; i < res->count; i++) {
		const struct store_scan_entry *se = &res->entries[i];
		if (!se->item.exists ||
		    !lt_item_check(sc->t, se->name, &se->item, LT_ITEM_TO_SHOW, &e))
			continue;
		struct lt_scan_entry *o = &sc->out[n++];
		o->name = se->name;
		lt_state_of(sc->t, se->name, &se->item, &o->st);
	}
	sc->cb(sc->arg, sc->out, n, res->cursor, NULL);
	sc_free(sc);
}

struct lt_scan *lt_scan(struct locktable *t, const char *cursor, unsigned limit, lt_scan_cb cb,
			void *arg)
{
	if (limit == 0 || limit > STORE_SCAN_MAX)
		return NULL;
	struct lt_scan *sc = calloc(1, sizeof(*sc));
	if (sc == NULL)
		return NULL;
	sc->t = t;
	sc->cb = cb;
	sc->arg = arg;
	sc->res.entries = calloc(limit, sizeof(*sc->res.entries));
	sc->out = calloc(limit, sizeof(*sc->out));
	if (sc->res.entries == NULL || sc->out == NULL ||
	    (sc->call = store_scan(t->store, cursor, limit, &sc->res, on_page, sc)) == NULL) {
		sc_free(sc);
		return NULL;
	}
	sc->next = t->scans;
	if (t->scans != NULL)
		t->scans->prev = sc;
	t->scans = sc;
	return sc;
}

void lt_scan_cancel(struct lt_scan *sc)
{
	store_cancel(sc->t->store, sc->call);
	unlink_sc(sc);
	sc_free(sc);
}

void lt_scan_free_all(struct locktable *t)
{
	while (t->scans != NULL)
		lt_scan_cancel(t->scans);
}
