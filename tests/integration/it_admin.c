/*
 * it_admin: the real leasegate's admin HTTP port (--admin-port): the
 * probes /healthz and /readyz, and /metrics read with libcurl and checked
 * by Prometheus's own promtool; on the embedded store and on moto.
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
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>

#include "tests/support/gw.h"
#include "tests/support/gwproc.h"

struct got {
	long code;
	char body[256 * 1024];
	size_t len;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct got *g = arg;
	size_t k = size * n;
	if (g->len + k >= sizeof(g->body))
		return 0;
	memcpy(g->body + g->len, p, k);
	g->len += k;
	g->body[g->len] = '\0';
	return k;
}

/* method path on 127.0.0.1:port; the status in g->code (0: no answer). */
static void http(const char *method, int port, const char *path, struct got *g)
{
	char url[128];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	memset(g, 0, sizeof(*g));
	CURL *c = curl_easy_init();
	assert_non_null(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L); /* else curl waits for the body */
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, g);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &g->code);
	curl_easy_cleanup(c);
}

static void get(int port, const char *path, struct got *g)
{
	http("GET", port, path, g);
}

static void expect_line(const char *text, const char *line)
{
	char want[512];
	snprintf(want, sizeof(want), "\n%s\n", line);
	if (strstr(text, want) == NULL)
		fail_msg("no line \"%s\" in /metrics:\n%s", line, text);
}

/* Runs `promtool check metrics` on text: it must find nothing to say. */
static void promtool_accepts(const char *text)
{
	char path[256], cmd[512];
	snprintf(path, sizeof(path), "%s/metrics-%d.txt",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp", (int)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char out[4096];
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127)
		fail_msg("promtool is missing (Debian package prometheus: make deps)");
	if (WEXITSTATUS(st) != 0 || n != 0)
		fail_msg("promtool check metrics: exit %d: %s", WEXITSTATUS(st), out);
	unlink(path);
}

