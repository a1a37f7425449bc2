/* SPDX-License-Identifier: MIT */
/* The waiting core: spin on the node, then park on it; signal a node.
 * The state machine is in wait.h, and so is the waiting policy's list of
 * rules; here is how each is kept.
 *
 *   variable        meaning                                  written by
 *   --------------  ---------------------------------------  --------------
 *   spinners        threads holding a slot now               hl__spin_begin/end
 *   spinner_slots   the CPUs this process may use, less one  hl__machine_learn
 *   quota_cpus      the cgroup's CPU quota, rounded up       hl__machine_learn
 *                   (0: none)
 *   spin_held       slots the calling thread holds (TLS)     its thread
 *   cpu_mask[]      a thread's affinity mask, in its record  hl__machine_learn
 *
 * The machine is learned outside lock calls (docs/core.md, "The lock's
 * contract": a lock call makes no system call but the futex and the
 * clock, opens nothing, allocates nothing, leaves errno alone).
 * hl__machine_learn runs at load (a constructor) and where a thread starts
 * (the shim's pthread_create, hl_thread_init).  It
 *   a. takes the calling thread's affinity from its record where the
 *      thread's creator put it there (the shim's pthread_create: the
 *      creator's mask, or the one its attributes set), else asks the kernel
 *      (sched_getaffinity) and puts it there;
 *   b. with quota set (at load, and where the program calls
 *      hl_thread_init), reads the cgroup's CPU quota from /proc/self/cgroup
 *      and the cgroup files, with open/read/close into buffers of its own
 *      (no stdio: it may run where malloc is not safe), errno saved;
 *   c. unless another thread is doing it (a try-lock, `learning`, whose
 *      holder then counts again: `recount`), stores the slots: the union
 *      of the records' masks (counted until it covers the online CPUs,
 *      read once), at least the caller's own mask, capped by the quota,
 *      less one.
 * So a thread the shim starts makes no system call for it: a program that
 * sandboxes itself and then starts threads is not killed for them.
 * hl__spin_begin(rec), on a slow path, reads only memory:
 *   d. The record (wait.h rule 2): below HL_SPIN_REC_OFF the configured
 *      budget; at OFF, 0, except every HL_SPIN_PROBE_EVERY-th call of the
 *      thread (a TLS count), which probes with the configured budget.
 *   e. A slot is taken if fewer than spinner_slots are held.
 * Everything here is relaxed: the counts, masks and slots are hints that
 * bound spinning, nothing is published through them, and a mask read while
 * its owner rewrites it is at worst a mix of two masks of that thread.
 *
 * In a fork child the forking thread is alone: spinners becomes its own
 * spin_held (the slots of the parent's other threads are not held by anyone
 * there), and `learning` is free; the slots and the quota stay the
 * parent's (nothing is read there: a child of a sandboxed program may not
 * open a file) until a thread starts or the program calls hl_thread_init.
 * In the controlled-schedule build the slot count is the schedule's CPUs
 * less one, read once.
 */
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hotlock/config.h>
#include <hotlock/futex.h>

#include "config.h"
#include "futex.h"
#include "thread.h"
#include "wait.h"

static _Atomic int spinners;             /* threads in a spin phase */
static _Atomic int spinner_slots;        /* usable CPUs - 1 (0 until learned) */
static __thread int spin_held __attribute__((tls_model("initial-exec")));

#ifdef HOTLOCK_SCHED
static int slots(void)
{
	/* Relaxed: an idempotent cache. */
	int n = hl__load(&spinner_slots, HL_RELAXED);
	if (hl__unlikely(n == 0)) {
		int cpus = hl__sched_cpus();    /* as the schedule says */
		n = cpus > 1 ? cpus - 1 : 0;
		hl__store(&spinner_slots, n, HL_RELAXED);
	}
	return n;
}

void hl__machine_learn(bool quota, bool mask_known)
{
	(void)quota;
	(void)mask_known;
}

void hl__spin_thread_started(unsigned how)
{
	(void)how;
}
#else
static int slots(void)
{
	/* Relaxed: a hint (above). */
	return hl__load(&spinner_slots, HL_RELAXED);
}

/* The first two numbers of a small file ("max" reads as -1); 0 if it
 * cannot be read. */
