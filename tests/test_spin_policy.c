/* SPDX-License-Identifier: MIT */
/* White-box test of the waiting policy (src/wait.h, rules 1-5): what makes
 * a waiter spin or park, seen through the spin counters
 * (hl_spin_stats_thread) and the locks' spin records.
 *
 * Asserts:
 *  1. the record rule: a lost spin moves the record one step towards
 *     HL_SPIN_REC_OFF, a won one a step back, a cut one changes nothing;
 *     below OFF a waiter gets the full budget, at OFF only every
 *     HL_SPIN_PROBE_EVERY-th wait of a thread spins (the full budget), and
 *     the others are counted as learned_off;
 *  2. a lock whose holder sleeps with it held (2 ms) ends up not spinning:
 *     hl_mutex and hl_rwlock (write holder, reader and writer waiters).
 *     The waiter's spins stay within the few it takes to learn plus the
 *     probes, it counts learned_off, and the lock's record reads OFF;
 *     before the policy learned, every one of those waits spun its 20 us;
 *  3. rule 4: a spin lost while the machine has no free CPU moves the
 *     record two steps (a sleeping holder's waiter then reaches OFF in half
 *     the lost spins); with every CPU this process may use taken by another
 *     process's CPU-bound threads, every spin phase of a contended mutex is
 *     counted as begun busy, and hl_swap's rule (hl_cpu_free) says no free
 *     CPU;
 *  3b. rule 5: with every CPU taken by another process's CPU-bound
 *     threads, hl_cpus_taken_by_others says so and the handoff threshold
 *     a head goes by is HL_HANDOFF_BUSY_FACTOR times the configured one;
 *     with this process's own 8 threads per CPU, runnable nearly all the
 *     time (so that rule 4's count finds no free CPU), and no other load,
 *     it stays as configured;
 *  4. a cgroup CPU quota of one CPU leaves no spinner slot, where the
 *     machine can make one (root, a writable cgroup cpu controller);
 *     skipped with a line otherwise.
 * Rules 1-3 alone are checked with the machine's load ignored
 * (hl__spin_ignore_load), so that what else runs here cannot change them;
 * 3 asserts only what more load cannot undo. */
#include "common.h"

#include <hotlock/config.h>
#include <hotlock/mutex.h>
#include <hotlock/rwlock.h>

#include "config.h"
#include "thread.h"
#include "wait.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

static int usable_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	return CPU_COUNT(&set);
}

/* ---- 1. the record rule ---- */

static void test_record_rule(void)
{
	unsigned r = 0;
	for (int i = 0; i < 10; i++)
		r = hl_spin_learn(r, HL_SPIN_LOST);
	CHECK(r == HL_SPIN_REC_OFF, "10 lost spins: record %u, expected %u", r, HL_SPIN_REC_OFF);
	CHECK(hl_spin_learn(r, HL_SPIN_CUT) == r, "a cut spin changed the record");
	CHECK(hl_spin_learn(HL_SPIN_REC_OFF, HL_SPIN_WON) == HL_SPIN_REC_OFF - 1,
	      "a won probe did not leave OFF");
	CHECK(hl_spin_learn(0, HL_SPIN_WON) == 0, "record below 0");
	CHECK(hl_spin_learn(2, HL_SPIN_WON) == 1 && hl_spin_learn(2, HL_SPIN_LOST) == 3,
	      "one step per spin");
	CHECK(hl_spin_learn(2, HL_SPIN_LOST_BUSY) == 4 &&
	      hl_spin_learn(HL_SPIN_REC_OFF - 1, HL_SPIN_LOST_BUSY) == HL_SPIN_REC_OFF,
	      "a spin lost on a busy machine: two steps, up to OFF");

	if (usable_cpus() < 2) {
		printf("record budgets: SKIP, one usable CPU (no spinner slot)\n");
		return;
	}
	hl_config_t cfg;
	hl_config_get(&cfg);
	uint64_t full = cfg.spin_ns;
	REQUIRE(full > 0, "HOTLOCK_SPIN_NS is 0 in this test's environment");
	for (unsigned rec = 0; rec < HL_SPIN_REC_OFF; rec++) {
		uint64_t b = hl_spin_begin(rec);
		if (b)
			hl_spin_end(HL_SPIN_CUT);
		CHECK(b == full, "record %u: budget %llu, expected %llu", rec, (unsigned long long)b,
		      (unsigned long long)full);
	}
	hl_spin_stats_t a, z;
	hl_spin_stats_thread(&a);
	int probes = 0;
	for (int i = 0; i < 4 * HL_SPIN_PROBE_EVERY; i++) {
		uint64_t b = hl_spin_begin(HL_SPIN_REC_OFF);
		if (b) {
			probes++;
			CHECK(b == full, "probe budget %llu", (unsigned long long)b);
			hl_spin_end(HL_SPIN_LOST);
		}
	}
	hl_spin_stats_thread(&z);
	CHECK(probes == 4, "record OFF: %d of %d waits spun, expected 4 probes", probes,
	      4 * HL_SPIN_PROBE_EVERY);
	CHECK(z.learned_off - a.learned_off == 4 * HL_SPIN_PROBE_EVERY - 4,
	      "learned_off counted %llu, expected %d", (unsigned long long)(z.learned_off - a.learned_off),
	      4 * HL_SPIN_PROBE_EVERY - 4);
	CHECK(z.spins - a.spins == 4 && z.won == a.won, "spins %llu won %llu",
	      (unsigned long long)(z.spins - a.spins), (unsigned long long)(z.won - a.won));
	printf("record rule: the full budget below OFF; at OFF %d probes in %d waits\n", probes,
	       4 * HL_SPIN_PROBE_EVERY);
}

