/* SPDX-License-Identifier: MIT */
/* hotlock-top: the most-waited-for locks of a program that runs under
 * hotlock-run --stats, now, refreshed like top (docs/stats.md, "While it
 * runs").
 *
 *   hotlock-top [-d SECONDS] [-n COUNT] [--top N] [--report] PID
 *
 * PID is a process of the program, or hotlock-run's own pid (then every
 * process of the program that has records).  Every SECONDS (1) it shows,
 * per lock, most waited for in the last interval first: the time threads
 * spent waiting for it per second (the mean number of threads waiting),
 * the waits that began per second, the threads waiting for it now, who
 * holds it now (a mutex's owner, an rwlock's writer or readers: read from
 * the program's memory with process_vm_readv), and its variable and where
 * it was first contended.  --report prints the full report of each of the
 * processes, as hotlock-run writes it at their end, made from what they
 * have recorded so far, and exits.
 *
 * It reads the stats area that hotlock-run made (stats_area.h) and the
 * process's memory; it changes nothing in either.  Its own cost: the
 * records and the threads' sums of the processes, read once a second. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "slot.h"
#include "stats.h"
#include "stats_area.h"
#include "tpword.h"         /* the lock word: owner TID */

#define MAX_WATCHED 64

static const char usage[] =
	"usage: hotlock-top [-d SECONDS] [-n COUNT] [--top N] [--report] PID\n"
	"The most-waited-for locks, now, of a program run under hotlock-run --stats:\n"
	"PID is one of its processes, or hotlock-run's pid (all of them).\n"
	"  -d SECONDS   refresh every SECONDS, 0.1-3600 (1)\n"
	"  -n COUNT     stop after COUNT refreshes (0: until the program ends, 0)\n"
	"  --top N      locks shown, 1-1000 (20)\n"
	"  --report     print the full report of each process as it stands, and exit\n";

/* A process being watched: its slot, mapped read-only, and what its
 * records read at the last refresh. */
struct watched {
	uint32_t slot;
	int32_t pid;
	uint64_t since;
	const struct area_slot *s;
	struct stats_namer *namer;
	uint64_t *prev_wait, *prev_waits;       /* AREA_MAX_RECS each */
	bool seen;
};

static struct watched w[MAX_WATCHED];
static int n_watched;
static const struct area_header *hdr;
static int area_fd = -1;

static _Noreturn void die(const char *fmt, const char *a)
{
	fprintf(stderr, "hotlock-top: ");
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
	exit(2);
}

/* The area of the hotlock-run that has pid (its own, or a process's with
 * a LIVE slot): mapped, with *run set when pid is hotlock-run's. */
static bool find_area(int pid, bool *run)
{
	const char *dirs[] = { "/dev/shm", getenv("TMPDIR"), "/tmp" };
	for (size_t d = 0; d < 3; d++) {
		if (!dirs[d] || !*dirs[d])
			continue;
		DIR *dir = opendir(dirs[d]);
		struct dirent *e;
		while (dir && (e = readdir(dir))) {
			int owner;
			char rest[64];
			if (sscanf(e->d_name, "hotlock-stats.%d.%63s", &owner, rest) != 2)
				continue;
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%s/%s", dirs[d], e->d_name);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			struct stat st;
			if (fd < 0 || fstat(fd, &st) || (uint64_t)st.st_size != AREA_SIZE) {
				if (fd >= 0)
					close(fd);
				continue;
			}
			const struct area_header *h = mmap(NULL, AREA_HEADER_SIZE, PROT_READ, MAP_SHARED, fd, 0);
			bool mine = h != MAP_FAILED && h->magic == AREA_MAGIC && h->version == AREA_VERSION;
			for (uint32_t i = 0; mine && owner != pid && i < AREA_SLOTS; i++)
				if (atomic_load_explicit(&h->desc[i].pid, memory_order_relaxed) == pid &&
				    atomic_load_explicit(&h->desc[i].state, memory_order_acquire) >= AREA_LIVE)
					owner = pid + 1;        /* found: a process of it */
			if (mine && (owner == pid || owner == pid + 1)) {
				*run = owner == pid;
				hdr = h;
				area_fd = fd;
				closedir(dir);
				return true;
			}
			if (h != MAP_FAILED)
				munmap((void *)h, AREA_HEADER_SIZE);
			close(fd);
		}
		if (dir)
			closedir(dir);
	}
	return false;
}

static void unwatch(struct watched *x)
{
	munmap((void *)x->s, AREA_SLOT_SIZE);
	stats_namer_close(x->namer);
	free(x->prev_wait);
	free(x->prev_waits);
	*x = w[--n_watched];
}