static int read_file_longs(const char *path, long *a, long *b)
{
	char buf[64];
	if (hl__read_small_file(path, buf, sizeof(buf)) < 0)
		return 0;
	char *end;
	*a = strncmp(buf, "max", 3) == 0 ? -1 : strtol(buf, &end, 10);
	char *s = buf;
	while (*s && *s != ' ')
		s++;
	*b = *s ? strtol(s, &end, 10) : 0;
	return 1;
}

/* Room for a cgroup path and the name of a file in it; a longer path is
 * not looked at (its quota reads as none). */
#define CG_PATH_MAX 1024

/* One cgroup directory's CPU quota in CPUs, rounded up (0: none or not
 * readable): v2's cpu.max ("max 100000" or "QUOTA PERIOD"), else v1's
 * cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us. */
static int dir_quota_cpus(char *dir, size_t len, bool v2)
{
	long q = -1, p = 0, unused;
	const char *files[2] = { v2 ? "/cpu.max" : "/cpu.cfs_quota_us", "/cpu.cfs_period_us" };
	for (int k = 0; k < (v2 ? 1 : 2); k++) {
		size_t n = strlen(files[k]);
		if (len + n >= CG_PATH_MAX)
			return 0;
		memcpy(dir + len, files[k], n + 1);
		int ok = k == 0 ? read_file_longs(dir, &q, v2 ? &p : &unused) :
				  read_file_longs(dir, &p, &unused);
		dir[len] = 0;
		if (!ok || (k == 0 && q <= 0))
			return 0;
	}
	if (q <= 0 || p <= 0)
		return 0;
	long cpus = (q + p - 1) / p;
	return cpus > 1 << 20 ? 1 << 20 : (int)cpus;
}

/* The smallest quota from root + base + path up to root + base (0: none). */
static int path_quota_cpus(const char *root, const char *base, const char *path, bool v2)
{
	static char dir[CG_PATH_MAX];   /* hl__machine_learn is serialized */
	size_t root_len = strlen(root), base_len = root_len + strlen(base), path_len = strlen(path);
	if (base_len + path_len + 32 >= CG_PATH_MAX)
		return 0;
	memcpy(dir, root, root_len);
	memcpy(dir + root_len, base, base_len - root_len);
	memcpy(dir + base_len, path, path_len + 1);
	size_t len = base_len + path_len;
	while (len > base_len && dir[len - 1] == '/')
		dir[--len] = 0;
	int best = 0;
	for (;;) {
		int c = dir_quota_cpus(dir, len, v2);
		if (c && (!best || c < best))
			best = c;
		if (len <= base_len)
			break;
		while (len > base_len && dir[len - 1] != '/')
			len--;
		while (len > base_len && dir[len - 1] == '/')
			len--;
		dir[len] = 0;
	}
	return best;
}

/* The CPU quota of this process's cgroup, in CPUs rounded up (0: none or
 * not known), from /proc/self/cgroup, whose lines are
 * "HIERARCHY:CONTROLLERS:PATH": the v2 line ("0::PATH", under
 * /sys/fs/cgroup or, on a hybrid host, /sys/fs/cgroup/unified) and the v1
 * line whose controllers include cpu (under /sys/fs/cgroup/cpu or
 * /sys/fs/cgroup/cpu,cpuacct).  What does not fit the buffers is not looked
 * at.  root: "" (a test passes a made-up tree). */
int hl__cgroup_quota_cpus(const char *root)
{
	static char text[4096];         /* hl__machine_learn is serialized */
	static char path[CG_PATH_MAX];
	if ((size_t)snprintf(path, sizeof(path), "%s/proc/self/cgroup", root) >= sizeof(path) ||
	    hl__read_small_file(path, text, sizeof(text)) < 0)
		return 0;
	int best = 0;
	for (char *line = text, *next; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = *c2 = 0;
		const char *hier = line, *ctl = c1 + 1, *cg = c2 + 1;
		int q = 0;
		if (strcmp(hier, "0") == 0 && !*ctl) {
			q = path_quota_cpus(root, "/sys/fs/cgroup", cg, true);
			int u = path_quota_cpus(root, "/sys/fs/cgroup/unified", cg, true);
			if (u && (!q || u < q))
				q = u;
		} else {
			bool cpu = false;
			for (const char *t = ctl; *t;) {
				size_t len = strcspn(t, ",");
				cpu |= len == 3 && strncmp(t, "cpu", 3) == 0;
				t += len + (t[len] == ',');
			}
			if (!cpu)
				continue;
			q = path_quota_cpus(root, "/sys/fs/cgroup/cpu", cg, false);
			if (!q)
				q = path_quota_cpus(root, "/sys/fs/cgroup/cpu,cpuacct", cg, false);
		}
		if (q && (!best || q < best))
			best = q;
	}
	return best;
}

