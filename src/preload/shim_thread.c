/* SPDX-License-Identifier: MIT */
/* The shim's thread calls: what the waiting policy must know of a thread
 * is learned where the thread starts, or where the program changes it,
 * never inside a lock call (docs/core.md, "The lock's contract": a lock
 * call makes no system call but the futex and the clock).
 *
 *  - pthread_create starts the program's function through start_thread,
 *    which registers the new thread first (hl__thread_start: its record
 *    and nodes, its TID, and the futex hash's size as the threads grow),
 *    so that none of it happens at the thread's first contended lock.  Its
 *    scheduling policy and CPU affinity are worked out by the creator,
 *    without a system call: the attributes' where they set them, else the
 *    creator's own, which a new thread inherits.  So a thread start makes
 *    no system call of ours but gettid (and, once per doubling of the
 *    threads, the futex hash's prctl): a program that sandboxes itself and
 *    then starts threads allows what glibc's pthread_create needs, not
 *    more.  The start routine and its
 *    argument travel in a slot of a static table, which the new thread
 *    gives back once it has read them: no allocation, and above all no
 *    free() in the new thread, whose first free makes glibc give it a
 *    malloc arena (64 MiB of address space) that a program which never
 *    allocates in its threads would not have had.  With every slot taken
 *    (more threads being started at once than the table holds), the block
 *    is malloc'ed and freed by the new thread.
 *  - pthread_setschedparam and sched_setscheduler tell the thread's record
 *    whether it is an RT thread now (a waiting RT thread is handed the
 *    lock at once: the handoff bound, docs/mutex.md).
 *  - pthread_setname_np of the calling thread and prctl(PR_SET_NAME) tell
 *    the report its name (shim_stats.c, "thread names"), which a new
 *    thread takes from its creator as it starts, as the kernel's: no
 *    system call where a thread ends.
 *  - pthread_setaffinity_np and sched_setaffinity tell the thread's record
 *    its CPUs now, as the kernel has them (sched_getaffinity; the set
 *    asked for if the kernel will not say), and count the spinner slots
 *    again (hl__machine_learn): threads pinned after they started leave no
 *    spinner where they share a CPU.  (Their GLIBC_2.3.3 forms, which no
 *    program built since 2004 binds to, are left to glibc.)
 * Each calls glibc's own and changes nothing of what it returns.  A thread
 * that the program starts some other way (clone) registers at its first
 * contended lock instead, with one system call there (gettid). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <hotlock/thread.h>

#include "shim.h"
#include "shim_stats.h"
#include "thread.h"
#include "wait.h"

struct start {
	void *(*fn)(void *);
	void *arg;
	struct hl__thread_start known;  /* the new thread's policy and mask */
	uint32_t affinity_seen;         /* affinity_changes when known was made */
	char name[STATS_NAME];          /* the creator's, which the kernel gives it */
	_Atomic uint32_t used;          /* a table slot: 1 from claim to read */
	bool heap;                      /* malloc'ed: the new thread frees it */
};

/* Affinity changes the shim has seen (pthread_setaffinity_np,
 * sched_setaffinity): a new thread whose creator worked its mask out
 * before one of them may have been pinned by it since (the creator's
 * pthread_setaffinity_np right after pthread_create, before the new thread
 * has a record to find), and asks the kernel instead. */
static _Atomic uint32_t affinity_changes;

#define START_SLOTS 256
static struct start slots[START_SLOTS];
static _Atomic uint32_t next_slot;

static struct start *start_block(void)
{
	/* Relaxed: a hint where to look first. */
	uint32_t first = hl__fetch_add(&next_slot, 1, HL_RELAXED);
	for (uint32_t k = 0; k < START_SLOTS; k++) {
		struct start *s = &slots[(first + k) % START_SLOTS];
		uint32_t free_ = 0;
		/* Acquire: pairs with the release that gave the slot back, so
		 * that its last reader is done with it. */
		if (hl__cas(&s->used, &free_, 1, HL_ACQUIRE))
			return s;
	}
	struct start *s = malloc(sizeof(*s));
	if (s)
		s->heap = true;
	return s;
}

