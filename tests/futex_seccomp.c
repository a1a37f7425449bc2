/* SPDX-License-Identifier: MIT */
/* The futex layer and the waiting core under a seccomp filter that refuses
 * syscalls with EPERM, as container runtimes answer syscalls their profile
 * does not know (black box, each case in a forked child that installs its
 * filter first).
 *
 * Asserts:
 *  (a) futex2 refused from the start (EPERM for futex_waitv, futex_wake,
 *      futex_wait and futex_requeue, 449 and 454-456): hl_futex_interface()
 *      is "futex", and 4 threads contending on an hl_mutex for 0.3 s (a
 *      30 us critical section: longer than the spin budget, so waiters
 *      park) make fewer than MAX_WAITS_PER_OP futex waits per lock
 *      operation (a probe that took EPERM for futex2 made every wait fail
 *      and retry at once: hundreds per operation);
 *  (b) the same filter installed after the library chose futex2 (where
 *      HOTLOCK_FUTEX=futex2 asks for it; ctest runs both ways): the first
 *      refused call switches the process to futex(2) (hl_futex_interface()
 *      says "futex" afterwards) and the contention is as cheap as in (a);
 *  (c) futex(2) refused as well, for hotlock's own waits only (op
 *      FUTEX_WAIT_BITSET|FUTEX_PRIVATE_FLAG, with and without
 *      FUTEX_CLOCK_REALTIME; glibc's mutexes, malloc and pthread_join use
 *      other ops): hl_futex_wait returns EPERM (not EINVAL); one thread
 *      holds an hl_mutex 300 ms while 2 threads wait in hl_mutex_lock: both
 *      get it after the release, the process uses less than MAX_CPU_SHARE
 *      of one CPU over the window (it used to burn two: waits that failed
 *      at once, retried at once), and the library says once on stderr that
 *      futex waits fail, naming the errno.
 * Skipped with a message where seccomp filters cannot be installed or the
 * architecture is not one whose numbers this file knows. */
#include "common.h"

#include <hotlock/hotlock.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/prctl.h>

#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define MAX_WAITS_PER_OP 5.0
#define MAX_CPU_SHARE 0.25
#define HOLD_NS (300 * NSEC_PER_MSEC)
#ifndef CS_NS
#define CS_NS (30 * NSEC_PER_USEC)
#endif

/* futex_waitv, futex_wake, futex_wait, futex_requeue: the same numbers on
 * every architecture (asm-generic). */
static const uint32_t futex2_nrs[] = { 449, 454, 455, 456 };

/* EPERM for the futex2 syscalls, and with refuse_futex_wait for futex(2)
 * with hotlock's wait ops.  Returns 0, or an errno when the filter could not
 * be installed. */
static int install_filter(bool refuse_futex_wait)
{
#ifdef TEST_AUDIT_ARCH
	const uint32_t ops[] = {
		FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG,
		FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME,
	};
	const int n_nrs = (int)(sizeof(futex2_nrs) / sizeof(futex2_nrs[0]));
	const int n_ops = refuse_futex_wait ? (int)(sizeof(ops) / sizeof(ops[0])) : 0;
	/* 0 load arch; 1 arch ok?; 2 allow; 3 load nr; the nr tests; [futex?;
	 * load op; the op tests]; allow; deny. */
	const int allow = 4 + n_nrs + (n_ops ? 2 + n_ops : 0), deny = allow + 1;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint32_t arg1 = offsetof(struct seccomp_data, args[1]);
#else
	const uint32_t arg1 = offsetof(struct seccomp_data, args[1]) + 4;
#endif
	struct sock_filter f[32];
	int n = 0;
#define JUMP_TO(target) (uint8_t)((target) - (n + 1))
	f[n] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					    offsetof(struct seccomp_data, arch)); n++;
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0); n++;
	f[n] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW); n++;
	f[n] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					    offsetof(struct seccomp_data, nr)); n++;
	for (int i = 0; i < n_nrs; i++) {
		f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, futex2_nrs[i],
						    JUMP_TO(deny), 0);
		n++;
	}
	if (n_ops) {
		f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_futex, 0,
						    JUMP_TO(allow));
		n++;
		f[n] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg1); n++;
		for (int i = 0; i < n_ops; i++) {
			f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ops[i],
							    JUMP_TO(deny), 0);
			n++;
		}
	}