/* Step a: the calling thread's mask as the kernel has it now (all CPUs if
 * it will not say: more than CPU_SETSIZE of them); its CPU count. */
static int read_affinity(uint64_t w[HL_CPU_WORDS])
{
	cpu_set_t set;
	_Static_assert(sizeof(set) == sizeof(uint64_t) * HL_CPU_WORDS, "cpu_mask covers CPU_SETSIZE");
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		memcpy(w, &set, sizeof(set));
	else
		memset(w, 0xff, sizeof(set));
	int cpus = 0;
	for (int k = 0; k < HL_CPU_WORDS; k++)
		cpus += __builtin_popcountll(w[k]);
	return cpus;
}

static _Atomic int quota_cpus;
static int online_cpus;         /* at the first learn (learning held) */

/* Serializes hl__machine_learn's reading of the cgroup files (static
 * buffers) and its count.  A thread that finds it taken leaves the count
 * to the one that holds it, which counts again if `recount` says a mask
 * changed meanwhile (its own is in its record already); a fork child
 * frees it (hl__spin_atfork_child). */
static _Atomic int learning;
static _Atomic bool recount;

void hl__machine_learn(bool quota, bool mask_known)
{
	int saved = errno;
	uint64_t w[HL_CPU_WORDS];
	struct hl__thread *self = hl__self_ptr;
	int own = 0;
	if (mask_known && self) {
		/* Relaxed: the record's own mask, stored by this thread. */
		for (int k = 0; k < HL_CPU_WORDS; k++)
			own += __builtin_popcountll(hl__load(&self->cpu_mask[k], HL_RELAXED));
	} else {
		own = read_affinity(w);
		if (self)
			/* Relaxed: read by hl__thread_affinity_cpus as a hint. */
			for (int k = 0; k < HL_CPU_WORDS; k++)
				hl__store(&self->cpu_mask[k], w[k], HL_RELAXED);
	}
	/* A thread that finds `learning` taken says so in `recount` and
	 * tries once more; the holder looks at `recount` after it lets go
	 * and counts again if it is set.  All seq_cst (store buffering):
	 * either the late thread's second try finds `learning` free, or the
	 * holder sees `recount`, so no mask stored before a learn is left
	 * out of the count. */
	for (;;) {
		if (hl__xchg(&learning, 1, HL_SEQ_CST)) {
			hl__store(&recount, true, HL_SEQ_CST);
			if (hl__xchg(&learning, 1, HL_SEQ_CST))
				break;          /* the holder counts again */
		}
		hl__store(&recount, false, HL_SEQ_CST);
		if (!online_cpus) {
			long n = sysconf(_SC_NPROCESSORS_ONLN);
			online_cpus = n > 0 && n < CPU_SETSIZE ? (int)n : CPU_SETSIZE;
		}
		if (quota)
			hl__store(&quota_cpus, hl__cgroup_quota_cpus(""), HL_RELAXED);
		quota = false;
		/* Counted until the union covers the online CPUs: one pass
		 * over the records at most, one record on a machine whose
		 * threads are not pinned. */
		int cpus = hl__thread_affinity_cpus(online_cpus);
		if (cpus < own)
			cpus = own;
		int q = hl__load(&quota_cpus, HL_RELAXED);
		if (q > 0 && cpus > q)
			cpus = q;
		/* Relaxed: a hint read by hl__spin_begin, see above. */
		hl__store(&spinner_slots, cpus > 1 ? cpus - 1 : 0, HL_RELAXED);
		/* seq_cst: see above; it is also the release by which the
		 * next holder reads the static buffers after us. */
		hl__store(&learning, 0, HL_SEQ_CST);
		if (!hl__load(&recount, HL_SEQ_CST))
			break;
	}
	errno = saved;
}

