/* SPDX-License-Identifier: MIT */
/* The shim's contention records: which of a program's locks wait, where
 * in its code, and how (hotlock-run --stats; docs/stats.md).
 *
 * Settings (read once, at load; hotlock-run checks them before it runs the
 * program, the shim only warns, in one line, and goes on without):
 *
 *   HOTLOCK_STATS        1 or stderr: the text report on stderr; a path:
 *                        appended to that file (%p in it: the pid)
 *   HOTLOCK_STATS_JSON   a path: the JSON report appended there, one line
 *                        per process (docs/stats.schema.json)
 *   HOTLOCK_STATS_TOP    entries per table, 1-1000 (10)
 *   HOTLOCK_STATS_CLOCK  monotonic: time with clock_gettime even where the
 *                        TSC would do (shim_ticks; a check of the two)
 *   HOTLOCK_SHIM_STATS   the shim's older one-line report of futex calls
 *
 * What is recorded, and what it costs.  Nothing is recorded for an object
 * until it is first contended (a condvar: first waited on); with the
 * settings unset, nothing at all, and no lock path reads them but a slow
 * one.  At an object's first contention it gets a record in a table of
 * records (below), with the call stack of that acquisition (glibc's
 * backtrace, libgcc's unwinder), and the record's index is kept in the
 * object's spare bytes (shim.h).  From then on its acquisitions are
 * counted: each one that waits, and one in 64 of the others, picked at
 * random and counted 64 times (shim_stats.h says why):
 *  - a mutex is marked in its type word (SHIM_MUTEX_TRACKED), so that the
 *    shim's inline fast path for plain types does no more work than
 *    without the report, and a tracked one has a fast path of its own;
 *  - an rwlock and a condvar are looked up by their index on every call
 *    while the report is on (their calls are not inlined anyway).
 * An acquisition that waits is timed, and the calling thread's own
 * counters (thread.h: futex calls, spin phases and their outcome, handoffs)
 * are read before and after, so that the record gets what this wait cost
 * without the lock code knowing of records at all.  Holds are timed for
 * the acquisitions that waited and the sampled ones.  Times are taken in
 * shim_ticks (the TSC where the kernel trusts it) and converted to
 * nanoseconds once, at the report (to_ns).
 *
 * Who writes a record.  Threads side by side, each count an atomic add.
 * Waited acquisitions' counts, and timed holds with the sampled
 * acquisitions they count, are summed by their thread (struct sums) and
 * added to the record seldom, so that they neither lengthen the critical
 * section nor delay the thread's next acquisition (shim_wait_end,
 * shim_hold_add); sampled read locks, timeouts, slow releases and
 * condvars are added where they happen (shim_stats.h).  All relaxed: the
 * report reads them at exit, as numbers, and orders nothing by them.
 *
 * The record table is reserved address space (mmap, MAP_NORESERVE), never
 * unmapped, so a record stays memory for a thread that still writes it
 * after its object was destroyed (it then counts for whichever object has
 * the record since: a small error, never a fault).  An object that is
 * destroyed, or initialised again, has its record merged into one per kind
 * and call stack (a program that makes a lock per request gets one entry
 * for all of them) and its own record is freed.  A record is found from
 * the object through the index in its bytes, checked against the address
 * the record holds: bytes that were never ours (an object copied, or
 * memory reused without init) never reach another object's record.
 *
 * At exit (return from main or exit: a destructor; _exit and _Exit: the
 * shim's own, which then call glibc's; a fatal signal the program leaves
 * to the default action: a handler that reports, then lets the signal act)
 * the table is handed to libhotlock-report.so, loaded then from beside the
 * shim, which names the call stacks and writes the reports.  Each process
 * reports for itself: a fork child's records start from zero, and a vfork
 * child (which shares the parent's memory and runs no fork handler) writes
 * nothing. */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <hotlock/futex.h>

#include "shim.h"
#include "shim_stats.h"
#include "stats.h"
#include "thread.h"
#include "config.h"
#include "queue.h"
#include "topology.h"

#define MAX_RECS (1u << 16)             /* records; index 0 is "none" */
#define MERGE_SLOTS 4096u               /* merged records' hash table */
#define MAX_THREADS 4096u
#define TOP_DEFAULT 10
#define TOP_MAX 1000
#define SIGNAL_REPORT_S 10              /* a report from a fatal signal gets this long */
#define TSC_RATE_MIN_NS 10000000ull     /* the TSC's rate is measured over at least this */
#define SUM_SLOTS 4                     /* records a thread sums its counts for */

bool shim_stats_on;
bool shim_tsc;
/* shim_ticks and CLOCK_MONOTONIC read together at load: the TSC's start
 * for its rate, measured over the run at the report (to_ns). */
static uint64_t tsc_base, mono_base;

/* A report's destination: off, stderr (path ""), or a file. */
struct dest {
	bool on;
	char path[PATH_MAX];
};
static struct dest text, json, line;    /* line: HOTLOCK_SHIM_STATS */
static int top_n = TOP_DEFAULT;
static uint64_t start_ns;               /* CLOCK_BOOTTIME at the process's start */

struct stats_rec *shim_recs;
_Atomic uint32_t shim_recs_used = 1;    /* the table's high-water mark */
__thread uint32_t shim_sample_state __attribute__((tls_model("initial-exec")));
__thread uint64_t shim_releases __attribute__((tls_model("initial-exec")));
static uint32_t free_head;              /* under table_lock */
static uint32_t merged[MERGE_SLOTS];    /* under table_lock */
static _Atomic uint64_t untracked;      /* contended objects without a record */
static atomic_flag table_lock = ATOMIC_FLAG_INIT;

static struct stats_thread *threads;
static _Atomic uint32_t threads_used;
static _Atomic uint64_t threads_omitted, omitted_lock_ns, omitted_cond_ns;
static __thread struct stats_thread *me __attribute__((tls_model("initial-exec")));
static __thread bool me_omitted __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;

