/* SPDX-License-Identifier: MIT */
/* The shim's contention records: which of a program's locks wait, where
 * in its code, and how (hotlock-run --stats; docs/stats.md).
 *
 * Where they go.  hotlock-run makes the stats area (stats_area.h) and names
 * it in HOTLOCK_STATS_AREA; the shim maps it at load and keeps its records
 * in a slot of it, which hotlock-run, the collector, reads and reports on
 * once the process has ended.  Nothing of the report runs in the program:
 * at exit and _exit the shim only writes down how the process ends (plain
 * stores, the clock), and at a fatal signal nothing runs at all, so the
 * program's exit status, its signal and its core are what they would be
 * without the report.  Without an area (plain LD_PRELOAD with the old
 * HOTLOCK_STATS variables), the shim says in one line at load that the
 * report needs hotlock-run, and records nothing.
 *
 * Settings (read once, at load):
 *
 *   HOTLOCK_STATS_AREA   the area's path (hotlock-run sets it)
 *   HOTLOCK_STATS_CLOCK  monotonic: time with clock_gettime even where the
 *                        TSC would do (shim_ticks; a check of the two)
 *   HOTLOCK_SHIM_STATS   the shim's older one-line report of futex calls,
 *                        written at exit (not at _exit or a signal)
 *
 * The slot.  A process takes a slot at load (a fork child at the fork)
 * and maps it; it writes nothing there until its first record, when it
 * copies in what the collector needs to report after its end (its command
 * line, its modules as the dynamic loader had them at load, the settings)
 * and makes the slot LIVE.  A process that never contends gives the slot
 * back at exit and costs the collector nothing.  A fork child takes a
 * slot of its own; where its parent's was LIVE it copies the records'
 * identities into it with their counts at zero, so that the indices in
 * its objects' bytes stay valid, and is LIVE from the start.  A program
 * that execs marks its old LIVE slot EXECED at the new program's load.
 *
 * What is recorded, and what it costs.  Nothing is recorded for an object
 * until it is first contended (a condvar: first waited on); with no area,
 * nothing at all, and no lock path reads the settings but a slow one.  At
 * an object's first contention it joins a class's record (below), made at
 * the class's first contention with the call stack of that acquisition
 * (glibc's backtrace, libgcc's unwinder), and the record's index is kept
 * in the object's spare bytes (shim.h).  From then on its acquisitions are
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
 * the acquisitions that waited and the sampled ones, up to the release
 * (not through it: the wake-up a release makes is not part of the hold).
 * Times are taken in shim_ticks (the TSC where the kernel trusts it) and
 * converted to nanoseconds by the collector.
 *
 * Classes.  An object's record is its class's: a lock in a module's own
 * memory (a global or a static) is a class of its own, known by its
 * address; a lock on the heap or a stack belongs to the class of its kind,
 * type and first-contention call stack, so that a program that makes a
 * lock per request, and never destroys them (C++'s std::mutex; objects
 * freed without destroy), gets one entry for all of them, and the table
 * holds classes, not objects.  An object that finds the table full is
 * marked so in its bytes and counted once.  Stale bytes (memory reused
 * without init) at worst count an acquisition for another class: a small
 * error, never a fault (the index is checked against the table).
 *
 * Who writes a record.  Threads side by side, each count an atomic add.
 * Waited acquisitions' counts, and timed holds with the sampled
 * acquisitions they count, are summed by their thread (struct area_sums)
 * and added to the record seldom, so that they neither lengthen the
 * critical section nor delay the thread's next acquisition (shim_wait_end,
 * shim_hold_add); sampled read locks, timeouts, slow releases and
 * condvars are added where they happen (shim_stats.h).  The sums are in
 * the slot too: what a thread summed before its process died is added by
 * the collector.  All relaxed: the collector reads them after the end, as
 * numbers, and orders nothing by them. */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>

#include <hotlock/futex.h>

#include "shim.h"
#include "shim_holds.h"
#include "shim_stats.h"
#include "stats_area.h"
#include "thread.h"
#include "config.h"
#include "queue.h"
#include "topology.h"

bool shim_stats_on;
bool shim_tsc;
struct stats_rec *shim_recs;
struct area_slot *shim_slot;

/* HOTLOCK_SHIM_STATS's line: off, stderr (path ""), or a file. */
static struct {
	bool on;
	char path[PATH_MAX];
} line;

static struct area_header *area;        /* the header, mapped */
static uint32_t slot_index;             /* ours, while area */
static struct stats_thread *threads;    /* the slot's */
static struct area_sums *sums_table;    /* the slot's */
static atomic_flag table_lock = ATOMIC_FLAG_INIT;
__thread struct stats_thread *shim_me __attribute__((tls_model("initial-exec")));
static __thread bool me_omitted __attribute__((tls_model("initial-exec")));
/* The process's first thread, whose entry go_live makes (the forking
 * thread, in a fork child). */
static __thread bool i_am_main __attribute__((tls_model("initial-exec")));
/* The calling thread's name as the kernel has it (its comm), kept by the
 * shim so that nothing asks the kernel where the thread ends: see "thread
 * names" below.  main_name: the first thread's, for its entry (go_live). */
static __thread char my_name[STATS_NAME] __attribute__((tls_model("initial-exec")));
static char main_name[STATS_NAME];
static __thread struct area_sums *my_sums __attribute__((tls_model("initial-exec")));
static __thread struct area_sums own_sums __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
__thread uint32_t shim_sample_state __attribute__((tls_model("initial-exec")));
__thread uint64_t shim_releases __attribute__((tls_model("initial-exec")));

/* What the slot's header gets when it goes LIVE: the command line,
 * copied at load, the modules and settings, where the slot is taken
 * (take_my_slot).  A fork child inherits it. */
static struct area_slot load_staging;
static struct area_slot *staging;       /* &load_staging once attached */
static uint64_t load_ns;                /* CLOCK_BOOTTIME at load (or the fork) */
/* Whether the process has started a thread through the shim (before the
 * shim's own constructor too: another library's). */
static _Atomic bool threads_started;

/* This library's text: frames there are left out of a call stack. */
static uintptr_t self_lo, self_hi;

static void say(const char *fmt, const char *a)
{
	char buf[PATH_MAX + 256];
	int n = snprintf(buf, sizeof(buf), fmt, a);
	if (n > 0 && write(2, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0)
		n = 0;
}

static uint64_t boot_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return hl__ts_to_ns(&ts);
}

/* ---- settings ------------------------------------------------------------ */

static bool monotonic_asked;    /* HOTLOCK_STATS_CLOCK=monotonic */