void hl__spin_thread_started(unsigned how)
{
	hl__machine_learn(how & HL_STARTED_QUOTA, how & HL_STARTED_KNOWN);
}

__attribute__((constructor)) static void machine_init(void)
{
	hl__machine_learn(true, false);
}
#endif

uint64_t hl__reply_spin_ns(_Atomic uint32_t *slow, uint64_t budget, uint32_t peer_cpu1,
			  uint32_t my_cpu1)
{
	if (!budget)
		return 0;
	if (peer_cpu1 && peer_cpu1 == my_cpu1)
		return 0;
	/* Relaxed: the waiting thread's own record (hl__reply_learn). */
	if (hl__load(slow, HL_RELAXED))
		return 0;
	return slots() > 0 ? budget : 0;
}

/* ---- the budget --------------------------------------------------------- */

/* Step a: the budget a place's record allows, or 0.  Counted: a wait the
 * record kept from spinning. */
static uint64_t record_budget(struct hl__thread *self, uint64_t budget, unsigned rec)
{
	static __thread unsigned probe __attribute__((tls_model("initial-exec")));
	if (rec < HL_SPIN_REC_OFF || ++probe % HL_SPIN_PROBE_EVERY == 0)
		return budget;
	if (self)
		hl__counter_add(&self->fx[HL_SP_LEARNED_OFF], 1);
	return 0;
}

uint64_t hl__spin_begin(unsigned rec)
{
	uint64_t budget = hl__spin_ns();
	if (!budget)
		return 0;
	struct hl__thread *self = hl__self();
	budget = record_budget(self, budget, rec);
	if (!budget)
		return 0;
	/* Relaxed: a count, nothing is published through it. */
	if (hl__fetch_add(&spinners, 1, HL_RELAXED) >= slots()) {
		hl__fetch_add(&spinners, -1, HL_RELAXED);
		return 0;
	}
	spin_held++;
	if (self)
		hl__counter_add(&self->fx[HL_SP_SPUN], 1);
	return budget;
}

void hl__spin_end(int outcome)
{
	spin_held--;
	hl__fetch_add(&spinners, -1, HL_RELAXED);
	struct hl__thread *self;
	if (outcome == HL_SPIN_WON && (self = hl__self()))
		hl__counter_add(&self->fx[HL_SP_WON], 1);
}

void hl_spin_stats_thread(hl_spin_stats_t *out)
{
	uint64_t c[HL_COUNTERS];
	hl__thread_stats(c);
	*out = (hl_spin_stats_t){ c[HL_SP_SPUN], c[HL_SP_WON], c[HL_SP_LEARNED_OFF] };
}

void hl_spin_stats_total(hl_spin_stats_t *out)
{
	uint64_t c[HL_COUNTERS];
	hl__process_stats(c);
	*out = (hl_spin_stats_t){ c[HL_SP_SPUN], c[HL_SP_WON], c[HL_SP_LEARNED_OFF] };
}

void hl__spin_atfork_child(void)
{
	/* Relaxed: the child has one thread, this one. */
	hl__store(&spinners, spin_held, HL_RELAXED);
#ifndef HOTLOCK_SCHED
	/* A parent's thread that was learning at the fork never finishes
	 * here (after _Fork, no atfork handler frees it either). */
	hl__store(&learning, 0, HL_RELAXED);
#endif
}

/* A waker that claimed the node posts the signal a few instructions later;
 * if it was preempted in between, give it the CPU. */
static uint32_t wait_claimed(struct hl__node *n)
{
	uint32_t s;
	unsigned spins = 0;
	/* Acquire: pairs with hl__node_post's release. */
	while ((s = hl__load(&n->state, HL_ACQUIRE)) == HL_NODE_CLAIMED)
		hl__wait_for_peer(&spins);
	return s;
}

/* abandon's answer when a keeper got there first: wait on, with no
 * deadline.  Never returned by hl__node_wait. */
#define WAIT_KEPT 0xfffffffdu

/* Gives up the wait from state `seen` (WAITING or PARKED; PARKED_INTR is
 * taken as PARKED).  Returns
 * HL_WAIT_TIMEDOUT, the signal of a waker that got there first, or
 * WAIT_KEPT if a keeper did (hl__node_keep). */
