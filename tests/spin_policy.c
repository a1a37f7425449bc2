/* SPDX-License-Identifier: MIT */
/* White-box test of the waiting policy (src/wait.h, rules 1-3): what makes
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
 *  3. the cgroup's CPU quota, parsed from a made-up /proc/self/cgroup and
 *     cgroup tree (v2 "0::PATH", a hybrid host's unified tree, v1 cpu and
 *     cpu,cpuacct, the smallest quota on the path, "max"): the CPUs it
 *     allows, rounded up;
 *  4. a real cgroup CPU quota of one CPU leaves no spinner slot once a
 *     process in it calls hl_thread_init, where the machine can make one
 *     (root, a writable cgroup cpu controller); skipped with a line
 *     otherwise;
 *  5. concurrency restriction (src/mutex.c, step 4b): threads that take an
 *     hl_mutex back a few pauses after each unlock saturate it; the queue
 *     head then sleeps passive (counted), and the lock stays with the
 *     running thread: with two CPUs or more, fewer than a quarter of the
 *     acquisitions are a spinner's (before step 4b, nearly every one
 *     was: the spinner took the lock at each release), and every thread
 *     still gets the lock (the handoff bound);
 *  6. nudges (src/mutex.c, step 5b): rounds of a broadcast, under the
 *     mutex, to 8 threads asleep in hl_cond_wait: every thread sees every
 *     round, and with two CPUs or more, moved waiters were nudged awake
 *     ahead of their turn (counted by the nudgers; before step 5b each
 *     one slept until its predecessor's unlock). */
#include "common.h"

