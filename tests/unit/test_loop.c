/*
 * test_loop: gateway/loop, the event loop's adaptive poll before sleeping.
 *
 * The loop runs a real event_base on a socketpair; its clock is a fake
 * that moves 1 us per reading (plus what a test adds), so windows and
 * credit are counted in readings, not in real time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "gateway/conn/loop.h"

#define US 1000

static int64_t fake_ns;
static struct ping *clock_peer; /* answers when the loop reads the clock */
static void peer_answers(struct ping *p);

static int64_t fake_now(void)
{
	if (clock_peer)
		peer_answers(clock_peer);
	return fake_ns += 1 * US;
}

static void test_adapt_table(void **state)
{
	static const struct {
		int64_t window, idle, max, want;
		const char *why;
	} cases[] = {
		{0, 10 * US, 0, 0, "off stays off"},
		{20 * US, 10 * US, 50 * US, 20 * US, "caught by the window: kept"},
		{20 * US, 20 * US, 50 * US, 20 * US, "caught at its end: kept"},
		{0, 30 * US, 50 * US, 12500, "no window, input within the max: a quarter of it"},
		{12500, 30 * US, 50 * US, 25 * US, "a longer window would have caught it: doubled"},
		{40 * US, 45 * US, 50 * US, 50 * US, "doubled up to the max"},
		{50 * US, 51 * US, 50 * US, 25 * US, "past the max: halved"},
		{50 * US, 10000 * US, 50 * US, 25 * US, "long idle: halved, not dropped at once"},
		{6250, 10000 * US, 50 * US, 3125, "halved down to a sixteenth"},
		{3125, 10000 * US, 50 * US, 0, "below a sixteenth: off"},
		{0, 10000 * US, 50 * US, 0, "off and idle: stays off"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t got = loop_poll_adapt(cases[i].window, cases[i].idle, cases[i].max);
		if (got != cases[i].want)
			fail_msg("case %zu (%s): %lld, want %lld", i, cases[i].why, (long long)got,
				 (long long)cases[i].want);
	}
}

/* A peer that answers each byte with the next one, for `rounds` rounds.
 * It answers when the loop next reads its clock (between two passes of
 * libevent's loop, as a client answers while the server looks for work),
 * or at once (echo_now: for the loop that never reads the clock). */
struct ping {
	struct event_base *base;
	struct loop_poll *lp;
	int fd[2];
	int rounds;
	bool echo;	 /* each byte read brings the next one */
	bool echo_now;	 /* written in the callback, not at the next reading */
	bool owed;	 /* an answer to write at the next reading */
	int64_t work_ns; /* what each round's work takes on the fake clock */
	struct event *ev;
};

static void on_byte(evutil_socket_t fd, short what, void *arg)
{
	struct ping *p = arg;
	char c;
	if (read(fd, &c, 1) != 1)
		return;
	loop_note_input(p->lp);
	fake_ns += p->work_ns;
	if (--p->rounds > 0) {
		p->owed = p->echo;
		if (p->echo_now)
			peer_answers(p);
	} else
		event_base_loopbreak(p->base);
}

static void peer_answers(struct ping *p)
{
	if (p->owed) {
		p->owed = false;
		assert_int_equal(write(p->fd[1], "x", 1), 1);
	}
}

static void ping_setup(struct ping *p, struct loop_poll *lp, int rounds, int64_t work_ns)
{
	memset(p, 0, sizeof(*p));
	p->base = event_base_new();
	p->lp = lp;
	p->rounds = rounds;
	p->work_ns = work_ns;
	p->echo = true;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, p->fd), 0);
	p->ev = event_new(p->base, p->fd[0], EV_READ | EV_PERSIST, on_byte, p);
	assert_int_equal(event_add(p->ev, NULL), 0);
	assert_int_equal(write(p->fd[1], "x", 1), 1);
	clock_peer = p;
}

static void ping_free(struct ping *p)
{
	clock_peer = NULL;
	event_free(p->ev);
	close(p->fd[0]);
	close(p->fd[1]);
	event_base_free(p->base);
}

static void test_input_found_while_polling_spares_sleeps(void **state)
{
	struct loop_poll lp;
	loop_poll_init(&lp, 50);
	lp.now_ns = fake_now;
	struct ping p;
	ping_setup(&p, &lp, 100, 5 * US);
	assert_int_equal(loop_run(p.base, &lp), 0);
	assert_int_equal(p.rounds, 0);
	assert_int_equal(lp.inputs, 100);
	/* the first round found the loop asleep (no window yet); each later
	 * one was found by the poll the previous round's work had earned (the
	 * last ends the loop before it is counted) */
	assert_int_equal(lp.sleeps, 1);
	assert_int_equal(lp.poll_hits, 98);
	assert_int_equal(lp.window_ns, 12500);
	ping_free(&p);
}

static void test_off_is_plain_dispatch(void **state)
{
	struct loop_poll lp;
	loop_poll_init(&lp, 0);
	lp.now_ns = fake_now;
	struct ping p;
	ping_setup(&p, &lp, 100, 5 * US);
	p.echo_now = true;
	int64_t clock_before = fake_ns;
	assert_int_equal(loop_run(p.base, &lp), 0);
	assert_int_equal(lp.inputs, 100);
	assert_int_equal(lp.poll_hits, 0);
	assert_int_equal(lp.polls, 0);
	assert_int_equal(fake_ns - clock_before, 100 * 5 * US); /* no clock read */
	ping_free(&p);
}

/* Input stops: the loop polls no longer than the last turn's work earned
 * (not its whole window), then sleeps until a timer brings the next byte. */
static void on_late(evutil_socket_t fd, short what, void *arg)
{
	struct ping *p = arg;
	fake_ns += 1000 * US; /* the idle, on the loop's clock */
	p->echo = true;	      /* the third byte follows the second */
	assert_int_equal(write(p->fd[1], "x", 1), 1);
}

static void test_polls_no_longer_than_the_work_earned(void **state)
{
	struct loop_poll lp;
	loop_poll_init(&lp, 50);
	lp.now_ns = fake_now;
	lp.window_ns = 50 * US; /* a full window, as after steady load */
	struct ping p;
	ping_setup(&p, &lp, 3, 8 * US); /* one round of 8 us of work ... */
	p.echo = false;			/* ... then nothing until the timer */
	struct event *t = evtimer_new(p.base, on_late, &p);
	/* real time, only so that the polling (fake clock, microseconds of
	 * real time) is over first even on a loaded machine: its idle on the
	 * loop's clock is what on_late adds */
	struct timeval ms = {0, 50000};
	assert_int_equal(evtimer_add(t, &ms), 0);
	assert_int_equal(loop_run(p.base, &lp), 0);
	assert_int_equal(p.rounds, 0);
	assert_int_equal(lp.poll_hits, 1); /* the first byte, found at once */
	/* ~11 us earned (the round's 8 plus clock readings), at 1 us per
	 * step: about 11 steps of fruitless polling (and one for each of
	 * the first and third bytes), where the window alone allows 50 */
	assert_in_range(lp.polls, 8, 16);
	assert_true(lp.sleeps >= 1);
	/* the timer's byte came 1 ms after: past the maximum, halved */
	assert_int_equal(lp.window_ns, 25 * US);
	event_free(t);
	ping_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adapt_table),
		cmocka_unit_test(test_input_found_while_polling_spares_sleeps),
		cmocka_unit_test(test_off_is_plain_dispatch),
		cmocka_unit_test(test_polls_no_longer_than_the_work_earned),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
