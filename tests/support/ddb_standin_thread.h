/*
 * ddb_standin_thread: the DynamoDB stand-in (ddb_standin.h) on an event
 * loop of its own thread, for a benchmark or a test that runs gateways
 * against it from its main thread (bench_scale, it_scale_pool).
 */
#ifndef LG_DDB_STANDIN_THREAD_H
#define LG_DDB_STANDIN_THREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "tests/support/ddb_standin.h"

struct standin_thread {
	pthread_t th;
	struct event_base *base;
	struct standin *sd;
	struct event *tick; /* looks at stop every 50 ms */
	atomic_bool stop;
	char url[64]; /* the endpoint to give gateways */
};

/* Starts a stand-in on port (0: a free one) with o in its thread. False
 * (nothing left running) when it cannot. */
bool standin_thread_start(struct standin_thread *t, int port, const struct standin_options *o);
/* Stops the thread and frees the stand-in. */
void standin_thread_stop(struct standin_thread *t);

#endif
