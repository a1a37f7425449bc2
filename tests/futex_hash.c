/* SPDX-License-Identifier: MIT */
/* The futex hash control (hl_futex_hash_get/set, HOTLOCK_FUTEX_HASH),
 * against the running kernel, each case in a fresh child process (a
 * private table, once made, and the switch to the global one stay with a
 * process):
 *  (a) sizes: 0, 1, 3, 6, 2^31 + 1 are refused with EINVAL before the
 *      kernel is asked; 2, 64, 4096 are set and read back, in a process
 *      without threads and after it has some;
 *  (b) the switch to global, made while another thread runs: get says 0,
 *      and a later set is refused (EBUSY: one-way);
 *  (c) the fallback: HOTLOCK_FUTEX=futex (the futex layer's switch for a
 *      kernel before futex2) and a seccomp filter that answers the prctl
 *      with EINVAL as a kernel without it does: get and set say ENOSYS,
 *      and a contended hl_mutex still works;
 *  (d) HOTLOCK_FUTEX_HASH at load (the test re-executes itself with it
 *      set): global, 256, auto and unset give the table asked for; bad
 *      values (3, x, -4, 2^31) give one line on stderr and are ignored;
 *  (e) auto grows the table with the threads that start through
 *      hl_thread_init (as the shim starts every thread): 80 threads that
 *      each wait on a contended hl_mutex leave at least 320 slots (4 per
 *      thread; auto starts past 64 threads);
 *  (f) a size the program set with its own prctl (128) is kept while 12,
 *      then 40 threads wait on a contended hl_mutex (auto stops);
 *  (g) auto never makes the table smaller than the kernel's answer before:
 *      after a raw prctl of 4096 slots, and from the kernel's default, the
 *      size read after each of 80 threads parks never goes down;
 *  (h) auto works in a fork child: a parent that grew the table and let
 *      its threads exit forks, and 80 waiting threads of the child grow
 *      the child's table (which the kernel starts afresh) to 320 or more;
 *      the same after _Fork(), which runs no atfork handler;
 *  (i) hl_futex_hash_set wins over auto resizes in flight: 100 threads
 *      start waiting (the library resizes) while the program sets 64;
 *      once they are parked the table has 64 slots (a race: the old code
 *      failed it most of the time, not always).
 * Each case checks the size once the threads are parked (their state in
 * /proc is S), never after a fixed sleep.
 * Skipped with a message on a kernel without PR_FUTEX_HASH (before 6.16);
 * (f)-(i) also where HOTLOCK_FUTEX_HASH or HOTLOCK_FUTEX asks for another
 * policy than auto, and where the raw prctl cannot set a size. */
#include "common.h"

#include <hotlock/thread.h>

#include <hotlock/hotlock.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/prctl.h>


static unsigned get_slots(void)
{
	unsigned s = 12345;
	int err = hl_futex_hash_get(&s);
	REQUIRE(err == 0, "hl_futex_hash_get: %s", strerror(err));
	return s;
}

/* A thread that sleeps until told, so that the process has two. */
static _Atomic int release_sleeper;
static void *sleeper(void *arg)
{
	while (!atomic_load(&release_sleeper))
		sleep_ns(1000000);
	return arg;
}

static pthread_t start_sleeper(void)
{
	pthread_t t;
	atomic_store(&release_sleeper, 0);
	REQUIRE(pthread_create(&t, NULL, sleeper, NULL) == 0, "pthread_create");
	return t;
}

static void stop_sleeper(pthread_t t)
{
	atomic_store(&release_sleeper, 1);
	pthread_join(t, NULL);
}

/* ---- (a), (b) ---- */