/* The process the records belong to (a vfork child's getpid differs). */
static _Atomic int owner_pid;
/* The pid that wrote its report: once per process. */
static _Atomic int reported_pid;

/* This library's text: frames there are left out of a call stack. */
static uintptr_t self_lo, self_hi;

/* ---- settings ------------------------------------------------------------ */

static void say(const char *fmt, const char *a)
{
	char buf[PATH_MAX + 256];
	int n = snprintf(buf, sizeof(buf), fmt, a);
	if (n > 0 && write(2, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0)
		n = 0;
}

/* d from the setting's value v: "1" or "stderr" (if allowed) is stderr,
 * anything else a path, made absolute against the directory at load (a
 * daemon that changes directory still writes where the user meant). */
static void set_dest(struct dest *d, const char *var, const char *v, bool stderr_word)
{
	if (!v || !*v || !strcmp(v, "0"))
		return;
	d->on = true;
	if (stderr_word && (!strcmp(v, "1") || !strcmp(v, "stderr")))
		return;
	char cwd[PATH_MAX];
	int n = -1;
	if (v[0] == '/')
		n = snprintf(d->path, sizeof(d->path), "%s", v);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(d->path, sizeof(d->path), "%s/%s", cwd, v);
	if (n < 0 || n >= (int)sizeof(d->path)) {
		d->path[0] = 0;
		char msg[128];
		snprintf(msg, sizeof(msg), "hotlock-preload: %s: %%s: path too long or the current "
			 "directory unknown; the report goes to stderr\n", var);
		say(msg, v);
	}
}

/* Whether shim_ticks may read the TSC: on x86-64, where the kernel's
 * clocksource is the TSC, which it chooses only when the TSC runs at a
 * constant rate, through sleep states, in step on every CPU (and a VM's
 * host says so). */
static bool tsc_trusted(void)
{
#if defined(__x86_64__)
	char buf[64];
	return hl__read_small_file("/sys/devices/system/clocksource/clocksource0/current_clocksource",
				   buf, sizeof(buf)) > 0 && !strcmp(buf, "tsc\n");
#else
	return false;
#endif
}

static void read_settings(void)
{
	set_dest(&text, "HOTLOCK_STATS", getenv("HOTLOCK_STATS"), true);
	set_dest(&json, "HOTLOCK_STATS_JSON", getenv("HOTLOCK_STATS_JSON"), false);
	const char *v = getenv("HOTLOCK_STATS_TOP");
	if (v && *v) {
		char *end;
		errno = 0;
		long n = strtol(v, &end, 10);
		if (errno || *end || n < 1 || n > TOP_MAX)
			say("hotlock-preload: HOTLOCK_STATS_TOP wants a number from 1 to 1000, not '%s'; "
			    "showing 10\n", v);
		else
			top_n = (int)n;
	}
	/* The older line: a value starting with '/' is a file, anything
	 * else stderr (as it always was). */
	v = getenv("HOTLOCK_SHIM_STATS");
	if (v && *v && strcmp(v, "0")) {
		line.on = true;
		if (v[0] == '/')
			snprintf(line.path, sizeof(line.path), "%s", v);
	}
	shim_stats_on = text.on || json.on;
	v = getenv("HOTLOCK_STATS_CLOCK");
	if (shim_stats_on && v && *v && strcmp(v, "monotonic") && strcmp(v, "tsc"))
		say("hotlock-preload: HOTLOCK_STATS_CLOCK wants tsc or monotonic, not '%s'; "
		    "using the TSC where the kernel does\n", v);
	if (shim_stats_on && !(v && !strcmp(v, "monotonic")))
		shim_tsc = tsc_trusted();
}

/* ---- threads ------------------------------------------------------------- */

/* What a thread has counted, summed by record (SUM_SLOTS records), and not
 * yet added to the records.  Adding a count to a record is an atomic add
 * on the record's lines, which other CPUs' threads write too: a dozen of
 * them per waited acquisition.  Under the lock, they lengthened the
 * critical section (sysbench-mutex lost a tenth of its rate); right after
 * the release, they held the releasing thread back from its next
 * acquisition, long enough for a waiter on the other CPU to take the lock
 * first, and the lock then moved between CPUs more often (measured:
 * docs/stats.md).  Before the thread's next wait, they cost a dozen
 * atomic adds per acquisition where nearly every acquisition waits
 * (stress-ng's mutex stressor).  So a thread sums its counts in its own
 * slots, with loads and stores (no gain beyond this VM's noise on
 * sysbench-threads, 0.96 to 0.97 of the rate without the report), and a
 * slot is added to its record only when the thread needs it for a fifth
 * record, at the thread's exit, at the report, and at the object's
 * destruction.
 * The slots are in a table the report reaches (sums_table, beside
 * threads), so that the report, and an object's destruction, take what
 * threads still running have summed: whoever takes the record's pointer
 * out of a slot (claim) adds its counts, so none is added twice.  (A
 * thread beyond the table's room adds each count at once.)  The fields are
 * the owner's; another thread reads them only after claiming, and an owner
 * adding to a slot meanwhile can lose that addition: a race at an object's
 * destruction or at exit only. */
struct sum_slot {
	_Atomic(struct stats_rec *) rec;       /* NULL: the slot is free */
	_Atomic uint64_t last_end;              /* the end of the thread's last wait for it */
	_Atomic uint64_t c[STC_COUNT];          /* as the record's: sums, and maxima */
};
struct sums {
	struct sum_slot slot[SUM_SLOTS];
};
static struct sums *sums_table;                 /* MAX_THREADS, beside threads */
static __thread struct sums *my_sums __attribute__((tls_model("initial-exec")));
static __thread struct sums own_sums __attribute__((tls_model("initial-exec")));
/* Adds what the calling thread has summed to the records. */
static void sums_flush_mine(void);

static uint64_t boot_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return hl_ts_to_ns(&ts);
}

