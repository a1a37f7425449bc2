/* SPDX-License-Identifier: MIT */
/* condvar: a condvar wait, which releases its mutex while it waits, beside
 * a thread that takes that mutex and then another (tests/deadlocks.sh,
 * docs/deadlocks.md).
 *
 *   condvar [MS]           (700: longer than the runner's --deadlocks-after)
 *
 * Thread cv-waiter takes mutex a (cv_waiter_takes_a) and waits on condvar
 * wake with it (cv_waiter_sleeps) until ready is set.  Thread
 * cv-signaller takes a (cv_signaller_takes_a) once the waiter waits (the
 * wait released a), then b (cv_signaller_then_b), and holds both MS
 * milliseconds before it sets ready, signals and releases them.  The
 * waiter, woken with a held again, takes b (cv_waiter_then_b), releases
 * both, then takes c alone (cv_waiter_takes_c).  Last, the main thread
 * takes c (main_takes_c), then a (main_then_a).  The program ends with
 * status 0 after "condvar: done".
 *
 * The orders are a before b (both threads) and c before a (main): no
 * cycle, and no report from hotlock-run --lock-order.  A wait for a
 * signal is no wait for a lock: the waiter's MS in the condvar, with a
 * held by a thread that waits for nothing, is no hang, and hotlock-run
 * --deadlocks reports nothing either.  Were the waiter's hold of a kept
 * through its wait (or counted twice after it), it would seem to hold a
 * when it takes c, an order a before c, and with the main thread's c
 * before a a false inversion. */
#include "dl.h"

#include <stdatomic.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t c = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static bool waiting, ready;             /* under a */
static long hold_ms = 700;

DL_SITE static void cv_waiter_takes_a(void)
{
	dl_check(pthread_mutex_lock(&a), "waiter: a");
}

DL_SITE static void cv_waiter_sleeps(void)
{
	dl_check(pthread_cond_wait(&wake, &a), "waiter: wait");
}

DL_SITE static void cv_waiter_then_b(void)
{
	dl_check(pthread_mutex_lock(&b), "waiter: b");
}

DL_SITE static void cv_waiter_takes_c(void)
{
	dl_check(pthread_mutex_lock(&c), "waiter: c");
}

DL_SITE static void cv_signaller_takes_a(void)
{
	dl_check(pthread_mutex_lock(&a), "signaller: a");
}

DL_SITE static void cv_signaller_then_b(void)
{
	dl_check(pthread_mutex_lock(&b), "signaller: b");
}

DL_SITE static void main_takes_c(void)
{
	dl_check(pthread_mutex_lock(&c), "main: c");
}

DL_SITE static void main_then_a(void)
{
	dl_check(pthread_mutex_lock(&a), "main: a");
}

static void *waiter(void *arg)
{
	dl_name("condvar", "cv-waiter");
	cv_waiter_takes_a();
	waiting = true;
	while (!ready)
		cv_waiter_sleeps();
	cv_waiter_then_b();
	dl_check(pthread_mutex_unlock(&b), "waiter: unlock b");
	dl_check(pthread_mutex_unlock(&a), "waiter: unlock a");
	cv_waiter_takes_c();
	dl_check(pthread_mutex_unlock(&c), "waiter: unlock c");
	return arg;
}

static void *signaller(void *arg)
{
	dl_name("condvar", "cv-signaller");
	/* The waiter set waiting under a and released a only in its wait:
	 * holding a and seeing waiting, this thread knows the waiter waits. */
	for (;;) {
		cv_signaller_takes_a();
		if (waiting)
			break;
		dl_check(pthread_mutex_unlock(&a), "signaller: unlock a");
		dl_sleep_ms(1);
	}
	cv_signaller_then_b();
	dl_sleep_ms(hold_ms);
	ready = true;
	dl_check(pthread_cond_signal(&wake), "signaller: signal");
	dl_check(pthread_mutex_unlock(&b), "signaller: unlock b");
	dl_check(pthread_mutex_unlock(&a), "signaller: unlock a");
	return arg;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		hold_ms = atol(argv[1]);
	if (hold_ms < 0)
		dl_fail("usage: condvar [MS]");
	dl_say("condvar: pid %d", getpid());
	pthread_t t1 = dl_start(waiter, NULL), t2 = dl_start(signaller, NULL);
	dl_join(t1);
	dl_join(t2);
	dl_name("condvar", "cv-main");
	main_takes_c();
	main_then_a();
	dl_check(pthread_mutex_unlock(&a), "main: unlock a");
	dl_check(pthread_mutex_unlock(&c), "main: unlock c");
	dl_say("condvar: done");
	return 0;
}