static uint32_t abandon(struct hl__node *n, uint32_t seen)
{
	/* Acquire on failure: we then read the signal and act on it.
	 * Release on success: our accesses to the node (its fields, read
	 * while waiting) happen before whoever recycles it (thread.c) and the
	 * node's next owner. */
	while (!hl__cas(&n->state, &seen, HL_NODE_ABANDONED, HL_ACQ_REL)) {
		if (seen == HL_NODE_CLAIMED)
			return wait_claimed(n);
		if (seen == HL_NODE_WAITING_KEPT || seen == HL_NODE_PARKED_KEPT)
			return WAIT_KEPT;
		if (seen != HL_NODE_WAITING && seen != HL_NODE_PARKED && seen != HL_NODE_PARKED_INTR)
			return seen;
	}
	return HL_WAIT_TIMEDOUT;
}

/* Parks on n, whose state is `parked` (PARKED or PARKED_KEPT), until
 * signalled, interrupted (wait.h, "Interrupts"), the deadline dl (the
 * wait's, or one that only wakes it: at most one is given), or wake_ns.
 * Returns hl_futex_wait's result. */
static int park(struct hl__node *n, uint32_t parked, const struct hl__deadline *dl,
		uint64_t wake_ns)
{
	const struct timespec *abs = dl && !dl->forever ? &dl->abs : NULL;
	clockid_t clock = abs ? dl->clock : CLOCK_MONOTONIC;
	if (!wake_ns)
		return hl_futex_wait((uint32_t *)&n->state, parked, clock, abs);
	/* Two times, one sleep: on the deadline's clock, so that a
	 * CLOCK_REALTIME deadline ends the sleep when the clock is set past
	 * it, as glibc's waits do.  wake_ns is taken to that clock as of now:
	 * a clock set back meanwhile makes it that much later (the caller's
	 * clock checks after the sleep are exact). */
	uint64_t until = wake_ns;
	if (abs && clock == CLOCK_REALTIME) {
		uint64_t mono = hl__now_ns(), real = hl__clock_ns(CLOCK_REALTIME);
		until = wake_ns > mono ? hl__add_sat(real, wake_ns - mono) : real;
	}
	if (abs) {
		uint64_t d = hl__ts_to_ns_sat(abs);
		if (d < until)
			until = d;
	}
	/* Valid for the kernel however far: tv_sec is at most 18446744073
	 * (it saturates the time to KTIME_MAX). */
	struct timespec ts = { (time_t)(until / HL_NSEC_PER_SEC), (long)(until % HL_NSEC_PER_SEC) };
	return hl_futex_wait((uint32_t *)&n->state, parked, clock, &ts);
}

/* A park whose futex wait failed with err, which a working futex never
 * returns (a seccomp filter that refuses futex(2), say).  Correctness never
 * depended on the futex: the caller re-reads the node state and its clocks
 * after each return.  So sleep instead, from 1 us doubling up to 1 ms
 * (*sleep_ns, 1000 at the wait's start), rather than spin on a failing
 * syscall, and say so once per process. */
static void park_failed(int err, const struct hl__deadline *dl, long *sleep_ns)
{
	static _Atomic bool reported;
	/* Relaxed: only keeps the message to one; nothing is published. */
	if (!hl__xchg(&reported, true, HL_RELAXED)) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
		const char *name = strerrorname_np(err);
#else
		const char *name = NULL;
#endif
		fprintf(stderr, "hotlock: futex wait fails with errno %d (%s: %s); waiters poll "
			"with sleeps of up to 1 ms instead of parking\n", err, name ? name : "?",
			strerror(err));
	}
	hl__poll_backoff(dl, sleep_ns);
}

uint32_t hl__node_wait(struct hl__node *n, const struct hl__deadline *dl, uint64_t spin_ns)
{
	return hl__node_wait_until(n, dl, spin_ns, 0);
}

/* The waiting state and the parked state of a wait, kept or not. */
#define PARKED_OF(waiting) ((waiting) == HL_NODE_WAITING ? HL_NODE_PARKED : HL_NODE_PARKED_KEPT)
#define WAITING_OF(parked) ((parked) == HL_NODE_PARKED ? HL_NODE_WAITING : HL_NODE_WAITING_KEPT)

