/*
 * redis/pubsub: PUBLISH, SUBSCRIBE and UNSUBSCRIBE on this replica — the
 * wake-up channels of Redisson-style locks. A message reaches the
 * sessions of this replica subscribed to its channel, as Redis's
 * "message" push (RESP3) or array (RESP2); PUBLISH (and a script's, after
 * its commit: sr_config.publish) answers how many it reached.
 *
 * On a RESP2 connection subscribed to a channel only SUBSCRIBE,
 * UNSUBSCRIBE, PING, QUIT and RESET run (CMD_IN_SUBSCRIBED, as Redis).
 *
 * Not across replicas: a subscriber on another replica is not told. The
 * lock libraries that wait on a channel wait with a timeout (Redisson:
 * the lock's TTL) and try again when it ends, so they still get the lock,
 * by polling, later than a wake-up would let them.
 *
 * Channels live in a table of buckets, each a list of channels with the
 * sessions subscribed; a session counts its subscriptions
 * (sess.subscriptions) so that its close or RESET drops them
 * (rl_pubsub_drop). Bounds: PS_CHANNEL_MAX bytes of a channel name,
 * PS_SUBS_MAX channels per session.
 */
#include <stdlib.h>
#include <string.h>

#include "gateway/redis/leases.h"
#include "gateway/redis/session.h"

#define PS_BUCKETS     256
#define PS_CHANNEL_MAX 1024
#define PS_SUBS_MAX    1024

struct ps_chan {
	struct ps_chan *next;
	struct sess **subs;
	size_t n, cap;
	size_t len;
	char name[];
};

struct rl_pubsub {
	struct ps_chan *buckets[PS_BUCKETS];
	uint64_t published, delivered;
};

