/* SPDX-License-Identifier: MIT */
/* The collector of hotlock-run --stats: the contention report made from
 * outside the program (docs/stats.md).
 *
 * hotlock-run makes the stats area (src/preload/stats_area.h) and names it
 * to the program in its environment; then it forks the collector, which
 * makes itself the subreaper of its descendants and starts the program as
 * its child.  Every process of the program that outlives its parent so
 * becomes the collector's child: it sees each one end (with its exact
 * status) and knows when none is left.  hotlock-run stays in front: the
 * collector tells it, over a pipe, the program's pid and then how the
 * program's main process ended, and hotlock-run passes signals on and
 * ends as the program did.
 *
 * Each process of the program that makes a record makes its slot LIVE
 * and wakes the collector (a futex in the area, which a thread of ours
 * waits on and turns into an eventfd); the collector opens a pidfd for
 * it.  When the process has ended (the pidfd, or waitpid for a child),
 * the collector takes its exit status (waitpid for a child; for another,
 * the zombie's /proc stat or, once reaped, the pidfd's exit information,
 * Linux 6.15 and later), adds what the process's threads had summed to its
 * records, converts its times from TSC ticks (it measures the TSC's rate
 * itself, over its own run: the program sleeps for no calibration),
 * writes its report, text and JSON, and frees the slot.  So the program
 * does nothing at its end but note how it ends, whatever that end is: a
 * fatal signal, _exit, a crash inside malloc, a fork child's _exit.
 *
 * Every half second it also sweeps the area: slots of processes that died
 * without a word (a fatal signal before their first record) are freed,
 * and the names and CPU times of the LIVE processes' threads, and the
 * modules they loaded after their load (dlopen), are read from /proc, so
 * that a process that dies of a signal still has them.
 *
 * The deadlock detector (deadlock.c) looks at each LIVE process every
 * DETECT_MS, so that a deadlock is reported within --deadlocks-after and
 * two looks of its making (a wait is timed from the first look that sees
 * it), and once more at the process's end,
 * before its report (the lock-order edges it wrote last).  Under --stats
 * alone it only counts what it finds, for the report; under --deadlocks
 * and --lock-order it reports it, on stderr or in its own files, as the
 * contention report is written; without --stats no contention report is
 * made.
 *
 * Its output is its own: the text report goes to hotlock-run's stderr or
 * to a file, the JSON to a file, each report in one write to a file
 * opened for appending (so that reports of processes that end together do
 * not mix); a relative path is hotlock-run's.  A write that fails or comes
 * up short is said in one line on stderr, a JSON line cut short is taken
 * back out of its file, and hotlock-run's exit status says so (2, where
 * the program itself succeeded).
 *
 * Signals: SIGINT and SIGQUIT are ignored while the program runs (the
 * terminal sends them to the program too); SIGTERM, SIGHUP, SIGUSR1,
 * SIGUSR2, SIGWINCH and SIGALRM sent to hotlock-run are passed on to the
 * program (a `docker stop` or a service manager signals the process it
 * started); the collector ignores them all.  The program is started with
 * the signal mask and dispositions hotlock-run was started with.
 *
 * When the program's main process ends while processes of it are still
 * running (a daemon that forked into the background), hotlock-run ends as
 * the program did, and the collector goes on until those end, with none
 * of hotlock-run's descriptors but the one its text report goes to
 * (stderr, where that is the report's place). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>

#include "collector.h"
#include "deadlock.h"
#include "stats.h"
#include "stats_area.h"
#include "slot.h"

#define EXIT_REPORT_FAILED 2
#define SWEEP_MS 500
#define DETECT_MS 200
#define TSC_RATE_MIN_NS 10000000ull     /* the TSC's rate is measured over at least this */

/* Linux 6.15's exit information of a pidfd (uapi linux/pidfd.h; the
 * headers here are older). */
#define HL_PIDFS_IOCTL_MAGIC 0xFF
#define HL_PIDFD_INFO_EXIT (1UL << 3)
struct hl_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
#define HL_PIDFD_GET_INFO _IOWR(HL_PIDFS_IOCTL_MAGIC, 11, struct hl_pidfd_info)

