/* SPDX-License-Identifier: MIT */
/* hotlock-bench-futex-hash: one run in a fresh child process.  The child
 * sets the hash size before it has a thread, checks that the kernel took
 * it, runs the scenario's workload (hash.c, parked.c) and writes its sample
 * into a pipe; the parent waits for it by a deadline and kills a child that
 * does not answer. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hotlock/futex.h>

#include "fh.h"

/* What a child writes into the pipe; thread_ops[s.threads] follow it when
 * it ran (the sample's pointers are the child's: the parent replaces them). */
struct fh_wire {
	int status;             /* 0 ran; 1 skipped (why) */
	char why[200];
	struct fh_run run;
	struct bench_sample s;
};

/* ---- in the child ------------------------------------------------------ */

static void write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(3);
		c += w;
		n -= (size_t)w;
	}
}

static void *noop_thread(void *arg)
{
	return arg;
}

/* Sets the size (before any thread), creates and joins one thread, reads the
 * size back.  Returns false (and fills w->why) when the kernel did not take
 * it. */
static bool set_size(const struct fh_size *z, struct fh_wire *w)
{
	int err = 0;
	unsigned got = 0;
	pthread_t t;

	w->run.slots_first = -1;
	w->run.slots_after = -1;
	if (z->slots == FH_SIZE_GLOBAL)
		err = hl_futex_hash_set(0);
	else if (z->slots > 0)
		err = hl_futex_hash_set((unsigned)z->slots);
	if (err) {
		snprintf(w->why, sizeof w->why, "hl_futex_hash_set(%ld): %s",
			 z->slots > 0 ? z->slots : 0, strerror(err));
		return false;
	}
	bench_check(pthread_create(&t, NULL, noop_thread, NULL), "pthread_create (first thread)");
	bench_check(pthread_join(t, NULL), "pthread_join (first thread)");
	err = hl_futex_hash_get(&got);
	if (err) {
		snprintf(w->why, sizeof w->why, "hl_futex_hash_get: %s", strerror(err));
		return false;
	}
	w->run.slots_first = (int)got;
	if (z->slots == FH_SIZE_GLOBAL && got != 0) {
		snprintf(w->why, sizeof w->why, "asked for the global table, the kernel reports "
			 "a private one of %u slots", got);
		return false;
	}
	if (z->slots > 0 && got != (unsigned)z->slots) {
		snprintf(w->why, sizeof w->why, "asked for %ld slots, the kernel reports %u%s",
			 z->slots, got, got ? "" : " (global)");
		return false;
	}
	return true;
}

static _Noreturn void child(const struct fh_opts *o, const struct fh_size *z,
			    unsigned count, int fd)
{
	struct fh_wire w = { 0 };
	unsigned got;

	if (!set_size(z, &w)) {
		w.status = 1;
		write_all(fd, &w, sizeof w);
		_exit(0);
	}
	if (o->scenario == FH_HASH)
		fh_child_hash(o, z, count, &w.s);
	else
		fh_child_parked(o, z, count, &w.s, &w.run.parked);
	if (hl_futex_hash_get(&got) == 0)
		w.run.slots_after = (int)got;
	write_all(fd, &w, sizeof w);
	write_all(fd, w.s.thread_ops, w.s.threads * sizeof *w.s.thread_ops);
	_exit(0);
}

/* ---- in the parent ----------------------------------------------------- */

static bool read_all(int fd, void *p, size_t n, double deadline)
{
	char *c = p;

	while (n) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = deadline - bench_now();
		int pr;

		if (left <= 0)
			return false;
		pr = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			return false;
		ssize_t r = read(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		c += r;
		n -= (size_t)r;
	}
	return true;
}

static void reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/* The child did not answer in time, or its answer broke off: kills it and
 * exits 1 saying why. */
static _Noreturn void no_answer(const struct fh_opts *o, const struct fh_size *z,
				unsigned count, pid_t pid, double allowed)
{
	int status;

	kill(pid, SIGKILL);
	reap(pid, &status);
	if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
		bench_fatal("%s hash=%s %s=%u: the child was killed by signal %d (%s)", FH_ME,
			    z->name, fh_count_name(o), count, WTERMSIG(status),
			    strsignal(WTERMSIG(status)));
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		bench_fatal("%s hash=%s %s=%u: the child failed (exit %d; its message is "
			    "above)", FH_ME, z->name, fh_count_name(o), count,
			    WEXITSTATUS(status));
	bench_fatal("%s hash=%s %s=%u: no answer from the child within %.0f s; killed",
		    FH_ME, z->name, fh_count_name(o), count, allowed);
}

bool fh_run_child(const struct fh_opts *o, struct fh_size *z, unsigned count,
		  struct bench_sample *out)
{
	int pfd[2];
	pid_t pid;
	struct fh_wire w;
	int status;
	/* Setting up 1024 parked threads and joining them takes a while. */
	const double allowed = o->duration_s + 60 + (o->scenario == FH_PARKED ? 60 : 0);
	uint64_t *ops = NULL;
	bool ok;

	bench_check(pipe(pfd) ? errno : 0, "pipe");
	fflush(NULL);   /* the child must not write what the parent buffered */
	pid = fork();
	if (pid < 0)
		bench_fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		child(o, z, count, pfd[1]);
	}
	close(pfd[1]);
	ok = read_all(pfd[0], &w, sizeof w, bench_now() + allowed);
	if (ok && w.status == 0) {
		ops = bench_xcalloc(w.s.threads, sizeof *ops);
		ok = read_all(pfd[0], ops, w.s.threads * sizeof *ops, bench_now() + 10);
	}
	close(pfd[0]);
	if (!ok)
		no_answer(o, z, count, pid, allowed);
	reap(pid, &status);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		bench_fatal("%s hash=%s: the child ended badly (status 0x%x)", FH_ME, z->name,
			    status);
	if (w.status != 0) {
		z->skipped = true;
		snprintf(z->why, sizeof z->why, "%s", w.why);
		return false;
	}
	*out = w.s;
	out->thread_ops = ops;
	out->extra = bench_xcalloc(1, sizeof w.run);
	memcpy(out->extra, &w.run, sizeof w.run);
	return true;
}
