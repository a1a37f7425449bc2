/* SPDX-License-Identifier: MIT */
/* The waiting core: spin on the node, then park on it; signal a node.
 * The state machine is in wait.h, and so is the waiting policy's list of
 * rules; here is how each is kept.
 *
 *   variable        meaning                                  written by
 *   --------------  ---------------------------------------  --------------
 *   spinners        threads holding a slot now               hl_spin_begin/end
 *   spinner_slots   the CPUs this process may use, less one  the recomputing
 *                   (-1: not known yet)                      thread
 *   slots_ns        CLOCK_MONOTONIC of the last recompute    CAS, see b
 *   quota_cpus      the cgroup's CPU quota, rounded up       the recomputing
 *                   (0: none), and quota_ns, when read       thread
 *   spin_held       slots the calling thread holds (TLS)     its thread
 *   cpu_mask[]      a thread's affinity mask, in its record  its thread
 *   sampled_ns,     when /proc/loadavg was last read, and    CAS, see d
 *   busy            which of the last 4 samples showed no
 *                   free CPU (bits 0-3), and which showed
 *                   the CPUs wanted by other processes
 *                   (bits 8-11, step f)
 *
 * hl_spin_begin(rec), on a slow path:
 *   a. The record (wait.h rule 2): below HL_SPIN_REC_OFF the configured
 *      budget; at OFF, 0, except every HL_SPIN_PROBE_EVERY-th call of the
 *      thread (a TLS count), which probes with the configured budget.
 *   b. If the caller's cpu_mask is 100 ms old (SLOTS_PERIOD_NS), it reads
 *      its affinity again (sched_getaffinity).  A record gets its first mask
 *      at registration (hl_spin_thread_init).  If spinner_slots is 100 ms
 *      old, the one thread whose CAS moves slots_ns to now ORs the masks of
 *      the records in use (hl_thread_affinity_cpus, stopping once every
 *      online CPU is in the union, as get_nprocs says), caps the count by
 *      the online CPUs and the cgroup quota (read again if a second old),
 *      and stores it less one; the others use the cached value.
 *   c. A slot is taken if fewer than spinner_slots are held.
 *   d. If the last sample of /proc/loadavg is 10 ms old (LOAD_PERIOD_NS),
 *      the one thread whose CAS moves sampled_ns to now reads it again:
 *      the sample is full when runnable - 1 - (other spinners) >=
 *      spinner_slots + 1.  The runnable count includes the sampler and
 *      this process's spinners, which hold CPUs only for a budget; every
 *      other runnable thread, ours or another program's, needs a CPU.
 *      busy = the last 4 samples were full.  A phase begun busy is
 *      counted, and remembered (spin_busy, TLS) until hl_spin_end, which
 *      then reports a lost spin as HL_SPIN_LOST_BUSY (two record steps).
 * hl_handoff_due_ns, when a queue head starts to compete (rule 5):
 *   f. The sample of step d, where it is full, also counts this process's
 *      runnable threads (state R in /proc/self/task/TID/stat, up to
 *      OWN_TASKS_MAX threads; more, or no /proc: all taken as ours); the
 *      runnable count less those is other processes' load, and the
 *      sample's bit 8 is set when it is at least the usable CPUs.  In 3 of
 *      the last 4 samples: the threshold is HL_HANDOFF_BUSY_FACTOR times
 *      the configured one.  The two counts are read a moment apart, so a
 *      steady load of exactly the usable CPUs reads one short at times.
 * Cost: a clock read and a few compares per call; every 10 ms at most an
 * open, read and close of /proc/loadavg (no descriptor is kept, which a
 * program that closes or reuses descriptors could take), and, while its
 * sample is full, of a stat file per thread of the process; every 100 ms a
 * sched_getaffinity per thread, and per process a get_nprocs and a scan of
 * the records; every second the cgroup files; none on a fast path.
 * Everything here is relaxed: the counts, masks and flags are hints that
 * bound spinning, nothing is published through them, and a mask read while
 * its owner rewrites it is at worst a mix of two masks of that thread.
 *
 * In a fork child the forking thread is alone: spinners becomes its own
 * spin_held (the slots of the parent's other threads are not held by anyone
 * there) and the next hl_spin_begin recomputes the slots.  In the
 * controlled-schedule build the slot count is the schedule's CPUs less one,
 * read once, as it has always been, and no CPU is ever busy or taken by
 * other processes (the schedule has none).
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <hotlock/config.h>
#include <hotlock/futex.h>

#include "config.h"
#include "futex.h"
#include "thread.h"
#include "wait.h"

#define SLOTS_PERIOD_NS 100000000ull    /* 100 ms */
#define QUOTA_PERIOD_NS 1000000000ull   /* 1 s */
#define LOAD_PERIOD_NS 10000000ull      /* 10 ms */
#define BUSY_SAMPLES_MASK 0xfu          /* busy: the last 4 samples showed no free CPU */