/* ---- 2. a holder that sleeps ---- */

#define SLEEPY_ROUNDS 80
#define SLEEPY_HOLD_NS (2 * NSEC_PER_MSEC)

enum { K_MUTEX, K_RW_READ, K_RW_WRITE };
static const char *const kind_names[] = { "hl_mutex", "hl_rwlock (reader waits)",
					  "hl_rwlock (writer waits)" };

struct sleepy {
	int kind;
	hl_mutex_t m;
	hl_rwlock_t rw;
	atomic_int holding;     /* the holder's rounds begun: round i has the lock */
	atomic_int round;       /* the waiter's rounds done */
	hl_spin_stats_t waiter; /* the waiter's counts over the rounds */
};

static void sleepy_lock(struct sleepy *s, bool waiter)
{
	if (s->kind == K_MUTEX)
		CHECK_RC(hl_mutex_lock(&s->m), 0);
	else if (waiter && s->kind == K_RW_READ)
		CHECK_RC(hl_rwlock_rdlock(&s->rw), 0);
	else
		CHECK_RC(hl_rwlock_wrlock(&s->rw), 0);
}

static void sleepy_unlock(struct sleepy *s, bool waiter)
{
	if (s->kind == K_MUTEX)
		CHECK_RC(hl_mutex_unlock(&s->m), 0);
	else if (waiter && s->kind == K_RW_READ)
		CHECK_RC(hl_rwlock_unlock(&s->rw), 0);
	else
		CHECK_RC(hl_rwlock_unlock(&s->rw), 0);
}

/* The holder: takes the lock, lets the waiter come, sleeps with it held,
 * lets it go; once per waiter round. */
static void *sleepy_holder(void *p)
{
	struct sleepy *s = p;
	for (int i = 0; i < SLEEPY_ROUNDS; i++) {
		sleepy_lock(s, false);
		atomic_store(&s->holding, i + 1);
		sleep_ns(SLEEPY_HOLD_NS);
		sleepy_unlock(s, false);
		/* Wait for the waiter's round (a flag poll, not a sync). */
		while (atomic_load(&s->round) <= i)
			sched_yield();
	}
	return NULL;
}

static void *sleepy_waiter(void *p)
{
	struct sleepy *s = p;
	hl_spin_stats_t a, z;
	hl_spin_stats_thread(&a);
	for (int i = 0; i < SLEEPY_ROUNDS; i++) {
		while (atomic_load(&s->holding) <= i)
			sched_yield();
		sleepy_lock(s, true);   /* finds it held (the holder sleeps), unless
					   this thread was preempted that long */
		sleepy_unlock(s, true);
		atomic_store(&s->round, i + 1);
	}
	hl_spin_stats_thread(&z);
	s->waiter = (hl_spin_stats_t){ z.spins - a.spins, z.won - a.won, z.busy - a.busy,
				       z.learned_off - a.learned_off };
	return NULL;
}

