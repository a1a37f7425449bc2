/* SPDX-License-Identifier: MIT */
/* A function run on a thread of its own, for tests that must see whether a
 * call blocks, returns, or with which code: call_start runs fn(arg) on a
 * new thread; call_join waits for it (a call still running after its limit
 * is a hang: fatal); call_done_within says whether it has returned. */
#ifndef HOTLOCK_TESTS_CALL_H
#define HOTLOCK_TESTS_CALL_H

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "common.h"

struct call {
	pthread_t th;
	int (*fn)(void *);
	void *arg;
	int rc;                 /* fn's return, once done is posted */
	sem_t done;
	atomic_uint tid;        /* the calling thread's TID, once it runs */
};

static void *call_main(void *p)
{
	struct call *c = p;
	atomic_store(&c->tid, test_gettid());
	c->rc = c->fn(c->arg);
	sem_post(&c->done);
	return NULL;
}

static inline void call_start(struct call *c, int (*fn)(void *), void *arg)
{
	c->fn = fn;
	c->arg = arg;
	c->rc = -1;
	atomic_store(&c->tid, 0);
	sem_init(&c->done, 0, 0);
	REQUIRE(pthread_create(&c->th, NULL, call_main, c) == 0, "pthread_create");
}

/* Whether the call returned within timeout_ms (it may still be joined). */
static inline int call_done_within(struct call *c, int64_t timeout_ms)
{
	struct timespec dl = deadline_in(CLOCK_REALTIME, timeout_ms * NSEC_PER_MSEC);
	int r;
	while ((r = sem_timedwait(&c->done, &dl)) != 0 && errno == EINTR)
		;
	if (r == 0)
		sem_post(&c->done); /* call_join will take it again */
	return r == 0;
}

/* Joins the call; a call still running after timeout_ms is a hang: fatal. */
static inline int call_join(struct call *c, int64_t timeout_ms, const char *what)
{
	REQUIRE(call_done_within(c, timeout_ms), "%s: still blocked after %lld ms (hang)", what,
		(long long)timeout_ms);
	sem_wait(&c->done);
	pthread_join(c->th, NULL);
	sem_destroy(&c->done);
	return c->rc;
}

#endif