#undef JUMP_TO
	REQUIRE(n == allow, "filter layout: %d instructions before allow, expected %d", n, allow);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		return errno;
	return 0;
#else
	(void)refuse_futex_wait;
	return ENOTSUP;
#endif
}

/* In a child: installs the filter or exits with TEST_SKIP_CODE, saying why. */
static void filter_or_skip(bool refuse_futex_wait)
{
	int err = install_filter(refuse_futex_wait);
	if (err) {
		printf("SKIP: cannot install a seccomp filter: %s\n", strerror(err));
		fflush(stdout);
		_exit(TEST_SKIP_CODE);
	}
	/* The filter works: futex_wake (454) of nobody is refused. */
	uint32_t word = 0;
	long r = syscall(454, &word, 0xffffffffull, 0, 0x82);
	REQUIRE(r < 0 && errno == EPERM, "filter installed, futex_wake returned %ld (%s)", r,
		strerror(errno));
}

/* ---- contention: few waits per operation ---- */

struct contention {
	hl_mutex_t m;
	atomic_int stop;
	uint64_t inside;        /* plain: protected by m */
	atomic_ulong ops;
};

static void *contender(void *p)
{
	struct contention *c = p;
	unsigned long ops = 0;
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		REQUIRE(hl_mutex_lock(&c->m) == 0, "lock");
		c->inside++;
		/* Longer than the spin budget (20 us), so that waiters park. */
		int64_t until = now_ns() + CS_NS;
		while (now_ns() < until)
			;
		REQUIRE(hl_mutex_unlock(&c->m) == 0, "unlock");
		ops++;
	}
	atomic_fetch_add(&c->ops, ops);
	return NULL;
}