static int child_sizes(void *arg)
{
	(void)arg;
	const unsigned bad[] = { 1, 3, 6, 100, 0x80000001u };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = hl_futex_hash_set(bad[i]);
		CHECK(err == EINVAL, "set %u: %s, expected EINVAL", bad[i], strerror(err));
	}
	CHECK(hl_futex_hash_get(NULL) == EINVAL, "get(NULL) is not EINVAL");
	int err = hl_futex_hash_set(64);
	CHECK(err == 0, "set 64 with no threads: %s", strerror(err));
	CHECK(get_slots() == 64, "get after set 64: %u", get_slots());
	pthread_t t = start_sleeper();
	CHECK(get_slots() == 64, "get after a thread was created: %u", get_slots());
	const unsigned good[] = { 2, 4096, 16 };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		err = hl_futex_hash_set(good[i]);
		CHECK(err == 0, "set %u with a thread running: %s", good[i], strerror(err));
		/* The kernel switches tables once the old one is out of use:
		 * give it a moment. */
		unsigned s = 0;
		for (int k = 0; k < 1000 && (s = get_slots()) != good[i]; k++)
			sleep_ns(1000000);
		CHECK(s == good[i], "get after set %u: %u", good[i], s);
	}
	stop_sleeper(t);
	return test_finish("test_futex_hash (a)");
}

static int child_one_way(void *arg)
{
	(void)arg;
	pthread_t t = start_sleeper();
	CHECK(get_slots() >= 2, "a process with a thread has no private table: %u", get_slots());
	int err = hl_futex_hash_set(0);
	CHECK(err == 0, "set 0 (global): %s", strerror(err));
	CHECK(get_slots() == 0, "get after the switch to global: %u", get_slots());
	err = hl_futex_hash_set(64);
	CHECK(err == EBUSY, "set 64 after the switch to global: %s, expected EBUSY", strerror(err));
	CHECK(get_slots() == 0, "get after the refused set: %u", get_slots());
	stop_sleeper(t);
	return test_finish("test_futex_hash (b)");
}

/* ---- (c) ---- */

static hl_mutex_t contended;
static long counter;
static void *contender(void *arg)
{
	for (int i = 0; i < 20000; i++) {
		hl_mutex_lock(&contended);
		counter++;
		hl_mutex_unlock(&contended);
	}
	return arg;
}

static void contend(void)
{
	pthread_t t[4];
	counter = 0;
	for (int i = 0; i < 4; i++)
		REQUIRE(pthread_create(&t[i], NULL, contender, NULL) == 0, "pthread_create");
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(counter == 80000, "contended hl_mutex: counter %ld, expected 80000", counter);
}

static void expect_enosys(const char *how)
{
	unsigned s;
	int err = hl_futex_hash_get(&s);
	CHECK(err == ENOSYS, "%s: get: %s, expected ENOSYS", how, strerror(err));
	err = hl_futex_hash_set(64);
	CHECK(err == ENOSYS, "%s: set 64: %s, expected ENOSYS", how, strerror(err));
	err = hl_futex_hash_set(3);
	CHECK(err == EINVAL, "%s: set 3: %s, expected EINVAL", how, strerror(err));
	contend();
}

static int child_legacy(void *arg)
{
	(void)arg;
	setenv("HOTLOCK_FUTEX", "futex", 1);
	expect_enosys("HOTLOCK_FUTEX=futex");
	return test_finish("test_futex_hash (c) HOTLOCK_FUTEX=futex");
}

#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* prctl(78, ...) answered with EINVAL, as by a kernel without the option. */
static int install_filter(void)
{
#ifdef TEST_AUDIT_ARCH
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint32_t arg0 = offsetof(struct seccomp_data, args[0]);
#else
	const uint32_t arg0 = offsetof(struct seccomp_data, args[0]) + 4;
#endif
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 78, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = (unsigned short)(sizeof(f) / sizeof(f[0])), .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		return errno;
	return 0;
#else
	return ENOTSUP;
#endif
}

static int child_seccomp(void *arg)
{
	(void)arg;
	int err = install_filter();
	if (err) {
		printf("SKIP: cannot install a seccomp filter: %s\n", strerror(err));
		fflush(stdout);
		_exit(TEST_SKIP_CODE);
	}
	REQUIRE(prctl(78, 2, 0, 0, 0) < 0 && errno == EINVAL, "the filter does not refuse the prctl");
	expect_enosys("prctl refused (EINVAL)");
	return test_finish("test_futex_hash (c) seccomp");
}

