/* SPDX-License-Identifier: MIT */
/* A lock freed the moment its last user is done (docs/design.md invariant
 * 7, glibc bug 13690), with real threads: after the store that lets another
 * thread take a lock, its releaser must touch nothing of the lock.
 *
 * Every lock object sits at the start of its own page of a large mapping.
 * Two threads, A and B, share each object and drop their references to it
 * under its lock, as a program drops references to an object under the
 * object's own lock:
 *   A takes the lock (write or read side);
 *   B asks for it with a deadline of 100 us: it queues as head, sets WAKE,
 *     parks and gives up, leaving its node abandoned in the queue;
 *   A drops its reference and unlocks: its release finds the head gone, the
 *     refused-signal path (the unlock must pass headship on for B);
 *   B, polling with trylock meanwhile, takes the lock the moment it is
 *     free, drops the last reference, unlocks, destroys the lock, which must
 *     return 0 (nobody holds it or waits for it), and frees it: the page is
 *     made inaccessible at once (PROT_NONE).
 * A release that touches the lock after its releasing store then faults
 * (SIGSEGV; ASan reports it with both stacks), or finds destroy refusing
 * (EBUSY: the queue still names B's abandoned node).  The spin budget is 0,
 * so that B parks at once and its wait ends by the deadline.
 *
 * Scenarios: hl_mutex (FIFO and CNA queue); hl_rwlock write hold, released
 * by its writer; hl_rwlock read hold, released by the last reader out (B
 * wants the write side); hl_rwlock write hold with B a reader.
 * On the code before the fix (the release stored 0, then passed headship
 * on) every run here failed: destroy EBUSY for 1-145 of 2000 objects in a
 * scenario, or SIGSEGV.  The window is a few instructions wide, so a run
 * may miss it on another machine; the controlled schedules (test_sched
 * --lock mutex-free, rwlock-free) find it deterministically.  This test
 * runs the same release paths with real threads, under ASan and TSan. */
#include "common.h"

#include <hotlock/hotlock.h>

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

enum scenario { MUTEX_FIFO, MUTEX_CNA, RW_WRITER, RW_LAST_READER, RW_READER_WAITS, SCENARIOS };

static const char *const scenario_names[] = {
	"hl_mutex (FIFO)", "hl_mutex (CNA)", "hl_rwlock, writer releases",
	"hl_rwlock, last reader out releases", "hl_rwlock, writer releases to a reader",
};

struct object {
	hl_mutex_t m;
	hl_rwlock_t rw;
	int refs;               /* under the lock */
};

static struct {
	enum scenario sc;
	char *region;
	size_t page;
	long objects;
	atomic_long current;    /* the object both work on; -1: stop */
	atomic_int phase;       /* 0 idle, 1 A holds, 2 B gave up, 3 A released */
	long busy;              /* destroy returned EBUSY (B only) */
	long b_not_timed_out;   /* B's timed call did not time out */
	long trylock_polls;
} T;

static struct object *object(long i)
{
	return (struct object *)(T.region + (size_t)i * T.page);
}

static bool mutex_scenario(void)
{
	return T.sc == MUTEX_FIFO || T.sc == MUTEX_CNA;
}

static int a_lock(struct object *o)
{
	if (mutex_scenario())
		return hl_mutex_lock(&o->m);
	return T.sc == RW_LAST_READER ? hl_rwlock_rdlock(&o->rw) : hl_rwlock_wrlock(&o->rw);
}

static int a_unlock(struct object *o)
{
	return mutex_scenario() ? hl_mutex_unlock(&o->m) : hl_rwlock_unlock(&o->rw);
}

/* B's timed call (expected to time out) and its polls. */
static int b_timed(struct object *o, const struct timespec *dl)
{
	if (mutex_scenario())
		return hl_mutex_timedlock(&o->m, CLOCK_MONOTONIC, dl);
	if (T.sc == RW_READER_WAITS)
		return hl_rwlock_timedrdlock(&o->rw, CLOCK_MONOTONIC, dl);
	return hl_rwlock_timedwrlock(&o->rw, CLOCK_MONOTONIC, dl);
}

static int b_trylock(struct object *o)
{
	if (mutex_scenario())
		return hl_mutex_trylock(&o->m);
	if (T.sc == RW_READER_WAITS)
		return hl_rwlock_tryrdlock(&o->rw);
	return hl_rwlock_trywrlock(&o->rw);
}

static int destroy(struct object *o)
{
	return mutex_scenario() ? hl_mutex_destroy(&o->m) : hl_rwlock_destroy(&o->rw);
}

