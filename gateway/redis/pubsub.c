/*
 * redis/pubsub: PUBLISH, SUBSCRIBE and UNSUBSCRIBE — the wake-up channels
 * of Redisson-style locks. A message reaches the sessions of this replica
 * subscribed to its channel at once, as Redis's "message" push (RESP3) or
 * array (RESP2); PUBLISH (and a script's, after its commit:
 * sr_config.publish) answers how many it reached here, as a Redis Cluster
 * node answers for its own clients.
 *
 * Across replicas (app->pubsub_poll_ms > 0, a DynamoDB table): a message
 * is also appended to its channel's item in the table (core/store_chan.h,
 * the channel named by the SHA1 of its name; one append of a channel at a
 * time, so the log keeps this replica's order), and a replica with
 * subscribers reads each of their channels every pubsub_poll_ms (at once
 * for a channel new here: where its log stands) and delivers the entries
 * published since its last read by other replicas. A channel's log keeps
 * the last STORE_CHAN_KEEP messages: more published on it between two
 * reads are lost to the other replicas, as Redis's Pub/Sub loses messages
 * to a slow subscriber; so is one longer than STORE_CHAN_MSG_MAX (this
 * replica's subscribers still get it), and one published elsewhere
 * before the first read of a channel new here.
 *
 * On a RESP2 connection subscribed to a channel only SUBSCRIBE,
 * UNSUBSCRIBE, PING, QUIT and RESET run (CMD_IN_SUBSCRIBED, as Redis).
 *
 * Channels live in a table of buckets, each a list of channels with the
 * sessions subscribed; a session counts its subscriptions
 * (sess.subscriptions) so that its close or RESET drops them
 * (rl_pubsub_drop). Bounds: PS_CHANNEL_MAX bytes of a channel name,
 * PS_SUBS_MAX channels per session.
 */
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/store_chan.h"
#include "gateway/lease/backend.h"
#include "gateway/obs/log.h"
#include "gateway/redis/leases.h"
#include "gateway/redis/session.h"

#define PS_BUCKETS     256
#define PS_CHANNEL_MAX 1024
#define PS_SUBS_MAX    1024

struct ps_chan {
	struct ps_chan *next;
	struct sess **subs;
	size_t n, cap;
	struct rl_pubsub *ps;
	struct store_call *read;	/* its read in flight, or NULL */
	int64_t last;			/* the seq read last; -1: none yet */
	char id[STORE_CHAN_ID_LEN + 1]; /* SHA1 hex of the name */
	size_t len;
	char name[];
};

/* A message waiting to be appended to its channel's item. */
struct ps_msg {
	struct ps_msg *next;
	size_t len;
	char data[];
};

/* The messages of one channel on their way to the table, in the order
 * they were published here: one append at a time, as appends in flight
 * together may land in any order. */
struct ps_out {
	struct ps_out *prev, *next; /* in ps->outs */
	struct rl_pubsub *ps;
	struct store_call *call; /* the append in flight */
	struct ps_msg *head, *tail;
	unsigned queued;
	char id[STORE_CHAN_ID_LEN + 1];
};

#define PS_OUT_MAX 1024 /* messages of one channel waiting; past it they stay here */