/* When task tid of this process started (CLOCK_BOOTTIME ns): field 22 of
 * its stat, in clock ticks since boot; now where it cannot be read. */
static uint64_t task_start_ns(uint32_t tid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/self/task/%u/stat", tid);
	if (tid == 0)
		snprintf(path, sizeof(path), "/proc/self/stat");
	if (hl__read_small_file(path, buf, sizeof(buf)) <= 0)
		return boot_ns();
	/* The name (field 2) may hold spaces and parentheses: count from
	 * the last ')'. */
	char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++) {
		p = strchr(p + 1, ' ');
	}
	long hz = sysconf(_SC_CLK_TCK);
	if (!p || hz <= 0)
		return boot_ns();
	unsigned long long ticks = strtoull(p + 1, NULL, 10);
	return ticks * (HL_NSEC_PER_SEC / (uint64_t)hz);
}

static void task_name(uint32_t tid, char name[STATS_NAME])
{
	char path[64], buf[64];
	snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
	if (hl__read_small_file(path, buf, sizeof(buf)) <= 0)
		snprintf(buf, sizeof(buf), "?");
	buf[strcspn(buf, "\n")] = 0;
	buf[STATS_NAME - 1] = 0;        /* comm is at most 15 characters */
	memcpy(name, buf, STATS_NAME);
}

/* Cancellation off, for a step that makes syscalls which are cancellation
 * points (open, read): a lock call is none, and a thread must never be
 * unwound from inside one (or with table_lock held).  *old: to restore. */
static void no_cancel(int *old)
{
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, old);
}

/* The calling thread's record: made at its first wait (the main thread's
 * at load).  NULL beyond the table's room: its waits then count in the
 * totals only. */
static struct stats_thread *thread_me(void)
{
	if (hl_likely(me != NULL) || me_omitted)
		return me;
	/* Relaxed: a slot index; the slot is this thread's alone. */
	uint32_t i = hl_fetch_add(&threads_used, 1, HL_RELAXED);
	if (i >= MAX_THREADS) {
		me_omitted = true;
		my_sums = &own_sums;
		hl_fetch_add(&threads_omitted, 1, HL_RELAXED);
		return NULL;
	}
	struct stats_thread *t = &threads[i];
	t->tid = hl_tid();
	my_sums = &sums_table[i];
	int cs;
	no_cancel(&cs);
	t->start_ns = task_start_ns(t->tid);
	pthread_setspecific(exit_key, t);
	pthread_setcancelstate(cs, NULL);
	me = t;
	return t;
}

/* The CPU time of thread tid of this process: the kernel's CPU clock of a
 * thread is named by its TID (what glibc's pthread_getcpuclockid makes). */
static uint64_t task_cpu_ns(uint32_t tid)
{
	struct timespec ts;
	clockid_t clock = (clockid_t)((~(unsigned)tid << 3) | 6);       /* CPUCLOCK_SCHED | THREAD */
	return clock_gettime(clock, &ts) == 0 ? hl_ts_to_ns(&ts) : 0;
}

/* The thread exits (its key's destructor): keep its name, CPU time and
 * end. */
static void thread_exit(void *p)
{
	struct stats_thread *t = p;
	sums_flush_mine();
	int cs;
	no_cancel(&cs);
	task_name(t->tid, t->name);
	pthread_setcancelstate(cs, NULL);
	hl_store(&t->cpu_ns, task_cpu_ns(t->tid), HL_RELAXED);
	hl_store(&t->end_ns, boot_ns(), HL_RELAXED);
	hl_store(&t->exited, true, HL_RELAXED);
}

static void thread_wait(uint64_t ns, bool cond)
{
	struct stats_thread *t = thread_me();
	_Atomic uint64_t *sum = t ? (cond ? &t->cond_wait_ns : &t->lock_wait_ns) : NULL;
	if (sum)        /* the thread's own: load and store */
		hl_store(sum, hl_load(sum, HL_RELAXED) + ns, HL_RELAXED);
	else
		hl_fetch_add(cond ? &omitted_cond_ns : &omitted_lock_ns, ns, HL_RELAXED);
}

/* ---- records --------------------------------------------------------------- */

static void table_lock_take(void)
{
	/* Acquire: pairs with table_lock_drop's release. */
	while (atomic_flag_test_and_set_explicit(&table_lock, memory_order_acquire))
		sched_yield();
}

static void table_lock_drop(void)
{
	atomic_flag_clear_explicit(&table_lock, memory_order_release);
}

static uint64_t stack_hash(const struct stats_rec *r)
{
	uint64_t h = 1469598103934665603ull ^ r->obj ^ (uint64_t)r->type << 8;
	for (uint32_t i = 0; i < r->nframes; i++)
		h = (h ^ r->stack[i]) * 1099511628211ull;
	return h;
}

/* A record of the table, empty, or NULL when the table is full.  Under
 * table_lock. */
static struct stats_rec *rec_alloc(void)
{
	uint32_t i = free_head;
	if (i) {
		free_head = shim_recs[i].next_free;
	} else {
		i = hl_load(&shim_recs_used, HL_RELAXED);
		if (i >= MAX_RECS)
			return NULL;
		/* Relaxed: the report reads the records below it, as
		 * numbers. */
		hl_store(&shim_recs_used, i + 1, HL_RELAXED);
	}
	struct stats_rec *r = &shim_recs[i];
	memset((void *)r, 0, sizeof(*r));
	return r;
}

static inline uint32_t rec_index(const struct stats_rec *r)
{
	return (uint32_t)(r - shim_recs);
}

/* The frames of the caller's call stack outside this library, innermost
 * first (glibc's backtrace; the unwinder was loaded at start). */