static uint64_t hash_of(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static struct ps_chan **find(struct rl_pubsub *ps, const char *name, size_t len)
{
	struct ps_chan **at = &ps->buckets[hash_of(name, len) % PS_BUCKETS];
	while (*at != NULL && !((*at)->len == len && memcmp((*at)->name, name, len) == 0))
		at = &(*at)->next;
	return at;
}

/* The registry of app, made on first use; NULL on out-of-memory. */
static struct rl_pubsub *registry(struct rl_app *app)
{
	if (app->pubsub == NULL)
		app->pubsub = calloc(1, sizeof(*app->pubsub));
	return app->pubsub;
}

void rl_pubsub_free(struct rl_pubsub *ps)
{
	if (ps == NULL)
		return;
	for (size_t b = 0; b < PS_BUCKETS; b++)
		while (ps->buckets[b] != NULL) {
			struct ps_chan *c = ps->buckets[b];
			ps->buckets[b] = c->next;
			free(c->subs);
			free(c);
		}
	free(ps);
}

size_t rl_pubsub_count(void *app, const char *channel, size_t len)
{
	struct rl_pubsub *ps = ((struct rl_app *)app)->pubsub;
	struct ps_chan *c = ps != NULL ? *find(ps, channel, len) : NULL;
	return c != NULL ? c->n : 0;
}

void rl_pubsub_publish(void *app, const char *channel, size_t len, const char *msg, size_t msg_len)
{
	struct rl_pubsub *ps = ((struct rl_app *)app)->pubsub;
	struct ps_chan *c = ps != NULL ? *find(ps, channel, len) : NULL;
	if (ps != NULL)
		ps->published++;
	for (size_t i = 0; c != NULL && i < c->n; i++) {
		struct sess *s = c->subs[i];
		if (sess_closed(s))
			continue;
		struct buf *out = sess_out(s);
		resp_add_push(out, sess_proto(s), 3);
		resp_add_bulk(out, "message", 7);
		resp_add_bulk(out, channel, len);
		resp_add_bulk(out, msg, msg_len);
		sess_flush(s);
		ps->delivered++;
	}
}

/* Removes s from c; true when it was there. Frees c when empty. */
static bool leave(struct ps_chan **at, struct sess *s)
{
	struct ps_chan *c = *at;
	for (size_t i = 0; i < c->n; i++) {
		if (c->subs[i] != s)
			continue;
		c->subs[i] = c->subs[--c->n];
		s->subscriptions--;
		if (c->n == 0) {
			*at = c->next;
			free(c->subs);
			free(c);
		}
		return true;
	}
	return false;
}

void rl_pubsub_drop(struct rl_app *app, struct sess *s)
{
	struct rl_pubsub *ps = app->pubsub;
	for (size_t b = 0; ps != NULL && s->subscriptions > 0 && b < PS_BUCKETS; b++) {
		struct ps_chan **at = &ps->buckets[b];
		while (*at != NULL)
			if (!leave(at, s))
				at = &(*at)->next;
	}
}

/* Adds s to the channel; false on out-of-memory or past the bounds. */
static bool join(struct rl_pubsub *ps, struct sess *s, const char *name, size_t len)
{
	struct ps_chan **at = find(ps, name, len), *c = *at;
	for (size_t i = 0; c != NULL && i < c->n; i++)
		if (c->subs[i] == s)
			return true;
	if (len > PS_CHANNEL_MAX || s->subscriptions >= PS_SUBS_MAX)
		return false;
	if (c == NULL) {
		if ((c = calloc(1, sizeof(*c) + len)) == NULL)
			return false;
		memcpy(c->name, name, len);
		c->len = len;
		*at = c;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 4;
		struct sess **subs = realloc(c->subs, cap * sizeof(*subs));
		if (subs == NULL) {
			if (c->n == 0) {
				*at = c->next;
				free(c);
			}
			return false;
		}
		c->subs = subs;
		c->cap = cap;
	}
	c->subs[c->n++] = s;
	s->subscriptions++;
	return true;
}

static void confirm(struct cmd_call *c, const char *kind, const char *name, size_t len)
{
	resp_add_push(c->out, c->proto, 3);
	resp_add_bulk(c->out, kind, strlen(kind));
	if (name != NULL)
		resp_add_bulk(c->out, name, len);
	else
		resp_add_null(c->out, c->proto);
	resp_add_int(c->out, c->sess->subscriptions);
}

static void c_subscribe(struct cmd_call *c)
{
	struct rl_pubsub *ps = registry(c->arg);
	for (int i = 1; i < c->argc; i++) {
		if (ps == NULL || !join(ps, c->sess, c->argv[i].p, c->argv[i].len)) {
			resp_add_errorf(c->out,
					"ERR cannot subscribe to '%.64s': channels of 1 to %d "
					"bytes, %d per connection",
					c->argv[i].p, PS_CHANNEL_MAX, PS_SUBS_MAX);
			return;
		}
		confirm(c, "subscribe", c->argv[i].p, c->argv[i].len);
	}
}

/* UNSUBSCRIBE with no channel: every channel of the session, each
 * confirmed. */
static void unsubscribe_all(struct cmd_call *c, struct rl_pubsub *ps)
{
	if (c->sess->subscriptions == 0) {
		confirm(c, "unsubscribe", NULL, 0);
		return;
	}
	for (size_t b = 0; ps != NULL && b < PS_BUCKETS; b++) {
		struct ps_chan **at = &ps->buckets[b];
		while (*at != NULL) {
			struct ps_chan *ch = *at;
			char name[PS_CHANNEL_MAX];
			size_t len = ch->len;
			memcpy(name, ch->name, len);
			if (leave(at, c->sess))
				confirm(c, "unsubscribe", name, len);
			if (*at == ch)
				at = &ch->next;
		}
	}
}

static void c_unsubscribe(struct cmd_call *c)
{
	struct rl_pubsub *ps = ((struct rl_app *)c->arg)->pubsub;
	if (c->argc == 1) {
		unsubscribe_all(c, ps);
		return;
	}
	for (int i = 1; i < c->argc; i++) {
		struct ps_chan **at = ps != NULL ? find(ps, c->argv[i].p, c->argv[i].len) : NULL;
		if (at != NULL && *at != NULL)
			(void)leave(at, c->sess);
		confirm(c, "unsubscribe", c->argv[i].p, c->argv[i].len);
	}
}

static void c_publish(struct cmd_call *c)
{
	size_t n = rl_pubsub_count(c->arg, c->argv[1].p, c->argv[1].len);
	rl_pubsub_publish(c->arg, c->argv[1].p, c->argv[1].len, c->argv[2].p, c->argv[2].len);
	resp_add_int(c->out, (long long)n);
}

static const struct cmd_def pubsub_cmds[] = {
	{.name = "subscribe",
	 .fn = c_subscribe,
	 .arity = -2,
	 .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_IN_SUBSCRIBED,
	 .acl = ACL_PUBSUB | ACL_SLOW,
	 .summary = "Listens to channels on this replica (the wake-ups of Redisson-style "
		    "locks).",
	 .group = "pubsub",
	 .complexity = "O(N) channels",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"channel", CMD_ARG_STRING, NULL, CMD_ARG_MULTIPLE})},
	{.name = "unsubscribe",
	 .fn = c_unsubscribe,
	 .arity = -1,
	 .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_IN_SUBSCRIBED,
	 .acl = ACL_PUBSUB | ACL_SLOW,
	 .summary = "Stops listening to the channels named, or to all.",
	 .group = "pubsub",
	 .complexity = "O(N) channels",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"channel", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE})},
	{.name = "publish",
	 .fn = c_publish,
	 .arity = 3,
	 .flags = CMD_LOADING | CMD_STALE,
	 .acl = ACL_PUBSUB | ACL_FAST,
	 .summary = "Sends a message to the subscribers of a channel on this replica: how "
		    "many.",
	 .group = "pubsub",
	 .complexity = "O(N) subscribers",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"channel", CMD_ARG_STRING, NULL, 0},
			  {"message", CMD_ARG_STRING, NULL, 0})},
};

int rl_pubsubcmds_register(struct rl_app *app, struct cmd_table *cmds)
{
	return cmd_table_add(cmds, pubsub_cmds, sizeof(pubsub_cmds) / sizeof(pubsub_cmds[0]), app);
}