/* 4 threads, 0.3 s: the futex waits per operation. */
static int contend(const char *what)
{
	static struct contention c;
	pthread_t th[4];
	hl_futex_stats_t a, b;

	memset(&c, 0, sizeof(c));
	REQUIRE(hl_mutex_init(&c.m) == 0, "init");
	hl_futex_stats_total(&a);
	for (int i = 0; i < 4; i++)
		REQUIRE(pthread_create(&th[i], NULL, contender, &c) == 0, "pthread_create");
	sleep_ns(300 * NSEC_PER_MSEC); /* the length of the run */
	atomic_store(&c.stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	hl_futex_stats_total(&b);
	unsigned long ops = atomic_load(&c.ops);
	double per_op = ops ? (double)(b.wait - a.wait) / (double)ops : 1e9;
	printf("%s: interface %s, %lu operations, %llu futex waits (%.3f per op), %llu wakes\n",
	       what, hl_futex_interface(), ops, (unsigned long long)(b.wait - a.wait), per_op,
	       (unsigned long long)(b.wake - a.wake));
	CHECK(c.inside == ops, "%s: %llu increments inside the lock, %lu operations", what,
	      (unsigned long long)c.inside, ops);
	CHECK(ops > 0, "%s: no operation in 0.3 s", what);
	CHECK(per_op < MAX_WAITS_PER_OP, "%s: %.1f futex waits per lock operation (limit %.0f): "
	      "failing waits are retried at once", what, per_op, MAX_WAITS_PER_OP);
	CHECK(strcmp(hl_futex_interface(), "futex") == 0,
	      "%s: futex2 is refused, the library uses %s", what, hl_futex_interface());
	return test_finish(what);
}

static int child_refused_from_start(void *arg)
{
	(void)arg;
	filter_or_skip(false);
	return contend("(a) futex2 refused from the start");
}

static int child_refused_later(void *arg)
{
	(void)arg;
	const char *before = hl_futex_interface();
	printf("(b) before the filter: interface %s\n", before);
	if (strcmp(before, "futex2") != 0) {
		/* Only with HOTLOCK_FUTEX=futex2 (test_futex checks that it
		 * gets futex2 on a 6.7+ kernel). */
		printf("SKIP (b): the library does not use futex2 here; nothing to switch from\n");
		fflush(stdout);
		_exit(TEST_SKIP_CODE);
	}
	filter_or_skip(false);
	return contend("(b) futex2 refused after the probe");
}

/* ---- futex(2) refused as well: no busy loop ---- */

struct held {
	hl_mutex_t m;
	atomic_int held;
	atomic_llong released_ns;       /* when the holder unlocked */
	atomic_llong got_ns[2];         /* when each waiter got the lock */
	int rc[2];
};

static struct held H;

static void *holder(void *p)
{
	(void)p;
	REQUIRE(hl_mutex_lock(&H.m) == 0, "holder lock");
	atomic_store(&H.held, 1);
	sleep_ns(HOLD_NS); /* the hold the waiters wait out */
	atomic_store(&H.released_ns, now_ns());
	REQUIRE(hl_mutex_unlock(&H.m) == 0, "holder unlock");
	return NULL;
}

static void *waiter(void *p)
{
	int i = (int)(intptr_t)p;
	H.rc[i] = hl_mutex_lock(&H.m);
	atomic_store(&H.got_ns[i], now_ns());
	if (H.rc[i] == 0)
		hl_mutex_unlock(&H.m);
	return NULL;
}

static int child_futex_refused(void *arg)
{
	(void)arg;
	pthread_t h, w[2];
	struct timespec cpu0, cpu1;

	filter_or_skip(true);
	uint32_t word = 0;
	struct timespec dl = deadline_in(CLOCK_MONOTONIC, 50 * NSEC_PER_MSEC);
	int rc = hl_futex_wait(&word, 0, CLOCK_MONOTONIC, &dl);
	CHECK(rc == EPERM, "hl_futex_wait under a filter refusing it returned %d (%s), "
	      "expected EPERM", rc, strerror(rc));
	CHECK(strcmp(hl_futex_interface(), "futex") == 0, "futex2 is refused, interface %s",
	      hl_futex_interface());

	REQUIRE(hl_mutex_init(&H.m) == 0, "init");
	REQUIRE(pthread_create(&h, NULL, holder, NULL) == 0, "pthread_create");
	while (!atomic_load(&H.held))
		sched_yield();
	int64_t wall0 = now_ns();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&w[i], NULL, waiter, (void *)(intptr_t)i) == 0,
			"pthread_create");
	pthread_join(h, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
	int64_t wall = now_ns() - wall0, cpu = ts_to_ns(&cpu1) - ts_to_ns(&cpu0);
	printf("(c) futex(2) waits refused too: 2 waiters over a %.0f ms hold: %.1f ms CPU "
	       "(%.0f%% of one CPU)\n", wall / 1e6, cpu / 1e6, 100.0 * (double)cpu / (double)wall);
	for (int i = 0; i < 2; i++) {
		CHECK(H.rc[i] == 0, "waiter %d: hl_mutex_lock returned %d", i, H.rc[i]);
		CHECK(atomic_load(&H.got_ns[i]) >= atomic_load(&H.released_ns),
		      "waiter %d got the lock before the holder released it", i);
	}
	CHECK((double)cpu < MAX_CPU_SHARE * (double)wall,
	      "waiters burned %.1f ms of CPU in %.1f ms (limit %.0f%% of one CPU): a failing "
	      "futex wait is retried without a pause", cpu / 1e6, wall / 1e6, 100 * MAX_CPU_SHARE);
	return test_finish("(c) futex refused");
}

/* ---- parent ---- */

static char out[1 << 16];

static int count_lines(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static bool run(const char *name, int (*fn)(void *))
{
	return run_child_checked(name, fn, out, sizeof(out));
}

int main(void)
{
	/* No hotlock call here before the children: each child starts with
	 * the library unprobed. */
	run("(a)", child_refused_from_start);
	run("(b)", child_refused_later);
	if (run("(c)", child_futex_refused)) {
		int n = count_lines(out, "hotlock: futex wait fails with errno 1 (EPERM");
		CHECK(n == 1, "(c): the library said %d times that futex waits fail with EPERM, "
		      "expected once", n);
	}
	return test_finish("test_futex_seccomp");
}