static void capture_stack(struct stats_rec *r)
{
	void *pcs[STATS_FRAMES + 16];
	int n = backtrace(pcs, (int)(sizeof(pcs) / sizeof(pcs[0])));
	int i = 0;
	while (i < n && (uintptr_t)pcs[i] >= self_lo && (uintptr_t)pcs[i] < self_hi)
		i++;
	for (r->nframes = 0; i < n && r->nframes < STATS_FRAMES; i++)
		r->stack[r->nframes++] = (uintptr_t)pcs[i];
}

struct stats_rec *shim_stats_track(void *obj, _Atomic uint32_t *idx, enum stats_obj kind, uint32_t type)
{
	/* Another thread may have made it meanwhile. */
	struct stats_rec *r = shim_stats_rec(obj, hl_load(idx, HL_ACQUIRE));
	if (r)
		return r;
	/* The stack before the lock: backtrace may take the loader's lock. */
	struct stats_rec fresh = { .obj = kind, .type = type };
	int cs;
	no_cancel(&cs);
	capture_stack(&fresh);
	table_lock_take();
	r = shim_stats_rec(obj, hl_load(idx, HL_RELAXED));
	if (!r) {
		r = rec_alloc();
		if (r) {
			r->obj = kind;
			r->type = type;
			r->nframes = fresh.nframes;
			memcpy(r->stack, fresh.stack, sizeof(r->stack));
			r->hash = stack_hash(r);
			r->first_ns = shim_ticks();
			hl_store(&r->objects, 1, HL_RELAXED);
			hl_store(&r->addr, (uintptr_t)obj, HL_RELAXED);
			/* Release: the record's fields before its index, which
			 * other threads read (acquire above, relaxed where a
			 * stale record only makes them miss). */
			hl_store(idx, rec_index(r), HL_RELEASE);
		} else {
			hl_fetch_add(&untracked, 1, HL_RELAXED);
		}
	}
	table_lock_drop();
	pthread_setcancelstate(cs, NULL);
	return r;
}

/* Adds record r's counts into m (their spans: from the first start to the
 * last end). */
static void rec_fold(struct stats_rec *m, const struct stats_rec *r)
{
	if (r->first_ns < m->first_ns)
		m->first_ns = r->first_ns;
	if (hl_load(&r->last_ns, HL_RELAXED) > hl_load(&m->last_ns, HL_RELAXED))
		hl_store(&m->last_ns, hl_load(&r->last_ns, HL_RELAXED), HL_RELAXED);
	for (int k = 0; k < STC_COUNT; k++) {
		uint64_t v = hl_load(&r->c[k], HL_RELAXED);
		if (stats_counter_is_max(k)) {
			if (v > hl_load(&m->c[k], HL_RELAXED))
				hl_store(&m->c[k], v, HL_RELAXED);
		} else {
			hl_fetch_add(&m->c[k], v, HL_RELAXED);
		}
	}
}

static void sums_add_all(const struct stats_rec *only);

void shim_stats_forget(void *obj, _Atomic uint32_t *idx)
{
	if (!shim_stats_on)
		return;
	table_lock_take();
	struct stats_rec *r = shim_stats_rec(obj, hl_load(idx, HL_RELAXED));
	if (r) {
		hl_store(idx, 0, HL_RELAXED);
		sums_add_all(r);        /* what threads have summed for it, into it */
		/* Its merged record: the one of its kind and stack. */
		uint32_t slot = (uint32_t)r->hash % MERGE_SLOTS, probes = 0;
		while (merged[slot] && shim_recs[merged[slot]].hash != r->hash && ++probes < MERGE_SLOTS)
			slot = (slot + 1) % MERGE_SLOTS;
		struct stats_rec *m = NULL;
		if (merged[slot] && shim_recs[merged[slot]].hash == r->hash) {
			m = &shim_recs[merged[slot]];
			hl_fetch_add(&m->objects, 1, HL_RELAXED);
		} else if (!merged[slot] && (m = rec_alloc())) {
			m->obj = r->obj;
			m->type = r->type;
			m->nframes = r->nframes;
			memcpy(m->stack, r->stack, sizeof(m->stack));
			m->hash = r->hash;
			m->first_ns = r->first_ns;
			hl_store(&m->objects, 1, HL_RELAXED);
			hl_store(&m->cond_mutex, hl_load(&r->cond_mutex, HL_RELAXED), HL_RELAXED);
			/* An address no object has: nobody finds it by index. */
			hl_store(&m->addr, (uintptr_t)obj | 1, HL_RELAXED);
			merged[slot] = rec_index(m);
		}
		if (m) {
			rec_fold(m, r);
			hl_store(&r->addr, 0, HL_RELAXED);
			r->next_free = free_head;
			free_head = rec_index(r);
		}
		/* No room to merge: the record stays, under its old address,
		 * and nothing finds it any more. */
		else
			hl_store(&r->addr, (uintptr_t)obj | 1, HL_RELAXED);
	}
	table_lock_drop();
}

/* ---- counting ---------------------------------------------------------------- */

/* A maximum written without the lock. */
static inline void shared_max(struct stats_rec *r, int k, uint64_t v)
{
	uint64_t old = hl_load(&r->c[k], HL_RELAXED);
	while (v > old && !hl_cas(&r->c[k], &old, v, HL_RELAXED))
		;
}

/* The calling thread's counters (thread.h), as they are now: a wait's
 * and a release's cost is their difference over it. */
static void thread_counters(uint64_t c[HL_COUNTERS])
{
	struct hl_thread *t = hl__self_ptr;
	for (int k = 0; k < HL_COUNTERS; k++)
		c[k] = t ? hl_load(&t->fx[k], HL_RELAXED) : 0;
}

void shim_wait_begin(struct shim_wait *w)
{
	thread_counters(w->c0);
	w->t0 = shim_ticks();
}

static const int wait_fields[HL_COUNTERS] = {
	[HL_FX_WAIT] = STC_FUTEX_WAITS, [HL_FX_WAKE] = STC_FUTEX_WAKES,
	[HL_SP_SPUN] = STC_SPINS, [HL_SP_WON] = STC_SPINS_WON, [HL_LK_HANDED] = STC_HANDOFFS,
};

