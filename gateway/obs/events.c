/*
 * events: the core's events in the gateway's words (events.h).
 */
#include "gateway/obs/events.h"

#include <stdio.h>
#include <string.h>

const char *events_reason(enum obs_event_id id, const char *r)
{
	if (r == NULL)
		return NULL;
	if (id == OBS_NO_LONGER_LEADS) {
		if (strcmp(r, "work_returned") == 0)
			return "resigned";
		if (strcmp(r, "cancelled") == 0)
			return "session_ended";
	}
	return r;
}

/* What a reason means, for the message. */
static const char *reason_words(const char *r)
{
	static const struct {
		const char *reason, *words;
	} words[] = {
		{"taken_over", "another holder took the lock over"},
		{"deleted", "the lock's item was deleted"},
		{"expired", "the lease ran out before a renewal succeeded"},
		{"table_not_found", "the table is gone"},
		{"forced", "an operator released it (LOCK.FORCE-RELEASE)"},
		{"session", "this replica's heartbeat session was marked dead or deleted (every "
			    "lease held in it is lost)"},
		{"lease_lost", "its lease was lost"},
		{"resigned", "it resigned (LEADER.RESIGN)"},
		{"session_ended", "its session closed or stopped campaigning"},
	};
	for (size_t i = 0; r != NULL && i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(words[i].reason, r) == 0)
			return words[i].words;
	return r != NULL ? r : "";
}

static const char *str_or(const char *str)
{
	return str != NULL ? str : "?";
}

static void field(struct event_line *l, struct log_field f)
{
	if (l->n < EVENTS_FIELDS_MAX && (f.str != NULL || f.key[0] != '?'))
		l->f[l->n++] = f;
}

void events_describe(const struct obs_event *ev, const struct ls_who *who, struct event_line *l)
{
	char s[320] = "a client session";
	const char *lock = ev->lock != NULL ? ev->lock : "?";
	const char *reason = events_reason(ev->id, ev->reason);
	if (who != NULL) {
		int n = snprintf(s, sizeof(s), "session %llu", (unsigned long long)who->id);
		if (who->client[0] != '\0' || who->name[0] != '\0')
			snprintf(s + n, sizeof(s) - (size_t)n, " (%s%s%s%s)", who->client,
				 who->client[0] && who->name[0] ? ", " : "",
				 who->name[0] ? "name=" : "", who->name);
	}
	char *m = l->msg;
	size_t mz = sizeof(l->msg);
	switch (ev->id) {
	case OBS_LEASE_LOST:
		snprintf(m, mz, "%s lost its lease on %s: %s", s, lock, reason_words(reason));
		break;
	case OBS_TAKEOVER:
		snprintf(m, mz, "%s took %s over from holder %s, which had stopped renewing it", s,
			 lock, ev->prev_holder != NULL ? ev->prev_holder : "(unnamed)");
		break;
	case OBS_RENEW_RETRY:
		snprintf(m, mz,
			 "renewing the lease of %s on %s failed; trying again in %lld ms until the "
			 "lease runs out",
			 s, lock, (long long)ev->wait_ms);
		break;
	case OBS_RELEASE_FAILED:
		snprintf(m, mz,
			 "releasing the lease of %s on %s failed; the lock is free once the lease "
			 "runs out",
			 s, lock);
		break;
	case OBS_CONTEND_FAILED:
		snprintf(m, mz,
			 "%s could not contend for %s (DynamoDB failed); contending again in %lld "
			 "ms "
			 "(logged once until DynamoDB answers)",
			 s, lock, (long long)ev->wait_ms);
		break;
	case OBS_LEADS:
		snprintf(m, mz, "%s leads %s, token %lld", s, lock, (long long)ev->token);
		break;
	case OBS_NO_LONGER_LEADS:
		snprintf(m, mz, "%s no longer leads %s: %s", s, lock, reason_words(reason));
		break;
	case OBS_CONTEND_RECOVERED:
		snprintf(m, mz,
			 "contending for %s works again: DynamoDB answered after %lld ms and %lld "
			 "retries",
			 lock, (long long)ev->wait_ms, (long long)ev->retries);
		break;
	case OBS_SESSION_STARTED:
		snprintf(m, mz,
			 "replica %s started its heartbeat session %s: leases taken from now on "
			 "are held in it (--heartbeat replica)",
			 str_or(ev->replica), str_or(ev->hb_session));
		break;
	case OBS_SESSION_ENDED:
		snprintf(m, mz,
			 "replica %s's heartbeat session %s ended (%s): its %lld leases held are "
			 "lost; the next acquire starts a new session",
			 str_or(ev->replica), str_or(ev->hb_session), str_or(ev->detail),
			 (long long)ev->leases);
		break;
	default:
		snprintf(m, mz, "event %d on %s", (int)ev->id, lock);
	}
	l->n = 0;
	field(l, LOG_NUM("event_id", ev->id));
	field(l, LOG_STR("?lock", ev->lock));
	field(l, LOG_STR("?table", ev->table));
	if (who != NULL) {
		field(l, LOG_NUM("session", (long long)who->id));
		field(l, LOG_STR("?client", who->client[0] ? who->client : NULL));
		field(l, LOG_STR("?client_name", who->name[0] ? who->name : NULL));
	}
	field(l, LOG_STR("?holder", ev->holder));
	field(l, LOG_STR("?previous_holder", ev->prev_holder));
	if (ev->token > 0)
		field(l, LOG_NUM("token", ev->token));
	field(l, LOG_STR("?reason", reason));
	field(l, LOG_STR("?error_type", ev->error_type));
	field(l, LOG_STR("?error", ev->message));
	if (ev->id == OBS_RENEW_RETRY || ev->id == OBS_CONTEND_FAILED)
		field(l, LOG_NUM("retry_in_ms", ev->wait_ms));
	if (ev->id == OBS_CONTEND_RECOVERED) {
		field(l, LOG_NUM("outage_ms", ev->wait_ms));
		field(l, LOG_NUM("retries", ev->retries));
	}
	field(l, LOG_STR("?heartbeat_session", ev->hb_session));
	field(l, LOG_STR("?replica_id", ev->replica));
	if (ev->id == OBS_SESSION_ENDED)
		field(l, LOG_NUM("leases_lost", ev->leases));
}