struct rl_pubsub {
	struct ps_chan *buckets[PS_BUCKETS];
	struct rl_app *app;
	size_t nchans;
	struct timer poll;	       /* every app->pubsub_poll_ms while nchans > 0 */
	struct ps_out *outs;	       /* channels with messages on their way */
	char origin[STORE_ID_MAX + 1]; /* this replica, in the entries it writes */
	uint64_t published, delivered;
	/* across replicas */
	uint64_t sent, send_failed, too_big, reads, read_failed, received;
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

static void poll_tick(void *arg);

/* The registry of app, made on first use; NULL on out-of-memory. */
static struct rl_pubsub *registry(struct rl_app *app)
{
	if (app->pubsub != NULL)
		return app->pubsub;
	struct rl_pubsub *ps = calloc(1, sizeof(*ps));
	if (ps == NULL)
		return NULL;
	ps->app = app;
	timer_init(&ps->poll, app->backend->io_clock, poll_tick, ps); /* real time, test mode too */
	store_new_id(ps->origin);
	return app->pubsub = ps;
}

/* Frees c, its read cancelled. */
static void chan_free(struct rl_pubsub *ps, struct ps_chan *c)
{
	if (c->read != NULL)
		store_cancel(ps->app->store, c->read);
	free(c->subs);
	free(c);
	if (--ps->nchans == 0)
		timer_cancel(&ps->poll);
}

void rl_pubsub_free(struct rl_pubsub *ps)
{
	if (ps == NULL)
		return;
	for (size_t b = 0; b < PS_BUCKETS; b++)
		while (ps->buckets[b] != NULL) {
			struct ps_chan *c = ps->buckets[b];
			ps->buckets[b] = c->next;
			chan_free(ps, c);
		}
	while (ps->outs != NULL) {
		struct ps_out *o = ps->outs;
		ps->outs = o->next;
		store_cancel(ps->app->store, o->call);
		while (o->head != NULL) {
			struct ps_msg *m = o->head;
			o->head = m->next;
			free(m);
		}
		free(o);
	}
	timer_cancel(&ps->poll);
	free(ps);
}

/* --- across replicas: the channels' items --- */

static void chan_id(const char *name, size_t len, char *id)
{
	unsigned char md[SHA_DIGEST_LENGTH];
	SHA1((const unsigned char *)name, len, md);
	for (int i = 0; i < SHA_DIGEST_LENGTH; i++)
		snprintf(id + 2 * i, 3, "%02x", md[i]);
}

static bool across(const struct rl_pubsub *ps)
{
	return ps->app->pubsub_poll_ms > 0;
}

static void sent(void *arg, const struct store_chan_result *res);

/* Sends o's next message (those the store refuses at once are dropped,
 * counted); frees o when none is left. */
static void send_next(struct ps_out *o)
{
	struct rl_pubsub *ps = o->ps;
	int64_t ttl =
		ps->app->pubsub_ttl_ms > 0
			? (clock_wall_ms(ps->app->backend->io_clock) + ps->app->pubsub_ttl_ms) /
				  1000
			: 0;
	while (o->head != NULL && o->call == NULL) {
		struct ps_msg *m = o->head;
		o->call = store_chan_publish(ps->app->store, o->id, ps->origin, m->data, m->len,
					     ttl, sent, o);
		if (o->call != NULL)
			return;
		ps->send_failed++;
		o->head = m->next;
		o->queued--;
		free(m);
	}
	if (o->prev != NULL)
		o->prev->next = o->next;
	else
		ps->outs = o->next;
	if (o->next != NULL)
		o->next->prev = o->prev;
	free(o);
}

static void sent(void *arg, const struct store_chan_result *res)
{
	struct ps_out *o = arg;
	struct rl_pubsub *ps = o->ps;
	o->call = NULL;
	if (res->status == STORE_OK) {
		ps->sent++;
	} else {
		ps->send_failed++;
		log_msg(LOG_LVL_WARN,
			"a PUBLISH did not reach the other replicas (their subscribers are not "
			"told): %s",
			res->message);
	}
	struct ps_msg *m = o->head;
	o->head = m->next;
	o->queued--;
	free(m);
	send_next(o);
}

/* Appends the message to its channel's item, for the other replicas,
 * after the messages of that channel before it. */
static void send_across(struct rl_pubsub *ps, const char *channel, size_t len, const char *msg,
			size_t msg_len)
{
	if (msg_len > STORE_CHAN_MSG_MAX) {
		ps->too_big++;
		return;
	}
	char id[STORE_CHAN_ID_LEN + 1];
	chan_id(channel, len, id);
	struct ps_out *o = ps->outs;
	while (o != NULL && strcmp(o->id, id) != 0)
		o = o->next;
	if (o != NULL && o->queued >= PS_OUT_MAX) {
		ps->send_failed++; /* DynamoDB lags this far behind: dropped */
		return;
	}
	struct ps_msg *m = malloc(sizeof(*m) + msg_len);
	if (o == NULL && m != NULL && (o = calloc(1, sizeof(*o))) != NULL) {
		o->ps = ps;
		memcpy(o->id, id, sizeof(o->id));
		o->next = ps->outs;
		if (ps->outs != NULL)
			ps->outs->prev = o;
		ps->outs = o;
	}
	if (m == NULL || o == NULL) {
		free(m);
		ps->send_failed++;
		return;
	}
	m->next = NULL;
	m->len = msg_len;
	memcpy(m->data, msg, msg_len);
	if (o->tail != NULL && o->head != NULL)
		o->tail->next = m;
	else
		o->head = m;
	o->tail = m;
	o->queued++;
	if (o->call == NULL)
		send_next(o);
}

static void deliver(struct rl_pubsub *ps, const struct ps_chan *c, const char *msg, size_t msg_len);

/* A read of c: the entries of other replicas published since the last. */
static void on_read(void *arg, const struct store_chan_result *res)
{
	struct ps_chan *c = arg;
	struct rl_pubsub *ps = c->ps;
	c->read = NULL;
	if (res->status != STORE_OK) {
		ps->read_failed++;
		return;
	}
	int64_t seq = res->found ? res->seq : 0;
	int64_t fresh = c->last < 0 ? 0 : seq >= c->last ? seq - c->last : seq; /* < : a new item */
	c->last = seq;
	unsigned from = fresh < (int64_t)res->n ? res->n - (unsigned)fresh : 0;
	for (unsigned i = from; i < res->n; i++) {
		if (strcmp(res->e[i].origin, ps->origin) == 0)
			continue; /* delivered here when published */
		ps->received++;
		deliver(ps, c, res->e[i].data, res->e[i].len);
	}
}

static void read_chan(struct rl_pubsub *ps, struct ps_chan *c)
{
	if (c->read != NULL)
		return;
	c->read = store_chan_read(ps->app->store, c->id, on_read, c);
	if (c->read == NULL)
		ps->read_failed++;
	else
		ps->reads++;
}

static void poll_tick(void *arg)
{
	struct rl_pubsub *ps = arg;
	for (size_t b = 0; b < PS_BUCKETS; b++)
		for (struct ps_chan *c = ps->buckets[b]; c != NULL; c = c->next)
			read_chan(ps, c);
	timer_arm(&ps->poll, ps->app->pubsub_poll_ms);
}

/* --- this replica's subscribers --- */

size_t rl_pubsub_count(void *app, const char *channel, size_t len)
{
	struct rl_pubsub *ps = ((struct rl_app *)app)->pubsub;
	struct ps_chan *c = ps != NULL ? *find(ps, channel, len) : NULL;
	return c != NULL ? c->n : 0;
}

/* msg to the subscribers of c here. */
static void deliver(struct rl_pubsub *ps, const struct ps_chan *c, const char *msg, size_t msg_len)
{
	for (size_t i = 0; i < c->n; i++) {
		struct sess *s = c->subs[i];
		if (sess_closed(s))
			continue;
		struct buf *out = sess_out(s);
		resp_add_push(out, sess_proto(s), 3);
		resp_add_bulk(out, "message", 7);
		resp_add_bulk(out, c->name, c->len);
		resp_add_bulk(out, msg, msg_len);
		sess_flush(s);
		ps->delivered++;
	}
}

void rl_pubsub_publish(void *app, const char *channel, size_t len, const char *msg, size_t msg_len)
{
	struct rl_app *a = app;
	struct rl_pubsub *ps = a->pubsub_poll_ms > 0 ? registry(a) : a->pubsub;
	if (ps == NULL)
		return;
	ps->published++;
	struct ps_chan *c = *find(ps, channel, len);
	if (c != NULL)
		deliver(ps, c, msg, msg_len);
	if (across(ps))
		send_across(ps, channel, len, msg, msg_len);
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
			chan_free(c->ps, c);
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
	bool fresh = c == NULL;
	if (fresh) {
		if ((c = calloc(1, sizeof(*c) + len)) == NULL)
			return false;
		memcpy(c->name, name, len);
		c->len = len;
		c->ps = ps;
		c->last = -1;
		chan_id(name, len, c->id);
		*at = c;
		if (ps->nchans++ == 0 && across(ps))
			timer_arm(&ps->poll, ps->app->pubsub_poll_ms);
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 4;
		struct sess **subs = realloc(c->subs, cap * sizeof(*subs));
		if (subs == NULL) {
			if (c->n == 0) {
				*at = c->next;
				chan_free(ps, c);
			}
			return false;
		}
		c->subs = subs;
		c->cap = cap;
	}
	c->subs[c->n++] = s;
	s->subscriptions++;
	if (fresh && across(ps))
		read_chan(ps, c); /* where its log stands: delivered from there */
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
	 .summary = "Listens to channels: the messages published on every replica (the "
		    "wake-ups of Redisson-style locks).",
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
	 .summary = "Sends a message to the subscribers of a channel on every replica: how many "
		    "on this one.",
	 .group = "pubsub",
	 .complexity = "O(N) subscribers",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"channel", CMD_ARG_STRING, NULL, 0},
			  {"message", CMD_ARG_STRING, NULL, 0})},
};