_Atomic bool hl__spin_ignore_load;
_Atomic bool hl__spin_force_busy;
static _Atomic int spinners;             /* threads in a spin phase */
static _Atomic int spinner_slots = -1;   /* CPUs - 1; -1: not known yet */
static _Atomic uint64_t slots_ns;        /* when spinner_slots was computed; 0: never */
static __thread int spin_held __attribute__((tls_model("initial-exec")));

#ifdef HOTLOCK_SCHED
static int slots(void)
{
	/* Relaxed: an idempotent cache. */
	int n = hl_load(&spinner_slots, HL_RELAXED);
	if (hl_unlikely(n < 0)) {
		int cpus = hl__sched_cpus();    /* as the schedule says */
		n = cpus > 1 ? cpus - 1 : 0;
		hl_store(&spinner_slots, n, HL_RELAXED);
	}
	return n;
}

void hl_spin_thread_init(struct hl_thread *t)
{
	(void)t;
}
#else
/* Step b: t's mask as the kernel has it now (all CPUs if it will not say:
 * more than CPU_SETSIZE of them).  Only t's own thread calls it. */
static void read_affinity(struct hl_thread *t, uint64_t now)
{
	cpu_set_t set;
	uint64_t w[HL_CPU_WORDS];
	_Static_assert(sizeof(set) == sizeof(w), "cpu_mask covers CPU_SETSIZE");
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		memcpy(w, &set, sizeof(w));
	else
		memset(w, 0xff, sizeof(w));
	/* Relaxed: read by the recomputing thread, which takes it as a
	 * hint (the design comment above). */
	for (int k = 0; k < HL_CPU_WORDS; k++)
		hl_store(&t->cpu_mask[k], w[k], HL_RELAXED);
	t->cpu_mask_ns = now;
}

void hl_spin_thread_init(struct hl_thread *t)
{
	read_affinity(t, hl_now_ns());
}

/* The first two numbers of a small file ("max" reads as -1); 0 if it
 * cannot be read. */
static long read_file_longs(const char *path, long *a, long *b)
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

/* One cgroup directory's CPU quota in CPUs, rounded up (0: none or not
 * readable): v2's cpu.max ("max 100000" or "QUOTA PERIOD"), else v1's
 * cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us. */
static int dir_quota_cpus(const char *dir, bool v2)
{
	char path[4300];       /* dir is at most 4200 bytes (path_quota_cpus) */
	long q = -1, p = 0, unused;
	if (v2) {
		snprintf(path, sizeof(path), "%s/cpu.max", dir);
		if (!read_file_longs(path, &q, &p))
			return 0;
	} else {
		snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
		if (!read_file_longs(path, &q, &unused))
			return 0;
		snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir);
		if (q > 0 && !read_file_longs(path, &p, &unused))
			return 0;
	}
	if (q <= 0 || p <= 0)
		return 0;
	long cpus = (q + p - 1) / p;
	return cpus > 1 << 20 ? 1 << 20 : (int)cpus;
}

/* The smallest quota from base+path up to base (0: none). */
static int path_quota_cpus(const char *base, const char *path, bool v2)
{
	char dir[4200];
	int best = 0;
	int len = snprintf(dir, sizeof(dir), "%s%s", base, path);
	if (len <= 0 || (size_t)len >= sizeof(dir))
		return 0;
	while (len > 0 && dir[len - 1] == '/')
		dir[--len] = 0;
	size_t base_len = strlen(base);
	for (;;) {
		int c = dir_quota_cpus(dir, v2);
		if (c && (!best || c < best))
			best = c;
		if ((size_t)len <= base_len)
			break;
		while (len > (int)base_len && dir[len - 1] != '/')
			len--;
		while (len > (int)base_len && dir[len - 1] == '/')
			len--;
		dir[len] = 0;
	}
	return best;
}