static const int forwarded[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, SIGALRM };

static struct {
	struct collector_opts opts;
	char text_path[PATH_MAX], json_path[PATH_MAX];
	char dl_text_path[PATH_MAX], dl_json_path[PATH_MAX];
	char path[PATH_MAX];            /* the area's */
	int fd;
	struct area_header *hdr;
	void *slot[AREA_SLOTS];         /* LIVE slots, mapped while watched */
	int pidfd[AREA_SLOTS];          /* -1: not watched */
	struct dl_proc *dl[AREA_SLOTS]; /* the deadlock detector's, of LIVE slots */
	uint64_t tsc0, mono0;           /* the TSC's rate: from here to a report */
	int evfd;                       /* the futex watcher's news */
	pid_t child;
	bool child_ended;
	int child_status;
	bool failed;                    /* a report could not be written */
	uint64_t reported;
	sigset_t old_mask;
	struct sigaction old_act[NSIG];
} C;

#define clock_ns slot_clock_ns
#define ticks_now slot_ticks_now

__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
{
	char buf[PATH_MAX + 512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		stats_write_all(2, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* ---- the area ---- */

/* Whether the programs may time with the TSC: on x86-64, where the
 * kernel's clocksource is the TSC, which it chooses only when the TSC runs
 * at a constant rate, through sleep states, in step on every CPU (and a
 * VM's host says so). */
static bool tsc_trusted(void)
{
#if defined(__x86_64__)
	char buf[64] = "";
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	return n > 0 && !strncmp(buf, "tsc\n", 4);
#else
	return false;
#endif
}

/* Removes the areas of hotlock-runs that were killed before they could:
 * a collector holds a lock on its area as long as it runs (flock: the
 * open file's, which a collector that goes on in the background after
 * the program's main process ended inherits), so an area nobody locks is
 * stale. */
static void remove_stale_areas(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		int pid;
		char rest[64];
		if (sscanf(e->d_name, "hotlock-stats.%d.%63s", &pid, rest) != 2)
			continue;
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlink(p);
		if (fd >= 0)
			close(fd);
	}
	if (d)
		closedir(d);
}

static void absolute(char *out, const char *path)
{
	char cwd[PATH_MAX];
	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		snprintf(out, PATH_MAX, "%s", path);
	else if (snprintf(out, PATH_MAX, "%s/%s", cwd, path) >= PATH_MAX)
		snprintf(out, PATH_MAX, "%s", path);
}

/* A deadlock detector's report: its text on stderr or in its file, its
 * JSON line in its file. */
static void deliver(const char *path, const char *what, int pid, const char *buf, size_t n);

static void dl_emit(int pid, const char *text, size_t text_len, const char *json, size_t json_len)
{
	deliver(C.opts.deadlocks_text_path, "deadlock", pid, text, text_len);
	if (json && C.opts.deadlocks_json_path)
		deliver(C.opts.deadlocks_json_path, "deadlock JSON", pid, json, json_len);
}

void collector_prepare(const struct collector_opts *opts)
{
	C.opts = *opts;
	if (opts->text_path && opts->text_path[0]) {
		absolute(C.text_path, opts->text_path);
		C.opts.text_path = C.text_path;
	}
	if (opts->json_path) {
		absolute(C.json_path, opts->json_path);
		C.opts.json_path = C.json_path;
	}
	C.opts.deadlocks_text_path = "";
	if (opts->deadlocks_text_path && opts->deadlocks_text_path[0]) {
		absolute(C.dl_text_path, opts->deadlocks_text_path);
		C.opts.deadlocks_text_path = C.dl_text_path;
	}
	if (opts->deadlocks_json_path) {
		absolute(C.dl_json_path, opts->deadlocks_json_path);
		C.opts.deadlocks_json_path = C.dl_json_path;
	}
	/* Where mutexes need not be listed (no lock order, no contention
	 * report, which uses held_since), each keeps its holder's site in
	 * itself, the cheapest record of it: the area's AREA_DETECT_SITES,
	 * below, and what the detector reads. */
	bool report = opts->text_path || opts->json_path;
	bool sites = opts->deadlocks && !opts->lock_order && !report;
	/* Deadlocks are looked for under --stats too, and counted in its
	 * report; lock-order edges only under --lock-order. */
	struct dl_opts dl = {
		.waits = opts->deadlocks || report,
		.report = opts->deadlocks,
		.abort = opts->deadlocks_abort,
		.order = opts->lock_order,
		.after_ns = opts->deadlocks_after_ns,
		.sites = sites,
	};
	dl_setup(&dl, dl_emit);
	const char *dirs[] = { "/dev/shm", getenv("TMPDIR"), "/tmp" };
	C.fd = -1;
	for (size_t i = 0; i < 3 && C.fd < 0; i++) {
		if (!dirs[i] || !*dirs[i])
			continue;
		remove_stale_areas(dirs[i]);
		snprintf(C.path, sizeof(C.path), "%s/hotlock-stats.%d.XXXXXX", dirs[i], (int)getpid());
		C.fd = mkostemp(C.path, O_CLOEXEC);
		if (C.fd >= 0 && (flock(C.fd, LOCK_SH) != 0 || ftruncate(C.fd, (off_t)AREA_SIZE) != 0)) {
			close(C.fd);
			unlink(C.path);
			C.fd = -1;
		}
	}
	if (C.fd < 0) {
		say("hotlock-run: cannot make the stats area in /dev/shm, $TMPDIR or /tmp: %s\n",
		    strerror(errno));
		exit(EXIT_REPORT_FAILED);
	}
	C.hdr = mmap(NULL, AREA_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, C.fd, 0);
	if (C.hdr == MAP_FAILED) {
		say("hotlock-run: cannot map the stats area: %s\n", strerror(errno));
		unlink(C.path);
		exit(EXIT_REPORT_FAILED);
	}
	C.hdr->magic = AREA_MAGIC;
	C.hdr->version = AREA_VERSION;
	C.hdr->tsc_ok = tsc_trusted();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	C.hdr->cpus = (uint16_t)(cpus > 0 && cpus < 65536 ? cpus : 1);
	C.hdr->slots = AREA_SLOTS;
	C.hdr->slot_size = AREA_SLOT_SIZE;
	/* What the shim records beyond the report: each thread's holds (and
	 * the sites) for --deadlocks and --lock-order, the lock-order edges
	 * for --lock-order; without --stats, no counting for a report; the
	 * mutexes' own sites (above).  Read by each process at its load,
	 * after this. */
	C.hdr->detect = (uint8_t)((opts->deadlocks || opts->lock_order ? AREA_DETECT_HOLDS : 0) |
				  (opts->lock_order ? AREA_DETECT_ORDER : 0) |
				  (report ? 0 : AREA_DETECT_ONLY) | (sites ? AREA_DETECT_SITES : 0));
	for (uint32_t i = 0; i < AREA_SLOTS; i++)
		C.pidfd[i] = -1;
	setenv(AREA_ENV, C.path, 1);
	C.mono0 = clock_ns(CLOCK_MONOTONIC);
	C.tsc0 = ticks_now();
}

/* ---- the futex watcher ---- */

static void *watch_seq(void *arg)
{
	(void)arg;
	uint32_t seen = atomic_load_explicit(&C.hdr->seq, memory_order_relaxed);
	for (;;) {
		struct timespec ts = { 1, 0 };
		syscall(SYS_futex, &C.hdr->seq, FUTEX_WAIT, seen, &ts, NULL, 0);
		uint32_t now = atomic_load_explicit(&C.hdr->seq, memory_order_relaxed);
		if (now != seen) {
			seen = now;
			uint64_t one = 1;
			if (write(C.evfd, &one, sizeof(one)) < 0)
				continue;
		}
	}
	return NULL;
}

/* ---- processes ---- */

static void *map_slot(uint32_t i)
{
	if (!C.slot[i]) {
		void *p = mmap(NULL, AREA_SLOT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, C.fd,
			       (off_t)area_slot_offset(i));
		C.slot[i] = p == MAP_FAILED ? NULL : p;
	}
	return C.slot[i];
}

/* Frees slot i: its pages punched, then FREE (release: a process that
 * takes it finds them zero). */
static void free_slot(uint32_t i)
{
	dl_proc_free(C.dl[i]);          /* its names refer to the slot's modules */
	C.dl[i] = NULL;
	if (C.slot[i]) {
		munmap(C.slot[i], AREA_SLOT_SIZE);
		C.slot[i] = NULL;
	}
	if (C.pidfd[i] >= 0) {
		close(C.pidfd[i]);
		C.pidfd[i] = -1;
	}
	fallocate(C.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)area_slot_offset(i),
		  (off_t)AREA_SLOT_SIZE);
	/* pid 0 first (see the sweep), then FREE. */
	atomic_store_explicit(&C.hdr->desc[i].pid, 0, memory_order_relaxed);
	atomic_store_explicit(&C.hdr->desc[i].state, AREA_FREE, memory_order_release);
}

/* Starts watching slot i, LIVE now: its pidfd.  A process already gone
 * (or whose pid a later process has) is finished at once. */
static void finish(uint32_t i, bool status_known, int status);

static void watch(uint32_t i)
{
	struct area_desc *d = &C.hdr->desc[i];
	int32_t pid = atomic_load_explicit(&d->pid, memory_order_relaxed);
	if (pid == C.child && C.child_ended) {
		finish(i, true, C.child_status);        /* reaped already */
		return;
	}
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 || !slot_same_process(pid, atomic_load_explicit(&d->since_ns, memory_order_relaxed))) {
		if (fd >= 0)
			close(fd);
		finish(i, false, 0);
		return;
	}
	C.pidfd[i] = fd;
	struct area_slot *s = map_slot(i);
	if (s) {
		slot_read_threads(s);
		slot_read_maps(s);
	}
}