/* The LIVE slots to watch: pid's, or all of them (run); those gone are
 * dropped. */
static void update_watched(int pid, bool run)
{
	for (int k = 0; k < n_watched; k++) {
		const struct area_desc *d = &hdr->desc[w[k].slot];
		if (atomic_load_explicit(&d->state, memory_order_acquire) < AREA_LIVE ||
		    atomic_load_explicit(&d->pid, memory_order_relaxed) != w[k].pid ||
		    atomic_load_explicit(&d->since_ns, memory_order_relaxed) != w[k].since)
			unwatch(&w[k--]);
	}
	for (uint32_t i = 0; i < AREA_SLOTS && n_watched < MAX_WATCHED; i++) {
		const struct area_desc *d = &hdr->desc[i];
		int32_t p = atomic_load_explicit(&d->pid, memory_order_relaxed);
		if (atomic_load_explicit(&d->state, memory_order_acquire) != AREA_LIVE || (!run && p != pid))
			continue;
		bool have = false;
		for (int k = 0; k < n_watched; k++)
			have |= w[k].slot == i;
		if (have)
			continue;
		const struct area_slot *s = mmap(NULL, AREA_SLOT_SIZE, PROT_READ, MAP_SHARED, area_fd,
						 (off_t)area_slot_offset(i));
		if (s == MAP_FAILED)
			continue;
		struct watched *x = &w[n_watched++];
		*x = (struct watched){ .slot = i, .pid = p, .s = s,
				       .since = atomic_load_explicit(&d->since_ns, memory_order_relaxed) };
		x->prev_wait = calloc(AREA_MAX_RECS, sizeof(uint64_t));
		x->prev_waits = calloc(AREA_MAX_RECS, sizeof(uint64_t));
		char program[AREA_CMDLINE + 1];
		struct stats_report in;
		slot_report_input(s, &in, "running", 0, 10, program);
		x->namer = stats_namer_open(&in);
	}
}

/* Each record's wait time (ticks) and waits so far, and the threads that
 * wait for it now: the records' counts and what the threads have summed
 * for them, read as they stand, in one pass over each. */
static void totals(const struct area_slot *s, uint32_t used, uint64_t *wait, uint64_t *waits,
		   unsigned *waiting)
{
	const struct stats_rec *recs = area_recs((void *)s);
	for (uint32_t r = 1; r < used; r++) {
		wait[r] = atomic_load_explicit(&recs[r].c[STC_W_WAIT_NS], memory_order_relaxed) +
			  atomic_load_explicit(&recs[r].c[STC_R_WAIT_NS], memory_order_relaxed);
		waits[r] = atomic_load_explicit(&recs[r].c[STC_W_CONTENDED], memory_order_relaxed) +
			   atomic_load_explicit(&recs[r].c[STC_R_CONTENDED], memory_order_relaxed);
		waiting[r] = 0;
	}
	const struct area_sums *sums = area_sums((void *)s);
	const struct stats_thread *th = area_threads((void *)s);
	uint32_t n = atomic_load_explicit(&s->threads_used, memory_order_relaxed);
	for (uint32_t t = 0; t < n && t < AREA_MAX_THREADS; t++) {
		uint32_t on = atomic_load_explicit(&th[t].waiting_on, memory_order_relaxed);
		if (on && on < used)
			waiting[on]++;
		for (uint32_t k = 0; k < AREA_SUM_SLOTS; k++) {
			const struct area_sum *sl = &sums[t].slot[k];
			uint32_t idx = atomic_load_explicit(&sl->rec, memory_order_relaxed);
			if (!idx || idx >= used)
				continue;
			wait[idx] += atomic_load_explicit(&sl->c[STC_W_WAIT_NS], memory_order_relaxed) +
				     atomic_load_explicit(&sl->c[STC_R_WAIT_NS], memory_order_relaxed);
			waits[idx] += atomic_load_explicit(&sl->c[STC_W_CONTENDED], memory_order_relaxed) +
				      atomic_load_explicit(&sl->c[STC_R_CONTENDED], memory_order_relaxed);
		}
	}
}

/* Who holds the lock at addr in process pid now, from its memory: a
 * mutex's owner (hotlock's TP word, or glibc's __owner for one glibc
 * keeps), an rwlock's writer or its readers. */