/* The CPU quota of this process's cgroup, in CPUs rounded up (0: none or
 * not known), from /proc/self/cgroup: the v2 line ("0::PATH", under
 * /sys/fs/cgroup or /sys/fs/cgroup/unified) and the v1 line whose
 * controllers include cpu (under /sys/fs/cgroup/cpu or cpu,cpuacct). */
static int cgroup_quota_cpus(void)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return 0;
	char line[4200];
	int best = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		const char *ctl = c1 + 1, *path = c2 + 1;
		int q = 0;
		if (strcmp(line, "0") == 0 && !*ctl) {
			q = path_quota_cpus("/sys/fs/cgroup", path, true);
			int u = path_quota_cpus("/sys/fs/cgroup/unified", path, true);
			if (u && (!q || u < q))
				q = u;
		} else {
			bool cpu = false;
			for (const char *t = ctl; *t;) {
				size_t n = strcspn(t, ",");
				cpu |= n == 3 && strncmp(t, "cpu", 3) == 0;
				t += n + (t[n] == ',');
			}
			if (!cpu)
				continue;
			q = path_quota_cpus("/sys/fs/cgroup/cpu", path, false);
			if (!q)
				q = path_quota_cpus("/sys/fs/cgroup/cpu,cpuacct", path, false);
		}
		if (q && (!best || q < best))
			best = q;
	}
	fclose(f);
	return best;
}

/* Step b: the union of the threads' masks, capped by the online CPUs and
 * the cgroup quota; the slots are one less. */
static _Atomic uint64_t quota_ns;       /* when quota_cpus was read; 0: never */
static _Atomic int quota_cpus;

static int recompute_slots(uint64_t now)
{
	/* Relaxed: only the recomputing thread (elected by slots_ns's CAS)
	 * gets here; the atomics only keep a fork child's or a racing
	 * thread's view defined. */
	if (!hl_load(&quota_ns, HL_RELAXED) || now - hl_load(&quota_ns, HL_RELAXED) >= QUOTA_PERIOD_NS) {
		hl_store(&quota_cpus, cgroup_quota_cpus(), HL_RELAXED);
		hl_store(&quota_ns, now, HL_RELAXED);
	}
	int online = get_nprocs();
	int cpus = hl_thread_affinity_cpus(online > 0 ? online : 1);
	if (online > 0 && cpus > online)
		cpus = online;
	int quota = hl_load(&quota_cpus, HL_RELAXED);
	if (quota > 0 && cpus > quota)
		cpus = quota;
	return cpus > 1 ? cpus - 1 : 0;
}

static int slots(void)
{
	uint64_t now = hl_now_ns();
	struct hl_thread *self = hl_self();
	if (self && now - self->cpu_mask_ns >= SLOTS_PERIOD_NS)
		read_affinity(self, now);
	/* Relaxed: the CAS elects one recomputing thread, nothing else. */
	uint64_t last = hl_load(&slots_ns, HL_RELAXED);
	if ((now - last >= SLOTS_PERIOD_NS || !last) &&
	    hl_cas(&slots_ns, &last, now, HL_RELAXED)) {
		/* Relaxed: a hint read by hl_spin_begin, see above. */
		hl_store(&spinner_slots, recompute_slots(now), HL_RELAXED);
	}
	return hl_load(&spinner_slots, HL_RELAXED);
}
#endif

/* ---- step d: whether the machine has a free CPU ------------------------ */

#ifdef HOTLOCK_SCHED
static bool no_free_cpu(int usable, bool holds_slot)
{
	(void)usable;
	(void)holds_slot;
	return false;   /* the schedules have no other processes */
}

bool hl_cpus_taken_by_others(void)
{
	return false;   /* likewise */
}
#else
/* The 4th field of /proc/loadavg, "runnable/total": the kernel's count of
 * runnable tasks now, over all CPUs and processes (the reading thread is one
 * of them); -1 if it cannot be read (no /proc, a sandbox).  Opened and
 * closed each time (at most every LOAD_PERIOD_NS): no descriptor is kept
 * that a program which closes or reuses descriptors could take from us. */