/* How the process ended, for the report: from its wait status where one
 * is known, else from what its hooks wrote down. */
static void end_words(char *out, size_t len, const struct area_slot *s, bool status_known, int status,
		      bool execed)
{
	uint32_t how = atomic_load_explicit(&s->end_how, memory_order_acquire);
	if (execed)
		snprintf(out, len, "exec");
	else if (status_known && WIFSIGNALED(status))
		snprintf(out, len, "signal SIG%s%s", sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?",
			 WCOREDUMP(status) ? " (core dumped)" : "");
	else if (status_known && WIFEXITED(status))
		snprintf(out, len, "%s %d", how == AREA_END__EXIT ? "_exit" : "exit", WEXITSTATUS(status));
	else if (how == AREA_END__EXIT)
		snprintf(out, len, "_exit %d", atomic_load_explicit(&s->end_status, memory_order_relaxed));
	else if (how == AREA_END_EXIT)
		snprintf(out, len, "exit");
	else
		snprintf(out, len, "ended");
}

/* Appends buf to path (%p: the pid) in one write, or to stderr (path
 * ""); a failed or short write is said in one line, and a JSON line cut
 * short is taken back out of its file, so that the next one starts a
 * line of its own. */
static void deliver(const char *path, const char *what, int pid, const char *buf, size_t n)
{
	int fd = 2;
	char full[PATH_MAX + 32] = "stderr";
	if (path[0]) {
		size_t o = 0;
		for (const char *p = path; *p && o < sizeof(full) - 16; p++) {
			if (p[0] == '%' && p[1] == 'p') {
				o += (size_t)snprintf(full + o, sizeof(full) - o, "%d", pid);
				p++;
			} else {
				full[o++] = *p;
			}
		}
		full[o] = 0;
		fd = open(full, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			say("hotlock-run: cannot write the %s lock report of pid %d to %s: %s\n", what, pid, full,
			    strerror(errno));
			C.failed = true;
			return;
		}
	}
	struct stat st;
	off_t before = fd != 2 && fstat(fd, &st) == 0 ? st.st_size : -1;
	int err = stats_write_all(fd, buf, n);
	if (err) {
		if (before >= 0 && ftruncate(fd, before) != 0)
			err = errno;
		say("hotlock-run: the %s lock report of pid %d to %s failed: %s%s\n", what, pid, full,
		    strerror(err), before >= 0 ? " (nothing of it was kept)" : "");
		C.failed = true;
	}
	if (fd != 2)
		close(fd);
}

