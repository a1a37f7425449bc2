/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the hotlock tests: time, a seeded RNG, checks that
 * report what failed, and the sanitizer switches.  Header-only (static
 * inline) so that every test binary stays one .c file plus the harness. */
#ifndef HOTLOCK_TESTS_COMMON_H
#define HOTLOCK_TESTS_COMMON_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <signal.h>

#ifndef HOTLOCK_SANITIZED
#define HOTLOCK_SANITIZED 0
#endif

#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif
#ifndef TEST_TSAN
#define TEST_TSAN 0
#endif

#define NSEC_PER_SEC  1000000000ll
#define NSEC_PER_MSEC 1000000ll
#define NSEC_PER_USEC 1000ll

static inline int64_t ts_to_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static inline struct timespec ns_to_ts(int64_t ns)
{
	struct timespec ts;
	ts.tv_sec = (time_t)(ns / NSEC_PER_SEC);
	ts.tv_nsec = (long)(ns % NSEC_PER_SEC);
	if (ts.tv_nsec < 0) {
		ts.tv_nsec += NSEC_PER_SEC;
		ts.tv_sec--;
	}
	return ts;
}

static inline int64_t clock_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return ts_to_ns(&ts);
}

static inline int64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* An absolute deadline rel_ns from now on clock clk. */
static inline struct timespec deadline_in(clockid_t clk, int64_t rel_ns)
{
	return ns_to_ts(clock_ns(clk) + rel_ns);
}

static inline void sleep_ns(int64_t ns)
{
	struct timespec ts = ns_to_ts(ns);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static inline uint32_t test_gettid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* One pause of a spin loop (the instruction, where there is one). */
static inline void test_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* splitmix64: seeds the per-thread generators from one printed seed. */
static inline uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* xorshift64*: a small fast generator, one per thread. */
typedef struct { uint64_t s; } test_rng_t;

static inline void rng_seed(test_rng_t *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull);
	r->s = splitmix64(&x) | 1;
}

static inline uint64_t rng_next(test_rng_t *r)
{
	uint64_t x = r->s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, n) (n > 0); the bias is irrelevant here. */
static inline uint64_t rng_below(test_rng_t *r, uint64_t n)
{
	return (rng_next(r) >> 11) % n;
}

/* The seed every test prints: HOTLOCK_SEED from the environment (decimal or
 * 0x hex), else the fixed default, so that runs are repeatable. */
static inline uint64_t test_seed(uint64_t dflt)
{
	const char *s = getenv("HOTLOCK_SEED");
	if (s && *s)
		return strtoull(s, NULL, 0);
	return dflt;
}

/* A non-negative integer from the environment, or dflt. */
static inline long env_long(const char *name, long dflt)
{
	const char *s = getenv(name);
	char *end;
	long v;
	if (!s || !*s)
		return dflt;
	v = strtol(s, &end, 0);
	if (*end || v < 0) {
		fprintf(stderr, "%s=%s is not a non-negative number; using %ld\n",
			name, s, dflt);
		return dflt;
	}
	return v;
}

static inline long online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? n : 1;
}

/* Failure accounting: CHECK() reports and counts, the test goes on, and
 * test_finish() turns the count into the exit status.  Atomic: worker
 * threads check too. */
static _Atomic int test_failures __attribute__((unused));
static _Atomic int test_checks __attribute__((unused));

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		test_checks++;                                               \
		if (!(cond)) {                                               \
			test_failures++;                                     \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,        \
				__LINE__, #cond);                            \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			fflush(stderr);                                      \
		}                                                            \
	} while (0)

/* An int-returning call expected to give exactly `want` (0 or an errno). */
#define CHECK_RC(call, want)                                                 \
	do {                                                                 \
		int rc_ = (call);                                            \
		CHECK(rc_ == (want), "%s returned %d (%s), expected %d (%s)", \
		      #call, rc_, rc_ ? strerror(rc_) : "0", (want),         \
		      (want) ? strerror(want) : "0");                        \
	} while (0)

/* For setup steps after which going on makes no sense. */
#define REQUIRE(cond, ...)                                                   \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "FATAL %s:%d: %s: ", __FILE__,       \
				__LINE__, #cond);                            \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			exit(2);                                             \
		}                                                            \
	} while (0)

static inline int test_finish(const char *name)
{
	if (test_failures) {
		fprintf(stderr, "%s: FAILED: %d of %d checks failed\n", name,
			test_failures, test_checks);
		return 1;
	}
	printf("%s: OK (%d checks)\n", name, test_checks);
	return 0;
}

/* ---- child processes ---- */

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

/* Waits for child pid for at most timeout_ms; kills it (SIGKILL) when the
 * time passes.  Returns 0 with *status filled when it exited on its own, -1
 * when it had to be killed. */
