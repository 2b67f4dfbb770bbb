/*
 * bench_fairness: cross-replica contention on one lock, on moto, for 1 and
 * 2 (or more) gateways in one run (Fair across replicas).
 *
 *   build/bench/bench_fairness [clients] [seconds] [lease-ms] [hold-ms] [max-gateways]
 *     defaults: 8 clients, 10 s, 3000 ms, 5 ms, 2 gateways
 *
 * Starts a moto_server of its own that applies one request at a time (its
 * stock server is threaded and its conditional writes are not atomic),
 * with signature checking on and an IAM user, then for 1..max gateways on
 * one new table: forked hiredis clients, split over the gateways (client i
 * on gateway i % n), loop LOCK.ACQUIRE name lease WAIT 60000 / hold /
 * LOCK.RELEASE for the given seconds. Prints one row per gateway count:
 * handovers/s, store requests per handover (INFO leases of every gateway,
 * store_requests_*), min/max acquisitions per client, p50/p99/max wait.
 *
 * The load generator is that of tests/support/fairloop.c (the tests'
 * library is not linked into benchmarks). Needs python3 with moto and
 * boto3; the leasegate binary is found beside build/bench.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <hiredis/hiredis.h>

#define CLIENTS_MAX 64
#define GW_MAX	    4

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return -1;
	close(fd);
	return ntohs(a.sin_port);
}

static bool can_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	bool ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

/* ---- moto, one request at a time (as tests/support/fairloop.c) ---- */

static const char serial_moto_py[] =
	"import json, sys, threading\n"
	"import boto3\n"
	"from moto.server import DomainDispatcherApplication, create_backend_app\n"
	"from werkzeug.serving import make_server\n"
	"lock = threading.Lock()\n"
	"app = DomainDispatcherApplication(create_backend_app)\n"
	"def serial(environ, start_response):\n"
	"    with lock:\n"
	"        return list(app(environ, start_response))\n"
	"srv = make_server('127.0.0.1', 0, serial, threaded=True)\n"
	"ep = 'http://127.0.0.1:%d' % srv.server_port\n"
	"threading.Thread(target=srv.serve_forever, daemon=True).start()\n"
	"iam = boto3.client('iam', endpoint_url=ep, region_name='us-east-1',\n"
	"                   aws_access_key_id='setup', aws_secret_access_key='setup')\n"
	"iam.create_user(UserName='leasegate')\n"
	"iam.put_user_policy(UserName='leasegate', PolicyName='all', PolicyDocument=json.dumps(\n"
	"    {'Version': '2012-10-17', 'Statement': [{'Effect': 'Allow', 'Action': '*', "
	"'Resource': '*'}]}))\n"
	"key = iam.create_access_key(UserName='leasegate')['AccessKey']\n"
	"print('LG_MOTO=' + ep)\n"
	"print('LG_AK=' + key['AccessKeyId'])\n"
	"print('LG_SK=' + key['SecretAccessKey'])\n"
	"print('READY', flush=True)\n"
	"sys.stdout.close()\n"
	"threading.Event().wait()\n";

