/*
 * server_guard: the registry's defences against clients that linger or
 * come from where they should not (see server.h): the sweep that ends
 * connections past --auth-timeout or --timeout and the closing ones past
 * their linger (CONN_CLOSE_LINGER_MS), protected mode's
 * explanation and its rate-limited log line, the largest buffers for INFO.
 *
 * Not here: the listeners and the live list (server.c), what a session
 * holds (the front-ends say, through conn_proto.idle).
 */
#include <stdio.h>
#include <stdlib.h>

#include <event2/event.h>

#include "gateway/config.h"
#include "gateway/conn/conn.h"
#include "gateway/conn/server_int.h"
#include "gateway/conn/transport.h"
#include "gateway/obs/log.h"

struct srv_guard {
	struct srv *srv;
	struct event *cron;	     /* runs srv_expire while a timeout is on */
	uint64_t expired[2];	     /* by enum conn_expiry */
	uint64_t lingered;	     /* closing connections cut off at the linger */
	int64_t protected_logged_ms; /* last "protected mode: refused" line */
	uint64_t protected_unlogged; /* refusals since that line */
};

struct expire_ctx {
	struct srv_guard *g;
	const struct cfg *cfg;
	int64_t now_ms;
};

/* A closing connection whose peer has not taken its last bytes within the
 * linger: they are dropped and the descriptor closed, so that a peer that
 * never reads (or never finishes a TLS handshake) cannot keep the slot. */
static void linger_one(struct conn *c, const struct expire_ctx *x)
{
	if (x->now_ms - c->closing_since_ms < CONN_CLOSE_LINGER_MS)
		return;
	x->g->lingered++;
	log_msg(LOG_LVL_DEBUG,
		"%s connection %llu %s: %zu bytes unsent %lld ms after closing (%s): dropped",
		c->proto->name, (unsigned long long)c->id, c->addr,
		c->tp != NULL ? c->transport->unsent(c) : 0, (long long)CONN_CLOSE_LINGER_MS,
		c->close_reason ? c->close_reason : "closed");
	conn_abort(c, "peer did not read the last replies within the close linger");
}

static void expire_one(struct conn *c, void *arg)
{
	const struct expire_ctx *x = arg;
	const struct cfg *cfg = x->cfg;
	enum conn_expiry why;
	if (c->state == CONN_CLOSING)
		linger_one(c, x);
	if (c->state >= CONN_CLOSING)
		return;
	if (cfg->auth_timeout_ms > 0 && !c->authenticated &&
	    x->now_ms - c->auth_since_ms >= cfg->auth_timeout_ms)
		why = CONN_EXPIRE_AUTH;
	else if (cfg->timeout_ms > 0 && c->state == CONN_OPEN &&
		 x->now_ms - c->last_cmd_ms >= cfg->timeout_ms &&
		 (c->proto->idle == NULL || c->proto->idle(c)))
		why = CONN_EXPIRE_IDLE;
	else
		return;
	x->g->expired[why]++;
	log_msg(LOG_LVL_DEBUG, "%s connection %llu %s closed: %s", c->proto->name,
		(unsigned long long)c->id, c->addr,
		why == CONN_EXPIRE_AUTH ? "not authenticated within --auth-timeout"
					: "idle for --timeout");
	if (c->proto->expire)
		c->proto->expire(c, why);
	else
		conn_close(c, why == CONN_EXPIRE_AUTH ? "auth timeout" : "idle timeout");
}

void srv_expire(struct srv *srv, int64_t now_ms)
{
	struct expire_ctx x = {srv_guard_of(srv), srv_cfg(srv), now_ms};
	srv_foreach(srv, NULL, expire_one, &x);
}

uint64_t srv_expired(const struct srv *srv, enum conn_expiry why)
{
	return srv_guard_of(srv)->expired[why];
}

uint64_t srv_lingered(const struct srv *srv)
{
	return srv_guard_of(srv)->lingered;
}