/* ---- threads parked on a held hl_mutex ---- */

/* Threads that lock `gate` while the main thread holds it: each goes the
 * slow way, which registers it with the library (thread.c), and parks. */
#define MAX_PARKED 256
static hl_mutex_t gate;
static struct parked {
	pthread_t thread;
	_Atomic uint32_t tid;
} parked[MAX_PARKED];
static int nparked;

static void *gate_waiter(void *arg)
{
	struct parked *p = arg;
	/* Where the thread starts, as the shim does for every thread: auto
	 * sizes the table there, outside lock calls. */
	REQUIRE(hl_thread_init() == 0, "hl_thread_init");
	atomic_store(&p->tid, test_gettid());
	hl_mutex_lock(&gate);
	hl_mutex_unlock(&gate);
	return NULL;
}

/* The caller holds gate.  Starts n more waiters. */
static void start_waiters(int n)
{
	/* A call that registers this thread, so that the library's arenas
	 * are set up before the waiters start: a waiter that waited for the
	 * set-up (pthread_once) would look parked before it registered. */
	unsigned ignored;
	(void)hl_futex_hash_get(&ignored);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	REQUIRE(nparked + n <= MAX_PARKED, "too many waiters");
	for (int i = 0; i < n; i++, nparked++) {
		struct parked *p = &parked[nparked];
		atomic_store(&p->tid, 0);
		REQUIRE(pthread_create(&p->thread, &attr, gate_waiter, p) == 0, "pthread_create");
	}
	pthread_attr_destroy(&attr);
}

/* Waits (at most 10 s) until every waiter is asleep in the kernel (S in
 * /proc): parked on its node, so registered, and done with whatever its
 * registration did (a resize is D, uninterruptible, in the kernel). */
static void wait_parked(void)
{
	int64_t end = now_ns() + 10 * NSEC_PER_SEC;
	for (int i = 0; i < nparked;) {
		uint32_t tid = atomic_load(&parked[i].tid);
		if (tid && thread_state(tid) == 'S') {
			i++;
			continue;
		}
		REQUIRE(now_ns() < end, "waiter %d (TID %u) not parked after 10 s (state %c)", i,
			tid, tid ? thread_state(tid) : '?');
		sleep_ns(200 * NSEC_PER_USEC);
	}
}

static void park_more(int n)
{
	start_waiters(n);
	wait_parked();
}

/* Lets every waiter through and joins it; the caller held gate. */
static void unpark_all(void)
{
	hl_mutex_unlock(&gate);
	for (int i = 0; i < nparked; i++)
		pthread_join(parked[i].thread, NULL);
	nparked = 0;
}

/* The kernel's answer, asked directly: hl_futex_hash_get would register
 * the calling thread with the library (it counts its syscall there). */
static int raw_get(void)
{
	return prctl(78, 2, 0, 0, 0);
}

static int raw_set(unsigned slots)
{
	return prctl(78, 1, (unsigned long)slots, 0, 0) == 0 ? 0 : errno;
}

/* ---- (d), (e): re-executed with HOTLOCK_FUTEX_HASH set ---- */

/* argv: --env-child THREADS.  Creates THREADS threads that wait on a held
 * hl_mutex (each registers with the library), then prints the slots. */
static int env_child(int threads)
{
	hl_mutex_lock(&gate);
	park_more(threads);
	unsigned s = get_slots();
	unpark_all();
	printf("slots=%u\n", s);
	return 0;
}

struct env_case {
	const char *value;      /* NULL: unset */
	int threads;
	unsigned min, max;      /* the slots expected */
	bool complaint;         /* one "ignoring" line on stderr */
};

static const struct env_case *current_case;