static void holder_now(int32_t pid, const struct stats_rec *r, char *out, size_t len)
{
	uint64_t word[2] = { 0, 0 };
	uintptr_t addr = atomic_load_explicit(&r->addr, memory_order_relaxed);
	struct iovec local = { word, sizeof(word) }, remote = { (void *)addr, sizeof(word) };
	snprintf(out, len, "-");
	/* Only where the record is one object's: a class of many has no one
	 * holder to show. */
	if (r->obj == ST_COND || atomic_load_explicit(&r->objects, memory_order_relaxed) > 1 ||
	    process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(word))
		return;
	if (r->obj == ST_MUTEX) {
		/* glibc: int __lock, unsigned __count, int __owner; hotlock: the
		 * TP word first (tpword.h). */
		uint32_t owner = r->type & STATS_TYPE_GLIBC ? (uint32_t)(word[1] & 0xffffffffu)
							    : (uint32_t)(word[0] & HL_TP_OWNER_MASK);
		if (owner)
			snprintf(out, len, "%u", owner);
		else
			snprintf(out, len, "free");
		return;
	}
	uint32_t writer = (uint32_t)(word[0] & HL_TP_OWNER_MASK), readers = (uint32_t)(word[0] >> 32);
	if (writer)
		snprintf(out, len, "%u", writer);
	else if (readers)
		snprintf(out, len, "%u readers", readers);
	else
		snprintf(out, len, "free");
}

struct row {
	struct watched *x;
	uint32_t idx;
	double wait_per_s, waits_per_s;
	unsigned waiting;
};

static int by_rate(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->wait_per_s != y->wait_per_s)
		return x->wait_per_s < y->wait_per_s ? 1 : -1;
	return x->waits_per_s < y->waits_per_s ? 1 : x->waits_per_s > y->waits_per_s ? -1 : 0;
}

/* One refresh: every record's wait since the last (k: ns per tick),
 * shown unless quiet (the first, which only sets where they stand). */
static void refresh(double interval_s, double k, int top, bool tty, bool quiet)
{
	static struct row *rows;
	static uint64_t *wait, *waits;
	static unsigned *waiting;
	if (!rows) {
		rows = malloc(sizeof(*rows) * AREA_MAX_RECS * MAX_WATCHED);
		wait = malloc(sizeof(*wait) * AREA_MAX_RECS);
		waits = malloc(sizeof(*waits) * AREA_MAX_RECS);
		waiting = malloc(sizeof(*waiting) * AREA_MAX_RECS);
		if (!rows || !wait || !waits || !waiting) {
			fprintf(stderr, "hotlock-top: out of memory\n");
			exit(1);
		}
	}
	size_t n = 0;
	for (int i = 0; i < n_watched; i++) {
		struct watched *x = &w[i];
		uint32_t used = atomic_load_explicit(&x->s->recs_used, memory_order_relaxed);
		if (used > AREA_MAX_RECS)
			used = AREA_MAX_RECS;
		totals(x->s, used, wait, waits, waiting);
		for (uint32_t r = 1; r < used; r++) {
			struct row *row = &rows[n];
			row->x = x;
			row->idx = r;
			double ticks = x->seen && wait[r] >= x->prev_wait[r] ? (double)(wait[r] - x->prev_wait[r]) : 0;
			row->wait_per_s = (x->s->tsc ? ticks * k : ticks) / 1e9 / interval_s;
			row->waits_per_s = x->seen && waits[r] >= x->prev_waits[r]
						   ? (double)(waits[r] - x->prev_waits[r]) / interval_s : 0;
			row->waiting = waiting[r];
			x->prev_wait[r] = wait[r];
			x->prev_waits[r] = waits[r];
			if (row->wait_per_s > 0 || row->waits_per_s > 0 || row->waiting)
				n++;
		}
		x->seen = true;
	}
	if (quiet)
		return;
	qsort(rows, n, sizeof(*rows), by_rate);
	if (tty)
		fputs("\033[H\033[J", stdout);
	time_t now = time(NULL);
	char when[32];
	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	printf("hotlock-top %s: %d process%s; locks waited for in the last %.1f s\n", when, n_watched,
	       n_watched == 1 ? "" : "es", interval_s);
	printf("%7s %-6s %9s %9s %7s %-12s %s\n", "PID", "KIND", "WAITING/s", "WAITS/s", "WAITING", "HOLDER",
	       "LOCK, FIRST CONTENDED IN");
	for (size_t i = 0; i < n && i < (size_t)top; i++) {
		const struct stats_rec *r = &area_recs((void *)rows[i].x->s)[rows[i].idx];
		char holder[32], name[128], site[256];
		holder_now(rows[i].x->pid, r, holder, sizeof(holder));
		stats_namer_object(rows[i].x->namer, atomic_load_explicit(&r->addr, memory_order_relaxed), name,
				   sizeof(name));
		stats_namer_site(rows[i].x->namer, r->stack, r->nframes, site, sizeof(site));
		printf("%7d %-6s %9.3f %9.0f %7u %-12s %s%s%s\n", rows[i].x->pid,
		       r->obj == ST_RWLOCK ? "rwlock" : r->obj == ST_COND ? "cond" : "mutex", rows[i].wait_per_s,
		       rows[i].waits_per_s, rows[i].waiting, holder, name, name[0] ? ", " : "", site);
	}
	if (!n)
		printf("(no lock waited for)\n");
	if (!tty)
		printf("\n");
	fflush(stdout);
}

