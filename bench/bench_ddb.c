/*
 * bench_ddb: the CPU leasegate spends per DynamoDB request, on its side
 * only: body (cJSON), SigV4, libcurl and the loop, CRC32 and parsing of
 * the answer.
 *
 * A child process answers every request with a canned UpdateItem answer
 * (right x-amz-crc32, keep-alive); the parent drives the DynamoDB store
 * with `depth` requests in flight and reads its own CPU time
 * (CLOCK_PROCESS_CPUTIME_ID covers the parent only). The pieces are then
 * timed alone, in tight loops. Target: < 20 us of CPU per request.
 *
 * With LG_MOTO, LG_AK and LG_SK set (tests/run-integration.sh), it also
 * prints the DynamoDB requests each store operation costs against moto.
 *
 *   build/bench/bench_ddb [requests] [depth]
 */
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/clock.h"
#include "lib/http/http.h"
#include "core/store/dynamodb/ddb_json.h"
#include "lib/aws/sigv4.h"
#include "core/store/dynamodb/store_dynamodb.h"
#include "core/locktable.h"

static const char answer_body[] =
	"{\"Attributes\":{\"pk\":{\"S\":\"LOCK#bench\"},\"_type\":{\"S\":\"LOCK\"},"
	"\"owner\":{\"S\":\"9f86d081884c7d659a2feaa0c55ad015\"},"
	"\"rvn\":{\"S\":\"a3a5e715f0cc574a73c3f9bebb6bc24f\"},\"fence\":{\"N\":\"12\"},"
	"\"leaseMs\":{\"N\":\"30000\"},\"holder\":{\"S\":\"pod-1\"}}}";

static void serve(struct evhttp_request *req, void *arg)
{
	const char *crc = arg;
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Content-Type", "application/x-amz-json-1.0");
	evhttp_add_header(h, "x-amz-crc32", crc);
	struct evbuffer *out = evbuffer_new();
	evbuffer_add(out, answer_body, sizeof answer_body - 1);
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
}

/* The responder: a child process; returns its pid, the port in *port. */
static pid_t start_responder(unsigned *port)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid != 0) {
		close(p[1]);
		ssize_t n = read(p[0], port, sizeof *port);
		close(p[0]);
		return n == (ssize_t)sizeof *port ? pid : -1;
	}
	static char crc[16];
	snprintf(crc, sizeof crc, "%u", (unsigned)ddb_crc32(answer_body, sizeof answer_body - 1));
	struct event_base *b = event_base_new();
	struct evhttp *http = evhttp_new(b);
	struct evhttp_bound_socket *s = evhttp_bind_socket_with_handle(http, "127.0.0.1", 0);
	if (!s)
		_exit(1);
	evhttp_set_gencb(http, serve, crc);
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	getsockname(evhttp_bound_socket_get_fd(s), (struct sockaddr *)&a, &len);
	unsigned pt = ntohs(a.sin_port);
	if (write(p[1], &pt, sizeof pt) != (ssize_t)sizeof pt)
		_exit(1);
	close(p[1]);
	event_base_dispatch(b);
	_exit(0);
}

static int64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double tv_us(const struct timeval *a, const struct timeval *b)
{
	return (double)(a->tv_sec - b->tv_sec) * 1e6 + (double)(a->tv_usec - b->tv_usec);
}

static struct aws_credentials keys = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "",
				      0};

static const struct aws_credentials *creds_of(void *arg)
{
	return arg;
}

struct driver {
	struct store *s;
	struct event_base *base;
	long todo, sent, done, failed;
	struct store_req req;
};

static void submit_one(struct driver *d);

static void on_done(void *arg, const struct store_result *res)
{
	struct driver *d = arg;
	d->done++;
	if (res->status != STORE_OK) {
		if (d->failed++ == 0)
			fprintf(stderr, "request failed: %s %s\n", store_status_name(res->status),
				res->message);
	}
	if (d->sent < d->todo)
		submit_one(d);
	if (d->done == d->todo)
		event_base_loopbreak(d->base);
}

static void submit_one(struct driver *d)
{
	d->sent++;
	if (!store_submit(d->s, &d->req, on_done, d)) {
		d->done++;
		d->failed++;
	}
}

