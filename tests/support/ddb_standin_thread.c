/*
 * ddb_standin_thread: the stand-in on a thread of its own (see the header).
 */
#include "tests/support/ddb_standin_thread.h"

#include <string.h>

#include <event2/event.h>

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct standin_thread *t = arg;
	if (atomic_load(&t->stop))
		event_base_loopbreak(t->base);
}

static void *run(void *arg)
{
	struct standin_thread *t = arg;
	event_base_dispatch(t->base);
	return NULL;
}

static void release(struct standin_thread *t)
{
	if (t->tick != NULL)
		event_free(t->tick);
	if (t->sd != NULL)
		standin_free(t->sd);
	if (t->base != NULL)
		event_base_free(t->base);
}

bool standin_thread_start(struct standin_thread *t, int port, const struct standin_options *o)
{
	memset(t, 0, sizeof *t);
	struct timeval tv = {0, 50000};
	t->base = event_base_new();
	t->sd = t->base ? standin_new(t->base, port, o, t->url, sizeof t->url) : NULL;
	t->tick = t->sd ? event_new(t->base, -1, EV_PERSIST, on_tick, t) : NULL;
	if (t->tick == NULL || event_add(t->tick, &tv) != 0 ||
	    pthread_create(&t->th, NULL, run, t) != 0) {
		release(t);
		return false;
	}
	return true;
}

void standin_thread_stop(struct standin_thread *t)
{
	atomic_store(&t->stop, true);
	pthread_join(t->th, NULL);
	release(t);
}
