/*
 * test_conn: the connection layer (gateway/conn) without any wire
 * protocol: a line-based test front-end over a memory transport. Shows
 * that bytes move only through the transport table (the real socket under
 * the connection sees nothing), that a live connection can switch
 * transport mid-stream with its replies in order, that states change only
 * along the allowed moves, and that one --maxclients counts the
 * connections of every front-end.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "gateway/config.h"
#include "gateway/conn/conn.h"
#include "gateway/conn/server.h"
#include "gateway/conn/transport.h"

/* ---- a memory transport: an inbox the test fills, an outbox it reads ---- */

struct mem {
	struct buf in, out;
	size_t writes;
	bool reading;
	bool peer_stalled; /* the peer reads nothing: what is written stays unsent */
};

static bool mem_open(struct conn *c)
{
	struct mem *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return false;
	m->reading = true;
	c->tp = m;
	return true;
}

static void mem_close(struct conn *c)
{
	struct mem *m = c->tp;
	buf_free(&m->in);
	buf_free(&m->out);
	free(m);
	c->tp = NULL;
}

static void mem_stop(struct conn *c)
{
	((struct mem *)c->tp)->reading = false;
}

static ssize_t mem_read(struct conn *c, void *dst, size_t len)
{
	struct mem *m = c->tp;
	if (m->in.len == 0) {
		errno = EAGAIN;
		return -1;
	}
	size_t n = len < m->in.len ? len : m->in.len;
	memcpy(dst, m->in.buf, n);
	buf_consume(&m->in, n);
	return (ssize_t)n;
}

static bool mem_write(struct conn *c, const void *p, size_t len, bool direct)
{
	struct mem *m = c->tp;
	m->writes++;
	buf_raw(&m->out, p, len);
	return !buf_failed(&m->out);
}

static size_t mem_unsent(const struct conn *c)
{
	const struct mem *m = c->tp;
	return m->peer_stalled ? m->out.len : 0;
}

static void mem_set_reading(struct conn *c, bool on)
{
	((struct mem *)c->tp)->reading = on;
}

static void mem_set_drain_mark(struct conn *c, size_t mark) {}

static const struct transport mem_transport = {
	.name = "memory",
	.open = mem_open,
	.close = mem_close,
	.stop = mem_stop,
	.read = mem_read,
	.write = mem_write,
	.unsent = mem_unsent,
	.set_reading = mem_set_reading,
	.set_drain_mark = mem_set_drain_mark,
};

/* The client sends bytes: into the inbox, then the transport's "readable". */
static void client_sends(struct conn *c, const char *s)
{
	buf_raw(&((struct mem *)c->tp)->in, s, strlen(s));
	conn_readable(c);
}

static const char *outbox(struct conn *c)
{
	static char copy[256];
	struct mem *m = c->tp;
	snprintf(copy, sizeof(copy), "%.*s", (int)m->out.len, m->out.buf);
	return copy;
}

/* ---- a line front-end: "x\n" answers "got:x\n"; DEFER suspends ---- */

struct tconn {
	struct conn c;
	struct buf in;
	int closed;
};

static int closes; /* close ops run, all connections */

static bool t_open(struct conn *c)
{
	buf_init(&((struct tconn *)c)->in, 64);
	return true;
}

static size_t t_room(const struct conn *c)
{
	const struct tconn *t = (const struct tconn *)c;
	return t->in.limit - t->in.len;
}

static bool t_feed(struct conn *c, const char *p, size_t len)
{
	struct tconn *t = (struct tconn *)c;
	buf_raw(&t->in, p, len);
	return !buf_failed(&t->in);
}

static size_t t_buffered(const struct conn *c)
{
	return ((const struct tconn *)c)->in.len;
}

static enum conn_step t_step(struct conn *c)
{
	struct tconn *t = (struct tconn *)c;
	char *nl = t->in.len ? memchr(t->in.buf, '\n', t->in.len) : NULL;
	if (nl == NULL)
		return CONN_STEP_IDLE;
	size_t n = (size_t)(nl - t->in.buf);
	if (n == 5 && memcmp(t->in.buf, "DEFER", 5) == 0)
		conn_suspend(c);
	else
		buf_printf(&c->out, "got:%.*s\n", (int)n, t->in.buf);
	buf_consume(&t->in, n + 1);
	return CONN_STEP_RAN;
}