static void test_sleepy_holder(int kind, bool busy)
{
	struct sleepy s = { .kind = kind };
	hl__spin_force_busy = busy;
	pthread_t h, w;
	char desc[1024];
	hl_mutex_init(&s.m);
	hl_rwlock_init(&s.rw);
	REQUIRE(pthread_create(&h, NULL, sleepy_holder, &s) == 0, "pthread_create");
	REQUIRE(pthread_create(&w, NULL, sleepy_waiter, &s) == 0, "pthread_create");
	pthread_join(w, NULL);
	pthread_join(h, NULL);
	if (kind == K_MUTEX)
		hl_mutex_describe(&s.m, desc, sizeof(desc));
	else
		hl_rwlock_describe(&s.rw, desc, sizeof(desc));
	/* Learning takes OFF lost spins per phase kind (a waiter's spin, then
	 * its spin as the queue head), each probe may spin once more, and a
	 * won probe (the holder's unlock can meet it) costs a few more. */
	unsigned steps = busy ? (HL_SPIN_REC_OFF + 1) / 2 : HL_SPIN_REC_OFF;
	unsigned long long most = 2 * steps + 2 * SLEEPY_ROUNDS / HL_SPIN_PROBE_EVERY + 8;
	printf("%s, holder asleep %lld ms%s: the waiter's %d waits spun %llu times (won %llu, "
	       "busy %llu), learned_off %llu; %s\n", kind_names[kind],
	       SLEEPY_HOLD_NS / NSEC_PER_MSEC, busy ? ", machine busy" : "", SLEEPY_ROUNDS,
	       (unsigned long long)s.waiter.spins, (unsigned long long)s.waiter.won,
	       (unsigned long long)s.waiter.busy, (unsigned long long)s.waiter.learned_off, desc);
	if (busy)
		CHECK(s.waiter.busy == s.waiter.spins, "%s: %llu of %llu spins counted busy",
		      kind_names[kind], (unsigned long long)s.waiter.busy,
		      (unsigned long long)s.waiter.spins);
	CHECK(s.waiter.spins <= most,
	      "%s: the waiter spun %llu times in %d waits for a sleeping holder, expected at "
	      "most %llu", kind_names[kind], (unsigned long long)s.waiter.spins, SLEEPY_ROUNDS, most);
	CHECK(s.waiter.learned_off >= SLEEPY_ROUNDS / 2,
	      "%s: learned_off %llu in %d waits", kind_names[kind],
	      (unsigned long long)s.waiter.learned_off, SLEEPY_ROUNDS);
	CHECK(strstr(desc, "spin-record=7") != NULL, "%s: the record is not OFF: %s",
	      kind_names[kind], desc);
	hl_mutex_destroy(&s.m);
	hl_rwlock_destroy(&s.rw);
	hl__spin_force_busy = false;
}

/* ---- 3. a machine with no free CPU ---- */

static pid_t hogs[64];
static int nhogs;

static void start_hogs(int n)
{
	for (nhogs = 0; nhogs < n && nhogs < 64; nhogs++) {
		pid_t pid = fork();
		REQUIRE(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0) {
			alarm(60); /* never outlives a killed test */
			for (volatile unsigned long x = 0;; x++)
				;
		}
		hogs[nhogs] = pid;
	}
}

static void stop_hogs(void)
{
	for (int i = 0; i < nhogs; i++) {
		kill(hogs[i], SIGKILL);
		waitpid(hogs[i], NULL, 0);
	}
	nhogs = 0;
}

struct contend {
	hl_mutex_t m;
	atomic_int stop;
	atomic_ullong ops;
	int ncs;        /* pause iterations outside the lock */
};

static void *contender(void *p)
{
	struct contend *c = p;
	while (!atomic_load(&c->stop)) {
		CHECK_RC(hl_mutex_lock(&c->m), 0);
		for (int i = 0; i < 200; i++)
			test_cpu_relax();
		CHECK_RC(hl_mutex_unlock(&c->m), 0);
		for (int i = 0; i < c->ncs; i++)
			test_cpu_relax();
		atomic_fetch_add(&c->ops, 1);
	}
	return NULL;
}