static void on_open(void *arg, const struct store_result *res)
{
	*(enum store_status *)arg = res->status;
}

static struct store *open_store(struct event_base *base, struct clock *clk, const char *url,
				const char *table, const char *pk, struct aws_credentials *cr)
{
	struct store_dynamodb_config cfg = {
		.table = table,
		.region = "us-east-1",
		.endpoint = url,
		.partition_key = pk,
		.credentials = creds_of,
		.credentials_arg = cr,
		.create_table = pk == NULL,
	};
	char err[STORE_DDB_ERR_MAX];
	struct store *s = store_dynamodb_new(base, clk, &cfg, err);
	if (!s) {
		fprintf(stderr, "store: %s\n", err);
		return NULL;
	}
	enum store_status st = (enum store_status) - 1;
	if (!store_dynamodb_open(s, on_open, &st))
		return NULL;
	while (st == (enum store_status) - 1)
		event_base_loop(base, EVLOOP_ONCE);
	if (st != STORE_OK) {
		fprintf(stderr, "open %s: %s\n", table, store_status_name(st));
		store_free(s);
		return NULL;
	}
	return s;
}

/* Times fn over n iterations, in CPU ns per iteration. */
#define TIME_LOOP(n, body)                                                                         \
	({                                                                                         \
		int64_t t0_ = cpu_ns();                                                            \
		for (long i_ = 0; i_ < (n); i_++) {                                                \
			body;                                                                      \
		}                                                                                  \
		(double)(cpu_ns() - t0_) / (double)(n);                                            \
	})

static void pieces(long n)
{
	struct ddb_keys k = {"Locks", "pk", NULL, NULL};
	struct store_req req = {.op = STORE_ACQUIRE,
				.name = "bench",
				.owner = "9f86d081884c7d659a2feaa0c55ad015",
				.rvn = "a3a5e715f0cc574a73c3f9bebb6bc24f",
				.holder = "pod-1",
				.lease_ms = 30000};
	char err[DDB_ERR_MAX];
	size_t len = 0;
	double build = TIME_LOOP(n, {
		char *b = ddb_build_request(&k, &req, &len, err);
		ddb_body_free(b);
	});
	char *body = ddb_build_request(&k, &req, &len, err);
	struct http_header h[3] = {{"Host", "127.0.0.1:8000"},
				   {"Content-Type", "application/x-amz-json-1.0"},
				   {"X-Amz-Target", "DynamoDB_20120810.UpdateItem"}};
	static struct sigv4_key_cache cache;
	struct sigv4_request sr = {.method = "POST",
				   .path = "/",
				   .headers = h,
				   .nheaders = 3,
				   .body = body,
				   .body_len = len,
				   .region = "us-east-1",
				   .service = "dynamodb",
				   .key_cache = &cache};
	struct sigv4_signed sig;
	bool ok = true;
	double sign = TIME_LOOP(n, ok &= sigv4_sign(&sr, &keys, 1764400000000, &sig, NULL));
	struct lock_item it;
	double parse = TIME_LOOP(n, ok &= ddb_parse_output(DDB_UPDATE_ITEM, answer_body,
							   sizeof answer_body - 1, NULL, &it, err));
	volatile uint32_t sink = 0;
	double crc = TIME_LOOP(n, sink ^= ddb_crc32(answer_body, sizeof answer_body - 1));
	ddb_body_free(body);
	printf("  pieces (CPU us each):  build body %.2f   sign %.2f   parse answer %.2f   "
	       "crc32 %.2f%s\n",
	       build / 1000, sign / 1000, parse / 1000, crc / 1000, ok ? "" : "  (FAILED)");
}

/* The floor: the same requests through http.c alone (pre-signed, fixed
 * body), so the figure above splits into transport and the store's own. */
struct raw {
	struct http *h;
	struct event_base *base;
	struct http_request req;
	long todo, sent, done, failed;
};

static void raw_send(struct raw *r);

static void raw_done(void *arg, const struct http_response *res)
{
	struct raw *r = arg;
	r->done++;
	if (res->status != 200)
		r->failed++;
	if (r->sent < r->todo)
		raw_send(r);
	if (r->done == r->todo)
		event_base_loopbreak(r->base);
}

