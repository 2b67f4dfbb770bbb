/*
 * testclock: --test-mode's clock driver and its refusals (testclock.h).
 */
#include "gateway/lease/testclock.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/base/clock.h"
#include "core/store/store.h"

/* How often, in real ms, an advance looks again at the store's requests
 * in flight (DynamoDB only: the embedded store answers inline). */
#define TCLOCK_POLL_MS 1

struct tclock_adv {
	struct tclock_adv *next;
	int64_t ms;
	tclock_done done; /* NULL: cancelled */
	void *arg;
};

struct tclock {
	struct clock *fake, *io;
	const struct store *store;
	struct timer poll;		/* on io: look at the store again */
	struct tclock_adv *head, *tail; /* asked, in order; head runs */
	int64_t target;			/* head's end, once started */
	bool started;			/* head has its target */
	bool running;			/* inside pump(): callbacks may ask more */
};

int64_t tclock_now_ms(const struct tclock *tc)
{
	return clock_now_ms(tc->fake);
}

int64_t tclock_wall_ms(const struct tclock *tc)
{
	return clock_wall_ms(tc->fake);
}

/* A timer of the fake clock is due at its current time. */
static bool due_now(const struct tclock *tc)
{
	int64_t due;
	return clock_next_due(tc->fake, &due) && due <= clock_now_ms(tc->fake);
}

/* Runs due timers, one at a time, up to target; true once the clock is
 * there. false: a request is in flight and nothing is due now, so the
 * next timer must wait for its answer. */
static bool run_to_target(struct tclock *tc)
{
	for (;;) {
		if (tc->store->in_flight > 0 && !due_now(tc))
			return false;
		/* a timer due now may be the store's own answer (embedded) */
		if (!clock_fake_step(tc->fake, tc->target))
			break;
	}
	/* nothing in flight (else a step would have run) and nothing due
	 * by target: move there */
	clock_fake_advance(tc->fake, tc->target - clock_now_ms(tc->fake));
	return true;
}

/* Runs the advances asked, in order, as far as the store lets them. */
static void pump(struct tclock *tc)
{
	if (tc->running)
		return; /* a callback asked: the loop below takes it */
	tc->running = true;
	while (tc->head != NULL) {
		struct tclock_adv *a = tc->head;
		if (!tc->started) {
			tc->target = clock_now_ms(tc->fake) + a->ms;
			tc->started = true;
		}
		if (!run_to_target(tc)) {
			timer_arm(&tc->poll, TCLOCK_POLL_MS);
			break;
		}
		tc->head = a->next;
		if (tc->head == NULL)
			tc->tail = NULL;
		tc->started = false;
		tclock_done done = a->done;
		void *arg = a->arg;
		free(a);
		if (done != NULL)
			done(arg, clock_now_ms(tc->fake));
	}
	tc->running = false;
}

static void on_poll(void *arg)
{
	pump(arg);
}

struct tclock *tclock_new(struct clock *fake, struct clock *io, const struct store *store)
{
	struct tclock *tc = calloc(1, sizeof(*tc));
	if (tc == NULL)
		return NULL;
	tc->fake = fake;
	tc->io = io;
	tc->store = store;
	timer_init(&tc->poll, io, on_poll, tc);
	return tc;
}

void tclock_free(struct tclock *tc)
{
	if (tc == NULL)
		return;
	timer_cancel(&tc->poll);
	while (tc->head != NULL) {
		struct tclock_adv *a = tc->head;
		tc->head = a->next;
		free(a);
	}
	free(tc);
}

enum tclock_start tclock_advance(struct tclock *tc, int64_t ms, tclock_done done, void *arg,
				 struct tclock_adv **handle, int64_t *now_ms)
{
	if (tc->head == NULL && !tc->running) {
		/* nothing before it: run it now, and answer now if it ends */
		tc->running = true;
		tc->target = clock_now_ms(tc->fake) + ms;
		bool finished = run_to_target(tc);
		tc->running = false;
		if (finished) {
			*now_ms = clock_now_ms(tc->fake);
			return TCLOCK_DONE;
		}
		tc->started = true;
	}
	struct tclock_adv *a = malloc(sizeof(*a));
	if (a == NULL) {
		if (tc->head == NULL)
			tc->started = false; /* where it got to stays; nobody waits */
		return TCLOCK_NOMEM;
	}
	*a = (struct tclock_adv){.ms = ms, .done = done, .arg = arg};
	if (tc->tail != NULL)
		tc->tail->next = a;
	else
		tc->head = a;
	tc->tail = a;
	*handle = a;
	if (!tc->running && !timer_armed(&tc->poll))
		timer_arm(&tc->poll, TCLOCK_POLL_MS);
	return TCLOCK_PENDING;
}

void tclock_cancel(struct tclock_adv *a)
{
	if (a != NULL)
		a->done = NULL;
}

/* --- refusals --- */

static bool loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(a))
			return true;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return false;
}

bool tclock_check_bind(const char *bind, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
	struct addrinfo *res = NULL;
	bool ok = getaddrinfo(bind, NULL, &hints, &res) == 0 && res != NULL;
	for (struct addrinfo *ai = res; ok && ai != NULL; ai = ai->ai_next)
		ok = loopback(ai->ai_addr);
	if (res != NULL)
		freeaddrinfo(res);
	if (!ok)
		snprintf(err, errlen,
			 "--test-mode is refused with --bind %s: test mode moves the clock and "
			 "simulates other holders on any command of any client, so every port "
			 "(Redis, TLS, PostgreSQL, admin) must listen on loopback only: use --bind "
			 "127.0.0.1 or ::1",
			 bind);
	return ok;
}

/* s ends with suffix, ASCII case ignored, at a label boundary. */
static bool host_ends_with(const char *host, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	if (n < k || strncasecmp(host + n - k, suffix, k) != 0)
		return false;
	return n == k || host[n - k - 1] == '.';
}

bool tclock_check_endpoint(const char *endpoint, char *err, size_t errlen)
{
	static const char *const aws[] = {"amazonaws.com", "amazonaws.com.cn", "api.aws"};
	if (endpoint == NULL)
		return true;
	const char *h = strstr(endpoint, "://");
	h = h != NULL ? h + 3 : endpoint;
	size_t n = strcspn(h, ":/?#");
	if (*h == '[') /* [::1]:8000 */
		n = strcspn(h, "]") + 1;
	while (n > 0 && h[n - 1] == '.')
		n--; /* a fully qualified name: dynamodb.us-east-1.amazonaws.com. */
	for (size_t i = 0; i < sizeof(aws) / sizeof(aws[0]); i++)
		if (host_ends_with(h, n, aws[i])) {
			snprintf(err, errlen,
				 "--test-mode is refused with the DynamoDB endpoint %s: that is "
				 "AWS's, and test mode writes lock items without conditions; give "
				 "an emulator's --endpoint (for example http://127.0.0.1:8000), or "
				 "no --table for the embedded store",
				 endpoint);
			return false;
		}
	return true;
}