static int child_env(void *arg)
{
	(void)arg;
	const struct env_case *c = current_case;
	if (c->value)
		setenv("HOTLOCK_FUTEX_HASH", c->value, 1);
	else
		unsetenv("HOTLOCK_FUTEX_HASH");
	dup2(1, 2);     /* stderr into the captured output */
	char threads[16];
	snprintf(threads, sizeof(threads), "%d", c->threads);
	execl("/proc/self/exe", "test_futex_hash", "--env-child", threads, (char *)NULL);
	printf("exec: %s\n", strerror(errno));
	return 1;
}

/* ---- (f)-(i): auto against the program's own choices ---- */

/* A raw prctl of the program's own, as a program that does not know of
 * hotlock would make it. */
static void program_sets(unsigned slots)
{
	int err = raw_set(slots);
	if (err) {
		printf("SKIP: prctl(PR_FUTEX_HASH, SET_SLOTS, %u): %s\n", slots, strerror(err));
		fflush(stdout);
		_exit(TEST_SKIP_CODE);
	}
	CHECK(raw_get() == (int)slots, "get after the program's set %u: %d", slots, raw_get());
}

static int child_program_size(void *arg)
{
	(void)arg;
	program_sets(128);
	hl_mutex_lock(&gate);
	park_more(12);
	int s = raw_get();
	CHECK(s == 128, "12 waiting threads: %d slots, expected the program's 128", s);
	park_more(28);
	s = raw_get();
	CHECK(s == 128, "40 waiting threads: %d slots, expected the program's 128", s);
	unpark_all();
	return test_finish("test_futex_hash (f)");
}

/* Parks n waiters one at a time; the size read after each is never below
 * the size read before it. */
static void park_one_by_one(int n, const char *how)
{
	for (int i = 0; i < n; i++) {
		int before = raw_get();
		park_more(1);
		int after = raw_get();
		CHECK(after >= before, "%s: %d slots before waiter %d parked, %d after", how,
		      before, nparked, after);
		if (after < before)
			break;  /* one line says it */
	}
}

static int child_never_smaller(void *arg)
{
	(void)arg;
	program_sets(4096);
	hl_mutex_lock(&gate);
	park_one_by_one(40, "after the program's 4096");
	int s = raw_get();
	CHECK(s == 4096, "40 waiting threads: %d slots, expected the program's 4096", s);
	unpark_all();
	return test_finish("test_futex_hash (g) after a raw set");
}

static int child_never_smaller_default(void *arg)
{
	(void)arg;
	hl_mutex_lock(&gate);
	park_one_by_one(80, "from the kernel's default");
	int s = raw_get();
	CHECK(s >= 320, "80 waiting threads: %d slots, expected 4 per thread (320) or more", s);
	unpark_all();
	return test_finish("test_futex_hash (g) from the default");
}

static int child_fork(void *arg)
{
	bool raw = arg != NULL;
	hl_mutex_lock(&gate);
	park_more(80);
	int s = raw_get();
	CHECK(s >= 320, "parent, 80 waiting threads: %d slots, expected 320 or more", s);
	unpark_all();
	fflush(stdout);
	fflush(stderr);
	/* _Fork() runs no atfork handler, the library's neither (the
	 * parent has one thread now, so the child may do anything). */
	pid_t pid = raw ? _Fork() : fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* The kernel gives a fork child no table until its first
		 * thread, then its default: the parent's size stays behind. */
		hl_mutex_lock(&gate);
		park_more(80);
		int c = raw_get();
		CHECK(c >= 320, "%s child, 80 waiting threads: %d slots, expected 320 or more",
		      raw ? "_Fork" : "fork", c);
		unpark_all();
		int rc = test_finish(raw ? "test_futex_hash (h) _Fork child"
				     : "test_futex_hash (h) fork child");
		fflush(stdout);
		_exit(rc);
	}
	int status;
	char buf[128];
	CHECK(reap_with_timeout(pid, 20000, &status) == 0, "the fork child ran past 20 s");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork child %s",
	      describe_status(status, buf, sizeof(buf)));
	return test_finish("test_futex_hash (h)");
}