/* Adds slot s's counts to r: atomic adds, as other threads add theirs at
 * the same time. */
static void slot_write(struct stats_rec *r, struct sum_slot *s)
{
	for (int k = 0; k < STC_COUNT; k++) {
		uint64_t v = hl_load(&s->c[k], HL_RELAXED);
		if (!v)
			continue;
		if (stats_counter_is_max(k))
			shared_max(r, k, v);
		else
			hl_fetch_add(&r->c[k], v, HL_RELAXED);
	}
	/* The latest of racing ends is near enough. */
	uint64_t end = hl_load(&s->last_end, HL_RELAXED);
	if (end > hl_load(&r->last_ns, HL_RELAXED))
		hl_store(&r->last_ns, end, HL_RELAXED);
}

/* Takes the record's pointer out of a slot (only: if it is that record),
 * so that the caller, and nobody else, adds the slot's counts.  Acquire:
 * pairs with the owner's release store of the pointer, after the slot was
 * zeroed. */
static struct stats_rec *claim(struct sum_slot *s, const struct stats_rec *only)
{
	struct stats_rec *r = hl_load(&s->rec, HL_RELAXED);
	if (!r || (only && r != only))
		return NULL;
	return hl_cas(&s->rec, &r, NULL, HL_ACQUIRE) ? r : NULL;
}

/* Adds what p has summed (for record only, or all of it). */
static void sums_add(struct sums *p, const struct stats_rec *only)
{
	for (int i = 0; i < SUM_SLOTS; i++) {
		struct stats_rec *r = claim(&p->slot[i], only);
		if (r)
			slot_write(r, &p->slot[i]);
	}
}

/* What every thread has summed (only: for that record): the report's, and
 * an object's destruction's. */
static void sums_add_all(const struct stats_rec *only)
{
	uint32_t n = hl_load(&threads_used, HL_RELAXED);
	for (uint32_t i = 0; i < n && i < MAX_THREADS; i++)
		sums_add(&sums_table[i], only);
}

static void sums_flush_mine(void)
{
	if (my_sums)
		sums_add(my_sums, NULL);
}

/* r's slot in the calling thread's sums: the one it has, else a free one,
 * else one written out now (picked by salt, a clock's low bits: no slot is
 * favoured).  Its first use registers the thread (thread_me sets my_sums,
 * in the table or, beyond its room, own_sums). */
static struct sum_slot *slot_for(struct stats_rec *r, uint64_t salt)
{
	struct sums *p = my_sums;
	if (hl_unlikely(!p)) {
		thread_me();
		p = my_sums;
	}
	struct sum_slot *free_slot = NULL;
	for (int i = 0; i < SUM_SLOTS; i++) {
		struct stats_rec *in = hl_load(&p->slot[i].rec, HL_RELAXED);
		if (in == r)
			return &p->slot[i];
		if (!in && !free_slot)
			free_slot = &p->slot[i];
	}
	struct sum_slot *s = free_slot;
	if (!s) {
		s = &p->slot[(salt >> 4) % SUM_SLOTS];
		struct stats_rec *out = claim(s, NULL);
		if (out)
			slot_write(out, s);
	}
	for (int k = 0; k < STC_COUNT; k++)
		hl_store(&s->c[k], 0, HL_RELAXED);
	hl_store(&s->last_end, 0, HL_RELAXED);
	/* Release: the zeroed counts before the pointer (claim). */
	hl_store(&s->rec, r, HL_RELEASE);
	return s;
}

/* The slot's owner alone adds to it: a load and a store, no atomic add. */
static inline void slot_add(struct sum_slot *s, int k, uint64_t v)
{
	hl_store(&s->c[k], hl_load(&s->c[k], HL_RELAXED) + v, HL_RELAXED);
}

static inline void slot_max(struct sum_slot *s, int k, uint64_t v)
{
	if (v > hl_load(&s->c[k], HL_RELAXED))
		hl_store(&s->c[k], v, HL_RELAXED);
}

/* After counting into s: a thread without a place in the table writes
 * its counts at once (nobody else would). */
static inline void slot_done(struct sum_slot *s)
{
	if (hl_unlikely(my_sums == &own_sums)) {
		struct stats_rec *r = claim(s, NULL);
		if (r)
			slot_write(r, s);
	}
}

uint64_t shim_wait_end(struct stats_rec *r, const struct shim_wait *w, bool read, int err)
{
	uint64_t end = shim_ticks() & ~HOLD_SAMPLED, ticks = end - w->t0;
	uint64_t c[HL_COUNTERS];
	thread_counters(c);
	thread_wait(ticks, false);
	if (err) {
		if (err == ETIMEDOUT)
			hl_fetch_add(&r->c[STC_TIMEOUTS], 1, HL_RELAXED);
		return end;
	}
	/* The node moved: with one node, never (and no node lookup). */
	bool cross = false;
	if (hl_topo_nodes() > 1) {
		uint32_t node = hl_topo_node() + 1;
		cross = hl_load(&r->last_node, HL_RELAXED) != node;
		hl_store(&r->last_node, node, HL_RELAXED);
	}
	struct sum_slot *s = slot_for(r, end);
	slot_add(s, read ? STC_R_ACQ : STC_W_ACQ, 1);
	slot_add(s, read ? STC_R_CONTENDED : STC_W_CONTENDED, 1);
	slot_add(s, read ? STC_R_WAIT_NS : STC_W_WAIT_NS, ticks);
	slot_max(s, read ? STC_R_WAIT_MAX_NS : STC_W_WAIT_MAX_NS, ticks);
	for (int k = 0; k < HL_COUNTERS; k++)
		if (wait_fields[k] && c[k] != w->c0[k])
			slot_add(s, wait_fields[k], c[k] - w->c0[k]);
	if (cross)
		slot_add(s, STC_CROSS_NODE, 1);
	hl_store(&s->last_end, end, HL_RELAXED);
	slot_done(s);
	return end;
}