/* The deadlock detector's record of slot i (made at its first use; NULL
 * where memory ran out). */
static struct dl_proc *dl_of(uint32_t i)
{
	if (!C.dl[i])
		C.dl[i] = dl_proc_new();
	return C.dl[i];
}

/* The contention report of s's process (--stats), with what the deadlock
 * detector found in it (dl). */
static void report(struct area_slot *s, const char *end, const struct dl_proc *dl)
{
	if (!C.opts.text_path && !C.opts.json_path)
		return;
	slot_add_sums(s);
	/* The TSC's rate: from the collector's start to now, over
	 * TSC_RATE_MIN_NS at least (the collector waits for the rest, the
	 * program never does). */
	uint64_t mono, ticks;
	for (;;) {
		mono = clock_ns(CLOCK_MONOTONIC);
		ticks = ticks_now();
		if (!s->tsc || mono - C.mono0 >= TSC_RATE_MIN_NS || ticks <= C.tsc0)
			break;
		struct timespec ts = { 0, (long)(TSC_RATE_MIN_NS - (mono - C.mono0)) };
		nanosleep(&ts, NULL);
	}
	slot_to_ns(s, ticks > C.tsc0 ? (double)(mono - C.mono0) / (double)(ticks - C.tsc0) : 1);
	char program[AREA_CMDLINE + 1];
	struct stats_report in;
	slot_report_input(s, &in, end, atomic_load_explicit(&s->end_ns, memory_order_relaxed), C.opts.top,
			  program);
	dl_counts(dl, &in.deadlocks, &in.hangs);
	char *text = NULL, *json = NULL;
	size_t text_len = 0, json_len = 0;
	if (stats_report_make(&in, C.opts.text_path ? &text : NULL, &text_len,
			      C.opts.json_path ? &json : NULL, &json_len) != 0) {
		say("hotlock-run: no lock report for pid %d: out of memory\n", (int)s->pid);
		C.failed = true;
	}
	if (text)
		deliver(C.opts.text_path, "text", s->pid, text, text_len);
	if (json)
		deliver(C.opts.json_path, "JSON", s->pid, json, json_len);
	free(text);
	free(json);
	C.reported++;
}