static void test_probes_and_metrics(void **state)
{
	struct gw g;
	struct got r;
	struct gw_port admin = gw_free_port_arg();
	gw_start(&g, NULL, "--admin-port", admin.arg, NULL);
	get(admin.n, "/healthz", &r);
	assert_int_equal(r.code, 200);
	assert_string_equal(r.body, "ok\n");
	get(admin.n, "/readyz", &r);
	assert_int_equal(r.code, 200);
	assert_string_equal(r.body, "ready\n");
	get(admin.n, "/nope", &r);
	assert_int_equal(r.code, 404);
	http("POST", admin.n, "/metrics", &r);
	assert_int_equal(r.code, 501); /* libevent's answer to a method not allowed */
	redisContext *c = gw_connect(&g);
	gw_expect_int(c, 1, "LOCK.ACQUIRE %s %d", "m1", 30000);
	gw_expect_int(c, 1, "LOCK.ACQUIRE %s %d", "m2", 30000);
	gw_expect_int(c, 1, "LOCK.RELEASE %s", "m2");
	get(admin.n, "/metrics", &r);
	assert_int_equal(r.code, 200);
	/* the embedded store: no table, so no db_collection_name (never "") */
	expect_line(r.body, "leasegate_lock_acquisitions_total{takeover=\"false\"} 2");
	expect_line(r.body, "leasegate_leases_held 1");
	assert_null(strstr(r.body, "=\"\"")); /* no empty label value */
	assert_null(strstr(r.body, "dynasharp_"));
	expect_line(r.body, "leasegate_sessions 1");
	/* connections and commands by name and outcome */
	expect_line(r.body, "leasegate_commands_total{command=\"lock.acquire\",outcome=\"ok\"} 2");
	expect_line(r.body, "leasegate_commands_total{command=\"lock.release\",outcome=\"ok\"} 1");
	expect_line(r.body, "leasegate_connections_rejected_total 0");
	assert_non_null(strstr(r.body, "\nleasegate_connections_received_total "));
	/* the process_* metrics of the Prometheus client libraries */
	assert_non_null(strstr(r.body, "\nprocess_cpu_seconds_total "));
	assert_non_null(strstr(r.body, "\nprocess_resident_memory_bytes "));
	assert_non_null(strstr(r.body, "\nprocess_open_fds "));
	assert_non_null(strstr(r.body, "\nprocess_start_time_seconds "));
	assert_null(strstr(r.body, "m1")); /* never a lock name */
	promtool_accepts(r.body);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A gateway whose table cannot be reached is alive but not ready, and
 * takes no Redis clients. */
static void test_not_ready_until_the_store_opens(void **state)
{
	struct gw g;
	struct got r;
	struct gw_port admin = gw_free_port_arg();
	int nothing = gw_free_port();
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", nothing);
	struct gw_port pg = gw_free_port_arg();
	gw_spawn(&g, NULL, "--admin-port", admin.arg, "--table", "locks", "--region", "us-east-1",
		 "--endpoint", url, "--pg-port", pg.arg, NULL);
	for (int i = 0; i < 200 && !gw_can_connect(admin.n); i++)
		gw_sleep_ms(25);
	get(admin.n, "/healthz", &r);
	assert_int_equal(r.code, 200);
	get(admin.n, "/readyz", &r);
	assert_int_equal(r.code, 503);
	/* the reason, not "see the log" */
	assert_non_null(strstr(r.body, "not ready: "));
	assert_null(strstr(r.body, "see the log"));
	assert_non_null(strstr(r.body, "DynamoDB table locks"));
	/* the Redis port is open already: a client is told to wait, and why */
	for (int i = 0; i < 200 && !gw_can_connect(g.port); i++)
		gw_sleep_ms(25);
	redisContext *c = gw_connect(&g);
	gw_expect_err(c, "LOADING leasegate is not ready: DynamoDB table locks", "PING");
	gw_expect_err(c, "LOADING leasegate is not ready: ", "LOCK.ACQUIRE a 10000");
	redisReply *info = gw_cmd(c, "INFO persistence"); /* INFO runs while loading */
	assert_non_null(strstr(info->str, "loading:1"));
	freeReplyObject(info);
	redisFree(c);
	/* PostgreSQL: 57P03, "the database system is starting up", and why */
	char conninfo[128];
	snprintf(conninfo, sizeof(conninfo), "host=127.0.0.1 port=%d user=app dbname=locks", pg.n);
	PGconn *pc = PQconnectdb(conninfo);
	assert_int_equal(PQstatus(pc), CONNECTION_BAD);
	if (!strstr(PQerrorMessage(pc), "the database system is starting up: DynamoDB table locks"))
		fail_msg("PostgreSQL: %s", PQerrorMessage(pc));
	PQfinish(pc);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
	/* the start log names the endpoint it opens */
	char want[128];
	snprintf(want, sizeof(want), "opening DynamoDB table locks at %s", url);
	assert_int_equal(gw_log_count(&g, want), 1);
}

/* No credentials anywhere: the log and /readyz name the sources tried in
 * order and what to do, and the retries back off (1 s, 2 s, ...). */
static void test_no_credentials_explained(void **state)
{
	struct gw g;
	struct got r;
	struct gw_port admin = gw_free_port_arg();
	char url[64], imds[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", gw_free_port());
	snprintf(imds, sizeof(imds), "http://127.0.0.1:%d", gw_free_port());
	/* the child inherits this environment: nothing to find */
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");
	unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	unsetenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
	setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds, 1);
	gw_spawn(&g, NULL, "--admin-port", admin.arg, "--table", "locks", "--region", "us-east-1",
		 "--endpoint", url, NULL);
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
	unsetenv("AWS_CONFIG_FILE");
	unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	long long t0 = gw_now_ms();
	while (gw_log_count(&g, "trying again in 2 s") == 0 && gw_now_ms() - t0 < 8000)
		gw_sleep_ms(50);
	assert_int_equal(gw_log_count(&g, "no AWS credentials. Tried in order: 1. environment"), 2);
	assert_int_equal(gw_log_count(&g, "trying again in 1 s (backoff up to 60 s)"), 1);
	assert_int_equal(gw_log_count(&g, "trying again in 2 s (backoff up to 60 s)"), 1);
	assert_int_equal(gw_log_count(&g, "5. EC2 instance metadata: "), 2);
	assert_int_equal(gw_log_count(&g, "/nonexistent/config"), 2);
	get(admin.n, "/readyz", &r);
	assert_int_equal(r.code, 503);
	assert_non_null(strstr(r.body, "no AWS credentials. Tried in order: 1. environment"));
	assert_non_null(strstr(r.body, "Set AWS_ACCESS_KEY_ID"));
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* AWS_PROFILE naming no profile: said so, not a missing region. */
static void test_profile_not_found(void **state)
{
	struct gw g;
	setenv("AWS_PROFILE", "nosuch", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
	setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
	char *region = getenv("AWS_REGION") ? strdup(getenv("AWS_REGION")) : NULL;
	unsetenv("AWS_REGION");
	unsetenv("AWS_DEFAULT_REGION");
	gw_spawn(&g, NULL, "--table", "locks", NULL);
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
	unsetenv("AWS_CONFIG_FILE");
	if (region) {
		setenv("AWS_REGION", region, 1);
		free(region);
	}
	assert_int_equal(gw_wait(&g), 1);
	assert_int_equal(gw_log_count(&g, "profile not found: AWS_PROFILE names 'nosuch'"), 1);
	assert_int_equal(gw_log_count(&g, "region"), 0);
}

/* A second gateway on one machine, the admin port left at its default:
 * the first has 9464 (or another process does), so the second takes a
 * free port and says which; a port given explicitly still stops it. */
static void test_default_admin_port_taken(void **state)
{
	int hold = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(hold, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(9464),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	/* if 9464 is someone else's already, it is taken all the same */
	if (bind(hold, (struct sockaddr *)&a, sizeof(a)) == 0)
		assert_int_equal(listen(hold, 4), 0);
	assert_true(gw_can_connect(9464));
	struct gw g;
	struct got r;
	/* gw_start gives --admin-port 0; the environment does not count as a
	 * default either, so run the binary with only --port and --pg-port */
	struct gw_port port = gw_free_port_arg();
	const char *const argv[] = {getenv("LG_BIN"), "--port", port.arg, "--pg-port", "0", NULL};
	snprintf(g.log, sizeof(g.log), "/tmp/lg-it-admin-%d.log", (int)getpid());
	unlink(g.log);
	g.pid = gp_spawn(argv, g.log, false, 0);
	g.port = port.n;
	assert_int_equal(gp_wait_ready(g.pid, port.n), 0);
	assert_int_equal(gw_log_count(&g, "the default admin port 9464 is in use"), 1);
	FILE *f = fopen(g.log, "r");
	char line[1024];
	int admin = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "admin HTTP on 127.0.0.1:"))
			admin = atoi(strstr(line, "127.0.0.1:") + 10);
	if (f)
		fclose(f);
	assert_true(admin > 0 && admin != 9464);
	get(admin, "/healthz", &r);
	assert_int_equal(r.code, 200);
	gp_stop(g.pid);
	unlink(g.log);
	close(hold);
}

/* After SIGTERM, while sessions drain, /readyz answers 503 so that the
 * replica gets no new clients. A client that does not read its replies
 * keeps the drain going (up to the shutdown bound). */
static void test_not_ready_while_shutting_down(void **state)
{
	struct gw g;
	struct got r;
	struct gw_port admin = gw_free_port_arg();
	gw_start(&g, NULL, "--admin-port", admin.arg, "--max-output-buffer", "1kb", NULL);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int small = 2048; /* a small window: the gateway's replies back up soon */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)g.port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	static char pings[60000];
	for (size_t i = 0; i + 6 <= sizeof(pings); i += 6)
		memcpy(pings + i, "PING\r\n", 6);
	/* write until the gateway stops reading (its replies wait for us) */
	for (int idle = 0; idle < 50;) {
		ssize_t w = send(fd, pings, sizeof(pings), MSG_NOSIGNAL);
		if (w > 0) {
			idle = 0;
			continue;
		}
		assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
		idle++;
		gw_sleep_ms(10);
	}
	assert_int_equal(kill(g.pid, SIGTERM), 0);
	gw_sleep_ms(100);
	get(admin.n, "/readyz", &r);
	assert_int_equal(r.code, 503);
	assert_string_equal(r.body, "not ready: shutting down\n");
	get(admin.n, "/healthz", &r);
	assert_int_equal(r.code, 200);
	close(fd); /* the drain ends, and so does the gateway */
	assert_int_equal(gw_wait(&g), 0);
}

/* A taken admin port stops the start with a message naming the option. */
static void test_admin_port_in_use_stops_the_start(void **state)
{
	struct gw g, second;
	struct gw_port admin = gw_free_port_arg();
	gw_start(&g, NULL, "--admin-port", admin.arg, NULL);
	gw_spawn(&second, NULL, "--admin-port", admin.arg, NULL);
	assert_int_equal(gw_wait(&second), 1);
	assert_int_equal(gw_log_count(&second, "bad value for --admin-port: cannot listen on"), 1);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* The protocol ports too: a port taken (PostgreSQL's 5432 by a PostgreSQL
 * server, say) stops the start with a message naming the option and how
 * to turn it off, once (the log is stderr here). */
static void test_protocol_port_in_use_stops_the_start(void **state)
{
	struct gw g, second;
	char port[16];
	struct gw_port pg = gw_free_port_arg();
	gw_start(&g, NULL, "--pg-port", pg.arg, NULL);
	gw_spawn(&second, NULL, "--pg-port", pg.arg, NULL);
	assert_int_equal(gw_wait(&second), 1);
	assert_int_equal(gw_log_count(&second, "bad value for --pg-port: cannot listen on"), 1);
	assert_int_equal(gw_log_count(&second, "or 0 to turn the PostgreSQL port off"), 1);
	snprintf(port, sizeof(port), "%d", g.port); /* g's Redis port */
	gw_spawn(&second, NULL, "--port", port, NULL);
	assert_int_equal(gw_wait(&second), 1);
	assert_int_equal(gw_log_count(&second, "bad value for --port: cannot listen on"), 1);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

static void test_dynamodb_requests_on_moto(void **state)
{
	if (!gw_have_moto())
		fail_msg("needs moto (tests/run-integration.sh)");
	struct gw g;
	struct got r;
	struct gw_port admin = gw_free_port_arg();
	char line[512];
	const char *table = gw_new_table();
	gw_start(&g, table, "--admin-port", admin.arg, NULL);
	redisContext *c = gw_connect(&g);
	gw_expect_int(c, 1, "LOCK.ACQUIRE %s %d", "d1", 30000);
	gw_expect_int(c, 1, "LOCK.RELEASE %s", "d1");
	get(admin.n, "/metrics", &r);
	assert_int_equal(r.code, 200);
	/* one UpdateItem for the acquire, one for the release */
	snprintf(line, sizeof(line),
		 "db_client_operation_duration_seconds_count{db_system_name=\"aws.dynamodb\","
		 "db_collection_name=\"%s\",db_operation_name=\"UpdateItem\",outcome=\"ok\"} 2",
		 table);
	expect_line(r.body, line);
	snprintf(line, sizeof(line),
		 "\ndb_client_operation_duration_seconds_count{db_system_name=\"aws.dynamodb\","
		 "db_collection_name=\"%s\",db_operation_name=\"DescribeTable\",outcome=\"ok\"} ",
		 table);
	assert_non_null(strstr(r.body, line)); /* the open */
	snprintf(line, sizeof(line),
		 "leasegate_lock_acquisitions_total{db_collection_name=\"%s\","
		 "takeover=\"false\"} 1",
		 table);
	expect_line(r.body, line);
	promtool_accepts(r.body);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

static int tcp_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Idle admin connections (a slowloris, or a scraper gone wrong) are
 * capped by --admin-maxclients (default 16), apart from --maxclients:
 * under an open files limit of 96 and 80 of them, the Redis port still
 * answers; at the cap each newcomer takes the slot of the oldest that has
 * sent no request (it gets a 408 and is closed), so the probes answer
 * while the 16 newest stay; the partial request, the bad method and the
 * over-long head get their HTTP errors. */
static void test_admin_connections_capped(void **state)
{
	struct gw g;
	struct got r;
	struct gw_port admin = gw_free_port_arg();
	enum { N = 80 };
	int idle[N];
	gw_open_files = 96;
	gw_start(&g, NULL, "--admin-port", admin.arg, NULL);
	gw_open_files = 0;
	for (int i = 0; i < N; i++)
		idle[i] = tcp_connect(admin.n);
	gw_sleep_ms(200);
	redisContext *c = gw_connect(&g);
	redisReply *rep = redisCommand(c, "PING");
	assert_non_null(rep);
	assert_string_equal(rep->str, "PONG");
	freeReplyObject(rep);
	get(admin.n, "/healthz", &r);
	assert_int_equal(r.code, 200);
	http("HEAD", admin.n, "/readyz", &r);
	assert_int_equal(r.code, 200);
	assert_int_equal(r.len, 0); /* HEAD: no body */
	/* the oldest were told and closed; the 16 newest minus the two the
	 * probes took are still open */
	char told[512] = {0};
	assert_true(recv(idle[0], told, sizeof(told) - 1, 0) > 0);
	assert_non_null(strstr(told, "HTTP/1.1 408 "));
	assert_int_equal(recv(idle[0], told, sizeof(told), 0), 0);
	for (int i = N - 14; i < N; i++) {
		char b;
		assert_int_equal(recv(idle[i], &b, 1, MSG_DONTWAIT), -1);
		assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	}
	for (int i = 0; i < N; i++)
		close(idle[i]);

	char big[9000];
	memset(big, 'a', sizeof(big));
	int fd = tcp_connect(admin.n);
	assert_int_equal(send(fd, "GET /healthz HTTP/1.1\r\nX: ", 27, 0), 27);
	assert_int_equal(send(fd, big, sizeof(big), MSG_NOSIGNAL), (ssize_t)sizeof(big));
	char answer[128] = {0};
	gw_sleep_ms(200);
	assert_true(recv(fd, answer, sizeof(answer) - 1, 0) > 0);
	assert_non_null(strstr(answer, "HTTP/1.1 431 "));
	close(fd);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* The Kubernetes probes stay answerable whatever other admin clients do:
 * with --admin-maxclients (16) idle connections open, /healthz and
 * /readyz still answer 200, again and again. */
static void test_probes_answer_past_idle_connections(void **state)
{
	struct gw g;
	struct got r;
	struct gw_port admin = gw_free_port_arg();
	enum { CAP = 16 };
	int idle[CAP];
	gw_start(&g, NULL, "--admin-port", admin.arg, NULL);
	for (int i = 0; i < CAP; i++)
		idle[i] = tcp_connect(admin.n);
	gw_sleep_ms(100);
	for (int round = 0; round < 3; round++) {
		get(admin.n, "/healthz", &r);
		assert_int_equal(r.code, 200);
		get(admin.n, "/readyz", &r);
		assert_int_equal(r.code, 200);
		/* the idle ones come back, as a slowloris would */
		for (int i = 0; i < CAP; i++) {
			close(idle[i]);
			idle[i] = tcp_connect(admin.n);
		}
		gw_sleep_ms(100);
	}
	for (int i = 0; i < CAP; i++)
		close(idle[i]);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_probes_and_metrics, gw_teardown),
		cmocka_unit_test_teardown(test_not_ready_until_the_store_opens, gw_teardown),
		cmocka_unit_test_teardown(test_not_ready_while_shutting_down, gw_teardown),
		cmocka_unit_test_teardown(test_admin_port_in_use_stops_the_start, gw_teardown),
		cmocka_unit_test_teardown(test_no_credentials_explained, gw_teardown),
		cmocka_unit_test_teardown(test_profile_not_found, gw_teardown),
		cmocka_unit_test_teardown(test_default_admin_port_taken, gw_teardown),
		cmocka_unit_test_teardown(test_protocol_port_in_use_stops_the_start, gw_teardown),
		cmocka_unit_test_teardown(test_admin_connections_capped, gw_teardown),
		cmocka_unit_test_teardown(test_probes_answer_past_idle_connections, gw_teardown),
		cmocka_unit_test_teardown(test_dynamodb_requests_on_moto, gw_teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
