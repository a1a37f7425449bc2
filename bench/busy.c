/* SPDX-License-Identifier: MIT */
/* hotlock-bench --busy N: N CPU-bound processes beside the runs (see
 * harness.h).
 *
 * Each is a fork of hotlock-bench that spins on arithmetic until it is
 * killed: SCHED_OTHER at nice 0, with no affinity of its own (it inherits
 * the bench's mask, all CPUs unless the bench was started under taskset).
 * None may outlive the bench:
 *   - it asks for SIGKILL when the thread that forked it (the main thread)
 *     dies, and checks that its parent is still the bench after asking, for
 *     the bench dying in between;
 *   - bench_busy_stop kills and reaps them; it runs at the end of the runs,
 *     at exit (atexit: every error exit goes through exit), and on SIGINT,
 *     SIGTERM and SIGHUP, whose handlers kill and reap them and then die of
 *     the signal as before.
 * Their CPU time is read from their CPU clocks, so that the harness can
 * leave it out of the "other load" it reports (which is there to flag load
 * the bench did not ask for). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t busy_pid[BENCH_MAX_BUSY];
static clockid_t busy_clock[BENCH_MAX_BUSY];
static bool busy_clock_ok[BENCH_MAX_BUSY];
static unsigned busy_n;         /* started (the count asked for) */
static pid_t busy_owner;        /* the bench; a fork of it stops none */
static int busy_nice;           /* what the processes run at */
static bool busy_policy_other = true;
static bool busy_handlers;      /* atexit and the signal handlers are in */

/* What a busy process reports once it is set up. */
struct busy_status {
	int policy;             /* sched_getscheduler */
	int nice;               /* getpriority */
};

const int bench_end_signals[BENCH_END_SIGNALS] = { SIGINT, SIGTERM, SIGHUP };

