/*
 * test_session: the connection registry (gateway/conn) and the Redis
 * front-end's sessions on a real event loop and a Unix socket, driven
 * from the test: deferred replies (sess_suspend/resume)
 * keep pipelined replies in order, the hooks run once, a referenced
 * session outlives its connection, shutdown reports when drained.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "gateway/redis/commands.h"
#include "gateway/config.h"
#include "gateway/conn/server.h"
#include "gateway/redis/session.h"

struct world {
	struct cfg cfg;
	struct event_base *base;
	struct cmd_table *cmds;
	struct srv *srv;
	struct redis *redis;
	char path[108];
	int opened, closed, drained;
	struct sess *pending; /* the session whose reply is deferred */
	bool hold;	      /* t.defer also takes a reference */
	struct event *soon;   /* completes t.soon in the same loop turn */
};

static struct world *W;

static void h_defer(struct cmd_call *c)
{
	W->pending = c->sess;
	if (W->hold)
		sess_ref(c->sess);
	sess_suspend(c->sess);
}

/* t.soon: a deferred reply completed later in the same loop turn, as the
 * embedded store completes a request. */
static void soon_cb(evutil_socket_t fd, short what, void *arg)
{
	struct world *w = arg;
	resp_add_int(sess_out(w->pending), 1);
	sess_resume(w->pending);
}

static void h_soon(struct cmd_call *c)
{
	W->pending = c->sess;
	sess_suspend(c->sess);
	event_active(W->soon, EV_TIMEOUT, 0);
}

static const struct cmd_def test_cmds[] = {
	{.name = "t.defer", .fn = h_defer, .arity = 1, .acl = ACL_FAST},
	{.name = "t.soon", .fn = h_soon, .arity = 1, .acl = ACL_FAST},
};

static void on_open(struct sess *s, void *arg)
{
	((struct world *)arg)->opened++;
}

static void on_close(struct sess *s, void *arg)
{
	struct world *w = arg;
	w->closed++;
	assert_true(sess_closed(s));
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	char err[256];
	snprintf(w->path, sizeof(w->path), "/tmp/lg-test-session-%d.sock", (int)getpid());
	char *argv[] = {"t", "--port", "0", "--unixsocket", w->path, NULL};
	char *envp[] = {NULL};
	assert_int_equal(cfg_load(&w->cfg, 5, argv, envp, err, sizeof(err)), CFG_OK);
	w->base = event_base_new();
	w->cmds = cmd_table_new();
	assert_int_equal(cmd_add_builtins(w->cmds), 0);
	assert_int_equal(cmd_table_add(w->cmds, test_cmds, 2, NULL), 0);
	w->soon = event_new(w->base, -1, 0, soon_cb, w);
	assert_non_null(w->soon);
	w->srv = srv_new(w->base, &w->cfg, w->cfg.maxclients, "--maxclients");
	assert_non_null(w->srv);
	w->redis = redis_new(w->srv, &w->cfg, w->cmds);
	assert_non_null(w->redis);
	struct sess_hooks hooks = {.on_open = on_open, .on_close = on_close, .arg = w};
	redis_set_hooks(w->redis, &hooks);
	assert_true(redis_listen(w->redis, err, sizeof(err)));
	W = w;
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	event_free(w->soon);
	srv_free(w->srv);
	redis_free(w->redis);
	cmd_table_free(w->cmds);
	event_base_free(w->base);
	free(w);
	return 0;
}

