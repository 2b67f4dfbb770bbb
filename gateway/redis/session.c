/*
 * session: the Redis front-end's connection ops and listeners (see
 * session.h). Bytes from the transport go into the RESP parser; each step
 * takes one command out and dispatches it; a protocol error is answered
 * and the connection closed.
 */
#include "gateway/redis/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/config.h"
#include "gateway/conn/auth.h"
#include "gateway/conn/server.h"
#include "gateway/conn/transport.h"
#include "gateway/obs/log.h"
#include "gateway/redis/commands.h"

static struct sess *sess_of(struct conn *c)
{
	return (struct sess *)c;
}

static bool r_open(struct conn *c)
{
	struct sess *s = sess_of(c);
	struct redis *r = sess_fe(s);
	s->proto = RESP2;
	auth_start(c, r->cfg);
	/* protected mode: in without a password, from beyond the machine */
	s->denied = r->cfg->protected_mode && c->authenticated && !c->local;
	s->parser = resp_parser_new(&r->limits);
	if (s->parser == NULL)
		return false;
	if (r->hooks.on_open)
		r->hooks.on_open(s, r->hooks.arg);
	return true;
}

static size_t r_room(const struct conn *c)
{
	return resp_parser_room(((const struct sess *)c)->parser);
}

static bool r_feed(struct conn *c, const char *bytes, size_t len)
{
	return resp_parser_feed(sess_of(c)->parser, bytes, len) == RESP_NEED_MORE;
}

static size_t r_buffered(const struct conn *c)
{
	return resp_parser_buffered(((const struct sess *)c)->parser);
}

static void protocol_error(struct sess *s)
{
	const char *e = resp_parser_error(s->parser);
	resp_add_errorf(sess_out(s), "ERR %s", e ? e : "Protocol error");
	log_msg(LOG_LVL_DEBUG, "session %llu %s: %s", (unsigned long long)s->c.id, s->c.addr,
		e ? e : "protocol error");
	conn_close(&s->c, "protocol error");
}

static enum conn_step r_step(struct conn *c)
{
	struct sess *s = sess_of(c);
	struct resp_cmd cmd;
	if (s->denied) {
		char msg[1200] = "DENIED ";
		srv_protected_text(msg + 7, sizeof(msg) - 7, "the default user",
				   "--requirepass (or users with passwords in --aclfile)");
		resp_add_error(sess_out(s), msg, strlen(msg));
		srv_note_protected(c->srv, c);
		log_msg(LOG_LVL_DEBUG, "session %llu %s: refused by protected mode",
			(unsigned long long)c->id, c->addr);
		conn_close(c, "protected mode");
		return CONN_STEP_STOP;
	}
	if (s->parser_unauth == c->authenticated) { /* changed since the last step */
		s->parser_unauth = !c->authenticated;
		resp_parser_set_unauthenticated(s->parser, s->parser_unauth);
	}
	enum resp_status st = resp_parser_next(s->parser, &cmd);
	if (st == RESP_CMD) {
		cmd_dispatch(sess_fe(s)->cmds, s, cmd.argc, cmd.argv);
		return CONN_STEP_RAN;
	}
	if (st == RESP_ERROR) {
		protocol_error(s);
		return CONN_STEP_STOP;
	}
	return CONN_STEP_IDLE;
}

static bool r_idle(const struct conn *c)
{
	const struct sess *s = (const struct sess *)c;
	const struct redis *r = sess_fe(s);
	return r->hooks.holds == NULL || !r->hooks.holds(s, r->hooks.arg);
}

static void r_close(struct conn *c)
{
	struct sess *s = sess_of(c);
	struct redis *r = sess_fe(s);
	if (r->hooks.on_close)
		r->hooks.on_close(s, r->hooks.arg);
}

static void r_free(struct conn *c)
{
	struct sess *s = sess_of(c);
	resp_parser_free(s->parser);
	free(s->name);
}

struct redis *redis_new(struct srv *srv, const struct cfg *cfg, struct cmd_table *cmds)
{
	struct redis *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->proto = (struct conn_proto){
		.name = "redis",
		.size = sizeof(struct sess),
		.open = r_open,
		.room = r_room,
		.feed = r_feed,
		.buffered = r_buffered,
		.step = r_step,
		.close = r_close,
		.free = r_free,
		.idle = r_idle,
		/* expire: NULL, closed without a word, as Redis closes on timeout */
		.refusal = "-ERR max number of clients reached\r\n",
		/* --tls-auth-clients, as Redis reads tls-auth-clients */
		.tls_client_cert = cfg->tls_auth_clients == CFG_TLS_AUTH_YES ? CONN_CERT_REQUIRED
				   : cfg->tls_auth_clients == CFG_TLS_AUTH_OPTIONAL
					   ? CONN_CERT_OPTIONAL
					   : CONN_CERT_NONE,
	};
	r->srv = srv;
	r->cfg = cfg;
	r->cmds = cmds;
	r->limits.max_args = (uint32_t)cfg->max_args;
	r->limits.max_bulk = (size_t)cfg->max_bulk;
	r->limits.max_inline = (size_t)cfg->max_inline;
	r->limits.max_query = (size_t)cfg->max_query_buffer;
	struct resp_parser *probe = resp_parser_new(&r->limits);
	if (probe == NULL) {
		free(r);
		return NULL;
	}
	resp_parser_free(probe);
	return r;
}

bool redis_listen(struct redis *r, char *err, size_t errlen)
{
	char why[400];
	if (r->cfg->port &&
	    !srv_listen_tcp(r->srv, r->cfg->bind, r->cfg->port, &r->proto, why, sizeof(why))) {
		/* the default port: say so, the user did not write --port */
		snprintf(err, errlen,
			 "%s: %s (a Redis server on this port? choose another --port, or --port 0 "
			 "to turn the Redis port off)",
			 cfg_given(r->cfg, "port") ? "bad value for --port"
						   : "the Redis port (--port, by default 6379)",
			 why);
		return false;
	}
	if (r->cfg->tls_port && !srv_listen_tcp_on(r->srv, r->cfg->bind, r->cfg->tls_port,
						   &r->proto, &transport_tls, why, sizeof(why))) {
		snprintf(
			err, errlen,
			"bad value for --tls-port: %s (choose another --tls-port, or 0 to turn the "
			"TLS port off)",
			why);
		return false;
	}
	if (r->cfg->unixsocket[0] &&
	    !srv_listen_unix(r->srv, r->cfg->unixsocket, &r->proto, err, errlen))
		return false;
	return true;
}

int redis_tls_port(const struct redis *r)
{
	return srv_port_on(r->srv, &r->proto, &transport_tls);
}

int redis_port(const struct redis *r)
{
	return srv_port(r->srv, &r->proto);
}

void redis_set_hooks(struct redis *r, const struct sess_hooks *hooks)
{
	r->hooks = *hooks;
}

void redis_free(struct redis *r)
{
	free(r);
}

struct foreach_ctx {
	void (*fn)(struct sess *s, void *arg);
	void *arg;
};

static void each(struct conn *c, void *arg)
{
	struct foreach_ctx *x = arg;
	x->fn(sess_of(c), x->arg);
}

void redis_foreach(struct redis *r, void (*fn)(struct sess *s, void *arg), void *arg)
{
	struct foreach_ctx x = {fn, arg};
	srv_foreach(r->srv, &r->proto, each, &x);
}