static void read_settings(void)
{
	/* The variables of the report as it was made inside the program:
	 * hotlock-run's options now, which collect it from outside. */
	static const char *const old[] = { "HOTLOCK_STATS", "HOTLOCK_STATS_JSON", "HOTLOCK_STATS_TOP" };
	const char *area_path = getenv(AREA_ENV);
	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		const char *v = getenv(old[i]);
		if (!(area_path && *area_path) && v && *v && strcmp(v, "0")) {
			say("hotlock-preload: %s: the lock report is collected by hotlock-run "
			    "(hotlock-run --stats -- program); no report\n", old[i]);
			break;
		}
	}
	/* The older line: a value starting with '/' is a file, anything
	 * else stderr (as it always was). */
	const char *v = getenv("HOTLOCK_SHIM_STATS");
	if (v && *v && strcmp(v, "0")) {
		line.on = true;
		if (v[0] == '/')
			snprintf(line.path, sizeof(line.path), "%s", v);
	}
	v = getenv("HOTLOCK_STATS_CLOCK");
	if (area_path && *area_path && v && *v && strcmp(v, "monotonic") && strcmp(v, "tsc"))
		say("hotlock-preload: HOTLOCK_STATS_CLOCK wants tsc or monotonic, not '%s'; "
		    "using the TSC where the kernel does\n", v);
	/* The TSC where the collector found the kernel keeping time by it
	 * (attach: the area's header says). */
	monotonic_asked = v && !strcmp(v, "monotonic");
}

/* ---- the slot -------------------------------------------------------------- */

