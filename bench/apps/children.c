/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: the programs' processes: their command lines,
 * spawning them (under hotlock-run or not, their output into files of
 * their own), reaping them within a time limit, and what they printed.
 * A child still running when the bench exits is killed (kill_live). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "apps.h"

/* Children still running, killed at exit (bench_fatal's included). */
static pid_t live[2 * APP_MAX_INSTANCES];

static void live_set(pid_t pid, bool on)
{
	for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
		if (on ? live[i] == 0 : live[i] == pid) {
			live[i] = on ? pid : 0;
			return;
		}
	if (on)
		bench_fatal("apps: too many children");
}

void kill_live(void)
{
	for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
		if (live[i] > 0) {
			kill(live[i], SIGKILL);
			(void)waitpid(live[i], NULL, 0);
			live[i] = 0;
		}
}

/* ---- command lines -------------------------------------------------------- */

static void cmd_push(struct cmd *c, const char *word)
{
	if (c->n + 2 > sizeof c->v / sizeof c->v[0])
		bench_fatal("apps: too many arguments for %s", c->v[0]);
	c->v[c->n++] = word;
	c->v[c->n] = NULL;
}

void cmd_add(struct cmd *c, ...)
{
	va_list ap;
	const char *w;

	va_start(ap, c);
	while ((w = va_arg(ap, const char *)))
		cmd_push(c, w);
	va_end(ap);
}

/* A word that does not fit is a bug here, not a short argument to pass on. */
void cmd_fmt(struct cmd *c, const char *fmt, ...)
{
	char *at = c->text + c->used;
	const size_t room = sizeof c->text - c->used;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(at, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room)
		bench_fatal("apps: an argument does not fit its buffer (%s)", fmt);
	c->used += (size_t)n + 1;
	cmd_push(c, at);
}

/* ---- spawning and reaping ------------------------------------------------- */

static FILE *xtmpfile(void)
{
	FILE *f = tmpfile();

	if (!f)
		bench_fatal("apps: tmpfile: %s", strerror(errno));
	/* Not to be inherited by the next child. */
	(void)fcntl(fileno(f), F_SETFD, FD_CLOEXEC);
	return f;
}

/* Starts argv, under hotlock-run when shim (a is read only then), with
 * stdout and stderr into files of their own and stdin from /dev/null.
 * hotlock-run's reports are off, but for the one --cost measures
 * (a->report_argv, into a file per pid in a->report_dir) when report. */
void spawn(struct child *c, const struct apps *a, bool shim, bool report,
	   const char *what, const struct cmd *argv)
{
	struct cmd full = { .n = 0 };
	const pid_t parent = getpid();

	if (shim) {
		cmd_add(&full, a->hotlock_run, NULL);
		if (a->queue)
			cmd_add(&full, "--queue", a->queue, NULL);
		if (a->spin_ns_text)
			cmd_add(&full, "--spin-ns", a->spin_ns_text, NULL);
		for (size_t i = 0; report && a->report_argv[i]; i++)
			cmd_push(&full, a->report_argv[i]);
		cmd_add(&full, "--", NULL);
	}
	for (size_t i = 0; i < argv->n; i++)
		cmd_push(&full, argv->v[i]);
	c->what = what;
	c->out = xtmpfile();
	c->err = xtmpfile();
	fflush(stdout);
	fflush(stderr);
	c->t0 = bench_now();
	c->pid = fork();
	if (c->pid < 0)
		bench_fatal("apps: fork: %s", strerror(errno));
	if (c->pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		/* Dies with hotlock-bench, however that ends. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (null < 0 || dup2(null, 0) < 0 || dup2(fileno(c->out), 1) < 0 ||
		    dup2(fileno(c->err), 2) < 0)
			_exit(127);
		setenv("HOTLOCK_SHIM_STATS", "1", 1);
		unsetenv("HOTLOCK_STATS");
		unsetenv("HOTLOCK_STATS_JSON");
		unsetenv("HOTLOCK_STATS_TOP");
		execv(full.v[0], (char *const *)full.v);
		dprintf(2, "cannot run %s: %s\n", full.v[0], strerror(errno));
		_exit(127);
	}
	live_set(c->pid, true);
}

void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Reaps c if it has ended (wait: within timeout_s, then SIGKILL).  True when
 * it ended by itself. */
bool reap(struct child *c, bool wait, double timeout_s)
{
	const double deadline = bench_now() + timeout_s;

	for (;;) {
		pid_t r = wait4(c->pid, &c->status, WNOHANG, &c->ru);

		if (r == c->pid)
			break;
		if (r < 0 && errno != EINTR)
			bench_fatal("apps: wait4 (%s): %s", c->what, strerror(errno));
		if (!wait)
			return false;
		if (bench_now() > deadline) {
			kill(c->pid, SIGKILL);
			while (wait4(c->pid, &c->status, 0, &c->ru) < 0 && errno == EINTR)
				;
			live_set(c->pid, false);
			c->wall_s = bench_now() - c->t0;
			return false;
		}
		sleep_s(0.002);
	}
	live_set(c->pid, false);
	c->wall_s = bench_now() - c->t0;
	return true;
}

double child_cpu(const struct child *c)
{
	return (double)c->ru.ru_utime.tv_sec + (double)c->ru.ru_utime.tv_usec * 1e-6 +
	       (double)c->ru.ru_stime.tv_sec + (double)c->ru.ru_stime.tv_usec * 1e-6;
}

/* ---- what they printed ---------------------------------------------------- */

/* The whole of f, NUL-terminated (malloc'd). */
static char *slurp(FILE *f)
{
	long n;
	char *s;

	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		bench_fatal("apps: reading a child's output: %s", strerror(errno));
	s = bench_xcalloc((size_t)n + 1, 1);
	if (n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n)
		bench_fatal("apps: reading a child's output: short read");
	return s;
}

void child_output(struct child *c, struct output *o)
{
	o->out = slurp(c->out);
	o->err = slurp(c->err);
	fclose(c->out);
	fclose(c->err);
}

void output_free(struct output *o)
{
	free(o->out);
	free(o->err);
}

/* The last lines of s, for an error message. */
static const char *tail(const char *s)
{
	size_t n = strlen(s);
	const char *p = s + n;
	int lines = 0;

	while (p > s && n - (size_t)(p - s) < 600) {
		if (p[-1] == '\n' && ++lines > 6 && p < s + n - 1)
			break;
		p--;
	}
	return p;
}

static void status_text(char *buf, size_t len, int status)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "ended with wait status %#x", status);
}