void shim_hold_add(struct stats_rec *r, uint64_t since)
{
	if (!since)
		return;
	uint64_t ticks = shim_ticks() - (since & ~HOLD_SAMPLED);
	/* A sampled hold stands for SAMPLE acquisitions without a wait, and
	 * is weighed so: every waited acquisition's hold is timed, and
	 * their mean alone would stand for the rest (a hold taken after a
	 * wait, by a thread just woken, is often the longer: hotspots' hot
	 * mutex read as held 366% of its phase before). */
	uint64_t weight = since & HOLD_SAMPLED ? SAMPLE : 1;
	struct sum_slot *s = slot_for(r, ticks);
	slot_add(s, STC_HOLD_NS, ticks * weight);
	slot_add(s, STC_HOLDS, weight);
	slot_max(s, STC_HOLD_MAX_NS, ticks);
	if (since & HOLD_SAMPLED)
		slot_add(s, STC_W_ACQ, SAMPLE);
	slot_done(s);
}

void shim_release_begin(struct shim_wait *w)
{
	thread_counters(w->c0);
}

void shim_release_end(struct stats_rec *r, const struct shim_wait *w)
{
	uint64_t c[HL_COUNTERS];
	thread_counters(c);
	if (c[HL_FX_WAKE] != w->c0[HL_FX_WAKE])
		hl_fetch_add(&r->c[STC_FUTEX_WAKES], c[HL_FX_WAKE] - w->c0[HL_FX_WAKE], HL_RELAXED);
	if (c[HL_FX_WAIT] != w->c0[HL_FX_WAIT])
		hl_fetch_add(&r->c[STC_FUTEX_WAITS], c[HL_FX_WAIT] - w->c0[HL_FX_WAIT], HL_RELAXED);
}

/* ---- condition variables ---------------------------------------------------- *
 * A wake-up is futile when its thread, woken holding the mutex, waits on the
 * same condvar again without having released the mutex in between: it found
 * its condition still false.  Each thread counts its mutex releases (every
 * release of a tracked mutex, and every wait, which releases one). */
static __thread struct {
	const void *cond, *mutex;
	uint64_t releases;
} last_wake __attribute__((tls_model("initial-exec")));

uint64_t shim_cond_wait_begin(struct stats_rec *r, const void *cond, const void *mutex)
{
	if (last_wake.cond == cond && last_wake.mutex == mutex && last_wake.releases == shim_releases)
		hl_fetch_add(&r->c[STC_C_FUTILE], 1, HL_RELAXED);
	last_wake.cond = NULL;
	shim_releases++;               /* the wait releases the mutex */
	hl_store(&r->cond_mutex, (uintptr_t)mutex, HL_RELAXED);
	return shim_ticks();
}

void shim_cond_wait_end(struct stats_rec *r, uint64_t t0, const void *cond, const void *mutex, int err)
{
	uint64_t ticks = shim_ticks() - t0;
	thread_wait(ticks, true);
	hl_fetch_add(&r->c[STC_C_WAITS], 1, HL_RELAXED);
	hl_fetch_add(&r->c[STC_C_WAIT_NS], ticks, HL_RELAXED);
	if (err == ETIMEDOUT) {
		hl_fetch_add(&r->c[STC_TIMEOUTS], 1, HL_RELAXED);
	} else if (!err) {
		hl_fetch_add(&r->c[STC_C_WOKEN], 1, HL_RELAXED);
		last_wake.cond = cond;
		last_wake.mutex = mutex;
		last_wake.releases = shim_releases;
	}
}

void shim_cond_signalled(struct stats_rec *r, uint32_t waiters, bool broadcast)
{
	if (broadcast) {
		hl_fetch_add(&r->c[STC_C_BROADCASTS], 1, HL_RELAXED);
		hl_fetch_add(&r->c[STC_C_BROADCAST_WAITERS], waiters, HL_RELAXED);
	} else {
		hl_fetch_add(&r->c[waiters ? STC_C_SIGNALS : STC_C_SIGNALS_EMPTY], 1, HL_RELAXED);
	}
}

/* ---- the report ------------------------------------------------------------------- */


/* HOTLOCK_SHIM_STATS's line: the futex calls of every thread. */
static void write_line(void)
{
	hl_futex_stats_t s;
	hl_futex_stats_total(&s);
	char buf[256];
	int n = snprintf(buf, sizeof(buf),
			 "hotlock-preload: pid %d futex calls: wait %llu wake %llu (woke %llu) other %llu\n",
			 (int)getpid(), (unsigned long long)s.wait, (unsigned long long)s.wake,
			 (unsigned long long)s.woken, (unsigned long long)s.other);
	int fd = 2;
	if (line.path[0]) {
		fd = open(line.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			int err = errno;
			char msg[PATH_MAX + 128];
			snprintf(msg, sizeof(msg), "hotlock-preload: cannot open %s (HOTLOCK_SHIM_STATS): %s; "
				 "the line goes to stderr\n", line.path, strerror(err));
			stats_write_all(2, msg, strlen(msg));
			fd = 2;
		}
	}
	/* One write: lines of processes that exit together do not mix. */
	stats_write_all(fd, buf, (size_t)n);
	if (fd != 2)
		close(fd);
}

/* libhotlock-report.so, beside this library (the build tree and the
 * installed tree both keep them together). */
static stats_report_fn *report_fn(void)
{
	Dl_info info;
	char path[PATH_MAX];
	if (!dladdr((void *)report_fn, &info) || !info.dli_fname)
		return NULL;
	const char *slash = strrchr(info.dli_fname, '/');
	int dir = slash ? (int)(slash - info.dli_fname) : 0;
	snprintf(path, sizeof(path), "%.*s%slibhotlock-report.so", dir, info.dli_fname, slash ? "/" : "");
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		say("hotlock-preload: no lock report: %s\n", dlerror());
		return NULL;
	}
	stats_report_fn *fn = (stats_report_fn *)dlsym(h, STATS_REPORT_SYMBOL);
	if (!fn)
		say("hotlock-preload: no lock report: %s\n", dlerror());
	return fn;
}