static void wake_collector(void)
{
	/* Relaxed: the slot's state, which the collector reads after the
	 * futex, was stored with release before. */
	hl__fetch_add(&area->seq, 1, HL_RELAXED);
	syscall(SYS_futex, &area->seq, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Gives RESERVED slot d back, unwritten: its pid goes first, so that the
 * collector's sweep never takes the next taker's slot for a dead
 * process's.  Release: nothing of ours is read after it. */
static bool give_back(struct area_desc *d)
{
	uint32_t reserved = AREA_RESERVED;
	hl__store(&d->pid, 0, HL_RELAXED);
	return hl__cas(&d->state, &reserved, AREA_FREE, HL_RELEASE);
}

/* Takes a FREE slot for pid and maps it (fd: the area, open); NULL where
 * none is free or the mapping fails. */
static struct area_slot *take_slot(int fd, int32_t pid)
{
	for (uint32_t k = 0; k < AREA_SLOTS; k++) {
		uint32_t i = ((uint32_t)pid + k) % AREA_SLOTS, free_ = AREA_FREE;
		struct area_desc *d = &area->desc[i];
		/* Acquire: pairs with the collector's release that freed it
		 * (its pages punched before). */
		if (hl__load(&d->state, HL_RELAXED) != AREA_FREE ||
		    !hl__cas(&d->state, &free_, AREA_RESERVED, HL_ACQUIRE))
			continue;
		/* Release: since before pid, which the collector's sweep reads
		 * first (a pid of 0: a slot being taken or given back). */
		hl__store(&d->since_ns, boot_ns(), HL_RELAXED);
		hl__store(&d->pid, pid, HL_RELEASE);
		void *p = mmap(NULL, AREA_SLOT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd,
			       (off_t)area_slot_offset(i));
		if (p == MAP_FAILED) {
			give_back(d);
			break;
		}
		slot_index = i;
		return p;
	}
	hl__fetch_add(&area->no_slot, 1, HL_RELAXED);
	return NULL;
}

/* Whether this process's slot is LIVE: its own word (a fork child
 * inherits its parent's: whether the parent's was, at the fork), where
 * the slot's descriptor may change under a fork child (its parent gives
 * its slot back at exit). */
static bool is_live;

/* Points the tables at slot s (NULL: no records from now on). */
static void use_slot(struct area_slot *s)
{
	shim_slot = s;
	shim_recs = s ? area_recs(s) : NULL;
	threads = s ? area_threads(s) : NULL;
	sums_table = s ? area_sums(s) : NULL;
	/* The counting serves the contention report only: the deadlock
	 * detector alone (AREA_DETECT_ONLY) needs the slot's threads, not
	 * its records. */
	shim_stats_on = s != NULL && !(area->detect & AREA_DETECT_ONLY);
}

/* The slot goes LIVE (under table_lock, at the first record): its header
 * from staging, written before the state (release: the collector reads it
 * after it sees LIVE). */
static void go_live(void)
{
	struct area_slot *s = shim_slot;
	s->pid = staging->pid;
	s->ppid = staging->ppid;
	s->start_ns = staging->start_ns;
	s->tsc = staging->tsc;
	s->tsc_base = staging->tsc_base;
	s->mono_base = staging->mono_base;
	s->cpus = staging->cpus;
	s->nodes = staging->nodes;
	s->handoff_ns = staging->handoff_ns;
	s->spin_ns = staging->spin_ns;
	s->cna = staging->cna;
	s->cmdline_len = staging->cmdline_len;
	memcpy(s->cmdline, staging->cmdline, staging->cmdline_len);
	s->n_modules = staging->n_modules;
	memcpy(s->modules, staging->modules, staging->n_modules * sizeof(s->modules[0]));
	s->strings_used = staging->strings_used;
	memcpy(s->strings, staging->strings, staging->strings_used);
	/* The main thread's entry, first (the report lists it whether or not
	 * it waited): its TID is the pid.  Written here, not at load, so that
	 * a slot stays unwritten until it is LIVE. */
	struct stats_thread *t = &threads[0];
	t->tid = (uint32_t)staging->pid;
	memcpy(t->name, main_name, STATS_NAME);
	t->start_ns = staging->start_ns;
	hl__store(&s->threads_used, 1, HL_RELAXED);
	/* Release: the header before the state. */
	hl__store(&area->desc[slot_index].state, AREA_LIVE, HL_RELEASE);
	is_live = true;
	hl__fetch_add(&area->contended, 1, HL_RELAXED);
	wake_collector();
}

/* ---- threads ------------------------------------------------------------- */

/* The thread's start: the main thread's is the process's (staging); a
 * thread started by the shim's pthread_create reads the clock as it
 * starts (shim_stats_thread_start); one started another way counts from
 * its first wait. */
static __thread uint64_t my_start_ns __attribute__((tls_model("initial-exec")));

void shim_stats_thread_start(void)
{
	if (shim_slot)
		my_start_ns = boot_ns();
}

/* The calling thread's record: made at its first wait (the main thread's
 * when the slot goes LIVE).  NULL beyond the table's room: its waits then
 * count in the totals only.  No system call: its name is the one the shim
 * keeps, its CPU time is read at its exit. */
static struct stats_thread *thread_me(void)
{
	if (hl__likely(shim_me != NULL) || me_omitted || !threads)
		return shim_me;
	if (i_am_main) {
		/* Entry 0, made when the slot went LIVE (go_live), which
		 * precedes any count. */
		shim_me = &threads[0];
		my_sums = &sums_table[0];
		return shim_me;
	}
	/* Relaxed: a slot index; the slot is this thread's alone. */
	uint32_t i = hl__fetch_add(&shim_slot->threads_used, 1, HL_RELAXED);
	if (i >= AREA_MAX_THREADS) {
		me_omitted = true;
		my_sums = &own_sums;
		hl__fetch_add(&shim_slot->threads_omitted, 1, HL_RELAXED);
		return NULL;
	}
	struct stats_thread *t = &threads[i];
	t->tid = hl__tid();
	memcpy(t->name, my_name, STATS_NAME);
	my_sums = &sums_table[i];
	t->start_ns = my_start_ns ? my_start_ns : boot_ns();
	pthread_setspecific(exit_key, t);
	shim_me = t;
	return t;
}

/* The CPU time of thread tid of this process: the kernel's CPU clock of a
 * thread is named by its TID (what glibc's pthread_getcpuclockid makes). */
static uint64_t task_cpu_ns(uint32_t tid)
{
	struct timespec ts;
	clockid_t clock = (clockid_t)((~(unsigned)tid << 3) | 6);       /* CPUCLOCK_SCHED | THREAD */
	return clock_gettime(clock, &ts) == 0 ? hl__ts_to_ns(&ts) : 0;
}

static void sums_flush_mine(void);

/* The thread exits (its key's destructor): keep its sums, CPU time and
 * end, with memory and the clock alone (a program may have sandboxed
 * itself by then: contract_spawn); its name is in its entry already. */
static void thread_exit(void *p)
{
	struct stats_thread *t = p;
	if (t < threads || t >= threads + AREA_MAX_THREADS)
		return;         /* a slot of before a fork */
	/* The deadlock detector alone (no report) needs only the end. */
	if (shim_stats_on) {
		sums_flush_mine();
		hl__store(&t->cpu_ns, task_cpu_ns(t->tid), HL_RELAXED);
	}
	hl__store(&t->end_ns, boot_ns(), HL_RELAXED);
	hl__store(&t->exited, true, HL_RELAXED);
}

static void thread_wait(uint64_t ns, bool cond)
{
	struct stats_thread *t = thread_me();
	_Atomic uint64_t *sum = t ? (cond ? &t->cond_wait_ns : &t->lock_wait_ns) : NULL;
	if (sum)        /* the thread's own: load and store */
		hl__store(sum, hl__load(sum, HL_RELAXED) + ns, HL_RELAXED);
	else
		hl__fetch_add(cond ? &shim_slot->omitted_cond_ns : &shim_slot->omitted_lock_ns, ns,
			     HL_RELAXED);
}

/* ---- thread names ------------------------------------------------------------
 * Each thread's entry is named as the kernel names the thread (its comm),
 * from what the shim sees, so that a thread that ends between two of the
 * collector's reads of /proc still has its name without a system call at
 * its end.  The first thread's name is its program's file name, as exec
 * gave it (the auxiliary vector's AT_EXECFN, cut to 15 bytes); a thread
 * the shim starts takes its creator's, as the kernel's does; a thread's
 * pthread_setname_np and prctl(PR_SET_NAME) of itself set it
 * (shim_thread.c).  A name given some other way (another thread's
 * pthread_setname_np, a write to /proc) reaches the entry from the
 * collector, which reads every running thread's name twice a second. */

/* name, as the kernel keeps it: at most 15 bytes and a zero. */
static void name_copy(char to[STATS_NAME], const char *name)
{
	size_t n = strnlen(name, STATS_NAME - 1);
	memcpy(to, name, n);
	memset(to + n, 0, STATS_NAME - n);
}

void shim_stats_my_name(char out[STATS_NAME])
{
	memcpy(out, my_name, STATS_NAME);
}

void shim_stats_named(const char *name)
{
	name_copy(my_name, name);
	if (i_am_main)
		memcpy(main_name, my_name, STATS_NAME);
	if (shim_me)
		memcpy(shim_me->name, my_name, STATS_NAME);
}

/* The first thread's name at load: the kernel's comm is the base name of
 * the path exec was given. */
static void name_main_thread(void)
{
	const char *path = (const char *)getauxval(AT_EXECFN);
	if (!path)
		return;
	const char *base = strrchr(path, '/');
	shim_stats_named(base ? base + 1 : path);
}

/* ---- records --------------------------------------------------------------- */

static void table_lock_take(void)
{
	/* Acquire: pairs with table_lock_drop's release. */
	while (atomic_flag_test_and_set_explicit(&table_lock, memory_order_acquire))
		hl__cpu_yield();
}

static void table_lock_drop(void)
{
	atomic_flag_clear_explicit(&table_lock, memory_order_release);
}

struct stats_thread *shim_stats_thread(void)
{
	if (hl__likely(shim_me != NULL) || me_omitted || !shim_slot)
		return shim_me;
	/* The thread's first record: the slot goes LIVE first, if no
	 * record has made it so (holds are listed from a process's first
	 * lock, contended or not). */
	table_lock_take();
	if (!is_live && shim_slot)
		go_live();
	table_lock_drop();
	return thread_me();
}

/* The key of r's class: its address for a lock of static storage, else a
 * hash of its kind, type and call stack. */
static uint64_t class_key(const struct stats_rec *r)
{
	if (r->by_address)
		return (uint64_t)hl__load(&r->addr, HL_RELAXED) * 0x9e3779b97f4a7c15ull;
	uint64_t h = 1469598103934665603ull ^ r->obj ^ (uint64_t)r->type << 8;
	for (uint32_t i = 0; i < r->nframes; i++)
		h = (h ^ r->stack[i]) * 1099511628211ull;
	return h;
}

static bool same_class(const struct stats_rec *a, const struct stats_rec *b)
{
	if (a->obj != b->obj || a->by_address != b->by_address || a->type != b->type)
		return false;
	if (a->by_address)
		return hl__load(&a->addr, HL_RELAXED) == hl__load(&b->addr, HL_RELAXED);
	return a->nframes == b->nframes && !memcmp(a->stack, b->stack, a->nframes * sizeof(a->stack[0]));
}

/* Whether obj lies in a module's own memory (a global or a static), as the
 * dynamic loader had the modules at load. */
static bool static_storage(uintptr_t obj)
{
	for (uint32_t i = 0; i < staging->n_modules; i++)
		if (obj >= staging->modules[i].lo && obj < staging->modules[i].hi)
			return true;
	return false;
}

/* The frames of the caller's call stack outside this library (its lock
 * calls inside, its thread start outside), innermost first, max at most:
 * their count (glibc's backtrace; the unwinder was loaded at start). */
uint32_t shim_stats_stack(uintptr_t *out, uint32_t max)
{
	void *pcs[STATS_FRAMES + 16];
	int n = backtrace(pcs, (int)(sizeof(pcs) / sizeof(pcs[0])));
	uint32_t kept = 0;
	for (int i = 0; i < n && kept < max; i++)
		if ((uintptr_t)pcs[i] < self_lo || (uintptr_t)pcs[i] >= self_hi)
			out[kept++] = (uintptr_t)pcs[i];
	return kept;
}

static void capture_stack(struct stats_rec *r)
{
	r->nframes = shim_stats_stack(r->stack, STATS_FRAMES);
}

/* The record of fresh's class: found in the slot's table, or made unless
 * find_only.  NULL when the table is full (or find_only and none).  Under
 * table_lock. */
static struct stats_rec *class_record(const struct stats_rec *fresh, bool find_only)
{
	struct area_slot *s = shim_slot;
	uint64_t key = class_key(fresh);
	uint32_t h = (uint32_t)(key ^ key >> 32) % AREA_CLASS_SLOTS;
	for (uint32_t probes = 0; probes < AREA_CLASS_SLOTS; probes++, h = (h + 1) % AREA_CLASS_SLOTS) {
		uint32_t idx = s->classes[h];
		if (idx && same_class(&shim_recs[idx], fresh))
			return &shim_recs[idx];
		if (idx)
			continue;
		if (find_only)
			return NULL;
		uint32_t used = hl__load(&s->recs_used, HL_RELAXED);
		if (!used)
			used = 1;               /* index 0 is "none" */
		if (used >= AREA_MAX_RECS)
			return NULL;
		if (!is_live)
			go_live();
		struct stats_rec *r = &shim_recs[used];
		r->obj = fresh->obj;
		r->type = fresh->type;
		r->by_address = fresh->by_address;
		r->nframes = fresh->nframes;
		memcpy(r->stack, fresh->stack, sizeof(r->stack));
		r->hash = key;
		r->first_ns = shim_ticks();
		hl__store(&r->addr, hl__load(&fresh->addr, HL_RELAXED), HL_RELAXED);
		s->classes[h] = used;
		/* Relaxed: the collector reads the records after the end;
		 * threads of this process read the count under the lock, or
		 * as shim_stats_rec's bound, after the index that their
		 * object's release store published. */
		hl__store(&s->recs_used, used + 1, HL_RELAXED);
		return r;
	}
	return NULL;
}

struct stats_rec *shim_stats_track(void *obj, _Atomic uint32_t *idx, enum stats_obj kind, uint32_t type)
{
	if (!shim_stats_on)
		return NULL;
	/* Another thread may have made it meanwhile; an object that found
	 * the table full was counted then. */
	uint32_t seen = hl__load(idx, HL_ACQUIRE);
	struct stats_rec *r = shim_stats_rec(obj, seen);
	if (r || seen == SHIM_STATS_UNTRACKED)
		return r;
	/* The stack before the lock: backtrace may take the loader's lock. */
	struct stats_rec fresh = { .obj = kind, .type = type };
	hl__store(&fresh.addr, (uintptr_t)obj, HL_RELAXED);
	fresh.by_address = static_storage((uintptr_t)obj);
	int cs;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	capture_stack(&fresh);
	table_lock_take();
	seen = hl__load(idx, HL_RELAXED);
	r = shim_stats_rec(obj, seen);
	if (!r && seen != SHIM_STATS_UNTRACKED && shim_slot) {
		r = class_record(&fresh, false);
		if (r) {
			hl__fetch_add(&r->objects, 1, HL_RELAXED);
			/* Release: the record before its index, which other
			 * threads read (acquire above, relaxed where a stale
			 * record only makes them miss). */
			hl__store(idx, (uint32_t)(r - shim_recs), HL_RELEASE);
		} else {
			hl__fetch_add(&shim_slot->untracked, 1, HL_RELAXED);
			hl__store(idx, SHIM_STATS_UNTRACKED, HL_RELAXED);
		}
	}
	table_lock_drop();
	pthread_setcancelstate(cs, NULL);
	return r;
}

struct stats_rec *shim_stats_glibc_mutex(void *obj)
{
	if (!shim_stats_on)
		return NULL;
	/* Its bytes are glibc's, so no index there: found by its address,
	 * under the table's lock (a contended wait of such a mutex only);
	 * the stack is taken once, for the record, outside the lock. */
	struct stats_rec fresh = { .obj = ST_MUTEX, .type = STATS_TYPE_GLIBC, .by_address = 1 };
	hl__store(&fresh.addr, (uintptr_t)obj, HL_RELAXED);
	int cs;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	table_lock_take();
	struct stats_rec *r = shim_slot ? class_record(&fresh, true) : NULL;
	table_lock_drop();
	if (!r && shim_slot) {
		capture_stack(&fresh);
		table_lock_take();
		if (shim_slot && (r = class_record(&fresh, false)) && !hl__load(&r->objects, HL_RELAXED))
			hl__store(&r->objects, 1, HL_RELAXED);
		table_lock_drop();
	}
	pthread_setcancelstate(cs, NULL);
	return r;
}

void shim_stats_forget(void *obj, _Atomic uint32_t *idx)
{
	(void)obj;
	/* The object leaves its class (destroyed or initialised again): its
	 * next life joins one at its own first contention.  Relaxed: its
	 * owner's store, before the object is shared again. */
	if (shim_stats_on)
		hl__store(idx, 0, HL_RELAXED);
}

/* ---- counting ---------------------------------------------------------------- */

/* A maximum written without the lock. */
static inline void shared_max(struct stats_rec *r, int k, uint64_t v)
{
	uint64_t old = hl__load(&r->c[k], HL_RELAXED);
	while (v > old && !hl__cas(&r->c[k], &old, v, HL_RELAXED))
		;
}

/* The calling thread's counters (thread.h), as they are now: a wait's
 * and a release's cost is their difference over it. */
static void thread_counters(uint64_t c[HL_COUNTERS])
{
	struct hl__thread *t = hl__self_ptr;
	for (int k = 0; k < HL_COUNTERS; k++)
		c[k] = t ? hl__load(&t->fx[k], HL_RELAXED) : 0;
}

void shim_wait_begin(struct shim_wait *w, struct stats_rec *r, enum stats_lock how, const void *obj,
		     bool timed)
{
	/* Without a record (no report, or the table is full), the wait is
	 * noted for the deadlock detector only: nothing to time or count. */
	if (!r) {
		struct stats_thread *t = shim_holds_on ? shim_stats_thread() : NULL;
		if (t)
			shim_wait_note(t, how, obj, NULL, timed);
		return;
	}
	thread_counters(w->c0);
	struct stats_thread *t = thread_me();
	if (t) {
		/* Relaxed: the thread's own word, read by hotlock-top as a
		 * hint. */
		hl__store(&t->waiting_on, (uint32_t)(r - shim_recs), HL_RELAXED);
		shim_wait_note(t, how, obj, NULL, timed);
	}
	w->t0 = shim_ticks();
}

static const int wait_fields[HL_COUNTERS] = {
	[HL_FX_WAIT] = STC_FUTEX_WAITS, [HL_FX_WAKE] = STC_FUTEX_WAKES,
	[HL_SP_SPUN] = STC_SPINS, [HL_SP_WON] = STC_SPINS_WON, [HL_LK_HANDED] = STC_HANDOFFS,
};

/* The sums (stats_area.h, struct area_sums).  Adding a count to a record
 * is an atomic add on the record's lines, which other CPUs' threads write
 * too: a dozen of them per waited acquisition.  Under the lock, they
 * lengthen the critical section; right after the release, they hold the
 * releasing thread back from its next acquisition, long enough for a
 * waiter on the other CPU to take the lock first, and the lock then moves
 * between CPUs more often.  Before the thread's next wait, they cost a
 * dozen atomic adds per acquisition where nearly every acquisition waits
 * (docs/stats.md, "What it costs, and how it counts", has the
 * measurements).  So a thread sums its
 * counts in its own slots, with loads and stores, and a slot is added to
 * its record only when the thread needs it for another record, at the
 * thread's exit, and by the collector after the process's end.  Whoever
 * takes the record's index out of a slot (claim) adds its counts, so none
 * is added twice.  (A thread beyond the table's room adds each count at
 * once.)  The fields are the owner's; another reader claims first. */

/* Adds slot s's counts to r: atomic adds, as other threads add theirs at
 * the same time. */
static void slot_write(struct stats_rec *r, struct area_sum *s)
{
	for (int k = 0; k < STC_COUNT; k++) {
		uint64_t v = hl__load(&s->c[k], HL_RELAXED);
		if (!v)
			continue;
		if (stats_counter_is_max(k))
			shared_max(r, k, v);
		else
			hl__fetch_add(&r->c[k], v, HL_RELAXED);
	}
	/* The latest of racing ends is near enough. */
	uint64_t end = hl__load(&s->last_end, HL_RELAXED);
	if (end > hl__load(&r->last_ns, HL_RELAXED))
		hl__store(&r->last_ns, end, HL_RELAXED);
}

/* Takes the record's index out of a slot, so that the caller, and nobody
 * else, adds the slot's counts.  Acquire: pairs with the owner's release
 * store of the index, after the slot was zeroed. */
static struct stats_rec *claim(struct area_sum *s)
{
	uint32_t idx = hl__load(&s->rec, HL_RELAXED);
	if (!idx)
		return NULL;
	return hl__cas(&s->rec, &idx, 0, HL_ACQUIRE) ? &shim_recs[idx] : NULL;
}

static void sums_flush_mine(void)
{
	struct area_sums *p = my_sums;
	for (int i = 0; p && shim_recs && i < (int)AREA_SUM_SLOTS; i++) {
		struct stats_rec *r = claim(&p->slot[i]);
		if (r)
			slot_write(r, &p->slot[i]);
	}
}

/* r's slot in the calling thread's sums: the one it has, else a free one,
 * else one written out now (picked by salt, a clock's low bits: no slot is
 * favoured).  Its first use registers the thread (thread_me sets my_sums,
 * in the table or, beyond its room, own_sums). */
static struct area_sum *slot_for(struct stats_rec *r, uint64_t salt)
{
	struct area_sums *p = my_sums;
	if (hl__unlikely(!p)) {
		thread_me();
		p = my_sums ? my_sums : &own_sums;
		my_sums = p;
	}
	uint32_t want = (uint32_t)(r - shim_recs);
	struct area_sum *free_slot = NULL;
	for (int i = 0; i < (int)AREA_SUM_SLOTS; i++) {
		uint32_t in = hl__load(&p->slot[i].rec, HL_RELAXED);
		if (in == want)
			return &p->slot[i];
		if (!in && !free_slot)
			free_slot = &p->slot[i];
	}
	struct area_sum *s = free_slot;
	if (!s) {
		s = &p->slot[(salt >> 4) % AREA_SUM_SLOTS];
		struct stats_rec *out = claim(s);
		if (out)
			slot_write(out, s);
	}
	for (int k = 0; k < STC_COUNT; k++)
		hl__store(&s->c[k], 0, HL_RELAXED);
	hl__store(&s->last_end, 0, HL_RELAXED);
	/* Release: the zeroed counts before the index (claim). */
	hl__store(&s->rec, want, HL_RELEASE);
	return s;
}

/* The slot's owner alone adds to it: a load and a store, no atomic add. */
static inline void slot_add(struct area_sum *s, int k, uint64_t v)
{
	hl__store(&s->c[k], hl__load(&s->c[k], HL_RELAXED) + v, HL_RELAXED);
}

static inline void slot_max(struct area_sum *s, int k, uint64_t v)
{
	if (v > hl__load(&s->c[k], HL_RELAXED))
		hl__store(&s->c[k], v, HL_RELAXED);
}

/* After counting into s: a thread without a place in the table writes
 * its counts at once (nobody else would). */
static inline void slot_done(struct area_sum *s)
{
	if (hl__unlikely(my_sums == &own_sums)) {
		struct stats_rec *r = claim(s);
		if (r)
			slot_write(r, s);
	}
}

uint64_t shim_wait_end(struct stats_rec *r, const struct shim_wait *w, bool read, int err)
{
	if (!r) {
		if (shim_me)
			shim_wait_done(shim_me);
		return 0;
	}
	uint64_t end = shim_ticks() & ~HOLD_SAMPLED, ticks = end - w->t0;
	uint64_t c[HL_COUNTERS];
	thread_counters(c);
	thread_wait(ticks, false);
	if (shim_me) {       /* Relaxed: as in shim_wait_begin. */
		hl__store(&shim_me->waiting_on, 0, HL_RELAXED);
		shim_wait_done(shim_me);
	}
	if (err) {
		if (err == ETIMEDOUT)
			hl__fetch_add(&r->c[STC_TIMEOUTS], 1, HL_RELAXED);
		return end;
	}
	/* The node moved: with one node, never (and no node lookup). */
	bool cross = false;
	if (hl__topo_nodes() > 1) {
		uint32_t node = hl__topo_node() + 1;
		cross = hl__load(&r->last_node, HL_RELAXED) != node;
		hl__store(&r->last_node, node, HL_RELAXED);
	}
	struct area_sum *s = slot_for(r, end);
	slot_add(s, read ? STC_R_ACQ : STC_W_ACQ, 1);
	slot_add(s, read ? STC_R_CONTENDED : STC_W_CONTENDED, 1);
	slot_add(s, read ? STC_R_WAIT_NS : STC_W_WAIT_NS, ticks);
	slot_max(s, read ? STC_R_WAIT_MAX_NS : STC_W_WAIT_MAX_NS, ticks);
	for (int k = 0; k < HL_COUNTERS; k++)
		if (wait_fields[k] && c[k] != w->c0[k])
			slot_add(s, wait_fields[k], c[k] - w->c0[k]);
	if (cross)
		slot_add(s, STC_CROSS_NODE, 1);
	hl__store(&s->last_end, end, HL_RELAXED);
	slot_done(s);
	return end;
}

void shim_hold_add(struct stats_rec *r, uint64_t since, uint64_t until)
{
	if (!since)
		return;
	uint64_t ticks = until - (since & ~HOLD_SAMPLED);
	/* A sampled hold stands for SAMPLE acquisitions without a wait, and
	 * is weighed so: every waited acquisition's hold is timed, and
	 * their mean alone would stand for the rest (a hold taken after a
	 * wait, by a thread just woken, is often the longer, so that mean
	 * overstates the holds: docs/stats.md). */
	uint64_t weight = since & HOLD_SAMPLED ? SAMPLE : 1;
	struct area_sum *s = slot_for(r, ticks);
	slot_add(s, STC_HOLD_NS, ticks * weight);
	slot_add(s, STC_HOLDS, weight);
	slot_max(s, STC_HOLD_MAX_NS, ticks);
	if (since & HOLD_SAMPLED)
		slot_add(s, STC_W_ACQ, SAMPLE);
	slot_done(s);
}

/* Holder sites: a release that served a waiter has its call stack taken,
 * after the release, and counted in the record's sites (stats.h, struct
 * stats_site): the critical section that others waited for ends there.
 * A thread takes one such stack every HOLDER_EVERY_NS at most, and looks
 * at the clock for it at one such release in HOLDER_CLOCK_EVERY: a stack
 * costs microseconds and a clock read tens of nanoseconds, where nearly
 * every release serves a waiter (sysbench-mutex); hundreds of samples a
 * second per thread are as good a picture.  A new
 * stack takes a free site under the table's lock; the count is an atomic
 * add. */
#define HOLDER_EVERY_NS 2000000ull
#define HOLDER_CLOCK_EVERY 16   /* such releases per look at the clock */
static __thread uint64_t holder_last_ns __attribute__((tls_model("initial-exec")));
static __thread uint32_t holder_releases __attribute__((tls_model("initial-exec")));

void shim_stats_contended_release(struct stats_rec *r)
{
	if (++holder_releases % HOLDER_CLOCK_EVERY)
		return;
	uint64_t now = hl__now_ns();
	if (now - holder_last_ns < HOLDER_EVERY_NS)
		return;
	holder_last_ns = now;
	struct stats_rec fresh;
	int cs;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	capture_stack(&fresh);
	uint32_t n = fresh.nframes < STATS_HOLDER_FRAMES ? fresh.nframes : STATS_HOLDER_FRAMES;
	struct stats_site *site = NULL;
	for (int i = 0; i < STATS_HOLDER_SITES && !site; i++) {
		struct stats_site *h = &r->holders[i];
		/* Acquire: pairs with the release that published its stack. */
		uint32_t have = atomic_load_explicit((_Atomic uint32_t *)&h->nframes, memory_order_acquire);
		if (have == n && !memcmp(h->stack, fresh.stack, n * sizeof(h->stack[0])))
			site = h;
	}
	if (!site) {
		table_lock_take();
		for (int i = 0; i < STATS_HOLDER_SITES && !site; i++) {
			struct stats_site *h = &r->holders[i];
			if (!h->nframes && n) {
				memcpy(h->stack, fresh.stack, n * sizeof(h->stack[0]));
				/* Release: the stack before its length, which readers
				 * above load with acquire. */
				atomic_store_explicit((_Atomic uint32_t *)&h->nframes, n, memory_order_release);
				site = h;
			} else if (h->nframes == n && !memcmp(h->stack, fresh.stack, n * sizeof(h->stack[0]))) {
				site = h;
			}
		}
		table_lock_drop();
	}
	hl__fetch_add(site ? &site->samples : &r->holder_other, 1, HL_RELAXED);
	pthread_setcancelstate(cs, NULL);
}

void shim_release_begin(struct shim_wait *w)
{
	thread_counters(w->c0);
}

bool shim_release_end(struct stats_rec *r, const struct shim_wait *w)
{
	uint64_t c[HL_COUNTERS];
	thread_counters(c);
	if (c[HL_FX_WAKE] != w->c0[HL_FX_WAKE])
		hl__fetch_add(&r->c[STC_FUTEX_WAKES], c[HL_FX_WAKE] - w->c0[HL_FX_WAKE],
			      HL_RELAXED);
	if (c[HL_FX_WAIT] != w->c0[HL_FX_WAIT])
		hl__fetch_add(&r->c[STC_FUTEX_WAITS], c[HL_FX_WAIT] - w->c0[HL_FX_WAIT],
			      HL_RELAXED);
	return c[HL_FX_WAKE] != w->c0[HL_FX_WAKE];
}

/* ---- condition variables ---------------------------------------------------- *
 * A re-wait: a wake-up after which its thread, woken holding the mutex,
 * waits on the same condvar again without having released the mutex in
 * between.  Counted as what it is: a thread that finds its condition still
 * false re-waits so, but so does one that did its work under the mutex and
 * waits for the next round (a generation broadcast), so the number alone
 * says nothing of futility.  Each thread counts its mutex releases (every
 * release of a tracked mutex, and every wait, which releases one). */
static __thread struct {
	const void *cond, *mutex;
	uint64_t releases;
} last_wake __attribute__((tls_model("initial-exec")));

uint64_t shim_cond_wait_begin(struct stats_rec *r, const void *cond, const void *mutex, bool timed)
{
	struct stats_thread *t = thread_me();
	if (t)
		shim_wait_note(t, SL_COND, cond, mutex, timed);
	if (last_wake.cond == cond && last_wake.mutex == mutex && last_wake.releases == shim_releases)
		hl__fetch_add(&r->c[STC_C_REWAITS], 1, HL_RELAXED);
	last_wake.cond = NULL;
	shim_releases++;               /* the wait releases the mutex */
	hl__store(&r->cond_mutex, (uintptr_t)mutex, HL_RELAXED);
	return shim_ticks();
}

void shim_cond_wait_end(struct stats_rec *r, uint64_t t0, const void *cond, const void *mutex, int err)
{
	uint64_t ticks = shim_ticks() - t0;
	if (shim_me)
		shim_wait_done(shim_me);
	thread_wait(ticks, true);
	hl__fetch_add(&r->c[STC_C_WAITS], 1, HL_RELAXED);
	hl__fetch_add(&r->c[STC_C_WAIT_NS], ticks, HL_RELAXED);
	if (err == ETIMEDOUT) {
		hl__fetch_add(&r->c[STC_TIMEOUTS], 1, HL_RELAXED);
	} else if (!err) {
		hl__fetch_add(&r->c[STC_C_WOKEN], 1, HL_RELAXED);
		last_wake.cond = cond;
		last_wake.mutex = mutex;
		last_wake.releases = shim_releases;
	}
}

void shim_cond_signalled(struct stats_rec *r, uint32_t waiters, bool broadcast)
{
	if (broadcast) {
		hl__fetch_add(&r->c[STC_C_BROADCASTS], 1, HL_RELAXED);
		hl__fetch_add(&r->c[STC_C_BROADCAST_WAITERS], waiters, HL_RELAXED);
	} else {
		hl__fetch_add(&r->c[waiters ? STC_C_SIGNALS : STC_C_SIGNALS_EMPTY], 1, HL_RELAXED);
	}
}

/* ---- the end ------------------------------------------------------------------ */

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

/* Whether the caller is a thread of the process whose slot this is, not
 * a vfork child that runs in its memory until it execs or ends: the CPU
 * clock of a thread can be read by the threads of its own process only,
 * and the process's first thread has the pid as its TID (it stays while
 * any thread runs).  The clock, where getpid would be a system call that
 * a sandbox may refuse. */
static bool in_slot_process(void)
{
	struct timespec ts;
	int saved = errno;
	clockid_t clock = (clockid_t)((~(unsigned)staging->pid << 3) | 6); /* as task_cpu_ns */
	bool mine = clock_gettime(clock, &ts) == 0;
	errno = saved;
	return mine;
}

/* The process ends by exit or _exit (how): written down in the slot for
 * the collector, with the CPU time of the threads still running; a slot
 * that never went LIVE is given back.  Plain stores and the clock (a
 * vfork child, which shares its parent's memory, writes nothing): safe in
 * any state the process may be in, and in any sandbox that lets it read
 * the clock. */
static void note_end(enum area_end how, int status)
{
	/* The deadlock detector alone (no report) needs nothing of the
	 * end: the collector frees a slot whose process is gone. */
	if (!shim_slot || !shim_stats_on || !in_slot_process())
		return;
	struct area_desc *d = &area->desc[slot_index];
	if (!is_live && give_back(d))
		return;
	sums_flush_mine();
	uint32_t n = hl__load(&shim_slot->threads_used, HL_RELAXED);
	if (n > AREA_MAX_THREADS)
		n = AREA_MAX_THREADS;
	for (uint32_t i = 0; i < n; i++)
		if (!hl__load(&threads[i].exited, HL_RELAXED) && threads[i].tid)
			hl__store(&threads[i].cpu_ns, task_cpu_ns(threads[i].tid), HL_RELAXED);
	hl__store(&shim_slot->end_status, status, HL_RELAXED);
	hl__store(&shim_slot->end_ns, boot_ns(), HL_RELAXED);
	/* Release: the end's details before how (the collector reads how
	 * first). */
	hl__store(&shim_slot->end_how, how, HL_RELEASE);
}

__attribute__((destructor)) static void stats_at_exit(void)
{
	if (line.on && (int)getpid() == (staging ? staging->pid : (int)getpid()))
		write_line();
	note_end(AREA_END_EXIT, 0);
}

/* _exit and _Exit: the end written down, then glibc's. */
static _Noreturn void exit_now(int status)
{
	note_end(AREA_END__EXIT, status);
	for (;;)
		syscall(SYS_exit_group, status);
}

void shim_exit(int status) { exit_now(status); }
void shim_Exit(int status) { exit_now(status); }
SHIM_EXPORT(shim_exit, _exit, "GLIBC_2.2.5");
SHIM_EXPORT(shim_Exit, _Exit, "GLIBC_2.2.5");

/* ---- start, exec and fork ------------------------------------------------------- */

/* The area, kept open for fork children, which map slots of their own: a
 * descriptor far above the ones a program expects to get, and checked
 * before each use (a program may close it, and open a file of its own
 * under the same number). */
#define AREA_FD_MIN 900
static int area_fd = -1;
static dev_t area_dev;
static ino_t area_ino;

static bool area_fd_ours(void)
{
	struct stat st;
	return area_fd >= 0 && fstat(area_fd, &st) == 0 && st.st_dev == area_dev &&
	       st.st_ino == area_ino;
}

/* A fork child is a process of its own: counted, and with a slot of its
 * own where its parent's was LIVE (the parent's records' identities with
 * their counts at zero), its forking thread as its one thread.  Only memory and the system calls any program may make in
 * a fork child (getpid, mmap, munmap, the futex). */
static void fork_child(void)
{
	atomic_flag_clear(&table_lock);
	/* The forking thread is the child's first (entry 0, below). */
	memcpy(main_name, my_name, STATS_NAME);
	if (!area || !staging)
		return;
	struct area_slot *old = shim_slot;
	bool was_live = old && is_live;
	is_live = false;
	staging->pid = (int32_t)syscall(SYS_getpid);
	staging->ppid = (int32_t)syscall(SYS_getppid);
	load_ns = boot_ns();
	staging->start_ns = load_ns;
	/* Relaxed: a count for the closing line. */
	hl__fetch_add(&area->processes, 1, HL_RELAXED);
	shim_me = NULL;
	me_omitted = false;
	my_sums = NULL;
	memset((void *)&own_sums, 0, sizeof(own_sums));
	/* One thread now: a slot where it starts another (take_my_slot), but
	 * at once where the parent's was LIVE, whose records' indices the
	 * child's objects carry. */
	hl__store(&threads_started, false, HL_RELAXED);
	struct area_slot *s = (was_live || area->detect) && area_fd_ours() ? take_slot(area_fd, staging->pid)
									      : NULL;
	use_slot(s);
	if (s && was_live) {
		uint32_t used = hl__load(&old->recs_used, HL_RELAXED);
		memcpy(s->classes, old->classes, sizeof(s->classes));
		struct stats_rec *from = area_recs(old);
		for (uint32_t i = 1; i < used; i++) {
			struct stats_rec *r = &shim_recs[i];
			r->obj = from[i].obj;
			r->type = from[i].type;
			r->by_address = from[i].by_address;
			r->nframes = from[i].nframes;
			memcpy(r->stack, from[i].stack, sizeof(r->stack));
			r->hash = from[i].hash;
			r->first_ns = shim_ticks();
			hl__store(&r->addr, hl__load(&from[i].addr, HL_RELAXED), HL_RELAXED);
			hl__store(&r->objects, hl__load(&from[i].objects, HL_RELAXED), HL_RELAXED);
			hl__store(&r->cond_mutex, hl__load(&from[i].cond_mutex, HL_RELAXED), HL_RELAXED);
		}
		hl__store(&s->recs_used, used, HL_RELAXED);
		go_live();
	}
	if (old)
		munmap(old, AREA_SLOT_SIZE);
	my_start_ns = staging->start_ns;
	/* The forking thread is the child's first: entry 0, made when its
	 * slot goes LIVE (above, or at its first record). */
	i_am_main = true;
}

/* The new program of a process that ran exec: its old LIVE slot ends
 * there (EXECED), an old RESERVED one is given back (mine: the slot just
 * taken, left alone). */
static void note_exec(int32_t pid, uint32_t mine)
{
	for (uint32_t i = 0; i < AREA_SLOTS; i++) {
		struct area_desc *d = &area->desc[i];
		if (i == mine || hl__load(&d->pid, HL_RELAXED) != pid)
			continue;
		uint32_t s = hl__load(&d->state, HL_RELAXED);
		/* Release: as the others.  The process was counted when its
		 * old program took the slot. */
		if ((s == AREA_LIVE && hl__cas(&d->state, &s, AREA_EXECED, HL_RELEASE)) ||
		    (s == AREA_RESERVED && give_back(d)))
			hl__fetch_sub(&area->processes, 1, HL_RELAXED);
		if (s == AREA_LIVE)
			wake_collector();
	}
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

/* Adds a string to staging's, returning its offset (0: the empty one). */
static uint32_t add_string(const char *str)
{
	size_t n = strlen(str) + 1;
	if (staging->strings_used == 0)
		staging->strings_used = 1;      /* offset 0: "" */
	if (n > AREA_STRINGS - staging->strings_used)
		return 0;
	uint32_t at = staging->strings_used;
	memcpy(staging->strings + at, str, n);
	staging->strings_used += (uint32_t)n;
	return at;
}

/* Each module the dynamic loader has: its range, bias, path and build ID
 * (from its notes, in memory). */
static int note_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (staging->n_modules >= AREA_MAX_MODULES)
		return 1;
	struct area_module *m = &staging->modules[staging->n_modules];
	memset(m, 0, sizeof(*m));
	m->bias = info->dlpi_addr;
	m->lo = UINT64_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD) {
			if (lo < m->lo)
				m->lo = lo;
			if (lo + ph->p_memsz > m->hi)
				m->hi = lo + ph->p_memsz;
		} else if (ph->p_type == PT_NOTE && !m->build_id_len) {
			const char *p = (const char *)lo, *end = p + ph->p_memsz;
			while (p + sizeof(ElfW(Nhdr)) <= end) {
				const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
				const char *name = p + sizeof(*nh);
				const char *desc = name + ((nh->n_namesz + 3) & ~3u);
				if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
				    !memcmp(name, "GNU", 4) && nh->n_descsz <= sizeof(m->build_id)) {
					m->build_id_len = (uint8_t)nh->n_descsz;
					memcpy(m->build_id, desc, nh->n_descsz);
					break;
				}
				p = desc + ((nh->n_descsz + 3) & ~3u);
			}
		}
	}
	if (m->lo == UINT64_MAX)
		return 0;
	const char *name = info->dlpi_name;
	char exe[PATH_MAX];
	if (!name || !*name) {
		/* The program itself (the first module): the path it was run
		 * by, from the auxiliary vector (no system call), where that
		 * is absolute; else as the kernel has it. */
		if (staging->n_modules)
			return 0;
		const char *fn = (const char *)getauxval(AT_EXECFN);
		if (fn && fn[0] == '/') {
			name = fn;
		} else {
			ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
			if (n <= 0)
				return 0;
			exe[n] = 0;
			name = exe;
		}
	}
	if (name[0] != '/')
		return 0;               /* the vDSO: no file */
	m->path = add_string(name);
	if (m->path)
		staging->n_modules++;
	return 0;
}