static int client(struct world *w)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", w->path);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* Runs the loop for about ms, collecting what fd receives into buf. */
static size_t pump(struct world *w, int fd, char *buf, size_t cap, int ms, bool *eof)
{
	size_t got = 0;
	for (int i = 0; i < ms; i++) {
		event_base_loop(w->base, EVLOOP_NONBLOCK);
		if (fd >= 0 && got < cap) {
			ssize_t r = recv(fd, buf + got, cap - got, 0);
			if (r > 0)
				got += (size_t)r;
			else if (r == 0 && eof)
				*eof = true;
		}
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	return got;
}

static void test_deferred_reply_keeps_order(void **state)
{
	struct world *w = *state;
	char buf[256];
	int fd = client(w);
	assert_int_equal(send(fd, "T.DEFER\r\nPING\r\n", 15, 0), 15);
	size_t n = pump(w, fd, buf, sizeof(buf), 50, NULL);
	assert_int_equal(n, 0); /* PING waits behind the deferred reply */
	assert_non_null(w->pending);
	assert_int_equal(sess_state(w->pending), CONN_BLOCKED);
	assert_int_equal(srv_blocked_conns(w->srv), 1);

	resp_add_int(sess_out(w->pending), 42);
	sess_resume(w->pending);
	n = pump(w, fd, buf, sizeof(buf), 50, NULL);
	assert_int_equal(n, 12);
	assert_memory_equal(buf, ":42\r\n+PONG\r\n", 12);
	assert_int_equal(w->opened, 1);
	assert_int_equal(w->closed, 0);
	close(fd);
	pump(w, -1, NULL, 0, 20, NULL);
	assert_int_equal(w->closed, 1);
	assert_int_equal(srv_conns(w->srv), 0);
}

/* Pipelined commands that complete one after another in one loop turn
 * get their replies in one write: the flush runs at the lowest priority,
 * once nothing else is active. (Without that, six writes.) The registry's
 * flush guard also writes what waited over a millisecond, which a loaded
 * machine can make a loop turn last: up to three tries, one must write
 * once. */
static void test_pipelined_completions_leave_in_one_write(void **state)
{
	struct world *w = *state;
	uint64_t fewest = UINT64_MAX;
	for (int attempt = 0; attempt < 3 && fewest != 1; attempt++) {
		char buf[256];
		int fd = client(w);
		const char *req = "T.SOON\r\nT.SOON\r\nT.SOON\r\nT.SOON\r\nT.SOON\r\nT.SOON\r\n";
		assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
		size_t n = pump(w, fd, buf, sizeof(buf), 50, NULL);
		assert_int_equal(n, 24);
		assert_memory_equal(buf, ":1\r\n:1\r\n:1\r\n:1\r\n:1\r\n:1\r\n", 24);
		assert_non_null(w->pending);
		if (w->pending->c.flushes < fewest)
			fewest = w->pending->c.flushes;
		close(fd);
		pump(w, -1, NULL, 0, 20, NULL);
	}
	assert_int_equal(fewest, 1);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A client that never stops sending (a writer callback on its socket, run
 * every turn of the loop, as a busy server always has a read to run). */
struct flood {
	struct event *ev;
	struct event_base *base;
	int a, b, turns;
	long long start_ms;
	char got[16];
	size_t n;
};

static void flood_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flood *f = arg;
	char sink[256];
	ssize_t r = send(f->b, "PING\r\n", 6, 0);
	(void)r;
	while (recv(f->b, sink, sizeof(sink), 0) > 0)
		;
	r = recv(f->a, f->got + f->n, sizeof(f->got) - f->n, 0);
	if (r > 0)
		f->n += (size_t)r;
	f->turns++;
	if (f->n >= 4 || now_ms() - f->start_ms >= 500)
		event_base_loopbreak(f->base);
}

/* Output a blocked session is given (a push message) leaves while other
 * clients keep the loop busy: no turn is ever idle, so the lowest priority
 * never runs, and the server's flush guard writes it (after 1 ms). */
static void test_blocked_output_not_starved_by_busy_clients(void **state)
{
	struct world *w = *state;
	char buf[64];
	struct flood f = {.base = w->base};
	f.a = client(w);
	f.b = client(w);
	assert_int_equal(send(f.a, "T.DEFER\r\n", 9, 0), 9);
	pump(w, f.a, buf, sizeof(buf), 20, NULL);
	assert_non_null(w->pending);
	assert_int_equal(sess_state(w->pending), CONN_BLOCKED);
	resp_add_int(sess_out(w->pending), 7); /* as a lost lease's push */
	sess_flush(w->pending);
	f.ev = event_new(w->base, f.b, EV_WRITE | EV_PERSIST, flood_cb, &f);
	assert_non_null(f.ev);
	event_add(f.ev, NULL);
	f.start_ms = now_ms();
	event_base_loop(w->base, 0);
	long long took = now_ms() - f.start_ms;
	event_free(f.ev);
	assert_int_equal(f.n, 4); /* within 500 ms of busy turns */
	assert_memory_equal(f.got, ":7\r\n", 4);
	assert_true(took < 100);
	assert_true(f.turns > 1); /* the loop was busy meanwhile */
	resp_add_int(sess_out(w->pending), 1);
	sess_resume(w->pending);
	close(f.a);
	close(f.b);
	pump(w, -1, NULL, 0, 20, NULL);
}

/* The client leaves while its reply is deferred: on_close runs once, the
 * referenced session stays readable, a late reply is dropped, and the last
 * unref frees it (ASan checks both). */
static void test_close_while_blocked(void **state)
{
	struct world *w = *state;
	w->hold = true;
	int fd = client(w);
	assert_int_equal(send(fd, "t.defer\r\n", 9, 0), 9);
	pump(w, fd, NULL, 0, 20, NULL);
	struct sess *s = w->pending;
	assert_non_null(s);
	close(fd);
	pump(w, -1, NULL, 0, 20, NULL);
	assert_int_equal(w->closed, 1);
	assert_true(sess_closed(s));
	assert_int_equal(sess_state(s), CONN_CLOSED);
	resp_add_int(sess_out(s), 1); /* the late completion */
	sess_resume(s);		      /* a no-op now */
	sess_unref(s);
	pump(w, -1, NULL, 0, 10, NULL);
	assert_int_equal(w->closed, 1);
	w->hold = false;
}

static void drained(void *arg)
{
	((struct world *)arg)->drained++;
}

static void test_shutdown_closes_and_reports(void **state)
{
	struct world *w = *state;
	char buf[64];
	bool eof = false;
	int fd = client(w);
	assert_int_equal(send(fd, "PING\r\n", 6, 0), 6);
	assert_int_equal(pump(w, fd, buf, sizeof(buf), 20, NULL), 7);
	srv_shutdown(w->srv, drained, w);
	pump(w, fd, buf, sizeof(buf), 30, &eof);
	assert_true(eof);
	assert_int_equal(w->drained, 1);
	assert_int_equal(w->closed, 1);
	assert_int_not_equal(access(w->path, F_OK), 0); /* the socket file is gone */
	close(fd);
}

static void test_quit_flushes_then_closes(void **state)
{
	struct world *w = *state;
	char buf[64];
	bool eof = false;
	int fd = client(w);
	assert_int_equal(send(fd, "PING\r\nQUIT\r\nPING\r\n", 18, 0), 18);
	size_t n = pump(w, fd, buf, sizeof(buf), 30, &eof);
	assert_int_equal(n, 12);
	assert_memory_equal(buf, "+PONG\r\n+OK\r\n", 12);
	assert_true(eof);
	close(fd);
}

/* The one session of the registry (the test's only client). */
static void first_conn(struct conn *c, void *arg)
{
	*(struct conn **)arg = c;
}

static struct conn *only_conn(struct world *w)
{
	struct conn *c = NULL;
	srv_foreach(w->srv, NULL, first_conn, &c);
	assert_non_null(c);
	return c;
}

/* --auth-timeout, on the registry's clock as the test sets it: a session
 * that has not authenticated is closed once the timeout has passed since
 * it came (not before), one that has is left; the closes are counted. */
static void test_auth_timeout(void **state)
{
	struct world *w = *state;
	char buf[64];
	bool eof = false;
	snprintf(w->cfg.requirepass, sizeof(w->cfg.requirepass), "pw");
	w->cfg.auth_timeout_ms = 1000;
	int slow = client(w);
	pump(w, slow, buf, sizeof(buf), 10, NULL);
	struct conn *c = only_conn(w);
	assert_false(c->authenticated);
	int64_t t0 = c->auth_since_ms;
	srv_expire(w->srv, t0 + 999);
	assert_int_equal(pump(w, slow, buf, sizeof(buf), 10, &eof), 0);
	assert_false(eof);
	int quick = client(w);
	assert_int_equal(send(quick, "AUTH pw\r\n", 9, 0), 9);
	assert_int_equal(pump(w, quick, buf, sizeof(buf), 20, NULL), 5);
	srv_expire(w->srv, t0 + 1000);
	pump(w, slow, buf, sizeof(buf), 20, &eof);
	assert_true(eof);
	assert_int_equal(srv_conns(w->srv), 1); /* the authenticated one stays */
	assert_int_equal(srv_expired(w->srv, CONN_EXPIRE_AUTH), 1);
	assert_int_equal(srv_expired(w->srv, CONN_EXPIRE_IDLE), 0);
	close(slow);
	close(quick);
}

/* --timeout: an idle session is closed once the timeout has passed since
 * its last request; a blocked one (waiting for an answer) is not. */
static void test_idle_timeout(void **state)
{
	struct world *w = *state;
	char buf[64];
	bool eof = false;
	w->cfg.timeout_ms = 5000;
	int idle = client(w);
	assert_int_equal(send(idle, "PING\r\n", 6, 0), 6);
	assert_int_equal(pump(w, idle, buf, sizeof(buf), 20, NULL), 7);
	int64_t last = only_conn(w)->last_cmd_ms;
	int waiting = client(w);
	assert_int_equal(send(waiting, "T.DEFER\r\n", 9, 0), 9);
	pump(w, waiting, buf, sizeof(buf), 20, NULL);
	assert_non_null(w->pending);
	srv_expire(w->srv, last + 4999);
	assert_int_equal(srv_conns(w->srv), 2);
	srv_expire(w->srv, last + 1000000);
	pump(w, idle, buf, sizeof(buf), 20, &eof);
	assert_true(eof);
	assert_int_equal(srv_conns(w->srv), 1);
	assert_int_equal(sess_state(w->pending), CONN_BLOCKED);
	assert_int_equal(srv_expired(w->srv, CONN_EXPIRE_IDLE), 1);
	close(idle);
	close(waiting);
}

/* A Unix socket path that holds a stale socket (bound, nobody listening)
 * is taken over; a live socket, a regular file or a directory is left as
 * it is and refused with a message. The socket file gets
 * --unixsocketperm, and only the file made is removed at the end. */
static void test_unix_socket_path(void **state)
{
	struct world *w = *state;
	char err[300], path[108];
	struct stat st;
	/* live: the world's own listener */
	assert_false(srv_listen_unix(w->srv, w->path, &w->redis->proto, err, sizeof(err)));
	assert_non_null(strstr(err, "another process is listening"));
	assert_int_equal(access(w->path, F_OK), 0);

	snprintf(path, sizeof(path), "/tmp/lg-test-session-%d.other", (int)getpid());
	FILE *f = fopen(path, "w");
	fputs("precious", f);
	fclose(f);
	assert_false(srv_listen_unix(w->srv, path, &w->redis->proto, err, sizeof(err)));
	assert_non_null(strstr(err, "not a socket"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 8);
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_false(srv_listen_unix(w->srv, path, &w->redis->proto, err, sizeof(err)));
	assert_non_null(strstr(err, "not a socket"));
	rmdir(path);

	/* stale: bound by a process gone (here: a socket closed unlistened) */
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	close(fd);
	w->cfg.unixsocketperm = 0700;
	assert_true(srv_listen_unix(w->srv, path, &w->redis->proto, err, sizeof(err)));
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	/* the default, for the world's socket */
	assert_int_equal(stat(w->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0770);

	/* replaced under us: left to its new owner at the end */
	assert_int_equal(unlink(path), 0);
	f = fopen(path, "w");
	fclose(f);
	srv_shutdown(w->srv, drained, w);
	pump(w, -1, NULL, 0, 10, NULL);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_not_equal(access(w->path, F_OK), 0);
	unlink(path);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* as the server: replies to a closed client */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_deferred_reply_keeps_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined_completions_leave_in_one_write,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocked_output_not_starved_by_busy_clients,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_while_blocked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_closes_and_reports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quit_flushes_then_closes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unix_socket_path, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