/* INFO pubsub: this replica's channels and messages, and those that went
 * through the table (sent, failed, too big; reads of the channels,
 * failed; messages of other replicas delivered here). */
void rl_pubsub_info(struct buf *text, void *arg)
{
	struct rl_app *app = arg;
	static const struct rl_pubsub none;
	const struct rl_pubsub *ps = app->pubsub != NULL ? app->pubsub : &none;
	buf_printf(text, "pubsub_channels:%zu\r\n", ps->nchans);
	buf_printf(text, "pubsub_poll_ms:%lld\r\n", (long long)app->pubsub_poll_ms);
	buf_printf(text, "published:%llu\r\n", (unsigned long long)ps->published);
	buf_printf(text, "delivered:%llu\r\n", (unsigned long long)ps->delivered);
	buf_printf(text, "sent_to_table:%llu\r\n", (unsigned long long)ps->sent);
	buf_printf(text, "send_failed:%llu\r\n", (unsigned long long)ps->send_failed);
	buf_printf(text, "too_big_for_table:%llu\r\n", (unsigned long long)ps->too_big);
	buf_printf(text, "channel_reads:%llu\r\n", (unsigned long long)ps->reads);
	buf_printf(text, "channel_read_failed:%llu\r\n", (unsigned long long)ps->read_failed);
	buf_printf(text, "received_from_table:%llu\r\n", (unsigned long long)ps->received);
}

int rl_pubsubcmds_register(struct rl_app *app, struct cmd_table *cmds)
{
	return cmd_table_add(cmds, pubsub_cmds, sizeof(pubsub_cmds) / sizeof(pubsub_cmds[0]), app);
}
