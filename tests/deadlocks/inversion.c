/* SPDX-License-Identifier: MIT */
/* inversion: two mutexes taken in both orders, by threads that never run
 * at the same time (tests/deadlocks.sh, docs/deadlocks.md).
 *
 * Thread inv-ab takes a, then b, and releases both; the main thread joins
 * it, and only then starts inv-ba, which takes b, then a.  The run cannot
 * deadlock, and ends with status 0 after "inversion: done"; but the
 * orders are inverted, and two threads that ran these at the same time
 * could deadlock.
 *
 * What hotlock-run --lock-order reports: an inversion of 2 locks,
 *   mutex a then mutex b: inv-ab took a at inv_ab_takes_a, b at inv_ab_then_b;
 *   mutex b then mutex a: inv-ba took b at inv_ba_takes_b, a at inv_ba_then_a.
 * hotlock-run --deadlocks reports nothing: nothing ever waited. */
#include "dl.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;

DL_SITE static void inv_ab_takes_a(void)
{
	dl_check(pthread_mutex_lock(&a), "ab: a");
}

DL_SITE static void inv_ab_then_b(void)
{
	dl_check(pthread_mutex_lock(&b), "ab: b");
}

DL_SITE static void inv_ba_takes_b(void)
{
	dl_check(pthread_mutex_lock(&b), "ba: b");
}

DL_SITE static void inv_ba_then_a(void)
{
	dl_check(pthread_mutex_lock(&a), "ba: a");
}

static void *ab(void *arg)
{
	dl_name("inversion", "inv-ab");
	inv_ab_takes_a();
	inv_ab_then_b();
	dl_check(pthread_mutex_unlock(&b), "ab: unlock b");
	dl_check(pthread_mutex_unlock(&a), "ab: unlock a");
	return arg;
}

static void *ba(void *arg)
{
	dl_name("inversion", "inv-ba");
	inv_ba_takes_b();
	inv_ba_then_a();
	dl_check(pthread_mutex_unlock(&a), "ba: unlock a");
	dl_check(pthread_mutex_unlock(&b), "ba: unlock b");
	return arg;
}

int main(void)
{
	dl_say("inversion: pid %d", getpid());
	dl_join(dl_start(ab, NULL));
	dl_join(dl_start(ba, NULL));
	dl_say("inversion: done");
	return 0;
}