static void t_close(struct conn *c)
{
	((struct tconn *)c)->closed++;
	closes++;
}

static void t_free(struct conn *c)
{
	buf_free(&((struct tconn *)c)->in);
}

/* The line front-end, under a name and with its refusal. */
#define LINE_PROTO(n, refused)                                                                     \
	{                                                                                          \
		.name = n, .size = sizeof(struct tconn), .open = t_open, .room = t_room,           \
		.feed = t_feed, .buffered = t_buffered, .step = t_step, .close = t_close,          \
		.free = t_free, .refusal = refused,                                                \
	}

static const struct conn_proto line_proto = LINE_PROTO("line", "ERR line: too many\n");
/* A second front-end, to show the registry is shared. */
static const struct conn_proto other_proto = LINE_PROTO("other", "ERR other: too many\n");

struct world {
	struct cfg cfg;
	struct event_base *base;
	struct srv *srv;
	int peer[8]; /* the client ends of the socketpairs */
	int npeers;
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	char err[256];
	char *argv[] = {"t", "--maxclients", "2", NULL};
	char *envp[] = {NULL};
	assert_int_equal(cfg_load(&w->cfg, 3, argv, envp, err, sizeof(err)), CFG_OK);
	w->base = event_base_new();
	w->srv = srv_new(w->base, &w->cfg, w->cfg.maxclients, "--maxclients");
	assert_non_null(w->srv);
	closes = 0;
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	srv_free(w->srv);
	event_base_free(w->base);
	for (int i = 0; i < w->npeers; i++)
		close(w->peer[i]);
	free(w);
	return 0;
}

/* A connection of proto on one end of a socketpair (NULL when refused). */
static struct conn *adopt(struct world *w, const struct conn_proto *proto)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	w->peer[w->npeers++] = sv[1];
	return srv_adopt(w->srv, proto, sv[0], "test", "test");
}

/* A connection of line_proto moved onto the memory transport. */
static struct conn *adopt_mem(struct world *w)
{
	struct conn *c = adopt(w, &line_proto);
	assert_non_null(c);
	assert_true(conn_set_transport(c, &mem_transport));
	return c;
}

static void turns(struct world *w, int n)
{
	for (int i = 0; i < n; i++)
		event_base_loop(w->base, EVLOOP_NONBLOCK);
}