static void raw_send(struct raw *r)
{
	r->sent++;
	if (!http_send(r->h, &r->req, raw_done, r)) {
		r->done++;
		r->failed++;
	}
}

static void http_floor(struct event_base *base, const char *url, long n, long depth)
{
	static const struct http_header h[] = {
		{"Host", "127.0.0.1"},
		{"Content-Type", "application/x-amz-json-1.0"},
		{"X-Amz-Target", "DynamoDB_20120810.UpdateItem"},
		{"Accept-Encoding", "identity"},
		{"X-Amz-Date", "20251129T000000Z"},
		{"Authorization",
		 "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20251129/us-east-1/"
		 "dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;"
		 "x-amz-target, Signature=0000000000000000000000000000000000000000000000"
		 "000000000000000000"},
	};
	static const char body[] =
		"{\"TableName\":\"Locks\",\"Key\":{\"pk\":{\"S\":\"LOCK#bench\"}}}";
	struct raw r = {.h = http_new(base, NULL), .base = base, .todo = n};
	if (!r.h)
		return;
	r.req = (struct http_request){.method = "POST",
				      .url = url,
				      .headers = h,
				      .nheaders = sizeof h / sizeof h[0],
				      .body = body,
				      .body_len = sizeof body - 1};
	struct rusage r0, r1;
	getrusage(RUSAGE_SELF, &r0);
	int64_t c0 = cpu_ns();
	for (long i = 0; i < depth && r.sent < r.todo; i++)
		raw_send(&r);
	event_base_dispatch(base);
	getrusage(RUSAGE_SELF, &r1);
	printf("  http.c + libcurl + libevent alone: %.2f us CPU per request: user %.2f, kernel "
	       "%.2f "
	       "(%ld failed)\n",
	       (double)(cpu_ns() - c0) / 1000.0 / (double)n,
	       tv_us(&r1.ru_utime, &r0.ru_utime) / (double)n,
	       tv_us(&r1.ru_stime, &r0.ru_stime) / (double)n, r.failed);
	http_free(r.h);
}

static int cpu_bench(long n, long depth)
{
	unsigned port = 0;
	pid_t child = start_responder(&port);
	if (child < 0) {
		fprintf(stderr, "responder did not start\n");
		return 1;
	}
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%u", port);
	struct event_base *base = event_base_new();
	struct clock *clk = clock_real_new(base);
	struct store *s = open_store(base, clk, url, "Locks", "pk", &keys);
	int rc = 1;
	if (s) {
		struct driver d = {.s = s, .base = base, .todo = 2000};
		d.req = (struct store_req){.op = STORE_ACQUIRE,
					   .name = "bench",
					   .owner = "9f86d081884c7d659a2feaa0c55ad015",
					   .rvn = "a3a5e715f0cc574a73c3f9bebb6bc24f",
					   .holder = "pod-1",
					   .lease_ms = 30000};
		/* warm up: connections, allocator */
		for (long i = 0; i < depth && d.sent < d.todo; i++)
			submit_one(&d);
		event_base_dispatch(base);
		d.todo = n;
		d.sent = d.done = d.failed = 0;
		struct rusage r0, r1;
		getrusage(RUSAGE_SELF, &r0);
		int64_t c0 = cpu_ns(), w0 = wall_ns();
		for (long i = 0; i < depth && d.sent < d.todo; i++)
			submit_one(&d);
		event_base_dispatch(base);
		int64_t cpu = cpu_ns() - c0, wall = wall_ns() - w0;
		getrusage(RUSAGE_SELF, &r1);
		struct store_dynamodb_stats st;
		store_dynamodb_stats(s, &st);
		printf("bench_ddb: %ld UpdateItem requests, %ld in flight, %ld failed\n", n, depth,
		       d.failed);
		printf("  client CPU per request: %.2f us (target < 20 us): user %.2f, kernel "
		       "%.2f\n",
		       (double)cpu / 1000.0 / (double)n,
		       tv_us(&r1.ru_utime, &r0.ru_utime) / (double)n,
		       tv_us(&r1.ru_stime, &r0.ru_stime) / (double)n);
		printf("  wall: %.0f requests/s through the loop (responder in another process)\n",
		       (double)n * 1e9 / (double)wall);
		pieces(20000);
		http_floor(base, url, n, depth);
		rc = d.failed ? 1 : 0;
		store_free(s);
	}
	clock_free(clk);
	event_base_free(base);
	kill(child, SIGTERM);
	waitpid(child, NULL, 0);
	return rc;
}