static long read_runnable(void)
{
	char buf[128];
	if (hl__read_small_file("/proc/loadavg", buf, sizeof(buf)) < 0)
		return -1;
	char *s = buf;
	for (int field = 0; field < 3; field++) {
		while (*s && *s != ' ')
			s++;
		while (*s == ' ')
			s++;
	}
	char *end;
	long r = strtol(s, &end, 10);
	return end == s || *end != '/' ? -1 : r;
}

/* Step f: how many threads of this process are runnable now (state R in
 * /proc/self/task/TID/stat), or -1 if that is not known: no /proc, or more
 * than OWN_TASKS_MAX threads, whose files would cost too much to read
 * every LOAD_PERIOD_NS.  With getdents64 into a buffer on the stack and no
 * stdio: this runs on a lock's slow path, which may be inside the
 * program's malloc (an allocator that takes pthread mutexes, under the
 * shim), so it must not allocate. */
#define OWN_TASKS_MAX 32
static long own_runnable(void)
{
	int dfd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	long running = 0, tasks = 0;
	char ents[2048] __attribute__((aligned(8)));
	long n;
	while (running >= 0 && (n = syscall(SYS_getdents64, dfd, ents, sizeof(ents))) > 0) {
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: ino (8), off (8), reclen (2),
			 * type (1), name. */
			unsigned short reclen;
			memcpy(&reclen, ents + off + 16, sizeof(reclen));
			const char *name = ents + off + 19;
			off += reclen;
			if (name[0] < '0' || name[0] > '9')
				continue;
			if (++tasks > OWN_TASKS_MAX) {
				running = -1;
				break;
			}
			char path[48] = "/proc/self/task/", buf[512];
			size_t len = strlen(path), k = strnlen(name, 16);
			memcpy(path + len, name, k);
			memcpy(path + len + k, "/stat", 6);
			if (hl__read_small_file(path, buf, sizeof(buf)) < 0)
				continue;       /* the thread exited meanwhile */
			/* "tid (comm) S ...": comm may hold spaces and
			 * parentheses; the state follows the last ')'. */
			char *p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == 'R')
				running++;
		}
	}
	close(dfd);
	return running;
}

/* The last samples of the machine's load, newest in bit 0 of each field:
 * bits 0-3, no CPU free for a spinner (step d); bits 8-11, every usable
 * CPU wanted by another process's runnable threads (step f). */
static _Atomic unsigned busy;
#define FOREIGN_SHIFT 8

/* Steps d and f: samples /proc/loadavg if the last sample is
 * LOAD_PERIOD_NS old, as the one thread whose CAS moves sampled_ns to now;
 * usable: the CPUs this process may use; holds_slot: whether the caller
 * counts in `spinners`.  Returns `busy`. */
static unsigned load_samples(int usable, bool holds_slot)
{
	static _Atomic uint64_t sampled_ns;
	uint64_t now = hl_now_ns(), last = hl_load(&sampled_ns, HL_RELAXED);
	/* Relaxed: the CAS elects the one thread that samples; `busy` is a
	 * hint that only chooses between spinning and parking, or sets how
	 * long a head competes before a handoff. */
	if ((now - last >= LOAD_PERIOD_NS || !last) &&
	    hl_cas(&sampled_ns, &last, now, HL_RELAXED)) {
		long r = read_runnable();
		/* Step d.  The sampler and this process's spinners are among
		 * the runnable; the spinners give their CPUs back within a
		 * budget.  Every other runnable thread needs a CPU. */
		long others = r - 1 - (hl_load(&spinners, HL_RELAXED) - holds_slot);
		/* Step f, only where step d's sample is full: the runnable
		 * threads less this process's (the sampler among them) are
		 * another program's.  Not known (a process of more than
		 * OWN_TASKS_MAX threads, no /proc): taken as all ours. */
		long foreign = 0;
		if (r >= 0 && others >= usable) {
			long ours = own_runnable();
			foreign = ours < 0 ? 0 : r - ours;
		}
		if (hl_unlikely(hl_load(&hl__spin_ignore_load, HL_RELAXED)))  /* a test switch */
			others = foreign = 0;
		/* Both fields move up a sample; the shift leaves bits 0 and
		 * FOREIGN_SHIFT clear for the new one. */
		unsigned b = hl_load(&busy, HL_RELAXED) << 1 | (r >= 0 && others >= usable) |
			     (unsigned)(r >= 0 && foreign >= usable) << FOREIGN_SHIFT;
		hl_store(&busy, b & (BUSY_SAMPLES_MASK | BUSY_SAMPLES_MASK << FOREIGN_SHIFT),
			 HL_RELAXED);
	}
	return hl_load(&busy, HL_RELAXED);
}