/* --report: each watched process's report as it stands, from a copy of
 * its slot (its times converted at the TSC's rate over interval). */
static int report_now(double k)
{
	int err = 0;
	for (int i = 0; i < n_watched; i++) {
		struct area_slot *copy = malloc(AREA_SLOT_SIZE);
		if (!copy)
			return 1;
		memcpy(copy, w[i].s, AREA_SLOT_SIZE);
		slot_add_sums(copy);
		slot_to_ns(copy, k);
		char program[AREA_CMDLINE + 1];
		struct stats_report in;
		slot_report_input(copy, &in, "running", 0, 10, program);
		char *text = NULL;
		size_t len = 0;
		if (stats_report_make(&in, &text, &len, NULL, NULL) == 0 && text)
			err |= fwrite(text, 1, len, stdout) != len;
		else
			err = 1;
		free(text);
		free(copy);
	}
	return err;
}

int main(int argc, char **argv)
{
	double delay = 1;
	long count = 0;
	int top = 20;
	bool report = false;
	int pid = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *end;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--report")) {
			report = true;
		} else if ((!strcmp(a, "-d") || !strcmp(a, "-n") || !strcmp(a, "--top")) && i + 1 < argc) {
			const char *v = argv[++i];
			errno = 0;
			double d = strtod(v, &end);
			if (errno || end == v || *end)
				die("wants a number, not '%s'", v);
			if (!strcmp(a, "-d")) {
				if (!(d >= 0.1 && d <= 3600))
					die("-d wants 0.1 to 3600 seconds, not '%s'", v);
				delay = d;
			} else if (!strcmp(a, "-n")) {
				if (d < 0 || d != (long)d)
					die("-n wants a count, 0 or more, not '%s'", v);
				count = (long)d;
			} else {
				if (d < 1 || d > 1000 || d != (int)d)
					die("--top wants 1 to 1000, not '%s'", v);
				top = (int)d;
			}
		} else if (a[0] != '-' && !pid) {
			long p = strtol(a, &end, 10);
			if (*end || p <= 0 || p > INT32_MAX)
				die("wants a pid, not '%s'", a);
			pid = (int)p;
		} else {
			fprintf(stderr, "hotlock-top: unknown argument '%s'\n%s", a, usage);
			return 2;
		}
	}
	if (!pid) {
		fputs(usage, stderr);
		return 2;
	}
	bool run = false;
	if (!find_area(pid, &run)) {
		char p[32];
		snprintf(p, sizeof(p), "%d", pid);
		die("no program run under hotlock-run --stats has pid %s (or it has no record yet)", p);
	}
	bool tty = isatty(1);
	uint64_t mono0 = slot_clock_ns(CLOCK_MONOTONIC), tsc0 = slot_ticks_now();
	update_watched(pid, run);
	if (report) {
		struct timespec ts = { 0, 20000000 };   /* the TSC's rate, over 20 ms */
		nanosleep(&ts, NULL);
		uint64_t mono = slot_clock_ns(CLOCK_MONOTONIC), tsc = slot_ticks_now();
		return report_now(tsc > tsc0 ? (double)(mono - mono0) / (double)(tsc - tsc0) : 1);
	}
	refresh(delay, 1, top, false, true);    /* where they stand */
	for (long i = 0; !count || i < count; i++) {
		uint64_t before = slot_clock_ns(CLOCK_MONOTONIC);
		struct timespec ts = { (time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9) };
		nanosleep(&ts, NULL);
		uint64_t mono = slot_clock_ns(CLOCK_MONOTONIC), tsc = slot_ticks_now();
		update_watched(pid, run);
		if (!n_watched && (run ? kill(pid, 0) != 0 : true)) {
			printf("hotlock-top: the program has ended\n");
			return 0;
		}
		refresh((double)(mono - before) / 1e9, tsc > tsc0 ? (double)(mono - mono0) / (double)(tsc - tsc0) : 1,
			top, tty, false);
	}
	return 0;
}
