/* SPDX-License-Identifier: MIT */
/* cycle3: three threads deadlocked in a cycle of three global mutexes
 * (tests/deadlocks.sh, docs/deadlocks.md).
 *
 * Thread cyc-xy takes x, then y; cyc-yz takes y, then z; cyc-zx takes z,
 * then x.  A barrier of the three between each one's first and second
 * lock makes the deadlock certain: each holds its first lock before any
 * asks for its second, so each waits for the next one's first lock,
 * forever, and the main thread waits for them in pthread_join.  No two
 * of the threads wait for each other: only the cycle of three is a
 * deadlock.
 *
 * What hotlock-run --deadlocks reports: a deadlock of 3 threads,
 *   cyc-xy waits for mutex y at xy_then_y, and holds x, taken at xy_takes_x;
 *   cyc-yz waits for mutex z at yz_then_z, and holds y, taken at yz_takes_y;
 *   cyc-zx waits for mutex x at zx_then_x, and holds z, taken at zx_takes_z. */
#include "dl.h"

static pthread_mutex_t x = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t y = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t z = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t all_hold_one;

DL_SITE static void xy_takes_x(void)
{
	dl_check(pthread_mutex_lock(&x), "xy: x");
}

DL_SITE static void xy_then_y(void)
{
	dl_check(pthread_mutex_lock(&y), "xy: y");
}

DL_SITE static void yz_takes_y(void)
{
	dl_check(pthread_mutex_lock(&y), "yz: y");
}

DL_SITE static void yz_then_z(void)
{
	dl_check(pthread_mutex_lock(&z), "yz: z");
}

DL_SITE static void zx_takes_z(void)
{
	dl_check(pthread_mutex_lock(&z), "zx: z");
}

DL_SITE static void zx_then_x(void)
{
	dl_check(pthread_mutex_lock(&x), "zx: x");
}

static void *xy(void *arg)
{
	dl_name("cycle3", "cyc-xy");
	xy_takes_x();
	pthread_barrier_wait(&all_hold_one);
	xy_then_y();                    /* never returns: cyc-yz holds y */
	dl_fail("cyc-xy got y while cyc-yz held it");
	return arg;
}

static void *yz(void *arg)
{
	dl_name("cycle3", "cyc-yz");
	yz_takes_y();
	pthread_barrier_wait(&all_hold_one);
	yz_then_z();                    /* never returns: cyc-zx holds z */
	dl_fail("cyc-yz got z while cyc-zx held it");
	return arg;
}

static void *zx(void *arg)
{
	dl_name("cycle3", "cyc-zx");
	zx_takes_z();
	pthread_barrier_wait(&all_hold_one);
	zx_then_x();                    /* never returns: cyc-xy holds x */
	dl_fail("cyc-zx got x while cyc-xy held it");
	return arg;
}

int main(void)
{
	dl_say("cycle3: pid %d", getpid());
	dl_check(pthread_barrier_init(&all_hold_one, NULL, 3), "pthread_barrier_init");
	pthread_t t[3] = { dl_start(xy, NULL), dl_start(yz, NULL), dl_start(zx, NULL) };
	for (int i = 0; i < 3; i++)
		dl_join(t[i]);
	return 1;       /* not reached */
}