/* Whether the machine has no CPU free for a spinner, as last sampled. */
static bool no_free_cpu(int usable, bool holds_slot)
{
	if (hl_unlikely(hl_load(&hl__spin_force_busy, HL_RELAXED)))   /* a test switch */
		return true;
	return (load_samples(usable, holds_slot) & BUSY_SAMPLES_MASK) == BUSY_SAMPLES_MASK;
}

bool hl_cpus_taken_by_others(void)
{
	if (hl_unlikely(hl_load(&hl__spin_force_busy, HL_RELAXED)))   /* a test switch */
		return true;
	int usable = slots() + 1;
	/* 3 of the last 4: the two counts are read a moment apart, and a
	 * thread of ours that wakes between them makes one sample of a
	 * steady foreign load read one short. */
	return __builtin_popcount(load_samples(usable, false) >> FOREIGN_SHIFT & BUSY_SAMPLES_MASK) >= 3;
}
#endif

uint64_t hl_reply_spin_ns(_Atomic uint32_t *slow, uint64_t budget, uint32_t peer_cpu1,
			  uint32_t my_cpu1)
{
	if (!budget)
		return 0;
	if (peer_cpu1 && peer_cpu1 == my_cpu1)
		return 0;
	/* Relaxed: the waiting thread's own record (hl_reply_learn). */
	if (hl_load(slow, HL_RELAXED))
		return 0;
	return hl_cpu_free() ? budget : 0;
}

uint64_t hl_handoff_due_ns(void)
{
	uint64_t t = hl_handoff_ns();
	if (!t || !hl_cpus_taken_by_others())
		return t;
	return t > UINT64_MAX / HL_HANDOFF_BUSY_FACTOR ? UINT64_MAX : t * HL_HANDOFF_BUSY_FACTOR;
}

/* ---- the budget --------------------------------------------------------- */

/* Step a: the budget a place's record allows, or 0.  Counted: a wait the
 * record kept from spinning. */
static uint64_t record_budget(struct hl_thread *self, uint64_t budget, unsigned rec)
{
	static __thread unsigned probe __attribute__((tls_model("initial-exec")));
	if (rec < HL_SPIN_REC_OFF || ++probe % HL_SPIN_PROBE_EVERY == 0)
		return budget;
	if (self)
		hl_counter_add(&self->fx[HL_SP_LEARNED_OFF], 1);
	return 0;
}

/* Whether the calling thread's spin phase began with no free CPU. */
static __thread bool spin_busy __attribute__((tls_model("initial-exec")));

uint64_t hl_spin_begin(unsigned rec)
{
	uint64_t budget = hl_spin_ns();
	if (!budget)
		return 0;
	struct hl_thread *self = hl_self();
	budget = record_budget(self, budget, rec);
	if (!budget)
		return 0;
	/* Relaxed: a count, nothing is published through it. */
	int usable = slots() + 1;
	if (hl_fetch_add(&spinners, 1, HL_RELAXED) >= usable - 1) {
		hl_fetch_add(&spinners, -1, HL_RELAXED);
		return 0;
	}
	spin_held++;
	spin_busy = no_free_cpu(usable, true);
	if (self) {
		hl_counter_add(&self->fx[HL_SP_SPUN], 1);
		if (spin_busy)
			hl_counter_add(&self->fx[HL_SP_BUSY], 1);
	}
	return budget;
}

bool hl_cpu_free(void)
{
	int usable = slots() + 1;
	return usable > 1 && !no_free_cpu(usable, false);
}

int hl_spin_end(int outcome)
{
	spin_held--;
	hl_fetch_add(&spinners, -1, HL_RELAXED);
	struct hl_thread *self;
	if (outcome == HL_SPIN_WON && (self = hl_self()))
		hl_counter_add(&self->fx[HL_SP_WON], 1);
	/* Step e: a spin lost on a busy machine took a CPU that a runnable
	 * thread needed: it counts twice. */
	return outcome == HL_SPIN_LOST && spin_busy ? HL_SPIN_LOST_BUSY : outcome;
}