/* Pauses of a nudged waiter between two yields. */
#define NUDGED_PAUSES 32

/* A nudged waiter's poll (hl__node_nudge): watches n's state, pausing and
 * yielding its CPU to any thread that has work, until it changes or the
 * spin budget passes.  Returns the state last read (acquire: a signal's
 * writes are visible). */
static uint32_t poll_nudged(struct hl__node *n)
{
	const uint64_t start = hl__now_ns(), budget = hl__spin_ns();
	for (unsigned i = 1;; i++) {
		/* Acquire: pairs with the waker's release. */
		uint32_t s = hl__load(&n->state, HL_ACQUIRE);
		if (s != HL_NODE_WAITING_KEPT)
			return s;
		if (i % NUDGED_PAUSES) {
			hl__cpu_relax();
			continue;
		}
		if (hl__now_ns() - start >= budget)
			return s;
		hl__cpu_yield();
	}
}

/* hl__node_wait_until's wait, and hl__node_wait_woken's (wake_dl: a deadline
 * that wakes the wait as wake_ns does, where dl gives it up; at most one of
 * the two is given); t: the thread record whose interrupt word dl names (an
 * interruptible wait), else NULL. */
static uint32_t wait_node(struct hl__node *n, const struct hl__deadline *dl, uint64_t spin_ns,
			  uint64_t wake_ns, const struct hl__deadline *wake_dl,
			  struct hl__thread *t)
{
	/* The state that means "not signalled yet": WAITING until a keeper
	 * makes it WAITING_KEPT, after which the deadline no longer applies
	 * (dl is dropped). */
	uint32_t waiting = HL_NODE_WAITING, s;
	if (spin_ns) {
		uint64_t start = hl__now_ns();
		for (unsigned i = 1;; i++) {
			/* Acquire: pairs with the waker's release. */
			s = hl__load(&n->state, HL_ACQUIRE);
			if (s != waiting) {
				if (s != HL_NODE_WAITING_KEPT)
					goto signalled;
				waiting = s;
				dl = NULL;
			}
			hl__cpu_relax();
			if (i % HL_SPIN_CLOCK_EVERY == 0) {
				if (hl__now_ns() - start >= spin_ns)
					break;
				if (hl__deadline_passed(dl)) {
					s = abandon(n, HL_NODE_WAITING);
					if (s != WAIT_KEPT)
						return s;
					waiting = HL_NODE_WAITING_KEPT;
					dl = NULL;
				}
			}
		}
	}
	/* seq_cst: store buffering with hl__thread_interrupt (wait.h,
	 * "Interrupts"), with the CAS to PARKED and the interrupt word's
	 * load below. */
	if (t && waiting == HL_NODE_WAITING)
		hl__store(&t->intr_node, n->index, HL_SEQ_CST);
	for (;;) {
		s = waiting;
		/* seq_cst on success: going to sleep publishes nothing, but an
		 * interruptible wait orders it before its look at the interrupt
		 * word (above).  Acquire on failure (via hl__cas): the signal's
		 * writes become visible. */
		if (hl__cas(&n->state, &s, PARKED_OF(waiting), HL_SEQ_CST))
			break;
		if (s != HL_NODE_WAITING_KEPT)
			goto signalled;
		waiting = s;    /* kept meanwhile: park as kept */
		dl = NULL;
		t = NULL;
	}
	uint32_t parked = PARKED_OF(waiting);
	if (parked == HL_NODE_PARKED_KEPT)
		t = NULL;       /* kept: no interrupt ends it */
	long failed_sleep_ns = 1000;
	int r = 0;
	for (;;) {
		/* Interrupted (seq_cst: see above; also after a PARKED_INTR was
		 * put back to PARKED, so that a later interrupt finds PARKED to
		 * change), or the deadline passed: give the wait up. */
		if ((t && hl__load(dl->interrupt, HL_SEQ_CST)) ||
		    (r == ETIMEDOUT && !wake_ns && dl && !dl->forever) ||
		    (dl && hl__deadline_passed(dl))) {
			s = abandon(n, HL_NODE_PARKED);
			if (s != WAIT_KEPT)
				return s;
			parked = HL_NODE_PARKED_KEPT;
			dl = NULL;
			t = NULL;
			continue;
		}
		r = park(n, parked, dl ? dl : wake_dl, wake_ns);
		if (hl__unlikely(r && r != EAGAIN && r != ETIMEDOUT && r != EINTR))
			park_failed(r, dl, &failed_sleep_ns);
		s = hl__load(&n->state, HL_ACQUIRE);
		if (s == HL_NODE_PARKED_INTR) {
			/* An interrupt, of this wait or a stale one (wait.h):
			 * back to PARKED; the loop's first step reads the
			 * interrupt word.  Acquire on failure: a signal won. */
			if (hl__cas(&n->state, &s, HL_NODE_PARKED, HL_SEQ_CST))
				s = HL_NODE_PARKED;
		}
		if (s != parked) {
			if (s == HL_NODE_WAITING_KEPT) {
				/* Kept (if not before) and nudged
				 * (hl__node_nudge): poll, then park again, with
				 * no deadline and no interrupt.  Acquire on
				 * failure: a signal won; success publishes
				 * nothing. */
				parked = HL_NODE_PARKED_KEPT;
				dl = NULL;
				t = NULL;
				s = poll_nudged(n);
				if (s == HL_NODE_WAITING_KEPT &&
				    hl__cas(&n->state, &s, HL_NODE_PARKED_KEPT, HL_ACQUIRE))
					continue;
				goto signalled;
			}
			if (s != HL_NODE_PARKED_KEPT)
				goto signalled;
			parked = s;     /* kept while asleep: no deadline now */
			dl = NULL;
			t = NULL;
			continue;
		}
		if ((wake_ns && hl__now_ns() >= wake_ns) || hl__deadline_passed(wake_dl)) {
			/* Back to WAITING(_KEPT), still armed, so that the next
			 * wait starts clean.  Relaxed on success: nothing is
			 * published; acquire on failure: a signal won. */
			s = parked;
			if (hl__cas(&n->state, &s, WAITING_OF(parked), HL_ACQUIRE))
				return HL_WAIT_WOKEN;
			if (s == HL_NODE_PARKED_INTR)
				continue;       /* the loop puts it back first */
			if (s == HL_NODE_WAITING_KEPT)
				return HL_WAIT_WOKEN;   /* nudged: as the CAS */
			if (s != HL_NODE_PARKED_KEPT)
				goto signalled;
			parked = s;
			dl = NULL;
			t = NULL;
		}
	}
signalled:
	if (s == HL_NODE_CLAIMED)
		s = wait_claimed(n);
	return s;
}