#include <hotlock/cond.h>
#include <hotlock/config.h>
#include <hotlock/mutex.h>
#include <hotlock/rwlock.h>
#include <hotlock/thread.h>

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
		r = hl__spin_learn(r, HL_SPIN_LOST);
	CHECK(r == HL_SPIN_REC_OFF, "10 lost spins: record %u, expected %u", r, HL_SPIN_REC_OFF);
	CHECK(hl__spin_learn(r, HL_SPIN_CUT) == r, "a cut spin changed the record");
	CHECK(hl__spin_learn(HL_SPIN_REC_OFF, HL_SPIN_WON) == HL_SPIN_REC_OFF - 1,
	      "a won probe did not leave OFF");
	CHECK(hl__spin_learn(0, HL_SPIN_WON) == 0, "record below 0");
	CHECK(hl__spin_learn(2, HL_SPIN_WON) == 1 && hl__spin_learn(2, HL_SPIN_LOST) == 3,
	      "one step per spin");

	if (usable_cpus() < 2) {
		printf("record budgets: SKIP, one usable CPU (no spinner slot)\n");
		return;
	}
	hl_config_t cfg;
	hl_config_get(&cfg);
	uint64_t full = cfg.spin_ns;
	REQUIRE(full > 0, "HOTLOCK_SPIN_NS is 0 in this test's environment");
	for (unsigned rec = 0; rec < HL_SPIN_REC_OFF; rec++) {
		uint64_t b = hl__spin_begin(rec);
		if (b)
			hl__spin_end(HL_SPIN_CUT);
		CHECK(b == full, "record %u: budget %llu, expected %llu", rec, (unsigned long long)b,
		      (unsigned long long)full);
	}
	hl_spin_stats_t a, z;
	hl_spin_stats_thread(&a);
	int probes = 0;
	for (int i = 0; i < 4 * HL_SPIN_PROBE_EVERY; i++) {
		uint64_t b = hl__spin_begin(HL_SPIN_REC_OFF);
		if (b) {
			probes++;
			CHECK(b == full, "probe budget %llu", (unsigned long long)b);
			hl__spin_end(HL_SPIN_LOST);
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
	s->waiter = (hl_spin_stats_t){ z.spins - a.spins, z.won - a.won,
				       z.learned_off - a.learned_off };
	return NULL;
}

static void test_sleepy_holder(int kind)
{
	struct sleepy s = { .kind = kind };
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
	unsigned long long most = 2 * HL_SPIN_REC_OFF + 2 * SLEEPY_ROUNDS / HL_SPIN_PROBE_EVERY + 8;
	printf("%s, holder asleep %lld ms: the waiter's %d waits spun %llu times (won %llu), "
	       "learned_off %llu; %s\n", kind_names[kind], SLEEPY_HOLD_NS / NSEC_PER_MSEC,
	       SLEEPY_ROUNDS, (unsigned long long)s.waiter.spins, (unsigned long long)s.waiter.won,
	       (unsigned long long)s.waiter.learned_off, desc);
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
}

/* ---- 3. the quota parser ---- */

static void put_file(const char *root, const char *path, const char *text)
{
	char f[1024];
	snprintf(f, sizeof(f), "%s%s", root, path);
	for (char *s = f + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(f, 0755);
		*s = '/';
	}
	FILE *out = fopen(f, "w");
	REQUIRE(out && fputs(text, out) >= 0 && fclose(out) == 0, "cannot write %s", f);
}

static void test_quota_parser(void)
{
	static const struct {
		const char *what, *cgroup, *files[3][2];
		int cpus;
	} cases[] = {
		{ "v2, no quota", "0::/a/b\n", { { "/sys/fs/cgroup/a/b/cpu.max", "max 100000\n" } }, 0 },
		{ "v2, 1.5 CPUs", "0::/a/b\n", { { "/sys/fs/cgroup/a/b/cpu.max", "150000 100000\n" } }, 2 },
		{ "v2, the parent's is smaller", "0::/a/b/\n",
		  { { "/sys/fs/cgroup/a/b/cpu.max", "400000 100000\n" },
		    { "/sys/fs/cgroup/a/cpu.max", "100000 100000\n" } }, 1 },
		{ "v2 on a hybrid host", "1:cpu:/\n0::/svc\n",
		  { { "/sys/fs/cgroup/unified/svc/cpu.max", "300000 100000\n" } }, 3 },
		{ "v1 cpu,cpuacct", "4:memory:/m\n3:cpu,cpuacct:/c\n0::/\n",
		  { { "/sys/fs/cgroup/cpu,cpuacct/c/cpu.cfs_quota_us", "50000\n" },
		    { "/sys/fs/cgroup/cpu,cpuacct/c/cpu.cfs_period_us", "100000\n" } }, 1 },
		{ "v1 cpu, none", "2:cpu:/c\n",
		  { { "/sys/fs/cgroup/cpu/c/cpu.cfs_quota_us", "-1\n" },
		    { "/sys/fs/cgroup/cpu/c/cpu.cfs_period_us", "100000\n" } }, 0 },
		{ "v1 cpuset only: not a quota", "2:cpuset:/c\n",
		  { { "/sys/fs/cgroup/cpuset/c/cpu.cfs_quota_us", "100000\n" } }, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char root[] = "/tmp/hotlock-quota-XXXXXX";
		REQUIRE(mkdtemp(root), "mkdtemp: %s", strerror(errno));
		put_file(root, "/proc/self/cgroup", cases[i].cgroup);
		for (int k = 0; k < 3 && cases[i].files[k][0]; k++)
			put_file(root, cases[i].files[k][0], cases[i].files[k][1]);
		int got = hl__cgroup_quota_cpus(root);
		CHECK(got == cases[i].cpus, "quota parser, %s: %d CPUs, expected %d", cases[i].what,
		      got, cases[i].cpus);
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		REQUIRE(system(cmd) == 0, "%s", cmd);
	}
	printf("quota parser: %zu made-up cgroup trees read as expected\n",
	       sizeof(cases) / sizeof(cases[0]));
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
	/* What it learns where a thread starts, asked for by the program. */
	REQUIRE(hl_thread_init() == 0, "hl_thread_init");
	uint64_t b = hl__spin_begin(0);
	if (b)
		hl__spin_end(HL_SPIN_CUT);
	printf("cgroup quota of one CPU: hl__spin_begin gives %llu\n", (unsigned long long)b);
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
	uint64_t b = hl__spin_begin(0); /* the parent has a slot: the quota is what takes it */
	if (b)
		hl__spin_end(HL_SPIN_CUT);
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

/* ---- 5. a saturated mutex ---- */

#define SATURATED_THREADS 3
#define SATURATED_RUN_NS (400 * NSEC_PER_MSEC)

struct saturated {
	hl_mutex_t m;
	_Atomic bool stop;
	volatile unsigned long shared;
	unsigned long ops[SATURATED_THREADS];
};

struct saturated_arg {
	struct saturated *s;
	int index;
};

static void *saturated_worker(void *p)
{
	struct saturated_arg *a = p;
	struct saturated *s = a->s;
	unsigned long n = 0;
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		hl_mutex_lock(&s->m);
		for (int i = 0; i < 100; i++) {
			hl__cpu_relax();
			s->shared++;
		}
		hl_mutex_unlock(&s->m);
		for (int i = 0; i < 5; i++)
			hl__cpu_relax();
		n++;
	}
	s->ops[a->index] = n;
	return NULL;
}

static void test_saturated_mutex(void)
{
	static struct saturated s;
	struct saturated_arg args[SATURATED_THREADS];
	pthread_t t[SATURATED_THREADS];
	uint64_t before[HL_COUNTERS], after[HL_COUNTERS];
	hl_mutex_init(&s.m);
	hl__process_stats(before);
	for (int i = 0; i < SATURATED_THREADS; i++) {
		args[i] = (struct saturated_arg){ &s, i };
		REQUIRE(pthread_create(&t[i], NULL, saturated_worker, &args[i]) == 0,
			"pthread_create");
	}
	struct timespec run = { 0, SATURATED_RUN_NS };
	nanosleep(&run, NULL);
	atomic_store(&s.stop, true);
	unsigned long ops = 0, least = ~0ul;
	for (int i = 0; i < SATURATED_THREADS; i++) {
		pthread_join(t[i], NULL);
		ops += s.ops[i];
		if (s.ops[i] < least)
			least = s.ops[i];
	}
	hl__process_stats(after);
	unsigned long long passive = after[HL_LK_PASSIVE] - before[HL_LK_PASSIVE];
	unsigned long long won = after[HL_SP_WON] - before[HL_SP_WON];
	printf("saturated hl_mutex, %d threads for %lld ms: %lu acquisitions (fewest of a "
	       "thread %lu), %llu by a spinner, %llu passive sleeps of the head\n",
	       SATURATED_THREADS, SATURATED_RUN_NS / NSEC_PER_MSEC, ops, least, won, passive);
	CHECK(passive > 0, "a saturated mutex: the queue head never slept passive");
	CHECK(least > 0, "a saturated mutex: a thread never got the lock in %lld ms",
	      SATURATED_RUN_NS / NSEC_PER_MSEC);
	if (usable_cpus() >= 2)
		CHECK(won * 4 < ops, "a saturated mutex: %llu of %lu acquisitions were a "
		      "spinner's; the running thread should keep the lock", won, ops);
	hl_mutex_destroy(&s.m);
}

/* ---- 6. nudges ---- */

#define NUDGE_WAITERS 8
#define NUDGE_ROUNDS 50

struct nudge_run {
	hl_mutex_t m;
	hl_cond_t c;
	unsigned round;         /* under m: the round broadcast last */
	unsigned asleep;        /* under m: waiters in hl_cond_wait */
	unsigned seen;          /* under m: round ends seen, all threads */
};

static void *nudge_waiter(void *p)
{
	struct nudge_run *r = p;
	hl_mutex_lock(&r->m);
	for (unsigned mine = 0; mine < NUDGE_ROUNDS; mine++) {
		while (r->round == mine) {
			r->asleep++;
			int rc = hl_cond_wait(&r->c, &r->m);
			r->asleep--;
			CHECK(rc == 0, "hl_cond_wait returned %d", rc);
		}
		r->seen++;
	}
	hl_mutex_unlock(&r->m);
	return NULL;
}

static void test_nudges(void)
{
	static struct nudge_run r;
	pthread_t t[NUDGE_WAITERS];
	uint64_t before[HL_COUNTERS], after[HL_COUNTERS];
	hl_mutex_init(&r.m);
	hl_cond_init(&r.c);
	hl__process_stats(before);
	for (int i = 0; i < NUDGE_WAITERS; i++)
		REQUIRE(pthread_create(&t[i], NULL, nudge_waiter, &r) == 0, "pthread_create");
	struct timespec nap = { 0, 2 * NSEC_PER_MSEC };
	int64_t start = now_ns();
	for (unsigned round = 1; round <= NUDGE_ROUNDS; round++) {
		/* Every thread waits, and has had time to fall asleep. */
		for (;;) {
			hl_mutex_lock(&r.m);
			bool all = r.asleep == NUDGE_WAITERS;
			hl_mutex_unlock(&r.m);
			if (all)
				break;
			REQUIRE(now_ns() - start < 60 * NSEC_PER_SEC,
				"nudges: round %u, only %u of %d threads came back to wait in 60 s",
				round, r.asleep, NUDGE_WAITERS);
			nanosleep(&nap, NULL);
		}
		nanosleep(&nap, NULL);
		hl_mutex_lock(&r.m);
		r.round = round;
		hl_cond_broadcast(&r.c);
		hl_mutex_unlock(&r.m);
	}
	for (int i = 0; i < NUDGE_WAITERS; i++)
		pthread_join(t[i], NULL);
	hl__process_stats(after);
	unsigned long long nudged = after[HL_LK_NUDGED] - before[HL_LK_NUDGED];
	printf("nudges: %d rounds of a broadcast to %d sleeping waiters, %llu moved waiters "
	       "nudged awake ahead of their turn\n", NUDGE_ROUNDS, NUDGE_WAITERS, nudged);
	CHECK(r.seen == NUDGE_ROUNDS * NUDGE_WAITERS, "nudges: %u round ends seen, expected %d",
	      r.seen, NUDGE_ROUNDS * NUDGE_WAITERS);
	if (usable_cpus() >= 2 && hl__spin_ns())
		CHECK(nudged > 0, "nudges: no moved waiter was nudged in %d broadcasts",
		      NUDGE_ROUNDS);
	hl_cond_destroy(&r.c);
	hl_mutex_destroy(&r.m);
}

int main(void)
{
	printf("test_spin_policy: %d usable CPUs\n", usable_cpus());
	test_record_rule();
	test_sleepy_holder(K_MUTEX);
	test_sleepy_holder(K_RW_READ);
	test_sleepy_holder(K_RW_WRITE);
	test_quota_parser();
	test_cgroup_quota();
	test_saturated_mutex();
	test_nudges();
	return test_finish("test_spin_policy");
}