/* The process's slot, taken where it starts its first thread (a process
 * with one thread never contends: nothing to record), or at load where it
 * has threads already (started by another library's constructor, before
 * ours): the staging filled, a FREE slot taken and mapped.  Outside lock
 * calls; mmap is a call any process that starts threads may make. */
static void take_my_slot(void)
{
	if (!area || shim_slot || !area_fd_ours())
		return;
	struct area_slot *s = take_slot(area_fd, staging->pid);
	if (!s)
		return;
	shim_tsc = area->tsc_ok && !monotonic_asked;
	staging->start_ns = load_ns;
	staging->tsc = shim_tsc;
	staging->mono_base = hl__now_ns();
	staging->tsc_base = shim_ticks();
	staging->cpus = area->cpus;
	staging->nodes = (int32_t)hl__topo_nodes();
	if (staging->nodes < 1)
		staging->nodes = 1;
	staging->handoff_ns = hl__handoff_ns();
	staging->spin_ns = hl__spin_ns();
	staging->cna = hl__queue_policy_is_cna(HL_QUEUE_DEFAULT);
	if (!staging->n_modules)
		dl_iterate_phdr(note_module, NULL);
	/* The unwinder now (glibc loads libgcc_s at the first backtrace),
	 * not at a first contention. */
	void *pc[2];
	backtrace(pc, 2);
	use_slot(s);
}

