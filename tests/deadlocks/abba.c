/* SPDX-License-Identifier: MIT */
/* abba: the ABBA deadlock between two global mutexes (tests/deadlocks.sh,
 * docs/deadlocks.md).
 *
 * Thread abba-ab takes a, then b; thread abba-ba takes b, then a.  A
 * barrier between each thread's first and second lock makes the deadlock
 * certain: both hold their first lock before either asks for its second,
 * so each then waits for the lock the other holds, forever.  The main
 * thread waits for them in pthread_join, forever too: the program never
 * ends by itself (on glibc as under hotlock-run).
 *
 * What hotlock-run --deadlocks reports: a deadlock of 2 threads,
 *   abba-ab waits for mutex b at ab_then_b, and holds a, taken at ab_takes_a;
 *   abba-ba waits for mutex a at ba_then_a, and holds b, taken at ba_takes_b. */
#include "dl.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;

DL_SITE static void ab_takes_a(void)
{
	dl_check(pthread_mutex_lock(&a), "ab: a");
}

DL_SITE static void ab_then_b(void)
{
	dl_check(pthread_mutex_lock(&b), "ab: b");
}

DL_SITE static void ba_takes_b(void)
{
	dl_check(pthread_mutex_lock(&b), "ba: b");
}

DL_SITE static void ba_then_a(void)
{
	dl_check(pthread_mutex_lock(&a), "ba: a");
}

static void *ab(void *arg)
{
	dl_name("abba", "abba-ab");
	ab_takes_a();
	pthread_barrier_wait(&both_hold_one);
	ab_then_b();                    /* never returns: abba-ba holds b */
	dl_fail("abba-ab got b while abba-ba held it");
	return arg;
}

static void *ba(void *arg)
{
	dl_name("abba", "abba-ba");
	ba_takes_b();
	pthread_barrier_wait(&both_hold_one);
	ba_then_a();                    /* never returns: abba-ab holds a */
	dl_fail("abba-ba got a while abba-ab held it");
	return arg;
}

int main(void)
{
	dl_say("abba: pid %d", getpid());
	dl_check(pthread_barrier_init(&both_hold_one, NULL, 2), "pthread_barrier_init");
	pthread_t t1 = dl_start(ab, NULL), t2 = dl_start(ba, NULL);
	dl_join(t1);
	dl_join(t2);
	return 1;       /* not reached */
}
