/* SPDX-License-Identifier: MIT */
/* White-box test of the spinner slots (src/wait.h): their number follows
 * the CPU affinity of the process's threads, not that of whichever thread
 * asked first.  A fresh process of its own, so that no thread has a record
 * before the pinned one.
 *
 * Asserts, on a machine where this process may use 2 CPUs or more:
 *  1. the first thread that uses the library is pinned to one CPU: its
 *     hl_spin_begin() returns 0 (one usable CPU, nobody spins);
 *  2. a new thread that is not pinned appears; SETTLE_NS later its
 *     hl_spin_begin() returns a budget (the pinned first thread used to fix
 *     the count at 0 for the life of the process);
 *  3. that thread exits and the first one unpins itself: SETTLE_NS later
 *     its hl_spin_begin() returns a budget;
 *  4. it pins itself again, alone: SETTLE_NS later, 0 again.
 * SETTLE_NS is the 100 ms of a thread's mask plus the 100 ms of the count,
 * with a margin. */
#include "common.h"

#include <hotlock/futex.h>

#include "thread.h"
#include "wait.h"

#include <pthread.h>
#include <sched.h>

#define SETTLE_NS (250 * NSEC_PER_MSEC)

static cpu_set_t all;

static void pin_to_one(void)
{
	cpu_set_t one;
	int first = 0;
	while (!CPU_ISSET(first, &all))
		first++;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0, "sched_setaffinity: %s",
		strerror(errno));
}

static void unpin(void)
{
	REQUIRE(sched_setaffinity(0, sizeof(all), &all) == 0, "sched_setaffinity: %s",
		strerror(errno));
}

/* hl_spin_begin's budget (the slot given back at once). */
static uint64_t budget_now(void)
{
	uint64_t b = hl_spin_begin(0);
	if (b)
		hl_spin_end(HL_SPIN_CUT);
	return b;
}

static void *unpinned_thread(void *p)
{
	unpin(); /* a thread inherits its creator's mask */
	REQUIRE(hl_self(), "no thread record");
	sleep_ns(SETTLE_NS); /* the test is about time */
	*(uint64_t *)p = budget_now();
	return NULL;
}

int main(void)
{
	uint64_t b, tb = 0;
	pthread_t th;

	REQUIRE(sched_getaffinity(0, sizeof(all), &all) == 0, "sched_getaffinity: %s",
		strerror(errno));
	if (CPU_COUNT(&all) < 2) {
		printf("SKIP: this process may use %d CPU; the slots cannot change\n",
		       CPU_COUNT(&all));
		return 0;
	}
	printf("test_spin_slots: %d usable CPUs\n", CPU_COUNT(&all));
	/* The slots alone: a busy machine would also make hl_spin_begin
	 * return 0 (rule 4), which test_spin_policy covers. */
	hl__spin_ignore_load = true;

	pin_to_one();
	b = budget_now();
	CHECK(b == 0, "1. the only thread, pinned to one CPU, got a spin budget of %llu ns",
	      (unsigned long long)b);

	REQUIRE(pthread_create(&th, NULL, unpinned_thread, &tb) == 0, "pthread_create");
	pthread_join(th, NULL);
	CHECK(tb > 0, "2. an unpinned thread got no spin budget %lld ms after it appeared: "
	      "the slots stay as the first, pinned, thread saw them", SETTLE_NS / NSEC_PER_MSEC);

	unpin();
	sleep_ns(SETTLE_NS); /* the test is about time */
	b = budget_now();
	CHECK(b > 0, "3. the first thread, unpinned for %lld ms, gets no spin budget",
	      SETTLE_NS / NSEC_PER_MSEC);

	pin_to_one();
	sleep_ns(SETTLE_NS); /* the test is about time */
	b = budget_now();
	CHECK(b == 0, "4. the only thread, pinned again for %lld ms, got a spin budget of %llu ns",
	      SETTLE_NS / NSEC_PER_MSEC, (unsigned long long)b);
	unpin();
	if (!test_failures)
		printf("spin slots: 0 while pinned, a budget once a thread may use more CPUs, "
		       "0 again once pinned\n");
	return test_finish("test_spin_slots");
}