static void wait_phase(int want)
{
	unsigned spins = 0;
	while (atomic_load(&T.phase) != want)
		if (++spins > 100)
			sched_yield();
}

static void *thread_a(void *arg)
{
	for (long i = 0; i < T.objects; i++) {
		struct object *o = object(i);
		CHECK_RC(a_lock(o), 0);
		atomic_store(&T.phase, 1);
		wait_phase(2);                  /* B gave up */
		o->refs--;
		CHECK_RC(a_unlock(o), 0);       /* the release that meets B's node */
		atomic_store(&T.phase, 3);      /* o may be gone by now */
		wait_phase(0);                  /* B is done with it */
	}
	return NULL;
}

static void *thread_b(void *arg)
{
	for (long i = 0; i < T.objects; i++) {
		struct object *o = object(i);
		wait_phase(1);
		struct timespec dl = deadline_in(CLOCK_MONOTONIC, 100 * NSEC_PER_USEC);
		int rc = b_timed(o, &dl);
		if (rc == 0) {
			T.b_not_timed_out++;    /* cannot happen: A holds it */
			CHECK(0, "%s: B's timed call returned 0 while A held the lock",
			      scenario_names[T.sc]);
			a_unlock(o);
		} else {
			CHECK(rc == ETIMEDOUT, "%s: B's timed call returned %d", scenario_names[T.sc], rc);
		}
		atomic_store(&T.phase, 2);
		/* Take the lock the moment A's release lets anyone in. */
		while (b_trylock(o) != 0)
			if (++T.trylock_polls % 64 == 0)
				sched_yield();  /* A may share our CPU */
		bool last = --o->refs == 0;
		CHECK(last, "%s: B's reference was not the last", scenario_names[T.sc]);
		CHECK_RC(a_unlock(o), 0);
		rc = destroy(o);
		if (rc == EBUSY)
			T.busy++;
		else
			CHECK_RC(rc, 0);
		/* Freed: any access from now on faults. */
		char *page = (char *)o;
		REQUIRE(mprotect(page, T.page, PROT_NONE) == 0, "mprotect: %s", strerror(errno));
		madvise(page, T.page, MADV_DONTNEED);
		wait_phase(3);
		atomic_store(&T.phase, 0);
	}
	return NULL;
}

static void run(enum scenario sc, long objects)
{
	memset(&T, 0, sizeof(T));
	T.sc = sc;
	T.page = (size_t)sysconf(_SC_PAGESIZE);
	T.objects = objects;
	size_t bytes = (size_t)objects * T.page;
	T.region = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			-1, 0);
	REQUIRE(T.region != MAP_FAILED, "mmap: %s", strerror(errno));
	for (long i = 0; i < objects; i++) {
		struct object *o = object(i);
		hl_mutex_init(&o->m);
		hl_rwlock_init(&o->rw);
		if (sc == MUTEX_CNA)
			CHECK_RC(hl_mutex_set_queue(&o->m, HL_QUEUE_CNA), 0);
		o->refs = 2;
	}
	int64_t t0 = now_ns();
	pthread_t a, b;
	REQUIRE(pthread_create(&a, NULL, thread_a, NULL) == 0, "pthread_create");
	REQUIRE(pthread_create(&b, NULL, thread_b, NULL) == 0, "pthread_create");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%-40s %ld objects freed by their last user, %.2f s; destroy EBUSY %ld; "
	       "B's trylock polls %.1f per object\n", scenario_names[sc], objects,
	       (double)(now_ns() - t0) / 1e9, T.busy, (double)T.trylock_polls / (double)objects);
	CHECK(T.busy == 0, "%s: destroy returned EBUSY for %ld of %ld locks that nobody held "
	      "or waited for (a release was still passing headship on after its last store)",
	      scenario_names[sc], T.busy, objects);
	munmap(T.region, bytes);
}

int main(void)
{
	long objects = env_long("HOTLOCK_LIFETIME_OBJECTS", HOTLOCK_SANITIZED ? 1000 : 2000);
	hl_config_t c;
	hl_config_get(&c);
	c.spin_ns = 0;          /* B parks at once, as head, with WAKE set */
	CHECK_RC(hl_config_set(&c), 0);
	printf("test_lifetime: %ld objects per scenario, each freed (PROT_NONE) by its last user "
	       "right after its unlock\n", objects);
	for (int sc = 0; sc < SCENARIOS; sc++)
		run((enum scenario)sc, objects);
	return test_finish("test_lifetime");
}