static void test_busy_machine(void)
{
	int cpus = usable_cpus();
	if (cpus < 2) {
		printf("busy machine: SKIP, one usable CPU (nobody spins anyway)\n");
		return;
	}
	hl__spin_ignore_load = false;
	start_hogs(cpus);
	sleep_ns(50 * NSEC_PER_MSEC);   /* past a load sample's 10 ms */
	struct contend c;
	hl_mutex_init(&c.m);
	atomic_init(&c.stop, 0);
	atomic_init(&c.ops, 0);
	c.ncs = 0;
	hl_spin_stats_t a, z;
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		REQUIRE(pthread_create(&th[i], NULL, contender, &c) == 0, "pthread_create");
	/* The load is sampled on slow paths, every 10 ms, and the machine
	 * is busy once 4 samples in a row say so: past those, count. */
	sleep_ns(100 * NSEC_PER_MSEC);
	hl_spin_stats_total(&a);
	sleep_ns(300 * NSEC_PER_MSEC);
	bool free_cpu = hl_cpu_free();
	bool taken = hl_cpus_taken_by_others();
	uint64_t due_ns = hl_handoff_due_ns();
	atomic_store(&c.stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	hl_spin_stats_total(&z);
	stop_hogs();
	unsigned long long spins = z.spins - a.spins, busy = z.busy - a.busy;
	printf("busy machine (%d CPU-bound processes, %d CPUs): 4 threads, %llu acquisitions, "
	       "%llu spins, %llu begun busy; hl_cpu_free %d\n", cpus, cpus,
	       (unsigned long long)atomic_load(&c.ops), spins, busy, free_cpu);
	CHECK(busy == spins, "%llu of %llu spins counted busy with every CPU taken by another "
	      "process", busy, spins);
	CHECK(!free_cpu, "hl_cpu_free: a free CPU with every CPU taken");
	/* Rule 5: the CPUs are another program's, so a head competes
	 * HL_HANDOFF_BUSY_FACTOR times the threshold before a handoff. */
	printf("busy machine: hl_cpus_taken_by_others %d, handoff threshold %llu ns (configured %llu)\n",
	       taken, (unsigned long long)due_ns, (unsigned long long)hl_handoff_ns());
	CHECK(taken, "hl_cpus_taken_by_others: false with every CPU taken by another process");
	CHECK(due_ns == hl_handoff_ns() * HL_HANDOFF_BUSY_FACTOR,
	      "handoff threshold %llu ns with every CPU taken by another process",
	      (unsigned long long)due_ns);
	hl_mutex_destroy(&c.m);
	hl__spin_ignore_load = true;
}

/* Rule 5's other side: this process's own threads, however many, are not
 * another program's load.  8 threads per CPU work outside a mutex and take
 * it now and then, runnable nearly all the time (so that a count of every
 * runnable thread, rule 4's, finds no free CPU), and the handoff threshold
 * stays as configured.  A count that took them for another program's
 * (seeded: this process's runnable threads read as 1) fails here. */
static void test_own_oversubscription(void)
{
	int cpus = usable_cpus();
	hl__spin_ignore_load = false;
	struct contend c;
	hl_mutex_init(&c.m);
	atomic_init(&c.stop, 0);
	atomic_init(&c.ops, 0);
	c.ncs = 2000;  /* mostly outside the lock: runnable, not parked */
	int n = 8 * cpus < 32 ? 8 * cpus : 32;
	pthread_t th[32];
	for (int i = 0; i < n; i++)
		REQUIRE(pthread_create(&th[i], NULL, contender, &c) == 0, "pthread_create");
	sleep_ns(300 * NSEC_PER_MSEC);  /* past 4 load samples */
	bool taken = hl_cpus_taken_by_others(), busy = !hl_cpu_free();
	uint64_t due_ns = hl_handoff_due_ns();
	atomic_store(&c.stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("own oversubscription (%d threads, %d CPUs): %llu acquisitions, no free CPU (rule 4) "
	       "%d, hl_cpus_taken_by_others %d, handoff threshold %llu ns\n", n, cpus,
	       (unsigned long long)atomic_load(&c.ops), busy, taken, (unsigned long long)due_ns);
	if (!busy)
		printf("own oversubscription: the runnable count never reached the CPUs, so rule 5 "
		       "was not put to the test\n");
	CHECK(!taken, "this process's own lock users counted as another program's load");
	CHECK(due_ns == hl_handoff_ns(), "handoff threshold %llu ns, configured %llu",
	      (unsigned long long)due_ns, (unsigned long long)hl_handoff_ns());
	hl_mutex_destroy(&c.m);
	hl__spin_ignore_load = true;
}

/* ---- 4. a cgroup quota ---- */

/* A cgroup directory with a CPU quota of one CPU, or NULL (and why). */
static const char *make_quota_cgroup(char *dir, size_t len, const char **why)
{
	struct stat st;
	if (geteuid() != 0) {
		*why = "not root";
		return NULL;
	}
	const char *v1 = "/sys/fs/cgroup/cpu";
	if (stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", &st) == 0) {
		snprintf(dir, len, "%s/hotlock-test-%d", v1, (int)getpid());
		if (mkdir(dir, 0755) != 0) {
			*why = "cannot make a v1 cpu cgroup";
			return NULL;
		}
		char f[512];
		snprintf(f, sizeof(f), "%s/cpu.cfs_quota_us", dir);
		FILE *q = fopen(f, "w");
		if (!q || fprintf(q, "%d\n", 100000) < 0 || fclose(q) != 0) {
			rmdir(dir);
			*why = "cannot set cpu.cfs_quota_us";
			return NULL;
		}
		return dir;
	}
	if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0) {
		snprintf(dir, len, "/sys/fs/cgroup/hotlock-test-%d", (int)getpid());
		if (mkdir(dir, 0755) != 0) {
			*why = "cannot make a v2 cgroup";
			return NULL;
		}
		char f[512];
		snprintf(f, sizeof(f), "%s/cpu.max", dir);
		FILE *q = fopen(f, "w");
		if (!q || fprintf(q, "100000 100000\n") < 0 || fclose(q) != 0) {
			rmdir(dir);
			*why = "no cpu controller in the v2 cgroup";
			return NULL;
		}
		return dir;
	}
	*why = "no cgroup cpu controller mounted";
	return NULL;
}

static const char *quota_dir;

static int quota_child(void *arg)
{
	(void)arg;
	char f[512];
	snprintf(f, sizeof(f), "%s/cgroup.procs", quota_dir);
	FILE *p = fopen(f, "w");
	if (!p || fprintf(p, "%d\n", (int)getpid()) < 0 || fclose(p) != 0) {
		printf("cgroup quota: SKIP, cannot join %s: %s\n", quota_dir, strerror(errno));
		return TEST_SKIP_CODE;
	}
	/* A fork child reads the quota afresh (hl_spin_atfork_child). */
	uint64_t b = hl_spin_begin(0);
	if (b)
		hl_spin_end(HL_SPIN_CUT);
	printf("cgroup quota of one CPU: hl_spin_begin gives %llu\n", (unsigned long long)b);
	return b == 0 ? 0 : 1;
}

static void test_cgroup_quota(void)
{
	char dir[256], out[4096];
	const char *why = NULL;
	if (usable_cpus() < 2) {
		printf("cgroup quota: SKIP, one usable CPU\n");
		return;
	}
	uint64_t b = hl_spin_begin(0);  /* the parent has a slot: the quota is what takes it */
	if (b)
		hl_spin_end(HL_SPIN_CUT);
	if (!b) {
		printf("cgroup quota: SKIP, no slot here to begin with\n");
		return;
	}
	quota_dir = make_quota_cgroup(dir, sizeof(dir), &why);
	if (!quota_dir) {
		printf("cgroup quota: SKIP, %s\n", why);
		return;
	}
	if (run_child_checked("cgroup quota", quota_child, out, sizeof(out)))
		CHECK(strstr(out, "gives 0") != NULL, "a spinner slot within a quota of one CPU");
	rmdir(quota_dir);
}

int main(void)
{
	printf("test_spin_policy: %d usable CPUs\n", usable_cpus());
	hl__spin_ignore_load = true;
	test_record_rule();
	for (int busy = 0; busy < 2; busy++) {
		test_sleepy_holder(K_MUTEX, busy);
		test_sleepy_holder(K_RW_READ, busy);
		test_sleepy_holder(K_RW_WRITE, busy);
	}
	test_cgroup_quota();
	test_own_oversubscription();
	test_busy_machine();
	return test_finish("test_spin_policy");
}