void child_failed(const char *label, const struct child *c, const struct output *o,
		  const char *why)
{
	char st[96];

	status_text(st, sizeof st, c->status);
	bench_fatal("%s: %s %s\n--- its stderr (end) ---\n%s--- its stdout (end) ---\n%s",
		    label, c->what, why ? why : st, tail(o->err), tail(o->out));
}

/* The number after key in text (key included), or false. */
bool find_number(const char *text, const char *key, double *v)
{
	const char *p = strstr(text, key);
	char *end;

	if (!p)
		return false;
	*v = strtod(p + strlen(key), &end);
	return end != p + strlen(key) && isfinite(*v);
}

/* ---- a run's programs ----------------------------------------------------- */

/* Runs a program to its end (under hotlock-run when shim, with the JSON
 * report when report) and checks its exit status. */
void run_to_end(const struct apps *a, const char *label, bool shim, bool report,
		const char *what, const struct cmd *argv, double timeout_s,
		struct child *c, struct output *o)
{
	spawn(c, a, shim, report, what, argv);
	if (!reap(c, true, timeout_s)) {
		child_output(c, o);
		child_failed(label, c, o, "did not end in time and was killed");
	}
	child_output(c, o);
	if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0)
		child_failed(label, c, o, NULL);
}

/* Starts n instances of a program at once (one right after the other). */
void spawn_together(const struct apps *a, enum side s, const char *what,
		    const struct cmd *argv, unsigned n, struct child *c)
{
	for (unsigned i = 0; i < n; i++)
		spawn(&c[i], a, side_shim(a, s), side_report(a, s), what, argv);
}

/* Reaps the n instances as each ends (so that each one's wall time is its
 * own), within timeout_s of now, and checks their exit status.  On a
 * failure the others are killed at exit (kill_live). */
void reap_together(const char *label, unsigned n, double timeout_s, struct child *c,
		   struct output *o)
{
	const double deadline = bench_now() + timeout_s;
	bool done[APP_MAX_INSTANCES] = { false };
	unsigned left = n;

	while (left > 0) {
		for (unsigned i = 0; i < n; i++)
			if (!done[i] && reap(&c[i], false, 0)) {
				done[i] = true;
				left--;
			}
		if (left == 0)
			break;
		if (bench_now() > deadline)
			for (unsigned i = 0; i < n; i++)
				if (!done[i]) {
					reap(&c[i], true, 0);   /* kills it */
					child_output(&c[i], &o[i]);
					child_failed(label, &c[i], &o[i],
						     "did not end in time and was killed");
				}
		sleep_s(0.002);
	}
	for (unsigned i = 0; i < n; i++) {
		child_output(&c[i], &o[i]);
		if (!WIFEXITED(c[i].status) || WEXITSTATUS(c[i].status) != 0)
			child_failed(label, &c[i], &o[i], NULL);
	}
}