uint32_t hl__node_wait_until(struct hl__node *n, const struct hl__deadline *dl, uint64_t spin_ns,
			    uint64_t wake_ns)
{
	if (!dl || !dl->interrupt)
		return wait_node(n, dl, spin_ns, wake_ns, NULL, NULL);
	/* The interrupt word is a thread record's (internal.h, struct
	 * hl__deadline). */
	struct hl__thread *t = (struct hl__thread *)((const char *)dl->interrupt -
						   offsetof(struct hl__thread, interrupt));
	uint32_t s = wait_node(n, dl, spin_ns, wake_ns, NULL, t);
	/* Relaxed: a stale intr_node costs an interrupter's CAS at most. */
	hl__store(&t->intr_node, 0, HL_RELAXED);
	return s;
}

uint32_t hl__node_wait_woken(struct hl__node *n, uint64_t spin_ns, uint64_t wake_ns,
			    const struct hl__deadline *wake_dl)
{
	return wait_node(n, NULL, spin_ns, wake_ns, wake_dl, NULL);
}

uint32_t hl__node_give_up(struct hl__node *n)
{
	uint32_t s = abandon(n, HL_NODE_WAITING);
	if (s == WAIT_KEPT)
		hl__bug("giving up a wait that was kept", s);
	return s;
}

/* Only armed nodes (hl__node_armed) and ABANDONED can be met by a waker: a
 * node holding a signal or a claim has one waker already, and a second
 * means a broken protocol. */
static bool wakeable(uint32_t s)
{
	if (hl__node_armed(s))
		return true;
	if (s != HL_NODE_ABANDONED)
		hl__bug("signal to a node that is not waiting", s);
	return false;
}