static uint64_t http_total(struct store *s)
{
	struct store_dynamodb_stats st;
	store_dynamodb_stats(s, &st);
	uint64_t t = 0;
	for (int i = 0; i < DDB_OP_COUNT; i++)
		t += st.http[i];
	return t;
}

static void on_count(void *arg, const struct store_result *res)
{
	*(enum store_status *)arg = res->status;
}

/* The DynamoDB requests each store operation costs against moto. */
static int moto_counts(void)
{
	static struct aws_credentials moto;
	snprintf(moto.access_key_id, sizeof moto.access_key_id, "%s", getenv("LG_AK"));
	snprintf(moto.secret_access_key, sizeof moto.secret_access_key, "%s",
		 getenv("LG_SK") ? getenv("LG_SK") : "");
	struct event_base *base = event_base_new();
	struct clock *clk = clock_real_new(base);
	uint64_t before = 0;
	struct store *s = open_store(base, clk, getenv("LG_MOTO"), "lg_bench", NULL, &moto);
	if (!s)
		return 1;
	printf("requests against moto (HTTP requests per store operation):\n");
	printf("  open (DescribeTable, CreateTable, DescribeTable): %llu\n",
	       (unsigned long long)http_total(s));
	static const struct {
		const char *what;
		struct store_req req;
		enum store_status want;
	} steps[] = {
		{"acquire a free lock",
		 {.op = STORE_ACQUIRE, .name = "n", .owner = "A", .rvn = "r1", .lease_ms = 30000},
		 STORE_OK},
		{"acquire a held lock (refused, item back)",
		 {.op = STORE_ACQUIRE, .name = "n", .owner = "B", .rvn = "r2", .lease_ms = 30000},
		 STORE_REFUSED},
		{"poll (consistent read)", {.op = STORE_READ, .name = "n"}, STORE_OK},
		{"renew",
		 {.op = STORE_RENEW, .name = "n", .owner = "A", .rvn = "r3", .lease_ms = 30000},
		 STORE_OK},
		{"takeover of a seen rvn",
		 {.op = STORE_ACQUIRE,
		  .name = "n",
		  .owner = "B",
		  .rvn = "r4",
		  .seen_rvn = "r3",
		  .lease_ms = 30000},
		 STORE_OK},
		{"renew of a lost lease (refused)",
		 {.op = STORE_RENEW, .name = "n", .owner = "A", .rvn = "r5", .lease_ms = 30000},
		 STORE_REFUSED},
		{"fencing check",
		 {.op = STORE_CHECK, .name = "n", .owner = "B", .token = 2},
		 STORE_OK},
		{"release", {.op = STORE_RELEASE, .name = "n", .owner = "B"}, STORE_OK},
		{"delete", {.op = STORE_DELETE, .name = "n"}, STORE_OK},
	};
	int rc = 0;
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		before = http_total(s);
		enum store_status st = (enum store_status) - 1;
		if (!store_submit(s, &steps[i].req, on_count, &st))
			return 1;
		while (st == (enum store_status) - 1)
			event_base_loop(base, EVLOOP_ONCE);
		printf("  %-42s %llu  (%s)\n", steps[i].what,
		       (unsigned long long)(http_total(s) - before), store_status_name(st));
		if (st != steps[i].want)
			rc = 1;
	}
	store_free(s);
	clock_free(clk);
	event_base_free(base);
	return rc;
}

/* ---- requests per lock operation, through the lease core ---- */

struct lock_step {
	bool done;
	struct lease *lease;
	int renewed;
	bool failed;
};

static void lock_acquired(void *arg, struct lease *l, const struct lt_error *err)
{
	struct lock_step *st = arg;
	st->done = true;
	st->lease = l;
	st->failed = err != NULL;
}

static void lock_renewed(void *arg, int renewed, const struct lt_error *err)
{
	struct lock_step *st = arg;
	st->done = true;
	st->renewed = renewed;
	st->failed = err != NULL;
}