static void finish(uint32_t i, bool status_known, int status)
{
	struct area_desc *d = &C.hdr->desc[i];
	uint32_t state = atomic_load_explicit(&d->state, memory_order_acquire);
	struct area_slot *s = map_slot(i);
	if (s && (state == AREA_LIVE || state == AREA_EXECED)) {
		char end[64];
		end_words(end, sizeof(end), s, status_known, status, state == AREA_EXECED);
		/* The process has ended (or is another program now): the
		 * detector reads only its slot. */
		struct dl_proc *dl = dl_of(i);
		if (dl)
			dl_end(dl, s);
		report(s, end, dl);
	}
	free_slot(i);
}

/* The wait status of process pid, not ours, which has ended: a zombie
 * until its parent reaps it, when the kernel's /proc has it (the 52nd
 * field of its stat, Linux 3.5 and later); once reaped, its pidfd's exit
 * information (Linux 6.15 and later; the kernel keeps it at the reaping,
 * for a pidfd opened before the end).  A parent that reaps it while we
 * look is waited for a moment. */
static bool exit_status(uint32_t i, int32_t pid, int *status)
{
	for (int tries = 0; tries < 50; tries++) {
		struct hl_pidfd_info info = { .mask = HL_PIDFD_INFO_EXIT };
		if (ioctl(C.pidfd[i], HL_PIDFD_GET_INFO, &info) == 0 && (info.mask & HL_PIDFD_INFO_EXIT)) {
			*status = info.exit_code;
			return true;
		}
		char path[64], buf[1024];
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		const char *fields = slot_read_stat(path, buf, sizeof(buf));
		const char *state = slot_stat_field(fields, 3), *code = slot_stat_field(fields, 52);
		/* A zombie's, and the pid still the one we watched (the pidfd
		 * says so: its process has not been reaped). */
		if (state && code && (*state == 'Z' || *state == 'X')) {
			*status = (int)strtol(code, NULL, 10);
			return true;
		}
		if (state && *state != 'Z' && *state != 'X')
			return false;   /* another process has the pid now */
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	return false;
}

/* Process pid, a child of ours, ended with status: the program's main
 * process, or one that outlived its parent (we are the subreaper). */
static void reaped(pid_t pid, int status)
{
	if (pid == C.child) {
		C.child_ended = true;
		C.child_status = status;
	}
	for (uint32_t i = 0; i < AREA_SLOTS; i++) {
		uint32_t state = atomic_load_explicit(&C.hdr->desc[i].state, memory_order_acquire);
		if ((state == AREA_LIVE || state == AREA_EXECED) &&
		    atomic_load_explicit(&C.hdr->desc[i].pid, memory_order_relaxed) == pid)
			finish(i, true, status);
	}
}

/* Reaps every child that has ended. */
static void reap(void)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		reaped(pid, status);
}