bool hl__node_signal(struct hl__node *n, uint32_t sig)
{
	uint32_t s = hl__load(&n->state, HL_RELAXED);
	for (;;) {
		if (!wakeable(s))
			return false;
		/* Release: the signaller's writes are visible to the waiter,
		 * which reads the state with acquire.  Acquire on failure is
		 * not needed: we only retry. */
		if (hl__cas(&n->state, &s, sig, HL_RELEASE))
			break;
	}
	if (hl__node_parked(s))
		hl_futex_wake((uint32_t *)&n->state, 1);
	return true;
}

bool hl__node_claim(struct hl__node *n, bool *was_parked)
{
	uint32_t s = hl__load(&n->state, HL_RELAXED);
	for (;;) {
		if (!wakeable(s))
			return false;
		/* Relaxed: the claim publishes nothing; hl__node_post does. */
		if (hl__cas(&n->state, &s, HL_NODE_CLAIMED, HL_RELAXED))
			break;
	}
	*was_parked = hl__node_parked(s);
	return true;
}

bool hl__node_keep(struct hl__node *n)
{
	uint32_t s = hl__load(&n->state, HL_RELAXED);
	for (;;) {
		uint32_t kept;
		if (s == HL_NODE_WAITING)
			kept = HL_NODE_WAITING_KEPT;
		else if (s == HL_NODE_PARKED || s == HL_NODE_PARKED_INTR)
			kept = HL_NODE_PARKED_KEPT;
		else if (s == HL_NODE_ABANDONED)
			return false;
		else
			hl__bug("keeping a node that is not waiting", s);
		/* Relaxed: publishes nothing (wait.h); a failed CAS reloads s
		 * and decides again. */
		if (hl__cas(&n->state, &s, kept, HL_RELAXED))
			return true;
	}
}

bool hl__node_nudge(struct hl__node *n)
{
	/* Relaxed: a look before the CAS, which most nodes would fail. */
	uint32_t s = hl__load(&n->state, HL_RELAXED);
	/* Relaxed: the nudge publishes nothing; the signal that follows
	 * does. */
	if (s != HL_NODE_PARKED_KEPT ||
	    !hl__cas(&n->state, &s, HL_NODE_WAITING_KEPT, HL_RELAXED))
		return false;
	/* Counted in the nudger's record if it has one: a broadcaster that
	 * never waited does not register one here. */
	struct hl__thread *self = hl__self_ptr;
	if (self)
		hl__counter_add(&self->fx[HL_LK_NUDGED], 1);
	hl_futex_wake((uint32_t *)&n->state, 1);
	return true;
}

int hl__nudge_ahead(void)
{
	return hl__spin_ns() ? slots() : 0;
}

void hl__node_post(struct hl__node *n, uint32_t sig, bool was_parked)
{
	/* Release: pairs with the waiter's acquire load of the state. */
	hl__store(&n->state, sig, HL_RELEASE);
	if (was_parked)
		hl_futex_wake((uint32_t *)&n->state, 1);
}

bool hl__thread_interrupt(uintptr_t pthread_id)
{
	struct hl__thread *t = hl__thread_by_pthread(pthread_id);
	if (!t)
		return false;
	/* seq_cst: store buffering with the interruptible wait (wait.h,
	 * "Interrupts"): it publishes its node, parks, then reads the word;
	 * we set the word, then read its node and change that node's word. */
	hl__store(&t->interrupt, 1, HL_SEQ_CST);
	uint32_t i = hl__load(&t->intr_node, HL_SEQ_CST);
	if (i) {
		struct hl__node *n = hl__node_at(i);
		uint32_t s = HL_NODE_PARKED;
		/* seq_cst: see above.  A node that is not PARKED is not
		 * asleep in an interruptible wait, or is signalled. */
		if (hl__cas(&n->state, &s, HL_NODE_PARKED_INTR, HL_SEQ_CST))
			hl_futex_wake((uint32_t *)&n->state, 1);
	}
	/* A two-word wait on the interrupt word (the shim's condvar with a
	 * mutex glibc keeps, hl__futex_wait_either). */
	hl_futex_wake((uint32_t *)&t->interrupt, 1);
	return true;
}