/* "what  total  (GetItem 1, UpdateItem 1)" from two snapshots of the stats */
static void print_ops(const char *what, const struct store_dynamodb_stats *a,
		      const struct store_dynamodb_stats *b)
{
	char ops[160] = "";
	size_t len = 0;
	uint64_t total = 0;
	for (int i = 0; i < DDB_OP_COUNT; i++) {
		uint64_t d = b->http[i] - a->http[i];
		total += d;
		if (d && len < sizeof ops)
			len += (size_t)snprintf(ops + len, sizeof ops - len, "%s%s %llu",
						len ? ", " : "", ddb_op_name((enum ddb_op)i),
						(unsigned long long)d);
	}
	printf("  %-42s %llu  (%s)\n", what, (unsigned long long)total, ops);
}

static void wait_step(struct event_base *base, struct lock_step *st)
{
	while (!st->done)
		event_base_loop(base, EVLOOP_ONCE);
}

/* Two processes' worth (a store and a locktable each) contend for a lock
 * on moto; prints the DynamoDB requests of each lock operation. */
static int lock_counts(void)
{
	static struct aws_credentials moto;
	snprintf(moto.access_key_id, sizeof moto.access_key_id, "%s", getenv("LG_AK"));
	snprintf(moto.secret_access_key, sizeof moto.secret_access_key, "%s",
		 getenv("LG_SK") ? getenv("LG_SK") : "");
	struct event_base *base = event_base_new();
	struct clock *clk = clock_real_new(base);
	struct store *sa = open_store(base, clk, getenv("LG_MOTO"), "lg_bench", "pk", &moto);
	struct store *sb = open_store(base, clk, getenv("LG_MOTO"), "lg_bench", "pk", &moto);
	if (!sa || !sb)
		return 1;
	struct obs oa = {0}, ob = {0};
	struct lt_options opts = {.holder_label = "bench"};
	struct locktable *a = lt_new(clk, sa, &oa, &opts), *b = lt_new(clk, sb, &ob, &opts);
	if (!a || !b)
		return 1;
	printf("requests against moto (HTTP requests per lock operation, two processes A, B):\n");
	struct lt_acquire_args args = {.name = "counted", .lease_ms = 30000};
	struct lock_step st;
	int rc = 0;
#define STEP(what, call, store)                                                                    \
	do {                                                                                       \
		struct store_dynamodb_stats s0_, s1_;                                              \
		store_dynamodb_stats(store, &s0_);                                                 \
		st = (struct lock_step){0};                                                        \
		call;                                                                              \
		wait_step(base, &st);                                                              \
		store_dynamodb_stats(store, &s1_);                                                 \
		print_ops(what, &s0_, &s1_);                                                       \
		if (st.failed)                                                                     \
			rc = 1;                                                                    \
	} while (0)
	struct lease *la = NULL;
	STEP("A try-acquires a free lock", (void)!lt_acquire(a, &args, lock_acquired, &st), sa);
	la = st.lease;
	STEP("B tries it while A holds it", (void)!lt_acquire(b, &args, lock_acquired, &st), sb);
	STEP("B tries again (it has seen A hold it)",
	     (void)!lt_acquire(b, &args, lock_acquired, &st), sb);
	if (la) {
		STEP("A renews", (void)!lease_renew(la, lock_renewed, &st), sa);
		STEP("A checks its fencing token", (void)!lease_check(la, lock_renewed, &st), sa);
		STEP("A releases", lease_release_then(la, lock_renewed, &st), sa);
	}
	STEP("B tries after the release", (void)!lt_acquire(b, &args, lock_acquired, &st), sb);
	if (st.lease)
		lease_release(st.lease);
	/* let the last release answer */
	struct timeval tv = {0, 200000};
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	lt_free(a);
	lt_free(b);
	store_free(sa);
	store_free(sb);
	clock_free(clk);
	event_base_free(base);
	return rc;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50000;
	long depth = argc > 2 ? atol(argv[2]) : 32;
	if (n <= 0 || depth <= 0) {
		fprintf(stderr, "usage: bench_ddb [requests] [depth]\n");
		return 2;
	}
	int rc = cpu_bench(n, depth);
	if (getenv("LG_MOTO") && getenv("LG_AK"))
		rc |= moto_counts() | lock_counts();
	return rc;
}
