/* SPDX-License-Identifier: MIT */
/* White-box test of the spinner slots (src/wait.h, rule 3): their number
 * follows the CPU affinity of the process's threads, not that of whichever
 * thread asked first, and is learned where a thread starts or says its
 * affinity changed (hl_thread_init), never inside a lock call.  A fresh
 * process of its own.
 *
 * Asserts, on a machine where this process may use 2 CPUs or more:
 *  1. the main thread, registered at load, pins itself to one CPU and
 *     calls hl_thread_init: its hl__spin_begin() returns 0 (one usable CPU,
 *     nobody spins);
 *  2. a new thread unpins itself and calls hl_thread_init: its
 *     hl__spin_begin() returns a budget at once (a pinned first thread used
 *     to fix the count at 0 for the life of the process);
 *  3. that thread exits and the main thread unpins itself, hl_thread_init:
 *     a budget;
 *  4. it pins itself again, alone, hl_thread_init: 0 again (the exited
 *     thread's mask no longer counts). */
#include "common.h"

#include <hotlock/futex.h>
#include <hotlock/thread.h>

#include "thread.h"
#include "wait.h"

#include <pthread.h>
#include <sched.h>

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

/* hl__spin_begin's budget (the slot given back at once). */
static uint64_t budget_now(void)
{
	uint64_t b = hl__spin_begin(0);
	if (b)
		hl__spin_end(HL_SPIN_CUT);
	return b;
}

static void *unpinned_thread(void *p)
{
	unpin(); /* a thread inherits its creator's mask */
	REQUIRE(hl_thread_init() == 0, "hl_thread_init");
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
	pin_to_one();
	REQUIRE(hl_thread_init() == 0, "hl_thread_init");
	b = budget_now();
	CHECK(b == 0, "1. the only thread, pinned to one CPU, got a spin budget of %llu ns",
	      (unsigned long long)b);

	REQUIRE(pthread_create(&th, NULL, unpinned_thread, &tb) == 0, "pthread_create");
	pthread_join(th, NULL);
	CHECK(tb > 0, "2. an unpinned thread got no spin budget after hl_thread_init: "
	      "the slots stay as the first, pinned, thread saw them");

	unpin();
	REQUIRE(hl_thread_init() == 0, "hl_thread_init");
	b = budget_now();
	CHECK(b > 0, "3. the first thread, unpinned, gets no spin budget");

	pin_to_one();
	REQUIRE(hl_thread_init() == 0, "hl_thread_init");
	b = budget_now();
	CHECK(b == 0, "4. the only thread, pinned again, got a spin budget of %llu ns "
	      "(the exited thread's mask still counts)", (unsigned long long)b);
	unpin();
	if (!test_failures)
		printf("spin slots: 0 while pinned, a budget once a thread may use more CPUs, "
		       "0 again once pinned\n");
	return test_finish("test_spin_slots");
}
