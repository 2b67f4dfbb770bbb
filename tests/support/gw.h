/*
 * gw: the real leasegate binary as a test fixture — start it with options
 * (on the embedded store, or on the moto_server of tests/run-integration.sh
 * with the keys of its IAM user), stop it with a signal, connect hiredis,
 * and kill what a failed test left running (gw_teardown).
 */
#ifndef LG_GW_H
#define LG_GW_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <sys/types.h>

struct gw {
	pid_t pid;
	int port;
	char log[256]; /* its stderr */
};

/* A TCP port free on 127.0.0.1 right now. */
int gw_free_port(void);

/* A free port as gw_free_port, with its decimal text for an option. */
struct gw_port {
	int n;
	char arg[16];
};
struct gw_port gw_free_port_arg(void);

/* A new table name on moto, unique per call ("lg-<pid>-<n>"). */
const char *gw_new_table(void);

/* True when tests/run-integration.sh started moto (LG_MOTO is set). */
bool gw_have_moto(void);

/* When > 0: the open files limit (soft and hard) gateways started from
 * now on run under, as a systemd unit or a container may impose. */
extern long gw_open_files;

/* Starts $LG_BIN with the NULL-terminated extra options. They come after
 * the defaults (--port P --pg-port 0 --admin-port 0 --log-level debug),
 * and a later option wins: "--pg-port", gw_free_port_arg().arg among them
 * gives the gateway a PostgreSQL port (tests/integration/it_pg.c). With table set,
 * it runs on moto's DynamoDB table (created with --create-table), signed
 * with LG_AK/LG_SK. Waits until it is ready: its Redis port, open from
 * the start, answers PING with something else than -LOADING (fails the
 * test after 10 s). The process is remembered until gw_signal reaps it. */
void gw_start(struct gw *g, const char *table, ...);

/* As gw_start, without waiting for the store to open: for a gateway that
 * is not to get there. */
void gw_spawn(struct gw *g, const char *table, ...);

/* True when something accepts TCP connections on 127.0.0.1:port now. */
bool gw_can_connect(int port);

/* Sends sig and, for SIGTERM/SIGINT/SIGKILL, waits: the exit status, or
 * 128 + signal. -1 if it did not end within 10 s (then it is killed).
 * Once the process is reaped, g->pid is 0: the pid names nothing now.
 * Fails the test when g->pid is 0 already. */
int gw_signal(struct gw *g, int sig);

/* Waits for the gateway to end by itself (as gw_signal, without a signal). */
int gw_wait(struct gw *g);

/* A cmocka teardown: kills (SIGKILL) and reaps every gateway gw_start
 * started that is still running — those a failed assertion left behind. */
int gw_teardown(void **state);

/* A hiredis connection to g (fails the test when it cannot connect). */
redisContext *gw_connect(const struct gw *g);

/* Runs a command (printf-style) and returns its reply (freed by caller). */
redisReply *gw_cmd(redisContext *c, const char *fmt, ...);

/* Sends a command (printf-style) without reading its reply. */
void gw_send(redisContext *c, const char *fmt, ...);

/* The next reply on c if it arrives within ms (freed by caller), else NULL;
 * c stays usable either way. */
redisReply *gw_reply_within(redisContext *c, int ms);

/* The next reply, which must be an integer (a fencing token), within ms;
 * else fails the test, naming it `what`. */
long long gw_token_within(redisContext *c, int ms, const char *what);

/* Fails the test if a reply arrives on c within ms. */
void gw_expect_no_reply(redisContext *c, int ms, const char *what);

/* Expectations on one command's reply; each frees the reply. */
void gw_expect_int(redisContext *c, long long want, const char *fmt, ...);
void gw_expect_nil(redisContext *c, const char *fmt, ...);
/* The reply is the status +OK. */
void gw_expect_ok(redisContext *c, const char *fmt, ...);
/* The reply is an error starting with prefix. */
void gw_expect_err(redisContext *c, const char *prefix, const char *fmt, ...);

/* Milliseconds on the monotonic clock. */
long long gw_now_ms(void);
void gw_sleep_ms(int ms);

/* Counts the lines of g's log that contain needle. */
int gw_log_count(const struct gw *g, const char *needle);

#endif