static void *start_thread(void *p)
{
	struct start *b = p;
	void *(*fn)(void *) = b->fn;
	void *arg = b->arg;
	struct hl__thread_start known = b->known;
	uint32_t affinity_seen = b->affinity_seen;
	char name[STATS_NAME];
	memcpy(name, b->name, sizeof(name));
	if (b->heap)
		free(b);
	else
		/* Release: our reads of the slot happen before its next
		 * claim. */
		hl__store(&b->used, 0, HL_RELEASE);
	hl__thread_start(&known);
	shim_stats_thread_start();
	shim_stats_named(name);
	/* seq_cst (store buffering with affinity_changed): either its
	 * lookup finds our record, registered above with the mask it knew,
	 * and stores the new mask after ours, or we see its count here and
	 * ask the kernel. */
	atomic_thread_fence(memory_order_seq_cst);
	if (hl__load(&affinity_changes, HL_RELAXED) != affinity_seen) {
		int saved = errno;
		hl__machine_learn(false, false);
		errno = saved;
	}
	return fn(arg);
}

static bool rt_policy(int policy)
{
	policy &= ~SCHED_RESET_ON_FORK;
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

/* The new thread's policy and affinity, as attr sets them or as it
 * inherits them from the caller (its record): no system call. */
static void new_thread_known(struct hl__thread_start *k, const pthread_attr_t *attr)
{
	struct hl__thread *me = hl__self_ptr;
	/* Relaxed: the caller's own record (its mask and flag are hints). */
	k->rt = me && hl__load(&me->rt, HL_RELAXED);
	k->have_mask = false;
	if (me) {
		for (int w = 0; w < HL_CPU_WORDS; w++)
			k->mask[w] = hl__load(&me->cpu_mask[w], HL_RELAXED);
		for (int w = 0; w < HL_CPU_WORDS && !k->have_mask; w++)
			k->have_mask = k->mask[w] != 0;
	}
	if (!attr)
		return;
	int inherit, policy;
	if (pthread_attr_getinheritsched(attr, &inherit) == 0 && inherit == PTHREAD_EXPLICIT_SCHED &&
	    pthread_attr_getschedpolicy(attr, &policy) == 0)
		k->rt = rt_policy(policy);
	/* glibc reads an attribute without a set of its own as every CPU:
	 * taken as inherited (a program that asks for every CPU from a
	 * pinned creator is counted as pinned: fewer spinners, not more). */
	cpu_set_t set;
	_Static_assert(sizeof(set) == sizeof(k->mask), "the record's mask is a cpu_set_t");
	if (pthread_attr_getaffinity_np(attr, sizeof(set), &set) == 0) {
		bool all = true;
		const unsigned char *b = (const unsigned char *)&set;
		for (size_t i = 0; i < sizeof(set) && all; i++)
			all = b[i] == 0xff;
		if (!all) {
			memcpy(k->mask, &set, sizeof(set));
			k->have_mask = true;
		}
	}
}

int shim_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	int saved = errno;
	shim_stats_before_thread();
	struct start *s = start_block();
	if (!s) {
		errno = saved;
		return EAGAIN;
	}
	s->fn = fn;
	s->arg = arg;
	/* Relaxed: ordered by pthread_create, as the rest of the block. */
	s->affinity_seen = hl__load(&affinity_changes, HL_RELAXED);
	new_thread_known(&s->known, attr);
	shim_stats_my_name(s->name);
	/* pthread_create orders these writes before the new thread's reads. */
	int err = REAL(R_CREATE, create_fn)(th, attr, start_thread, s);
	if (err) {
		if (s->heap)
			free(s);
		else
			hl__store(&s->used, 0, HL_RELEASE);
	}
	errno = saved;
	return err;
}
SHIM_EXPORT2(shim_pthread_create, pthread_create, "GLIBC_2.34", "GLIBC_2.2.5");

int shim_pthread_setschedparam(pthread_t th, int policy, const struct sched_param *param)
{
	typedef int (*set_fn)(pthread_t, int, const struct sched_param *);
	int err = REAL(R_SETSCHEDPARAM, set_fn)(th, policy, param);
	if (!err)
		hl__thread_set_rt(hl__thread_by_pthread((uintptr_t)th), rt_policy(policy));
	return err;
}
SHIM_EXPORT(shim_pthread_setschedparam, pthread_setschedparam, "GLIBC_2.2.5");