void hl_spin_stats_thread(hl_spin_stats_t *out)
{
	uint64_t c[HL_COUNTERS];
	hl_thread_stats(c);
	*out = (hl_spin_stats_t){ c[HL_SP_SPUN], c[HL_SP_WON], c[HL_SP_BUSY], c[HL_SP_LEARNED_OFF] };
}

void hl_spin_stats_total(hl_spin_stats_t *out)
{
	uint64_t c[HL_COUNTERS];
	hl_process_stats(c);
	*out = (hl_spin_stats_t){ c[HL_SP_SPUN], c[HL_SP_WON], c[HL_SP_BUSY], c[HL_SP_LEARNED_OFF] };
}

void hl_spin_atfork_child(void)
{
	/* Relaxed: the child has one thread, this one. */
	hl_store(&spinners, spin_held, HL_RELAXED);
	hl_store(&slots_ns, 0, HL_RELAXED);
#ifndef HOTLOCK_SCHED
	/* A child is often moved to a cgroup of its own: read the quota
	 * again at the next recompute. */
	hl_store(&quota_ns, 0, HL_RELAXED);
#endif
}

/* A waker that claimed the node posts the signal a few instructions later;
 * if it was preempted in between, give it the CPU. */
static uint32_t wait_claimed(struct hl_node *n)
{
	uint32_t s;
	unsigned spins = 0;
	/* Acquire: pairs with hl_node_post's release. */
	while ((s = hl_load(&n->state, HL_ACQUIRE)) == HL_NODE_CLAIMED)
		hl_wait_for_peer(&spins);
	return s;
}

/* abandon's answer when a keeper got there first: wait on, with no
 * deadline.  Never returned by hl_node_wait. */
#define WAIT_KEPT 0xfffffffdu

/* Gives up the wait from state `seen` (WAITING or PARKED).  Returns
 * HL_WAIT_TIMEDOUT, the signal of a waker that got there first, or
 * WAIT_KEPT if a keeper did (hl_node_keep). */
static uint32_t abandon(struct hl_node *n, uint32_t seen)
{
	/* Acquire on failure: we then read the signal and act on it.
	 * Release on success: our accesses to the node (its fields, read
	 * while waiting) happen before whoever recycles it (thread.c) and the
	 * node's next owner. */
	while (!hl_cas(&n->state, &seen, HL_NODE_ABANDONED, HL_ACQ_REL)) {
		if (seen == HL_NODE_CLAIMED)
			return wait_claimed(n);
		if (seen == HL_NODE_WAITING_KEPT || seen == HL_NODE_PARKED_KEPT)
			return WAIT_KEPT;
		if (seen != HL_NODE_WAITING && seen != HL_NODE_PARKED)
			return seen;
	}
	return HL_WAIT_TIMEDOUT;
}

/* CLOCK_MONOTONIC nanoseconds at which deadline dl passes: exact for a
 * monotonic one, as of now for a realtime one (only used to choose when to
 * wake up; the deadline itself is checked on its own clock).  Saturates at
 * UINT64_MAX (year 2554 of either clock): a caller's tv_sec goes up to
 * INT64_MAX, and a wrapped value would be a deadline in the past. */
uint64_t hl_deadline_mono_ns(const struct hl_deadline *dl)
{
	uint64_t abs = hl_ts_to_ns_sat(&dl->abs);
	if (dl->clock == CLOCK_MONOTONIC)
		return abs;
	uint64_t real = hl_clock_ns(CLOCK_REALTIME), mono = hl_now_ns();
	return abs > real ? hl_add_sat(mono, abs - real) : mono;
}

/* Parks on n, whose state is `parked` (PARKED or PARKED_KEPT), until
 * signalled, the deadline, or wake_ns.  A deadline with an interrupt word
 * also ends the park when the word is set: the futex wait is on both words
 * (hl__futex_wait_either), so an interrupt set before the kernel looked at
 * them is seen there and one set after wakes it.  Returns hl_futex_wait's
 * result. */