/* The pidfd of slot i says its process ended. */
static void ended(uint32_t i)
{
	int32_t pid = atomic_load_explicit(&C.hdr->desc[i].pid, memory_order_relaxed);
	int status = 0;
	if (pid == C.child && C.child_ended) {
		finish(i, true, C.child_status);
		return;
	}
	/* A child of ours (the program's main process, an orphan): waitpid
	 * has its status. */
	if (waitpid(pid, &status, WNOHANG) == pid) {
		reaped(pid, status);
		return;
	}
	bool known = exit_status(i, pid, &status);
	finish(i, known, status);
}

/* The slots' news: LIVE ones to watch, EXECED ones to finish. */
static void scan(void)
{
	for (uint32_t i = 0; i < AREA_SLOTS; i++) {
		uint32_t state = atomic_load_explicit(&C.hdr->desc[i].state, memory_order_acquire);
		if (state == AREA_LIVE && C.pidfd[i] < 0)
			watch(i);
		else if (state == AREA_EXECED)
			finish(i, false, 0);
	}
}

/* Every SWEEP_MS: slots whose processes died without a word are freed,
 * and the running ones' threads read. */
static void sweep(void)
{
	for (uint32_t i = 0; i < AREA_SLOTS; i++) {
		struct area_desc *d = &C.hdr->desc[i];
		uint32_t state = atomic_load_explicit(&d->state, memory_order_acquire);
		if (state == AREA_RESERVED) {
			/* Acquire: its taker wrote since before pid (release);
			 * 0 while a slot is being taken or given back. */
			int32_t pid = atomic_load_explicit(&d->pid, memory_order_acquire);
			uint64_t since = atomic_load_explicit(&d->since_ns, memory_order_relaxed);
			if (pid > 0 && clock_ns(CLOCK_BOOTTIME) > since + 100000000ull &&
			    !slot_same_process(pid, since) &&
			    atomic_load_explicit(&d->pid, memory_order_relaxed) == pid) {
				uint32_t reserved = AREA_RESERVED;
				if (atomic_compare_exchange_strong(&d->state, &reserved, AREA_LIVE))
					free_slot(i);
			}
		} else if (state == AREA_LIVE && C.slot[i]) {
			slot_read_threads(C.slot[i]);
			slot_read_maps(C.slot[i]);
		}
	}
}

/* Every DETECT_MS: the deadlock detector's look at each running process. */
static void detect(void)
{
	for (uint32_t i = 0; i < AREA_SLOTS; i++) {
		uint32_t state = atomic_load_explicit(&C.hdr->desc[i].state, memory_order_acquire);
		struct dl_proc *dl = state == AREA_LIVE && C.slot[i] && C.pidfd[i] >= 0 ? dl_of(i) : NULL;
		if (dl)
			dl_sweep(dl, C.slot[i], C.pidfd[i]);
	}
}

/* Whether a process of the program still runs: a child of ours (the
 * program's main process, or one of its descendants, which become ours
 * when their parent ends: we are the subreaper), or a slot whose report
 * is still to be written. */
static bool any_running(void)
{
	siginfo_t info;
	if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0)
		return true;
	for (uint32_t i = 0; i < AREA_SLOTS; i++) {
		uint32_t state = atomic_load_explicit(&C.hdr->desc[i].state, memory_order_acquire);
		if (state == AREA_LIVE || state == AREA_EXECED)
			return true;
	}
	return false;
}