static int child_set_races_auto(void *arg)
{
	(void)arg;
	hl_mutex_lock(&gate);
	start_waiters(100);     /* registering, and resizing past 64, from now on */
	int err = hl_futex_hash_set(64);
	CHECK(err == 0, "set 64 while threads start waiting: %s", strerror(err));
	wait_parked();
	int s = raw_get();
	CHECK(s == 64, "the program set 64 while 100 threads started waiting: %d slots", s);
	unpark_all();
	s = raw_get();
	CHECK(s == 64, "the program set 64, after its threads ran: %d slots", s);
	return test_finish("test_futex_hash (i)");
}

/* (f)-(i) need the library's auto policy. */
static const char *not_auto(void)
{
	const char *h = getenv("HOTLOCK_FUTEX_HASH");
	if (h && *h && strcmp(h, "auto") != 0)
		return "HOTLOCK_FUTEX_HASH is set";
	const char *f = getenv("HOTLOCK_FUTEX");
	if (f && strcmp(f, "futex") == 0)
		return "HOTLOCK_FUTEX=futex";
	return NULL;
}

static char out[1 << 14];

/* Each case counts its own checks: a child starts from the parent's
 * counts, failures of earlier cases included. */
static int (*current_fn)(void *);
static void *current_arg;
static int fresh_counts(void *arg)
{
	(void)arg;
	test_failures = 0;
	test_checks = 0;
	return current_fn(current_arg);
}

static bool run(const char *name, int (*fn)(void *))
{
	current_fn = fn;
	return run_child_checked(name, fresh_counts, out, sizeof(out));
}

static int count(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--env-child") == 0)
		return env_child(atoi(argv[2]));
	if (prctl(78, 2, 0, 0, 0) < 0 && errno == EINVAL) {
		printf("SKIP: this kernel has no PR_FUTEX_HASH (Linux 6.16+)\n");
		return TEST_SKIP_CODE;
	}
	run("(a) sizes", child_sizes);
	run("(b) one-way", child_one_way);
	run("(c) HOTLOCK_FUTEX=futex", child_legacy);
	run("(c) seccomp", child_seccomp);
	const char *why = not_auto();
	if (why) {
		printf("SKIP (f)-(i): %s (they need the auto policy)\n", why);
	} else {
		run("(f) the program's own size", child_program_size);
		run("(g) never smaller, after a raw set", child_never_smaller);
		run("(g) never smaller, from the default", child_never_smaller_default);
		run("(h) fork child", child_fork);
		current_arg = "raw";
		run("(h) _Fork child", child_fork);
		current_arg = NULL;
		for (int i = 0; i < 3; i++)
			run("(i) set against auto", child_set_races_auto);
	}

	const struct env_case cases[] = {
		{ "global", 4, 0, 0, false },
		{ "256", 4, 256, 256, false },
		{ "2", 4, 2, 2, false },
		{ "auto", 4, 16, 64, false },
		{ NULL, 4, 16, 64, false },
		{ "3", 4, 16, 64, true },
		{ "x", 4, 16, 64, true },
		{ "-4", 4, 16, 64, true },
		{ "2147483648", 4, 16, 64, true },
		{ "auto", 80, 320, 1u << 16, false },   /* (e) */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct env_case *c = &cases[i];
		char name[64];
		snprintf(name, sizeof(name), "(d) HOTLOCK_FUTEX_HASH=%s, %d threads",
			 c->value ? c->value : "(unset)", c->threads);
		current_case = c;
		if (!run(name, child_env))
			continue;
		const char *p = strstr(out, "slots=");
		unsigned s = p ? (unsigned)strtoul(p + 6, NULL, 10) : 99999;
		CHECK(p && s >= c->min && s <= c->max, "%s: slots %u, expected %u..%u", name, s,
		      c->min, c->max);
		int lines = count(out, "hotlock: ignoring HOTLOCK_FUTEX_HASH=");
		CHECK(lines == (c->complaint ? 1 : 0), "%s: %d complaints on stderr, expected %d",
		      name, lines, c->complaint ? 1 : 0);
	}
	return test_finish("test_futex_hash");
}