static pid_t start_moto(void)
{
	int p[2];
	if (pipe(p) != 0)
		return 0;
	pid_t pid = fork();
	if (pid == 0) {
		FILE *null = fopen("/dev/null", "w");
		if (null != NULL)
			dup2(fileno(null), 2);
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		setenv("INITIAL_NO_AUTH_ACTION_COUNT", "3", 1);
		execlp("python3", "python3", "-c", serial_moto_py, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	FILE *in = fdopen(p[0], "r");
	char line[512];
	bool ready = false;
	while (in != NULL && fgets(line, sizeof(line), in) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		char *eq = strchr(line, '=');
		if (eq != NULL) {
			*eq = '\0';
			setenv(line, eq + 1, 1);
		} else if (strcmp(line, "READY") == 0) {
			ready = true;
			break;
		}
	}
	if (in != NULL)
		fclose(in);
	if (!ready) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return 0;
	}
	return pid;
}

/* ---- gateways ---- */

static pid_t start_gateway(const char *bin, const char *table, int port)
{
	char p[16];
	snprintf(p, sizeof(p), "%d", port);
	pid_t pid = fork();
	if (pid == 0) {
		FILE *null = fopen("/dev/null", "w");
		if (null != NULL) {
			dup2(fileno(null), 1);
			dup2(fileno(null), 2);
		}
		setenv("AWS_ACCESS_KEY_ID", getenv("LG_AK"), 1);
		setenv("AWS_SECRET_ACCESS_KEY", getenv("LG_SK"), 1);
		setenv("AWS_ENDPOINT_URL_DYNAMODB", getenv("LG_MOTO"), 1);
		setenv("AWS_REGION", "us-east-1", 1);
		execl(bin, bin, "--port", p, "--pg-port", "0", "--admin-port", "0", "--table",
		      table, "--create-table", "--log-level", "warn", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 400 && pid > 0; i++) {
		if (can_connect(port)) {
			sleep_ms(20);
			return pid;
		}
		sleep_ms(25);
	}
	return -1;
}

static void stop_gateway(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* Store requests of the gateway on port, all operations (INFO leases). */
static long long requests_of(int port)
{
	struct timeval tv = {5, 0};
	redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
	long long n = 0;
	if (c == NULL || c->err)
		return 0;
	redisReply *r = redisCommand(c, "INFO leases");
	for (const char *at = r && r->type == REDIS_REPLY_STRING ? r->str : "";
	     (at = strstr(at, "store_requests_")) != NULL;) {
		const char *colon = strchr(at, ':');
		if (colon == NULL)
			break;
		n += atoll(colon + 1);
		at = colon;
	}
	if (r)
		freeReplyObject(r);
	redisFree(c);
	return n;
}

/* ---- the loop ---- */

struct run {
	int ngw, clients, seconds, lease_ms, hold_ms;
	int ports[GW_MAX];
};

static int client(const struct run *c, int i, int fd, long long deadline)
{
	struct timeval tv = {90, 0};
	redisContext *rc = redisConnectWithTimeout("127.0.0.1", c->ports[i % c->ngw], tv);
	if (rc == NULL || rc->err)
		return 1;
	redisSetTimeout(rc, tv);
	while (now_ms() < deadline) {
		long long t0 = now_ms();
		redisReply *r = redisCommand(rc, "LOCK.ACQUIRE bench %d WAIT 60000", c->lease_ms);
		int w = (int)(now_ms() - t0);
		if (r == NULL)
			return 1;
		if (r->type != REDIS_REPLY_INTEGER)
			w = -1;
		freeReplyObject(r);
		if (write(fd, &w, sizeof(w)) != sizeof(w))
			return 1;
		if (w < 0)
			continue;
		sleep_ms(c->hold_ms);
		if ((r = redisCommand(rc, "LOCK.RELEASE bench")) == NULL)
			return 1;
		freeReplyObject(r);
	}
	redisFree(rc);
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static bool run_loop(const struct run *c)
{
	long long req0 = 0, req1 = 0;
	for (int g = 0; g < c->ngw; g++)
		req0 += requests_of(c->ports[g]);
	FILE *out[CLIENTS_MAX];
	pid_t pid[CLIENTS_MAX];
	long long start = now_ms(), deadline = start + c->seconds * 1000LL;
	for (int i = 0; i < c->clients; i++) {
		if ((out[i] = tmpfile()) == NULL)
			return false;
		pid[i] = fork();
		if (pid[i] == 0)
			_exit(client(c, i, fileno(out[i]), deadline));
	}
	size_t cap = 4096, n = 0;
	int *waits = malloc(cap * sizeof(int));
	long long acq[CLIENTS_MAX] = {0}, mn = LLONG_MAX, mx = 0;
	int failed = 0;
	bool ok = true;
	for (int i = 0; i < c->clients; i++) {
		int st = 0, w;
		waitpid(pid[i], &st, 0);
		ok = ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		rewind(out[i]);
		while (fread(&w, sizeof(w), 1, out[i]) == 1) {
			if (w < 0) {
				failed++;
				continue;
			}
			acq[i]++;
			if (n == cap)
				waits = realloc(waits, (cap *= 2) * sizeof(int));
			waits[n++] = w;
		}
		fclose(out[i]);
		mn = acq[i] < mn ? acq[i] : mn;
		mx = acq[i] > mx ? acq[i] : mx;
	}
	long long elapsed = now_ms() - start;
	for (int g = 0; g < c->ngw; g++)
		req1 += requests_of(c->ports[g]);
	if (n == 0) {
		printf("%8d %8d   no acquisition\n", c->ngw, c->clients);
		free(waits);
		return false;
	}
	qsort(waits, n, sizeof(int), cmp_int);
	printf("%8d %8d %12.1f %13.3f %9lld..%-6lld %8d %8d %8d %8d%s\n", c->ngw, c->clients,
	       n * 1000.0 / (double)elapsed, (double)(req1 - req0) / (double)n, mn, mx,
	       waits[(n - 1) / 2], waits[(n - 1) * 99 / 100], waits[n - 1], failed,
	       ok ? "" : "  (a client failed)");
	fflush(stdout);
	free(waits);
	return ok;
}

int main(int argc, char **argv)
{
	struct run c = {
		.clients = argc > 1 ? atoi(argv[1]) : 8,
		.seconds = argc > 2 ? atoi(argv[2]) : 10,
		.lease_ms = argc > 3 ? atoi(argv[3]) : 3000,
		.hold_ms = argc > 4 ? atoi(argv[4]) : 5,
	};
	int max_gw = argc > 5 ? atoi(argv[5]) : 2;
	if (c.clients < 1 || c.clients > CLIENTS_MAX || max_gw < 1 || max_gw > GW_MAX) {
		fprintf(stderr,
			"usage: %s [clients 1..%d] [seconds] [lease-ms] [hold-ms] "
			"[max-gateways 1..%d]\n",
			argv[0], CLIENTS_MAX, GW_MAX);
		return 2;
	}
	char self[PATH_MAX], bin[PATH_MAX + 16];
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(bin, sizeof(bin), "%s/../leasegate", dirname(self));
	if (access(bin, X_OK) != 0) {
		printf("bench_fairness: no leasegate binary at %s (make all)\n", bin);
		return 0;
	}
	pid_t moto = start_moto();
	if (moto == 0) {
		printf("bench_fairness: skipped, python3 with moto and boto3 is needed\n");
		return 0;
	}
	printf("cross-replica contention on one lock, moto (one request at a time), lease %d ms, "
	       "hold %d ms, %d s per row;\nrequests: store requests of every gateway; wait: "
	       "LOCK.ACQUIRE ... WAIT to its token, ms\n",
	       c.lease_ms, c.hold_ms, c.seconds);
	printf("%8s %8s %12s %13s %17s %8s %8s %8s %8s\n", "gateways", "clients", "handovers/s",
	       "req/handover", "acq/client", "p50", "p99", "max", "timeouts");
	int rc = 0;
	for (int ngw = 1; ngw <= max_gw; ngw++) {
		char table[64];
		pid_t gw[GW_MAX] = {0};
		snprintf(table, sizeof(table), "bench-fair-%ld-%d", (long)getpid(), ngw);
		c.ngw = ngw;
		bool up = true;
		for (int g = 0; g < ngw && up; g++) {
			c.ports[g] = free_port();
			gw[g] = start_gateway(bin, table, c.ports[g]);
			up = gw[g] > 0;
		}
		if (!up)
			printf("%8d gateway(s) did not start\n", ngw);
		if (!up || !run_loop(&c))
			rc = 1;
		for (int g = 0; g < ngw; g++)
			stop_gateway(gw[g]);
	}
	kill(moto, SIGTERM);
	waitpid(moto, NULL, 0);
	return rc;
}