/* Maps the area named by HOTLOCK_STATS_AREA: its header, which counts the
 * process and lets it mark an old program's slot EXECED, and the
 * descriptor, kept for the slot (take_my_slot); says in one line why not,
 * where it cannot.  The command line is copied now, before a program can
 * change its arguments (setproctitle). */
static void attach(const char *path, int argc, char **argv)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || (uint64_t)st.st_size != AREA_SIZE) {
		say("hotlock-preload: %s: not a stats area of this hotlock-run; no lock report for this "
		    "process\n", path);
		if (fd >= 0)
			close(fd);
		return;
	}
	struct area_header *h = mmap(NULL, AREA_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED || h->magic != AREA_MAGIC || h->version != AREA_VERSION ||
	    pthread_key_create(&exit_key, thread_exit)) {
		say("hotlock-preload: %s: not a stats area of this hotlock-run; no lock report for this "
		    "process\n", path);
		if (h != MAP_FAILED)
			munmap(h, AREA_HEADER_SIZE);
		close(fd);
		return;
	}
	staging = &load_staging;
	staging->pid = (int32_t)getpid();
	staging->ppid = (int32_t)getppid();
	load_ns = boot_ns();
	area = h;
	/* Relaxed: a count for the closing line. */
	hl__fetch_add(&area->processes, 1, HL_RELAXED);
	note_exec(staging->pid, AREA_SLOTS);
	/* Kept open for the slot, which a fork child takes too. */
	int high = fcntl(fd, F_DUPFD_CLOEXEC, AREA_FD_MIN);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	area_fd = fd;
	area_dev = st.st_dev;
	area_ino = st.st_ino;
	size_t n = 0;
	for (int i = 0; i < argc && argv && argv[i]; i++) {
		size_t k = strlen(argv[i]) + 1;
		if (k > AREA_CMDLINE - n)
			k = AREA_CMDLINE - n;
		memcpy(staging->cmdline + n, argv[i], k);
		n += k;
		if (n == AREA_CMDLINE)
			break;
	}
	staging->cmdline_len = (uint32_t)n;
	/* The deadlock detector lists holds from the first lock, in a
	 * process with one thread too (it can deadlock on itself). */
	shim_holds_on = (area->detect & AREA_DETECT_HOLDS) != 0;
	shim_order_on = (area->detect & AREA_DETECT_ORDER) != 0;
	shim_mutex_sites = (area->detect & AREA_DETECT_SITES) != 0;
	shim_mutex_listed = shim_holds_on && !shim_mutex_sites;
	if (hl__load(&threads_started, HL_RELAXED) || area->detect)
		take_my_slot();
}

/* glibc calls a library's constructors with the program's arguments. */
__attribute__((constructor)) static void stats_init(int argc, char **argv, char **envp)
{
	(void)envp;
	read_settings();
	const char *path = getenv(AREA_ENV);
	if (line.on || (path && *path))
		pthread_atfork(NULL, NULL, fork_child);
	if (!path || !*path)
		return;
	dl_iterate_phdr(find_self, (void *)(uintptr_t)stats_init);
	i_am_main = true;
	name_main_thread();
	attach(path, argc, argv);
}

void shim_stats_before_thread(void)
{
	if (hl__likely(shim_slot != NULL))
		return;
	/* Relaxed: read by this thread's attach, or at the first thread,
	 * before any other exists. */
	hl__store(&threads_started, true, HL_RELAXED);
	if (area)
		take_my_slot();
}