/* ---- ticks to nanoseconds ----------------------------------------------------- */

static const bool is_time[STC_COUNT] = {
	[STC_W_WAIT_NS] = true, [STC_W_WAIT_MAX_NS] = true, [STC_R_WAIT_NS] = true,
	[STC_R_WAIT_MAX_NS] = true, [STC_HOLD_NS] = true, [STC_HOLD_MAX_NS] = true,
	[STC_C_WAIT_NS] = true,
};

static void scaled(_Atomic uint64_t *v, double ns_per_tick)
{
	hl_store(v, (uint64_t)((double)hl_load(v, HL_RELAXED) * ns_per_tick), HL_RELAXED);
}

/* A tick count since tsc_base as CLOCK_MONOTONIC. */
static uint64_t mono_of(uint64_t ticks, double ns_per_tick)
{
	return ticks > tsc_base ? mono_base + (uint64_t)((double)(ticks - tsc_base) * ns_per_tick) : mono_base;
}

/* The times of the records and of the threads, from shim_ticks to
 * nanoseconds, once, before the report reads them: the TSC's rate is
 * measured from load to now (a run shorter than TSC_RATE_MIN_NS sleeps for
 * the rest), and first_ns and last_ns become CLOCK_MONOTONIC.  A thread
 * still running may add to a record meanwhile: at exit, a few late counts
 * lost or left in ticks. */
static void to_ns(uint32_t n_threads)
{
#if defined(__x86_64__)
	if (!shim_tsc)
		return;
	uint64_t mono, ticks;
	for (;;) {
		mono = hl_now_ns();
		ticks = shim_ticks();
		if (mono - mono_base >= TSC_RATE_MIN_NS || ticks <= tsc_base)
			break;
		hl_sleep_ns((long)(TSC_RATE_MIN_NS - (mono - mono_base)));
	}
	if (ticks <= tsc_base)
		return;
	double ns_per_tick = (double)(mono - mono_base) / (double)(ticks - tsc_base);
	uint32_t used = hl_load(&shim_recs_used, HL_RELAXED);
	for (uint32_t i = 1; i < used; i++) {
		struct stats_rec *r = &shim_recs[i];
		r->first_ns = mono_of(r->first_ns, ns_per_tick);
		if (hl_load(&r->last_ns, HL_RELAXED))
			hl_store(&r->last_ns, mono_of(hl_load(&r->last_ns, HL_RELAXED), ns_per_tick), HL_RELAXED);
		for (int k = 0; k < STC_COUNT; k++)
			if (is_time[k])
				scaled(&r->c[k], ns_per_tick);
	}
	for (uint32_t i = 0; i < n_threads; i++) {
		scaled(&threads[i].lock_wait_ns, ns_per_tick);
		scaled(&threads[i].cond_wait_ns, ns_per_tick);
	}
	scaled(&omitted_lock_ns, ns_per_tick);
	scaled(&omitted_cond_ns, ns_per_tick);
#else
	(void)n_threads;
#endif
}

/* Writes this process's reports, once; end: how it ends. */
static void report(const char *end)
{
	/* Nothing asked for (neither --stats nor HOTLOCK_SHIM_STATS): no
	 * system call at all on the way out (a sandboxed program's _exit must
	 * stay the _exit its filter allows). */
	if (!line.on && !shim_stats_on)
		return;
	int pid = (int)getpid();
	/* A vfork child shares the parent's memory: not its records. */
	if (pid != hl_load(&owner_pid, HL_RELAXED))
		return;
	int none = 0;
	if (!hl_cas(&reported_pid, &none, pid, HL_RELAXED))
		return;
	if (line.on)
		write_line();
	if (!shim_stats_on)
		return;
	/* A live thread's name and CPU time, and the main thread's. */
	uint32_t n_threads = hl_load(&threads_used, HL_RELAXED);
	if (n_threads > MAX_THREADS)
		n_threads = MAX_THREADS;
	for (uint32_t i = 0; i < n_threads; i++)
		if (!hl_load(&threads[i].exited, HL_RELAXED) && threads[i].tid) {
			task_name(threads[i].tid, threads[i].name);
			hl_store(&threads[i].cpu_ns, task_cpu_ns(threads[i].tid), HL_RELAXED);
		}
	stats_report_fn *fn = report_fn();
	if (!fn)
		return;
	sums_add_all(NULL);     /* every thread's sums, the caller's too */
	to_ns(n_threads);
	struct stats_report r = {
		.version = STATS_REPORT_VERSION,
		.pid = pid,
		.end = end,
		.text_path = text.on ? text.path : NULL,
		.json_path = json.on ? json.path : NULL,
		.top = top_n,
		.start_ns = start_ns,
		.now_ns = boot_ns(),
		.cpus = (int)sysconf(_SC_NPROCESSORS_ONLN),
		.nodes = (int)hl_topo_nodes(),
		.handoff_ns = hl_handoff_ns(),
		.spin_ns = hl_spin_ns(),
		.cna = hl_queue_policy_is_cna(HL_QUEUE_DEFAULT),
		.recs = shim_recs,
		.n_recs = hl_load(&shim_recs_used, HL_RELAXED),
		.threads = threads,
		.n_threads = n_threads,
		.threads_omitted = hl_load(&threads_omitted, HL_RELAXED),
		.omitted_lock_wait_ns = hl_load(&omitted_lock_ns, HL_RELAXED),
		.omitted_cond_wait_ns = hl_load(&omitted_cond_ns, HL_RELAXED),
		.objects_untracked = hl_load(&untracked, HL_RELAXED),
	};
	if (r.nodes < 1)
		r.nodes = 1;
	fn(&r);
}