/* The closing line, where processes ran that have no report. */
static void summary(void)
{
	uint64_t processes = atomic_load_explicit(&C.hdr->processes, memory_order_relaxed);
	uint64_t no_slot = atomic_load_explicit(&C.hdr->no_slot, memory_order_relaxed);
	uint64_t quiet = processes > C.reported + no_slot ? processes - C.reported - no_slot : 0;
	if (!C.opts.text_path || (quiet == 0 && no_slot == 0))
		return;
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "== hotlock: %" PRIu64 " process%s of the program ran, %" PRIu64
			 " with a lock report above%s; %" PRIu64 " never waited for a lock (no report)",
			 processes, processes == 1 ? "" : "es", C.reported,
			 C.opts.text_path[0] ? " (or in its file)" : "", quiet);
	if (no_slot)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "; %" PRIu64 " found no room for records",
			      no_slot);
	snprintf(buf + n, sizeof(buf) - (size_t)n, "\n");
	deliver(C.opts.text_path, "text", (int)getpid(), buf, strlen(buf));
}

/* ---- running: hotlock-run and its collector ----
 * hotlock-run forks the collector, which makes itself the subreaper of
 * its descendants (a process of the program whose parent ends becomes
 * its child, so it sees every one end, with its status, and knows when
 * none is left), starts the program, and tells hotlock-run, over a pipe,
 * the program's pid, then how it ended.  hotlock-run passes signals on to
 * the program and ends as the program did: once every report is written,
 * or, where processes of the program outlive its main one (a daemon), at
 * once, the collector going on in the background until they end. */

struct news {
	int type;               /* NEWS_* */
	int pid;
	int status;             /* the program's wait status */
	int failed;             /* a report could not be written */
};
enum { NEWS_STARTED, NEWS_DONE, NEWS_GOING_ON };

static void tell(int fd, int type, int pid)
{
	struct news n = { type, pid, C.child_status, C.failed };
	if (write(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return;         /* hotlock-run is gone: nobody to tell */
}

/* Forks the program: its signal mask and dispositions are hotlock-run's
 * own at start. */
static pid_t start(const char *prog, char *const argv[])
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &C.old_act[sig], NULL);
	sigprocmask(SIG_SETMASK, &C.old_mask, NULL);
	execv(prog, argv);
	int err = errno;
	say("hotlock-run: %s: %s\n", prog, strerror(err));
	_exit(err == ENOENT ? 127 : 126);
}

/* Ends as the program did: its exit status, or its signal (without a core
 * of our own). */
static _Noreturn void end_as_program(void)
{
	int status = C.child_status;
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct rlimit none = { 0, 0 };
		setrlimit(RLIMIT_CORE, &none);
		signal(sig, SIG_DFL);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
		exit(128 + sig);
	}
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	exit(code == 0 && C.failed ? EXIT_REPORT_FAILED : code);
}

/* The collector: starts the program, and reports on each of its
 * processes that contended, as it ends. */
