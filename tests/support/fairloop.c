/*
 * fairloop: see fairloop.h.
 */
#include "tests/support/fairloop.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

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

long long fl_info(int port, const char *field)
{
	struct timeval tv = {5, 0};
	redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
	long long v = -1;
	if (c == NULL || c->err) {
		if (c)
			redisFree(c);
		return -1;
	}
	redisReply *r = redisCommand(c, "INFO leases");
	char key[96];
	snprintf(key, sizeof(key), "\n%s:", field);
	if (r != NULL && r->type == REDIS_REPLY_STRING) {
		const char *at = strstr(r->str, key);
		if (at != NULL)
			v = atoll(at + strlen(key));
	}
	if (r)
		freeReplyObject(r);
	redisFree(c);
	return v;
}

/* Store requests of the gateway on port, all operations. */
static long long requests_of(int port)
{
	static const char *const ops[] = {"acquire", "renew", "release",  "read",
					  "delete",  "check", "announce", "withdraw"};
	long long n = 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		char f[64];
		snprintf(f, sizeof(f), "store_requests_%s", ops[i]);
		long long v = fl_info(port, f);
		n += v > 0 ? v : 0;
	}
	return n;
}

/* One client: waits (ms, as int) go to fd, one per acquisition; -1 for a
 * timeout, -2 for an error. */
static int client(const struct fl_config *c, int i, int fd, long long deadline)
{
	struct timeval tv = {c->wait_ms / 1000 + 30, 0}; /* a reply's longest wait, and more */
	redisContext *rc = redisConnectWithTimeout("127.0.0.1", c->ports[i % c->ngw], tv);
	if (rc == NULL || rc->err)
		return 1;
	redisSetTimeout(rc, tv);
	const char *take = c->campaign ? "LEADER.CAMPAIGN" : "LOCK.ACQUIRE";
	const char *give = c->campaign ? "LEADER.RESIGN" : "LOCK.RELEASE";
	while (now_ms() < deadline) {
		long long t0 = now_ms();
		redisReply *r = redisCommand(rc, "%s %s %d WAIT %d HOLDER c%d", take, c->name,
					     c->lease_ms, c->wait_ms, i);
		int w = (int)(now_ms() - t0);
		if (r == NULL)
			return 1;
		if (r->type == REDIS_REPLY_NIL)
			w = -1;
		else if (r->type != REDIS_REPLY_INTEGER)
			w = -2;
		freeReplyObject(r);
		if (write(fd, &w, sizeof(w)) != sizeof(w))
			return 1;
		if (w < 0)
			continue;
		sleep_ms(c->hold_ms);
		r = redisCommand(rc, "%s %s", give, c->name);
		if (r == NULL)
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

bool fl_run(const struct fl_config *c, struct fl_result *r)
{
	memset(r, 0, sizeof(*r));
	if (c->clients > FL_CLIENTS_MAX)
		return false;
	r->clients = c->clients;
	long long req0 = 0, ann0 = 0;
	for (int g = 0; g < c->ngw; g++) {
		req0 += requests_of(c->ports[g]);
		ann0 += fl_info(c->ports[g], "store_requests_announce");
	}
	FILE *out[FL_CLIENTS_MAX];
	pid_t pid[FL_CLIENTS_MAX];
	long long start = now_ms(), deadline = start + c->seconds * 1000LL;
	bool ok = true;
	for (int i = 0; i < c->clients; i++) {
		out[i] = tmpfile();
		if (out[i] == NULL)
			return false;
		pid[i] = fork();
		if (pid[i] == 0)
			_exit(client(c, i, fileno(out[i]), deadline));
	}
	size_t cap = 1024, n = 0;
	int *waits = malloc(cap * sizeof(int));
	for (int i = 0; i < c->clients; i++) {
		int st = 0;
		waitpid(pid[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			ok = false;
		rewind(out[i]);
		int w;
		while (fread(&w, sizeof(w), 1, out[i]) == 1) {
			if (w == -1) {
				r->timeouts++;
				continue;
			}
			if (w < 0) {
				r->errors++;
				continue;
			}
			r->acquisitions[i]++;
			if (w > r->client_max_wait[i])
				r->client_max_wait[i] = w;
			if (n == cap)
				waits = realloc(waits, (cap *= 2) * sizeof(int));
			waits[n++] = w;
		}
		fclose(out[i]);
	}
	r->elapsed_ms = now_ms() - start;
	long long req1 = 0, ann1 = 0;
	for (int g = 0; g < c->ngw; g++) {
		req1 += requests_of(c->ports[g]);
		ann1 += fl_info(c->ports[g], "store_requests_announce");
	}
	r->requests = req1 - req0;
	r->announces = ann1 - ann0;
	r->total = (long long)n;
	r->min_acq = r->clients > 0 ? r->acquisitions[0] : 0;
	for (int i = 0; i < r->clients; i++) {
		if (r->acquisitions[i] < r->min_acq)
			r->min_acq = r->acquisitions[i];
		if (r->acquisitions[i] > r->max_acq)
			r->max_acq = r->acquisitions[i];
	}
	if (n > 0) {
		qsort(waits, n, sizeof(int), cmp_int);
		r->p50 = waits[(n - 1) / 2];
		r->p99 = waits[(n - 1) * 99 / 100];
		r->max_wait = waits[n - 1];
		r->handovers_per_s = n * 1000.0 / (double)r->elapsed_ms;
		r->requests_per_handover = (double)r->requests / (double)n;
	}
	free(waits);
	return ok;
}

void fl_print(const char *what, const struct fl_config *c, const struct fl_result *r)
{
	printf("# %s: %d gateway(s), %d clients, lease %d ms, hold %d ms, %d s: %.1f handovers/s, "
	       "%.3f requests per handover (%lld requests, %lld announcements), acquisitions per "
	       "client %lld..%lld, wait p50 %lld ms p99 %lld ms max %lld ms, %d timeouts, %d "
	       "errors\n",
	       what, c->ngw, c->clients, c->lease_ms, c->hold_ms, c->seconds, r->handovers_per_s,
	       r->requests_per_handover, r->requests, r->announces, r->min_acq, r->max_acq, r->p50,
	       r->p99, r->max_wait, r->timeouts, r->errors);
	fflush(stdout);
}