void bench_catch_end_signals(void (*handler)(int), struct sigaction *old)
{
	for (size_t i = 0; i < BENCH_END_SIGNALS; i++) {
		struct sigaction sa, before;

		if (sigaction(bench_end_signals[i], NULL, &before) != 0) {
			memset(&before, 0, sizeof before);
			before.sa_handler = SIG_DFL;
		}
		if (old)
			old[i] = before;
		/* A signal the bench was started to ignore (nohup) stays so. */
		if (before.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = handler;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		sigaction(bench_end_signals[i], &sa, NULL);
	}
}

/* Kills and reaps every busy process; async-signal-safe (kill, waitpid). */
static void busy_kill_all(void)
{
	if (getpid() != busy_owner)
		return;
	for (unsigned i = 0; i < BENCH_MAX_BUSY; i++)
		if (busy_pid[i] > 0)
			kill(busy_pid[i], SIGKILL);
	for (unsigned i = 0; i < BENCH_MAX_BUSY; i++)
		if (busy_pid[i] > 0) {
			while (waitpid(busy_pid[i], NULL, 0) < 0 && errno == EINTR)
				;
			busy_pid[i] = 0;
		}
}

static void busy_on_signal(int sig)
{
	const int saved = errno;

	busy_kill_all();
	/* Then die of the signal, as without the handler. */
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

static void busy_atexit(void)
{
	busy_kill_all();
}

static void busy_block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < BENCH_END_SIGNALS; i++)
		sigaddset(&set, bench_end_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

static void install_handlers(void)
{
	if (busy_handlers)
		return;
	busy_handlers = true;
	if (atexit(busy_atexit) != 0)
		bench_fatal("--busy: atexit failed");
	bench_catch_end_signals(busy_on_signal, NULL);
}

/* The body of a busy process: never returns. */
static _Noreturn void busy_child(pid_t parent, int fd)
{
	struct sched_param sp = { .sched_priority = 0 };
	struct busy_status st;
	sigset_t none;
	uint64_t x = 0x9E3779B97F4A7C15ull;

	/* Killed with the thread that forked it (the bench's main thread);
	 * if the bench died before this call, the parent is someone else. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	/* Its name in ps and top (and for pgrep -x). */
	prctl(PR_SET_NAME, "hotlock-busy");
	for (size_t i = 0; i < BENCH_END_SIGNALS; i++)
		signal(bench_end_signals[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Normal priority, whatever the bench's main thread runs at. */
	if (sched_getscheduler(0) != SCHED_OTHER)
		(void)sched_setscheduler(0, SCHED_OTHER, &sp);
	errno = 0;
	if (getpriority(PRIO_PROCESS, 0) != 0 || errno != 0)
		(void)setpriority(PRIO_PROCESS, 0, 0);
	st.policy = sched_getscheduler(0);
	errno = 0;
	st.nice = getpriority(PRIO_PROCESS, 0);
	if (write(fd, &st, sizeof st) != (ssize_t)sizeof st)
		_exit(0);
	/* No descriptor of the bench's held open (a pipe a caller reads to its
	 * end, the JSON file). */
	if (close_range(0, ~0u, 0) != 0)
		for (int i = 0; i < 1024; i++)
			close(i);
	for (;;) {
		for (unsigned i = 0; i < (1u << 20); i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
	}
}

void bench_busy_start(unsigned n)
{
	const pid_t self = getpid();
	sigset_t old;
	int fds[2];

	if (n == 0 || busy_n > 0)
		return;
	if (n > BENCH_MAX_BUSY)
		bench_fatal("--busy %u: at most %u (internal error)", n, BENCH_MAX_BUSY);
	busy_owner = self;
	install_handlers();
	if (pipe2(fds, O_CLOEXEC) != 0)
		bench_fatal("--busy: pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	/* The signals wait until every pid is recorded, so that a handler
	 * kills them all. */
	busy_block(&old);
	for (unsigned i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			close(fds[0]);
			busy_child(self, fds[1]);
		}
		if (pid < 0) {
			int err = errno;

			close(fds[0]);
			close(fds[1]);
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			bench_fatal("--busy %u: fork (process %u of %u): %s", n, i + 1, n,
				    strerror(err));
		}
		busy_pid[i] = pid;
		busy_clock_ok[i] = clock_getcpuclockid(pid, &busy_clock[i]) == 0;
		busy_n = i + 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	/* Every one set up (and so spinning) before the runs start. */
	for (unsigned i = 0; i < n; i++) {
		struct busy_status st;
		size_t got = 0;

		while (got < sizeof st) {
			ssize_t r = read(fds[0], (char *)&st + got, sizeof st - got);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				close(fds[0]);
				bench_fatal("--busy %u: a busy process ended before it "
					    "started spinning", n);
			}
			got += (size_t)r;
		}
		if (st.policy != SCHED_OTHER)
			busy_policy_other = false;
		if (i == 0 || st.nice > busy_nice)
			busy_nice = st.nice;
	}
	close(fds[0]);
}

void bench_busy_stop(void)
{
	sigset_t old;

	busy_block(&old);
	busy_kill_all();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

unsigned bench_busy_count(void)
{
	return busy_n;
}

double bench_busy_cpu_s(void)
{
	double sum = 0;

	for (unsigned i = 0; i < busy_n; i++) {
		struct timespec ts;

		/* A process already reaped (after bench_busy_stop) has no clock. */
		if (busy_pid[i] <= 0)
			continue;
		if (!busy_clock_ok[i] || clock_gettime(busy_clock[i], &ts) != 0)
			return NAN;
		sum += (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
	}
	return sum;
}

void bench_busy_note(FILE *f)
{
	if (busy_n == 0)
		return;
	fprintf(f, "load: %u CPU-bound process%s beside the runs (--busy %u)", busy_n,
		busy_n == 1 ? "" : "es", busy_n);
	if (busy_nice != 0 || !busy_policy_other)
		fprintf(f, "; they run at nice %d%s, not nice 0 under SCHED_OTHER (the "
			"bench's own priority could not be undone here)", busy_nice,
			busy_policy_other ? "" : " under another policy");
	fputc('\n', f);
}

void bench_json_busy(struct bench_json *j)
{
	bench_json_uint(j, "busy", busy_n);
	if (busy_n > 0)
		bench_json_number(j, "busy_nice", busy_nice);
}