static inline int reap_with_timeout(pid_t pid, int64_t timeout_ms, int *status)
{
	int64_t end = now_ns() + timeout_ms * NSEC_PER_MSEC;
	for (;;) {
		pid_t p = waitpid(pid, status, WNOHANG);
		if (p == pid)
			return 0;
		REQUIRE(p == 0 || errno == EINTR, "waitpid: %s", strerror(errno));
		if (now_ns() > end) {
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			return -1;
		}
		sleep_ns(2 * NSEC_PER_MSEC); /* polling a child: not synchronisation */
	}
}

/* Runs fn(arg) in a forked child with its stdout and stderr captured into
 * out (NUL-terminated, truncated to outlen - 1); the child exits with fn's
 * return value.  Returns 0 and the wait status in *status, or -1 when the
 * child ran past timeout_ms and was killed.  Call it while the process has
 * one thread. */
static inline int run_in_child(int (*fn)(void *), void *arg, int64_t timeout_ms,
			       char *out, size_t outlen, int *status)
{
	int fds[2];
	size_t used = 0;
	int64_t end = now_ns() + timeout_ms * NSEC_PER_MSEC;
	bool killed = false;
	pid_t pid;

	REQUIRE(outlen > 0, "outlen");
	REQUIRE(pipe(fds) == 0, "pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[1]);
		setvbuf(stdout, NULL, _IOLBF, 0);
		int rc = fn(arg);
		fflush(stdout);
		fflush(stderr);
		_exit(rc);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int64_t left = (end - now_ns()) / NSEC_PER_MSEC;
		char tmp[4096];
		ssize_t n;
		if (left <= 0) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		if (poll(&pfd, 1, (int)(left > 1000 ? 1000 : left)) <= 0)
			continue;
		n = read(fds[0], tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EOF: the child (and any thread of it) is gone */
		if (used < outlen - 1) {
			size_t k = (size_t)n < outlen - 1 - used ? (size_t)n : outlen - 1 - used;
			memcpy(out + used, tmp, k);
			used += k;
		}
	}
	out[used] = 0;
	close(fds[0]);
	if (killed) {
		while (waitpid(pid, status, 0) < 0 && errno == EINTR)
			;
		return -1;
	}
	return reap_with_timeout(pid, end > now_ns() ? (end - now_ns()) / NSEC_PER_MSEC + 1 : 1000,
				 status);
}

/* "exited with status 3", "killed by signal 9" */
static inline const char *describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "wait status 0x%x", status);
	return buf;
}

/* A child's exit status that means "skipped, and why is in its output". */
#define TEST_SKIP_CODE 77

/* run_in_child(fn, NULL) with a 30 s limit, its output printed (and left
 * in out): false if it was killed at the limit (a failed check) or
 * skipped; true otherwise, after a check that it exited with 0. */
static inline bool run_child_checked(const char *name, int (*fn)(void *), char *out,
				     size_t outlen)
{
	int status;
	char buf[128];
	int r = run_in_child(fn, NULL, 30000, out, outlen, &status);
	fputs(out, stdout);
	if (r != 0) {
		CHECK(false, "%s: the child ran past 30 s and was killed", name);
		return false;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP_CODE)
		return false;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child %s", name,
	      describe_status(status, buf, sizeof(buf)));
	return true;
}

/* The scheduler state of thread tid ('R', 'S', ...), from /proc. */
static inline char thread_state(uint32_t tid)
{
	char path[64], buf[512];
	FILE *f;
	char *p;
	snprintf(path, sizeof(path), "/proc/self/task/%u/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')) || p[1] != ' ')
		return '?';
	return p[2];
}


/* A phase watchdog for API tests, where a call that blocks where it must
 * not (a destroy that waits instead of saying EBUSY, a wait that should
 * have failed) would hang the test with no word of where: each test names
 * its phase with set_phase, and an alarm fails the run (exit 2) with that
 * name when a phase lasts longer than TEST_PHASE_S seconds. */
#define TEST_PHASE_S 45
#define TEST_STR_(x) #x
#define TEST_STR(x) TEST_STR_(x)

static inline const char *volatile *test_phase_slot(void)
{
	static const char *volatile phase = "start";
	return &phase;
}

static inline void test_phase_alarm(int sig)
{
	const char *p = *test_phase_slot();
	const char *prog = program_invocation_short_name;
	static const char a[] = "FATAL (hang): ";
	static const char b[] = ": no end of phase \"";
	static const char c[] = "\" after " TEST_STR(TEST_PHASE_S) " s\n";
	(void)sig;
	if (write(2, a, sizeof(a) - 1) < 0 || write(2, prog, strlen(prog)) < 0 ||
	    write(2, b, sizeof(b) - 1) < 0 || write(2, p, strlen(p)) < 0 ||
	    write(2, c, sizeof(c) - 1) < 0)
		_exit(2);
	_exit(2);
}

static inline void set_phase(const char *name)
{
	fflush(stdout);
	*test_phase_slot() = name;
	signal(SIGALRM, test_phase_alarm);
	alarm(TEST_PHASE_S);
}

#endif