int shim_sched_setscheduler(pid_t pid, int policy, const struct sched_param *param)
{
	typedef int (*set_fn)(pid_t, int, const struct sched_param *);
	int r = REAL(R_SCHED_SETSCHEDULER, set_fn)(pid, policy, param);
	if (r == 0) {
		int saved = errno;
		hl__thread_set_rt(pid == 0 ? hl__self() : hl__thread_by_tid((uint32_t)pid),
				 rt_policy(policy));
		errno = saved;
	}
	return r;
}
SHIM_EXPORT(shim_sched_setscheduler, sched_setscheduler, "GLIBC_2.2.5");

/* The affinity of a thread changed to `set` (size bytes, as the caller
 * gave it): the thread whose pthread_t is pthread_id, else the one whose
 * TID is tid, else the caller.  Counted (affinity_changes), then its record
 * learns the mask the kernel applied, and the slots are counted again.
 * Outside lock calls; errno as it was. */
static void affinity_changed(uintptr_t pthread_id, uint32_t tid, size_t size,
			     const cpu_set_t *set)
{
	int saved = errno;
	/* seq_cst: see start_thread. */
	hl__fetch_add(&affinity_changes, 1, HL_SEQ_CST);
	atomic_thread_fence(memory_order_seq_cst);
	struct hl__thread *t = pthread_id ? hl__thread_by_pthread(pthread_id) :
			      tid ? hl__thread_by_tid(tid) : hl__self();
	if (t) {        /* else not registered yet: start_thread asks */
		cpu_set_t now;
		if (sched_getaffinity((pid_t)t->tid, sizeof(now), &now) != 0) {
			CPU_ZERO(&now);
			memcpy(&now, set, size < sizeof(now) ? size : sizeof(now));
		}
		uint64_t w[HL_CPU_WORDS];
		_Static_assert(sizeof(w) == sizeof(now), "the record's mask is a cpu_set_t");
		memcpy(w, &now, sizeof(w));
		for (int k = 0; k < HL_CPU_WORDS; k++)
			/* Relaxed: a hint (hl__thread_affinity_cpus). */
			hl__store(&t->cpu_mask[k], w[k], HL_RELAXED);
		hl__machine_learn(false, true);
	}
	errno = saved;
}

int shim_pthread_setaffinity_np(pthread_t th, size_t size, const cpu_set_t *set)
{
	typedef int (*set_fn)(pthread_t, size_t, const cpu_set_t *);
	int err = REAL(R_SETAFFINITY, set_fn)(th, size, set);
	if (!err)
		affinity_changed((uintptr_t)th, 0, size, set);
	return err;
}
SHIM_EXPORT2(shim_pthread_setaffinity_np, pthread_setaffinity_np, "GLIBC_2.34", "GLIBC_2.3.4");

int shim_sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	typedef int (*set_fn)(pid_t, size_t, const cpu_set_t *);
	int r = REAL(R_SCHED_SETAFFINITY, set_fn)(pid, size, set);
	if (r == 0)
		affinity_changed(0, (uint32_t)pid, size, set);
	return r;
}
SHIM_EXPORT(shim_sched_setaffinity, sched_setaffinity, "GLIBC_2.3.4");

/* A thread names itself: the report's entry learns it.  Another thread's
 * name reaches the report from the collector (shim_stats.c). */
int shim_pthread_setname_np(pthread_t th, const char *name)
{
	typedef int (*set_fn)(pthread_t, const char *);
	int err = REAL(R_SETNAME, set_fn)(th, name);
	if (!err && pthread_equal(th, pthread_self()))
		shim_stats_named(name);
	return err;
}
SHIM_EXPORT2(shim_pthread_setname_np, pthread_setname_np, "GLIBC_2.34", "GLIBC_2.12");

/* prctl, whose PR_SET_NAME names the calling thread (glibc's passes on
 * four arguments after the option, whatever the option takes: the same
 * here). */
int shim_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)
{
	typedef int (*prctl_fn)(int, ...);
	int r = REAL(R_PRCTL, prctl_fn)(option, a2, a3, a4, a5);
	if (r == 0 && option == PR_SET_NAME)
		shim_stats_named((const char *)a2);
	return r;
}
SHIM_EXPORT(shim_prctl, prctl, "GLIBC_2.2.5");