__attribute__((destructor)) static void report_at_exit(void)
{
	report("exit");
}

/* _exit and _Exit: the report, then glibc's. */
static _Noreturn void exit_now(int status)
{
	report("_exit");
	for (;;)
		syscall(SYS_exit_group, status);
}

void shim_exit(int status) { exit_now(status); }
void shim_Exit(int status) { exit_now(status); }
SHIM_EXPORT(shim_exit, _exit, "GLIBC_2.2.5");
SHIM_EXPORT(shim_Exit, _Exit, "GLIBC_2.2.5");

/* A fatal signal the program left to its default action: report, then let
 * the default act (the exit status stays the signal's).  The report is not
 * async-signal-safe (it allocates, it loads a library): a signal that hit
 * the program inside malloc could hang it, so an alarm ends the process
 * after SIGNAL_REPORT_S whatever happens.  SIGINT is left alone: programs
 * decide at start whether to catch it from whether it is at its default
 * (CPython's KeyboardInterrupt does), and a handler of ours would change
 * that. */
static const int fatal_signals[] = { SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };

static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return REAL(R_SIGACTION, int (*)(int, const struct sigaction *, struct sigaction *))(sig, act, old);
}

static void default_action(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigemptyset(&dfl.sa_mask);
	real_sigaction(sig, &dfl, NULL);
}

static void on_fatal_signal(int sig)
{
	default_action(sig);
	default_action(SIGALRM);
	alarm(SIGNAL_REPORT_S);
	char end[32];
	snprintf(end, sizeof(end), "signal SIG%s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	report(end);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

static void catch_fatal_signals(void)
{
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old;
		if (real_sigaction(fatal_signals[i], NULL, &old) || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		struct sigaction sa = { .sa_handler = on_fatal_signal, .sa_flags = SA_RESETHAND | SA_NODEFER };
		sigemptyset(&sa.sa_mask);
		real_sigaction(fatal_signals[i], &sa, NULL);
	}
}

/* The program sees its own dispositions: where the report's handler stands
 * in for the default, sigaction and signal answer SIG_DFL (CPython, for
 * one, refuses to give back a handler it does not know, and decides what
 * to catch from what is at its default). */
static void hide_ours(struct sigaction *old)
{
	if (old && !(old->sa_flags & SA_SIGINFO) && old->sa_handler == on_fatal_signal) {
		old->sa_handler = SIG_DFL;
		old->sa_flags = 0;
		sigemptyset(&old->sa_mask);
	}
}

int shim_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int err = real_sigaction(sig, act, old);
	if (!err)
		hide_ours(old);
	return err;
}
SHIM_EXPORT(shim_sigaction, sigaction, "GLIBC_2.2.5");

sighandler_t shim_signal(int sig, sighandler_t handler)
{
	sighandler_t old = REAL(R_SIGNAL, sighandler_t (*)(int, sighandler_t))(sig, handler);
	return old == on_fatal_signal ? SIG_DFL : old;
}
SHIM_EXPORT(shim_signal, signal, "GLIBC_2.2.5");

/* ---- start and fork ------------------------------------------------------------- */

/* A fork child's records start from zero; its forking thread goes on. */
static void fork_child(void)
{
	atomic_flag_clear(&table_lock);
	hl_store(&owner_pid, (int)getpid(), HL_RELAXED);
	hl_store(&reported_pid, 0, HL_RELAXED);
	if (!shim_recs)
		return;                 /* HOTLOCK_SHIM_STATS's line only */
	start_ns = boot_ns();
	uint32_t used = hl_load(&shim_recs_used, HL_RELAXED);
	for (uint32_t i = 1; i < used; i++)
		for (int k = 0; k < STC_COUNT; k++)
			hl_store(&shim_recs[i].c[k], 0, HL_RELAXED);
	uint32_t n = hl_load(&threads_used, HL_RELAXED);
	memset((void *)threads, 0, sizeof(*threads) * (n < MAX_THREADS ? n : MAX_THREADS));
	hl_store(&threads_used, 0, HL_RELAXED);
	hl_store(&threads_omitted, 0, HL_RELAXED);
	hl_store(&omitted_lock_ns, 0, HL_RELAXED);
	hl_store(&omitted_cond_ns, 0, HL_RELAXED);
	memset((void *)sums_table, 0, sizeof(*sums_table) * (n < MAX_THREADS ? n : MAX_THREADS));
	me = NULL;
	me_omitted = false;
	my_sums = NULL;
	memset((void *)&own_sums, 0, sizeof(own_sums));
	thread_me();
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t pc = (uintptr_t)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && pc >= lo && pc < lo + ph->p_memsz) {
			self_lo = lo;
			self_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

__attribute__((constructor)) static void stats_init(void)
{
	read_settings();
	hl_store(&owner_pid, (int)getpid(), HL_RELAXED);
	if (line.on || shim_stats_on)
		pthread_atfork(NULL, NULL, fork_child);
	if (!shim_stats_on)
		return;
	shim_recs = mmap(NULL, sizeof(*shim_recs) * MAX_RECS, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	threads = mmap(NULL, sizeof(*threads) * MAX_THREADS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	sums_table = mmap(NULL, sizeof(*sums_table) * MAX_THREADS, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (shim_recs == MAP_FAILED || threads == MAP_FAILED || sums_table == MAP_FAILED ||
	    pthread_key_create(&exit_key, thread_exit)) {
		say("hotlock-preload: no lock report: cannot reserve its tables (%s)\n", strerror(errno));
		shim_stats_on = false;
		return;
	}
	mono_base = hl_now_ns();
	tsc_base = shim_ticks();
	dl_iterate_phdr(find_self, (void *)(uintptr_t)stats_init);
	/* Load the unwinder now (glibc loads libgcc_s at the first
	 * backtrace), not at a first contention. */
	void *pc[2];
	backtrace(pc, 2);
	start_ns = task_start_ns(0);
	thread_me();
	catch_fatal_signals();
}
