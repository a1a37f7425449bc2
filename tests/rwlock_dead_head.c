/* SPDX-License-Identifier: MIT */
/* hl_rwlock, fair kind: a timed writer that gives up between the pass that
 * makes it head and the recording of its flags must not stay recorded (a
 * dead head): the writer queued behind it would starve while read holds
 * overlap (issue 37's fault 4; tests/models/rwlock.pml checks it as R9).
 *
 * White-box: the window is a few instructions wide, so the test widens it
 * through rwlock.c's recording observer (queue.h), which holds the thread
 * that leaves the queue until the timed writer has given up.
 *
 *   main  M: write-locks the lock, queues X (a reader), then W1 (a writer
 *            with a deadline 400 ms away), then W2 (a writer, no deadline),
 *            and unlocks.
 *   X:       takes a share, passes headship to W1 (parked, not due: the
 *            handoff threshold is 1 s), and is held in the observer until
 *            W1 has returned ETIMEDOUT; then it records W1 and keeps its
 *            share 100 ms while two readers start overlapping holds.
 *   R1, R2:  read holds of 5 ms or more, each given back only while the
 *            other holds a share (or after 200 ms without one: a due
 *            writer's HANDOFF keeps the other out), for 3 s or until W2
 *            has had the lock.
 *   W2:      must get the lock while the readers still run: made head once
 *            W1's flags are withdrawn, due after 1 s, its HANDOFF stops the
 *            readers.  With W1 left recorded it waited for the readers to
 *            stop (3 s).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <hotlock/config.h>
#include <hotlock/rwlock.h>

#include "common.h"
#include "node.h"
#include "queue.h"

#define MS 1000000ll
#define W1_DEADLINE_NS (400 * MS)
#define HANDOFF_NS (1000 * MS)
#define READERS_FOR_NS (3000 * MS)
#define READ_HOLD_NS (5 * MS)
#define PARTNER_WAIT_NS (200 * MS)

static hl_rwlock_t L;
static _Atomic uint32_t w1_tid;
static atomic_bool w1_done, w2_done, readers_stop, observed;
static _Atomic int64_t w2_got_ns;
static int w1_rc = -1;

/* The recording observer: held until W1 has given up, for W1's node. */
static void hold_until_w1_gave_up(const struct hl__node *d)
{
	if (d->tid != atomic_load(&w1_tid) || atomic_exchange(&observed, true))
		return;
	while (!atomic_load(&w1_done))
		sleep_ns(MS);
}

static void *x_main(void *arg)
{
	(void)arg;
	CHECK_RC(hl_rwlock_rdlock(&L), 0);
	sleep_ns(100 * MS);     /* the readers start meanwhile */
	CHECK_RC(hl_rwlock_unlock(&L), 0);
	return NULL;
}

static void *w1_main(void *arg)
{
	(void)arg;
	atomic_store(&w1_tid, test_gettid());
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, W1_DEADLINE_NS);
	w1_rc = hl_rwlock_timedwrlock(&L, CLOCK_MONOTONIC, &dl);
	if (w1_rc == 0)
		hl_rwlock_unlock(&L);
	atomic_store(&w1_done, true);
	return NULL;
}

static void *w2_main(void *arg)
{
	(void)arg;
	CHECK_RC(hl_rwlock_wrlock(&L), 0);
	atomic_store(&w2_got_ns, now_ns());
	atomic_store(&w2_done, true);
	CHECK_RC(hl_rwlock_unlock(&L), 0);
	return NULL;
}

/* The readers' holds, as they count them: a reader gives its share back
 * only while the other holds one too, so that the lock stays read-held,
 * unless it waited PARTNER_WAIT_NS for the other (whom a due writer's
 * HANDOFF keeps out). */
static _Atomic int holding;

static void *reader_main(void *arg)
{
	int64_t until = *(const int64_t *)arg;
	while (!atomic_load(&readers_stop) && !atomic_load(&w2_done) && now_ns() < until) {
		CHECK_RC(hl_rwlock_rdlock(&L), 0);
		atomic_fetch_add(&holding, 1);
		sleep_ns(READ_HOLD_NS);
		for (int64_t t0 = now_ns(); atomic_load(&holding) < 2 && now_ns() - t0 < PARTNER_WAIT_NS;)
			sleep_ns(MS / 10);
		atomic_fetch_sub(&holding, 1);
		CHECK_RC(hl_rwlock_unlock(&L), 0);
	}
	return NULL;
}

int main(void)
{
	hl_config_t cfg;
	hl_config_get(&cfg);
	cfg.handoff_ns = HANDOFF_NS;
	REQUIRE(hl_config_set(&cfg) == 0, "hl_config_set");
	REQUIRE(hl_rwlock_init_kind(&L, HL_RWLOCK_FAIR) == 0, "init");
	/* Release: pairs with the library's acquire load of the pointer. */
	atomic_store_explicit(&hl__rwlock_recording_observer, hold_until_w1_gave_up,
			      memory_order_release);

	pthread_t x, w1, w2, r[2];
	CHECK_RC(hl_rwlock_wrlock(&L), 0);
	REQUIRE(pthread_create(&x, NULL, x_main, NULL) == 0, "thread");
	sleep_ns(50 * MS);      /* X queued, and the head */
	REQUIRE(pthread_create(&w1, NULL, w1_main, NULL) == 0, "thread");
	sleep_ns(50 * MS);      /* W1 queued behind X, parked */
	REQUIRE(pthread_create(&w2, NULL, w2_main, NULL) == 0, "thread");
	sleep_ns(50 * MS);      /* W2 queued behind W1 */
	CHECK_RC(hl_rwlock_unlock(&L), 0);

	sleep_ns(20 * MS);      /* X has its share (held in the observer) */
	const int64_t start = now_ns(), until = start + READERS_FOR_NS;
	REQUIRE(pthread_create(&r[0], NULL, reader_main, (void *)&until) == 0, "thread");
	sleep_ns(READ_HOLD_NS / 2);
	REQUIRE(pthread_create(&r[1], NULL, reader_main, (void *)&until) == 0, "thread");

	pthread_join(w1, NULL);
	pthread_join(x, NULL);
	pthread_join(r[0], NULL);
	pthread_join(r[1], NULL);
	atomic_store(&readers_stop, true);
	pthread_join(w2, NULL);
	atomic_store_explicit(&hl__rwlock_recording_observer, NULL, memory_order_release);

	CHECK(atomic_load(&observed), "the pass to W1 was never recorded (the test set-up failed)");
	CHECK(w1_rc == ETIMEDOUT, "W1 returned %d, not ETIMEDOUT", w1_rc);
	int64_t got = atomic_load(&w2_got_ns);
	CHECK(got && got < until,
	      "W2 got the lock %.3f s after the readers started, only once they stopped (%.1f s): "
	      "W1 stayed recorded as head after it gave up", (double)(got - start) / 1e9,
	      (double)READERS_FOR_NS / 1e9);
	if (got)
		printf("W2 got the lock %.3f s after the readers started\n",
		       (double)(got - start) / 1e9);
	return test_finish("rwlock_dead_head");
}
