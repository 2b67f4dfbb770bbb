/*
 * store_memory_retention.c: the embedded store forgets released items after
 * the retention, as DynamoDB's TTL deletes expired lock items (see
 * store_memory_int.h: the lists of released items, one per stamp of the
 * sweep timer); the table itself is store_memory.c's.
 */
#include "core/store/store_memory_int.h"

#include <stdlib.h>
#include <string.h>

int64_t mem_sweep_tick(const struct mstore *ms)
{
	int64_t tick = ms->retention_ms / 8;
	return tick > 10 ? tick : 10;
}

/* The list of released items of the stamp, made when there is none; on
 * out-of-memory the newest list, its stamp raised to this one if lower
 * (its items then forgotten later, never early). ngens > 0 or room for one
 * (gens_cap >= FREED_GENS_MIN). */
static struct freed_gen *gen_of(struct mstore *ms, int64_t stamp)
{
	size_t i = ms->ngens;
	while (i > 0 && ms->gens[i - 1].stamp > stamp)
		i--;
	if (i > 0 && ms->gens[i - 1].stamp == stamp)
		return &ms->gens[i - 1];
	if (ms->ngens == ms->gens_cap) {
		struct freed_gen *g = realloc(ms->gens, 2 * ms->gens_cap * sizeof(*g));
		if (g == NULL) {
			g = &ms->gens[ms->ngens - 1];
			if (g->stamp < stamp)
				g->stamp = stamp;
			return g;
		}
		ms->gens = g;
		ms->gens_cap *= 2;
	}
	memmove(&ms->gens[i + 1], &ms->gens[i], (ms->ngens - i) * sizeof(*ms->gens));
	ms->ngens++;
	ms->gens[i] = (struct freed_gen){.stamp = stamp};
	return &ms->gens[i];
}

static void gen_append(struct freed_gen *g, struct mitem *it)
{
	it->in_freed = true;
	it->fprev = g->tail;
	it->fnext = NULL;
	if (g->tail != NULL)
		g->tail->fnext = it;
	else
		g->head = it;
	g->tail = it;
}

/* The item was released: stamped now (give or take a tick) and, unless it
 * is in a list already (acquired since it was put there), put in the
 * newest. */
void mem_freed_link(struct mstore *ms, struct mitem *it)
{
	if (ms->ngens == 0 && ms->retention_ms > 0 && !timer_armed(&ms->sweep)) {
		ms->stamp_ms = clock_now_ms(ms->clock) + mem_sweep_tick(ms);
		timer_arm(&ms->sweep, mem_sweep_tick(ms));
	}
	it->freed_ms = ms->stamp_ms;
	if (!it->in_freed)
		gen_append(gen_of(ms, ms->stamp_ms), it);
}

/* Takes the item out of its list of released items, if in one. */
void mem_freed_unlink(struct mstore *ms, struct mitem *it)
{
	if (!it->in_freed)
		return;
	it->in_freed = false;
	struct freed_gen *g = NULL; /* needed only at an end of its list */
	for (size_t i = 0; i < ms->ngens && (it->fprev == NULL || it->fnext == NULL) && g == NULL;
	     i++)
		if (ms->gens[i].head == it || ms->gens[i].tail == it)
			g = &ms->gens[i];
	if (it->fprev != NULL)
		it->fprev->fnext = it->fnext;
	else
		g->head = it->fnext;
	if (it->fnext != NULL)
		it->fnext->fprev = it->fprev;
	else
		g->tail = it->fprev;
}

/* Forgets the items released for the retention or longer (by now), as
 * DynamoDB's TTL deletes expired lock items: a forgotten lock starts its
 * fencing token at 1 again. Held items are never forgotten. Each list
 * whose stamp is due is emptied: its items acquired since leave it (a
 * release puts them back), those released again since move to the list
 * of their last release, the others are forgotten. */
void mem_forget_released(struct mstore *ms, int64_t now)
{
	while (ms->ngens > 0 && now - ms->gens[0].stamp >= ms->retention_ms) {
		struct mitem *it = ms->gens[0].head, *next;
		ms->ngens--;
		memmove(&ms->gens[0], &ms->gens[1], ms->ngens * sizeof(*ms->gens));
		for (; it != NULL; it = next) {
			next = it->fnext;
			it->in_freed = false;
			if (it->owner[0] != '\0' || (it->rare != NULL && it->rare->scount > 0))
				continue; /* held, or a slot of it: its release links it again */
			if (now - it->freed_ms >= ms->retention_ms) {
				mem_item_delete(ms, mem_find_slot(ms, it->name, it->hash));
				ms->forgotten++;
			} else {
				gen_append(gen_of(ms, it->freed_ms), it);
			}
		}
	}
}

/* The sweep timer: forgets what is due, ticks on while anything waits. */
void mem_sweep_due(void *arg)
{
	struct mstore *ms = arg;
	int64_t now = clock_now_ms(ms->clock);
	mem_forget_released(ms, now);
	ms->stamp_ms = now + mem_sweep_tick(ms);
	if (ms->ngens > 0)
		timer_arm(&ms->sweep, mem_sweep_tick(ms));
}