static int park(struct hl_node *n, uint32_t parked, const struct hl_deadline *dl, uint64_t wake_ns)
{
	clockid_t clock = dl ? dl->clock : CLOCK_MONOTONIC;
	const struct timespec *abs = dl && !dl->forever ? &dl->abs : NULL;
	struct timespec ts;
	if (wake_ns) {
		uint64_t until = wake_ns;
		if (abs) {
			uint64_t d = hl_deadline_mono_ns(dl);
			if (d < until)
				until = d;
		}
		/* Valid for the kernel however far: tv_sec is at most
		 * 18446744073 (it saturates the time to KTIME_MAX). */
		ts.tv_sec = (time_t)(until / HL_NSEC_PER_SEC);
		ts.tv_nsec = (long)(until % HL_NSEC_PER_SEC);
		abs = &ts;
		clock = CLOCK_MONOTONIC;
	}
	if (dl && dl->interrupt)
		return hl__futex_wait_either((uint32_t *)&n->state, parked,
					     (const uint32_t *)dl->interrupt, 0, clock, abs);
	return hl_futex_wait((uint32_t *)&n->state, parked, clock, abs);
}

/* A park whose futex wait failed with err, which a working futex never
 * returns (a seccomp filter that refuses futex(2), say).  Correctness never
 * depended on the futex: the caller re-reads the node state and its clocks
 * after each return.  So sleep instead, from 1 us doubling up to 1 ms
 * (*sleep_ns, 1000 at the wait's start), rather than spin on a failing
 * syscall, and say so once per process. */
static void park_failed(int err, const struct hl_deadline *dl, long *sleep_ns)
{
	static _Atomic bool reported;
	/* Relaxed: only keeps the message to one; nothing is published. */
	if (!hl_xchg(&reported, true, HL_RELAXED)) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
		const char *name = strerrorname_np(err);
#else
		const char *name = NULL;
#endif
		fprintf(stderr, "hotlock: futex wait fails with errno %d (%s: %s); waiters poll "
			"with sleeps of up to 1 ms instead of parking\n", err, name ? name : "?",
			strerror(err));
	}
	hl_poll_backoff(dl, sleep_ns);
}

uint32_t hl_node_wait(struct hl_node *n, const struct hl_deadline *dl, uint64_t spin_ns)
{
	return hl_node_wait_until(n, dl, spin_ns, 0);
}

/* The waiting state and the parked state of a wait, kept or not. */
#define PARKED_OF(waiting) ((waiting) == HL_NODE_WAITING ? HL_NODE_PARKED : HL_NODE_PARKED_KEPT)
#define WAITING_OF(parked) ((parked) == HL_NODE_PARKED ? HL_NODE_WAITING : HL_NODE_WAITING_KEPT)

uint32_t hl_node_wait_until(struct hl_node *n, const struct hl_deadline *dl, uint64_t spin_ns,
			    uint64_t wake_ns)
{
	/* The state that means "not signalled yet": WAITING until a keeper
	 * makes it WAITING_KEPT, after which the deadline no longer applies
	 * (dl is dropped). */
	uint32_t waiting = HL_NODE_WAITING, s;
	if (spin_ns) {
		uint64_t start = hl_now_ns();
		for (unsigned i = 1;; i++) {
			/* Acquire: pairs with the waker's release. */
			s = hl_load(&n->state, HL_ACQUIRE);
			if (s != waiting) {
				if (s != HL_NODE_WAITING_KEPT)
					goto signalled;
				waiting = s;
				dl = NULL;
			}
			hl_cpu_relax();
			if (i % HL_SPIN_CLOCK_EVERY == 0) {
				if (hl_now_ns() - start >= spin_ns)
					break;
				if (hl_deadline_passed(dl)) {
					s = abandon(n, HL_NODE_WAITING);
					if (s != WAIT_KEPT)
						return s;
					waiting = HL_NODE_WAITING_KEPT;
					dl = NULL;
				}
			}
		}
	}
	for (;;) {
		s = waiting;
		/* Relaxed on success: going to sleep publishes nothing.
		 * Acquire on failure (via hl_cas): the signal's writes become
		 * visible. */
		if (hl_cas(&n->state, &s, PARKED_OF(waiting), HL_ACQUIRE))
			break;
		if (s != HL_NODE_WAITING_KEPT)
			goto signalled;
		waiting = s;    /* kept meanwhile: park as kept */
		dl = NULL;
	}
	uint32_t parked = PARKED_OF(waiting);
	long failed_sleep_ns = 1000;
	for (;;) {
		int r = park(n, parked, dl, wake_ns);
		if (hl_unlikely(r && r != EAGAIN && r != ETIMEDOUT && r != EINTR))
			park_failed(r, dl, &failed_sleep_ns);
		s = hl_load(&n->state, HL_ACQUIRE);
		if (s != parked) {
			if (s != HL_NODE_PARKED_KEPT)
				goto signalled;
			parked = s;     /* kept while asleep: no deadline now */
			dl = NULL;
			continue;
		}
		if ((r == ETIMEDOUT && !wake_ns && dl && !dl->forever) ||
		    (dl && hl_deadline_passed(dl))) {
			s = abandon(n, HL_NODE_PARKED);
			if (s != WAIT_KEPT)
				return s;
			parked = HL_NODE_PARKED_KEPT;
			dl = NULL;
			continue;
		}
		if (wake_ns && hl_now_ns() >= wake_ns) {
			/* Back to WAITING(_KEPT), still armed, so that the next
			 * wait starts clean.  Relaxed on success: nothing is
			 * published; acquire on failure: a signal won. */
			s = parked;
			if (hl_cas(&n->state, &s, WAITING_OF(parked), HL_ACQUIRE))
				return HL_WAIT_WOKEN;
			if (s != HL_NODE_PARKED_KEPT)
				goto signalled;
			parked = s;
			dl = NULL;
		}
	}
signalled:
	if (s == HL_NODE_CLAIMED)
		s = wait_claimed(n);
	return s;
}