static void cron_cb(evutil_socket_t fd, short what, void *arg)
{
	struct srv_guard *g = arg;
	srv_expire(g->srv, srv_turn_ms(g->srv));
}

/* The sweep's period: a tenth of the shortest of --auth-timeout and
 * --timeout, within 10 ms..1 s (a timeout is honoured within that much),
 * and 1 s without either: the close linger is honoured within it. Each
 * sweep visits every connection, a memory miss each at 10,000 of them,
 * so it runs no more often than its timeouts need. */
static int64_t cron_period_ms(const struct cfg *cfg)
{
	int64_t t = 10000; /* a tenth of it: the 1 s bound */
	if (cfg->auth_timeout_ms > 0 && cfg->auth_timeout_ms < t)
		t = cfg->auth_timeout_ms;
	if (cfg->timeout_ms > 0 && cfg->timeout_ms < t)
		t = cfg->timeout_ms;
	t /= 10;
	return t < 10 ? 10 : t;
}

struct srv_guard *srv_guard_new(struct srv *srv)
{
	struct srv_guard *g = calloc(1, sizeof(*g));
	if (g == NULL)
		return NULL;
	g->srv = srv;
	int64_t period = cron_period_ms(srv_cfg(srv));
	if (period > 0) {
		struct timeval tv = {period / 1000, (period % 1000) * 1000};
		g->cron = event_new(srv_base(srv), -1, EV_PERSIST, cron_cb, g);
		if (g->cron == NULL || event_add(g->cron, &tv) != 0) {
			srv_guard_free(g);
			return NULL;
		}
	}
	return g;
}

void srv_guard_free(struct srv_guard *g)
{
	if (g == NULL)
		return;
	if (g->cron)
		event_free(g->cron);
	free(g);
}

void srv_protected_text(char *buf, size_t len, const char *who, const char *how)
{
	/* Redis's explanation, with leasegate's ways out */
	snprintf(buf, len,
		 "leasegate is running in protected mode because protected mode is enabled and no "
		 "password is set for %s. In this mode connections are only accepted from the "
		 "loopback interface and the Unix socket. If you want to connect from external "
		 "computers to leasegate you may adopt one of the following solutions: 1) Set up a "
		 "password: %s. 2) Just disable protected mode: start leasegate with "
		 "'--protected-mode no' (or LEASEGATE_PROTECTED_MODE=no, or 'protected-mode no' in "
		 "its config file), however MAKE SURE leasegate is not publicly accessible from "
		 "internet if you do so. 3) If only local clients need it, bind it to the loopback "
		 "interface (--bind 127.0.0.1). NOTE: You only need to do one of the above things "
		 "in order for the server to start accepting connections from the outside.",
		 who, how);
}

void srv_note_protected(struct srv *srv, const struct conn *c)
{
	struct srv_guard *g = srv_guard_of(srv);
	srv_count_rejected(srv);
	/* a line a minute at most, with the count: a scan must not flood the log */
	int64_t now = srv_now_ms();
	if (g->protected_logged_ms != 0 && now - g->protected_logged_ms < 60000) {
		g->protected_unlogged++;
		return;
	}
	log_msg(LOG_LVL_WARN,
		"protected mode: refused a %s client from %s (%llu more refused since the last "
		"line): no password is set on that port; set one, or --protected-mode no",
		c->proto->name, c->addr, (unsigned long long)g->protected_unlogged);
	g->protected_logged_ms = now;
	g->protected_unlogged = 0;
}

struct largest {
	size_t in, out;
};

static void measure(struct conn *c, void *arg)
{
	struct largest *l = arg;
	size_t i = c->proto->buffered(c);
	size_t o = c->out.len + (c->tp != NULL ? c->transport->unsent(c) : 0);
	l->in = i > l->in ? i : l->in;
	l->out = o > l->out ? o : l->out;
}

void srv_largest_buffers(struct srv *srv, size_t *in, size_t *out)
{
	struct largest l = {0, 0};
	srv_foreach(srv, NULL, measure, &l);
	*in = l.in;
	*out = l.out;
}
