/*
 * obs: counting and dispatch of the core's events and lock metrics.
 */
#include "core/obs.h"

#include <string.h>

static const enum obs_level levels[OBS_EVENT_COUNT] = {
	[OBS_LEASE_LOST - OBS_FIRST_ID] = OBS_WARN,
	[OBS_TAKEOVER - OBS_FIRST_ID] = OBS_INFO,
	[OBS_RENEW_RETRY - OBS_FIRST_ID] = OBS_WARN,
	[OBS_RELEASE_FAILED - OBS_FIRST_ID] = OBS_WARN,
	[OBS_CONTEND_FAILED - OBS_FIRST_ID] = OBS_WARN,
	[OBS_LEADS - OBS_FIRST_ID] = OBS_INFO,
	[OBS_NO_LONGER_LEADS - OBS_FIRST_ID] = OBS_INFO,
	[OBS_WORK_AFTER_LOSS - OBS_FIRST_ID] = OBS_DEBUG,
	[OBS_WORK_AFTER_CANCEL - OBS_FIRST_ID] = OBS_DEBUG,
	[OBS_CONTEND_RECOVERED - OBS_FIRST_ID] = OBS_INFO,
	[OBS_SESSION_STARTED - OBS_FIRST_ID] = OBS_INFO,
	[OBS_SESSION_ENDED - OBS_FIRST_ID] = OBS_WARN,
};

static const char *const level_names[] = {"debug", "info", "warning", "error"};

enum obs_level obs_event_level(enum obs_event_id id)
{
	unsigned i = (unsigned)id - OBS_FIRST_ID;
	return i < OBS_EVENT_COUNT ? levels[i] : OBS_ERROR;
}

const char *obs_level_name(enum obs_level level)
{
	return (unsigned)level <= OBS_ERROR ? level_names[level] : "?";
}

void obs_emit(struct obs *o, struct obs_event *ev)
{
	unsigned i = (unsigned)ev->id - OBS_FIRST_ID;
	ev->level = obs_event_level(ev->id);
	if (o == NULL)
		return;
	if (i < OBS_EVENT_COUNT)
		o->events[i]++;
	if (o->sink != NULL)
		o->sink(o->ctx, ev);
}

void obs_count(struct obs_labeled *c, const char *label)
{
	for (unsigned i = 0; i < c->n; i++) {
		if (strcmp(c->label[i], label) == 0) {
			c->count[i]++;
			return;
		}
	}
	if (c->n == OBS_LABELS_MAX) {
		c->other++;
		return;
	}
	c->label[c->n] = label;
	c->count[c->n++] = 1;
}

uint64_t obs_get(const struct obs_labeled *c, const char *label)
{
	for (unsigned i = 0; i < c->n; i++)
		if (strcmp(c->label[i], label) == 0)
			return c->count[i];
	return 0;
}