static _Noreturn void collect(const char *prog, char *const argv[], int news_fd)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* Signals are for the program (hotlock-run passes them on): the
	 * collector goes on until the program's last process ends. */
	for (size_t k = 0; k < sizeof(forwarded) / sizeof(forwarded[0]); k++)
		signal(forwarded[k], SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, NULL);
	C.child = start(prog, argv);
	if (C.child < 0) {
		say("hotlock-run: cannot start %s: %s\n", prog, strerror(errno));
		C.child_status = 126 << 8;
		tell(news_fd, NEWS_DONE, 0);
		unlink(C.path);
		_exit(126);
	}
	tell(news_fd, NEWS_STARTED, C.child);
	int sfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
	C.evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_t watcher;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_create(&watcher, NULL, watch_seq, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	bool told = false;
	uint64_t last_sweep = clock_ns(CLOCK_MONOTONIC), last_detect = last_sweep;
	for (;;) {
		struct pollfd pfd[AREA_SLOTS + 2];
		uint32_t who[AREA_SLOTS];
		nfds_t n = 0;
		pfd[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = C.evfd, .events = POLLIN };
		for (uint32_t i = 0; i < AREA_SLOTS; i++)
			if (C.pidfd[i] >= 0) {
				who[n - 2] = i;
				pfd[n++] = (struct pollfd){ .fd = C.pidfd[i], .events = POLLIN };
			}
		/* Until the next look of the deadlock detector, at most. */
		uint64_t since = clock_ns(CLOCK_MONOTONIC) - last_detect;
		int wait_ms = since >= DETECT_MS * 1000000ull ? 0 : DETECT_MS - (int)(since / 1000000);
		if (poll(pfd, n, wait_ms) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
		}
		if (pfd[1].revents & POLLIN) {
			uint64_t v;
			if (read(C.evfd, &v, sizeof(v)) < 0)
				v = 0;
		}
		scan();
		for (nfds_t f = 2; f < n; f++)
			if (pfd[f].revents && C.pidfd[who[f - 2]] >= 0)
				ended(who[f - 2]);
		reap();
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		if (now - last_sweep >= SWEEP_MS * 1000000ull) {
			sweep();
			last_sweep = now;
		}
		if (now - last_detect >= DETECT_MS * 1000000ull) {
			detect();
			last_detect = now;
		}
		if (!C.child_ended)
			continue;
		if (!any_running()) {
			summary();
			unlink(C.path);
			if (!told)
				tell(news_fd, NEWS_DONE, C.child);
			_exit(0);
		}
		if (!told) {
			/* Processes of the program outlive its main one:
			 * hotlock-run ends as the program did, and we go on,
			 * with none of hotlock-run's descriptors but the one the
			 * text reports go to (whoever reads hotlock-run's
			 * output, a shell's $(...), sees it end with it). */
			tell(news_fd, NEWS_GOING_ON, C.child);
			told = true;
			int null = open("/dev/null", O_RDWR | O_CLOEXEC);
			if (null >= 0) {
				dup2(null, 0);
				dup2(null, 1);
				bool stats_on_2 = C.opts.text_path && !C.opts.text_path[0];
				bool dl_on_2 = (C.opts.deadlocks || C.opts.lock_order) &&
					       !C.opts.deadlocks_text_path[0];
				if (!stats_on_2 && !dl_on_2)
					dup2(null, 2);
				close(null);
			}
		}
	}
	unlink(C.path);
	_exit(1);
}

int collector_run(const char *prog, char *const argv[])
{
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, NULL, &C.old_act[sig]);
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	for (size_t k = 0; k < sizeof(forwarded) / sizeof(forwarded[0]); k++)
		sigaddset(&block, forwarded[k]);
	sigprocmask(SIG_BLOCK, &block, &C.old_mask);
	int news[2];
	if (pipe2(news, O_CLOEXEC) != 0) {
		say("hotlock-run: cannot make a pipe for its collector: %s\n", strerror(errno));
		unlink(C.path);
		exit(EXIT_REPORT_FAILED);
	}
	pid_t collector = fork();
	if (collector == 0) {
		close(news[0]);
		collect(prog, argv, news[1]);
	}
	close(news[1]);
	if (collector < 0) {
		say("hotlock-run: cannot start its collector: %s\n", strerror(errno));
		unlink(C.path);
		exit(EXIT_REPORT_FAILED);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	int sfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
	pid_t program = 0;
	for (;;) {
		struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN }, { .fd = news[0], .events = POLLIN } };
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				if (si.ssi_signo != SIGCHLD && program > 0)
					kill(program, (int)si.ssi_signo);
		}
		if (!(pfd[1].revents & (POLLIN | POLLHUP)))
			continue;
		struct news nw;
		if (read(news[0], &nw, sizeof(nw)) != (ssize_t)sizeof(nw))
			break;          /* the collector is gone */
		if (nw.type == NEWS_STARTED) {
			program = nw.pid;
			continue;
		}
		C.child_status = nw.status;
		C.failed = nw.failed;
		if (nw.type == NEWS_DONE)
			waitpid(collector, NULL, 0);
		end_as_program();
	}
	say("hotlock-run: its collector ended before the program's end was known; the program's "
	    "exit status is not known\n");
	return 1;
}