uint32_t hl_node_give_up(struct hl_node *n)
{
	uint32_t s = abandon(n, HL_NODE_WAITING);
	if (s == WAIT_KEPT)
		hl__bug("giving up a wait that was kept", s);
	return s;
}

/* Only armed nodes (hl_node_armed) and ABANDONED can be met by a waker: a
 * node holding a signal or a claim has one waker already, and a second
 * means a broken protocol. */
static bool wakeable(uint32_t s)
{
	if (hl_node_armed(s))
		return true;
	if (s != HL_NODE_ABANDONED)
		hl__bug("signal to a node that is not waiting", s);
	return false;
}

bool hl_node_signal(struct hl_node *n, uint32_t sig)
{
	uint32_t s = hl_load(&n->state, HL_RELAXED);
	for (;;) {
		if (!wakeable(s))
			return false;
		/* Release: the signaller's writes are visible to the waiter,
		 * which reads the state with acquire.  Acquire on failure is
		 * not needed: we only retry. */
		if (hl_cas(&n->state, &s, sig, HL_RELEASE))
			break;
	}
	if (hl_node_parked(s))
		hl_futex_wake((uint32_t *)&n->state, 1);
	return true;
}

bool hl_node_claim(struct hl_node *n, bool *was_parked)
{
	uint32_t s = hl_load(&n->state, HL_RELAXED);
	for (;;) {
		if (!wakeable(s))
			return false;
		/* Relaxed: the claim publishes nothing; hl_node_post does. */
		if (hl_cas(&n->state, &s, HL_NODE_CLAIMED, HL_RELAXED))
			break;
	}
	*was_parked = hl_node_parked(s);
	return true;
}

bool hl_node_keep(struct hl_node *n)
{
	uint32_t s = hl_load(&n->state, HL_RELAXED);
	for (;;) {
		uint32_t kept;
		if (s == HL_NODE_WAITING)
			kept = HL_NODE_WAITING_KEPT;
		else if (s == HL_NODE_PARKED)
			kept = HL_NODE_PARKED_KEPT;
		else if (s == HL_NODE_ABANDONED)
			return false;
		else
			hl__bug("keeping a node that is not waiting", s);
		/* Relaxed: publishes nothing (wait.h); a failed CAS reloads s
		 * and decides again. */
		if (hl_cas(&n->state, &s, kept, HL_RELAXED))
			return true;
	}
}

void hl_node_post(struct hl_node *n, uint32_t sig, bool was_parked)
{
	/* Release: pairs with the waiter's acquire load of the state. */
	hl_store(&n->state, sig, HL_RELEASE);
	if (was_parked)
		hl_futex_wake((uint32_t *)&n->state, 1);
}

bool hl__thread_interrupt(uintptr_t pthread_id)
{
	struct hl_thread *t = hl_thread_by_pthread(pthread_id);
	if (!t)
		return false;
	/* seq_cst: an interruptible wait reads the word after arming (park,
	 * above); the wake below then finds it waiting, or it saw the word
	 * set and did not sleep. */
	hl_store(&t->interrupt, 1, HL_SEQ_CST);
	hl_futex_wake((uint32_t *)&t->interrupt, 1);
	return true;
}