/* Nothing reached the real socket: the peer end has no byte to read. */
static void assert_socket_silent(int peer)
{
	char b;
	assert_int_equal(recv(peer, &b, 1, MSG_DONTWAIT), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

static void test_bytes_move_only_through_the_transport(void **state)
{
	struct world *w = *state;
	struct conn *c = adopt(w, &line_proto);
	assert_non_null(c);
	assert_ptr_equal(c->transport, &transport_plain);
	assert_true(conn_set_transport(c, &mem_transport));
	assert_ptr_equal(c->transport, &mem_transport);

	/* bytes the client writes to the socket are not read any more */
	assert_int_equal(send(w->peer[0], "sock\n", 5, 0), 5);
	turns(w, 3);
	assert_string_equal(outbox(c), "");

	client_sends(c, "a\nb\n");
	turns(w, 2);
	assert_string_equal(outbox(c), "got:a\ngot:b\n");
	assert_int_equal(((struct mem *)c->tp)->writes, 1); /* one batch, one write */

	/* a deferred reply, written from a completion, leaves in order */
	client_sends(c, "DEFER\nc\n");
	turns(w, 2);
	assert_int_equal(conn_state(c), CONN_BLOCKED);
	assert_string_equal(outbox(c), "got:a\ngot:b\n");
	buf_printf(&c->out, "late\n");
	conn_resume(c);
	turns(w, 3);
	assert_int_equal(conn_state(c), CONN_OPEN);
	assert_string_equal(outbox(c), "got:a\ngot:b\nlate\ngot:c\n");
	assert_socket_silent(w->peer[0]);
}

/* As PostgreSQL's SSLRequest needs: the replies before the switch went to
 * the first transport, those after to the second; none lost. */
static void test_switch_transport_mid_stream(void **state)
{
	struct world *w = *state;
	struct conn *c = adopt_mem(w);
	client_sends(c, "one\n");
	turns(w, 2);
	assert_string_equal(outbox(c), "got:one\n");
	assert_true(conn_set_transport(c, &mem_transport)); /* a fresh memory pair */
	assert_string_equal(outbox(c), "");
	client_sends(c, "two\n");
	turns(w, 2);
	assert_string_equal(outbox(c), "got:two\n");
	assert_socket_silent(w->peer[0]);
}

static void test_states_move_only_as_allowed(void **state)
{
	struct world *w = *state;
	struct conn *c = adopt_mem(w);
	static const struct {
		enum conn_state from, to;
		bool ok;
	} moves[] = {
		{CONN_OPEN, CONN_OPEN, false},	     {CONN_OPEN, CONN_BLOCKED, true},
		{CONN_BLOCKED, CONN_BLOCKED, false}, {CONN_BLOCKED, CONN_OPEN, true},
		{CONN_OPEN, CONN_CLOSING, true},     {CONN_CLOSING, CONN_OPEN, false},
		{CONN_CLOSING, CONN_BLOCKED, false}, {CONN_CLOSING, CONN_CLOSING, false},
	};
	for (size_t i = 0; i < sizeof(moves) / sizeof(moves[0]); i++) {
		c->state = moves[i].from;
		if (conn_set_state(c, moves[i].to) != moves[i].ok)
			fail_msg("move %d -> %d: want %s", moves[i].from, moves[i].to,
				 moves[i].ok ? "allowed" : "refused");
		assert_int_equal(conn_state(c), moves[i].ok ? moves[i].to : moves[i].from);
	}
	/* a closing connection is not reopened by a late resume */
	c->state = CONN_CLOSING;
	conn_resume(c);
	assert_int_equal(conn_state(c), CONN_CLOSING);
	conn_abort(c, "test");
	assert_int_equal(conn_state(c), CONN_CLOSED);
	assert_false(conn_set_state(c, CONN_OPEN));
	turns(w, 2);
	assert_int_equal(closes, 1); /* the front-end's close ran once */
}

/* One registry, one --maxclients (2 here) for every front-end: the third
 * connection is refused with its own front-end's refusal. */
static void test_one_maxclients_for_every_front_end(void **state)
{
	struct world *w = *state;
	char got[64] = {0};
	assert_non_null(adopt(w, &line_proto));
	assert_non_null(adopt(w, &other_proto));
	assert_int_equal(srv_conns(w->srv), 2);
	assert_null(adopt(w, &other_proto));
	assert_int_equal(srv_connections_rejected(w->srv), 1);
	assert_true(recv(w->peer[2], got, sizeof(got) - 1, MSG_DONTWAIT) > 0);
	assert_string_equal(got, "ERR other: too many\n");
}

/* QUIT-like close: what is buffered is sent, then the connection goes
 * and the front-end's close op runs once, at the safe point. */
static void test_close_sends_then_closes(void **state)
{
	struct world *w = *state;
	struct conn *c = adopt_mem(w);
	buf_printf(&c->out, "bye\n");
	conn_ref(c); /* to read its outbox after the close */
	conn_close(c, "test");
	assert_string_equal(outbox(c), "bye\n");
	assert_int_equal(conn_state(c), CONN_CLOSED);
	turns(w, 2);
	assert_int_equal(closes, 1);
	assert_int_equal(srv_conns(w->srv), 0);
	conn_unref(c);
	turns(w, 2);
}

/* A peer that never reads: the closing connection keeps its descriptor
 * and its slot, counted as connected and closing, for the close linger;
 * then the sweep drops what is unsent and closes it (the fake clock of
 * srv_expire: no sleep). */
static void test_close_linger_drops_a_peer_that_never_reads(void **state)
{
	struct world *w = *state;
	struct conn *c = adopt_mem(w);
	((struct mem *)c->tp)->peer_stalled = true;
	buf_printf(&c->out, "last words\n");
	conn_ref(c);
	conn_close(c, "test");
	int64_t t0 = c->closing_since_ms;
	assert_int_equal(conn_state(c), CONN_CLOSING);
	assert_int_equal(c->transport->unsent(c), strlen("last words\n"));
	srv_expire(w->srv, t0 + CONN_CLOSE_LINGER_MS - 1);
	turns(w, 2);
	assert_int_equal(conn_state(c), CONN_CLOSING);
	assert_int_equal(srv_conns(w->srv), 1);
	assert_int_equal(srv_closing_conns(w->srv), 1);
	assert_int_equal(srv_lingered(w->srv), 0);
	assert_int_equal(closes, 0);
	srv_expire(w->srv, t0 + CONN_CLOSE_LINGER_MS);
	assert_int_equal(conn_state(c), CONN_CLOSED);
	assert_int_equal(srv_conns(w->srv), 0);
	assert_int_equal(srv_closing_conns(w->srv), 0);
	assert_int_equal(srv_lingered(w->srv), 1);
	turns(w, 2);
	assert_int_equal(closes, 1);
	assert_int_equal(c->fd, -1); /* the descriptor is closed, the memory still referenced */
	conn_unref(c);
	turns(w, 2);
}

static int connect_to(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* What fd received within about ms of loop turns. */
static size_t pump(struct world *w, int fd, char *buf, size_t cap, int ms)
{
	size_t got = 0;
	for (int i = 0; i < ms && got < cap - 1; i++) {
		event_base_loop(w->base, EVLOOP_NONBLOCK);
		ssize_t r = recv(fd, buf + got, cap - 1 - got, MSG_DONTWAIT);
		if (r > 0)
			got += (size_t)r;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	buf[got] = '\0';
	return got;
}

/* Out of descriptors: the accept fails with EMFILE. The registry must not
 * spin on the listener (it stays readable): it answers one newcomer with
 * the refusal through its reserve descriptor, stops accepting for a
 * back-off, and takes the others once descriptors are free again. */
static void test_out_of_descriptors_pauses_accepting(void **state)
{
	struct world *w = *state;
	char err[256], got[64];
	assert_true(srv_listen_tcp(w->srv, "127.0.0.1", 0, &line_proto, err, sizeof(err)));
	int port = srv_port(w->srv, &line_proto);
	int a = connect_to(port), b = connect_to(port); /* queued, not accepted yet */

	struct rlimit saved, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	low = saved;
	low.rlim_cur = 256;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	static int burnt[256];
	int nburnt = 0;
	while (nburnt < 256 && (burnt[nburnt] = dup(a)) >= 0)
		nburnt++;
	assert_int_equal(errno, EMFILE);

	for (int i = 0; i < 30; i++) /* a spinning listener would call back each turn */
		event_base_loop(w->base, EVLOOP_NONBLOCK);
	assert_int_equal(srv_out_of_fds(w->srv), 1);
	assert_int_equal(srv_connections_rejected(w->srv), 1);
	assert_int_equal(srv_conns(w->srv), 0);
	assert_true(pump(w, a, got, sizeof(got), 5) > 0); /* the first one is answered */
	assert_string_equal(got, "ERR line: too many\n");

	while (nburnt > 0)
		close(burnt[--nburnt]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	/* after the back-off (100 ms) the second is accepted and served */
	assert_int_equal(send(b, "hi\n", 3, 0), 3);
	assert_true(pump(w, b, got, sizeof(got), 1000) > 0);
	assert_string_equal(got, "got:hi\n");
	assert_int_equal(srv_conns(w->srv), 1);
	close(a);
	close(b);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bytes_move_only_through_the_transport, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_switch_transport_mid_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_states_move_only_as_allowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_maxclients_for_every_front_end, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_close_sends_then_closes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_linger_drops_a_peer_that_never_reads,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_descriptors_pauses_accepting, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
