/* SPDX-License-Identifier: MIT */
/* A slot of the stats area (src/preload/stats_area.h), as hotlock-run's
 * collector and hotlock-top read it: the process behind it, its threads'
 * names and CPU times and its modules from /proc, what its threads
 * summed, its times in nanoseconds, and the report's input. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "slot.h"

uint64_t slot_clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t slot_ticks_now(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return slot_clock_ns(CLOCK_MONOTONIC);
#endif
}

const char *slot_read_stat(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	/* The name (field 2) may hold spaces and parentheses: from the last
	 * ')'. */
	return strrchr(buf, ')');
}

const char *slot_stat_field(const char *fields, int n)
{
	const char *p = fields;
	for (int field = 2; p && field < n; field++)
		p = strchr(p + 1, ' ');
	return p ? p + 1 : NULL;
}

/* When process pid started (CLOCK_BOOTTIME ns, from /proc), 0 if gone. */
uint64_t slot_process_start_ns(int32_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	const char *start = slot_stat_field(slot_read_stat(path, buf, sizeof(buf)), 22);
	long hz = sysconf(_SC_CLK_TCK);
	if (!start || hz <= 0)
		return 0;
	return strtoull(start, NULL, 10) * (1000000000ull / (uint64_t)hz);
}

/* Whether the process that took slot i (at since_ns) is still pid's: a
 * process started later has the pid of one that ended.  /proc's start is
 * in clock ticks (10 ms here): a margin of two. */
bool slot_same_process(int32_t pid, uint64_t since_ns)
{
	uint64_t start = slot_process_start_ns(pid);
	long hz = sysconf(_SC_CLK_TCK);
	return start && start <= since_ns + 2 * (1000000000ull / (uint64_t)(hz > 0 ? hz : 100));
}

bool slot_thread_name(int32_t pid, uint32_t tid, char name[STATS_NAME])
{
	char path[96], buf[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", (int)pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t m = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (m <= 0)
		return false;
	buf[m] = 0;
	buf[strcspn(buf, "\n")] = 0;
	buf[STATS_NAME - 1] = 0;        /* comm is 15 characters */
	memcpy(name, buf, STATS_NAME);
	return true;
}

/* The names and CPU times of slot s's threads still running, from /proc
 * (the process may die of a signal, which leaves no word of them). */
void slot_read_threads(struct area_slot *s)
{
	struct stats_thread *t = area_threads(s);
	uint32_t n = atomic_load_explicit(&s->threads_used, memory_order_relaxed);
	long hz = sysconf(_SC_CLK_TCK);
	for (uint32_t k = 0; k < n && k < AREA_MAX_THREADS; k++) {
		if (!t[k].tid || atomic_load_explicit(&t[k].exited, memory_order_relaxed))
			continue;
		char path[96], buf[1024];
		slot_thread_name(s->pid, t[k].tid, t[k].name);
		snprintf(path, sizeof(path), "/proc/%d/task/%u/stat", (int)s->pid, t[k].tid);
		const char *times = slot_stat_field(slot_read_stat(path, buf, sizeof(buf)), 14);
		if (!times || hz <= 0)
			continue;
		char *q;
		unsigned long long utime = strtoull(times, &q, 10), stime = strtoull(q, NULL, 10);
		uint64_t ns = (utime + stime) * (1000000000ull / (uint64_t)hz);
		if (ns > atomic_load_explicit(&t[k].cpu_ns, memory_order_relaxed))
			atomic_store_explicit(&t[k].cpu_ns, ns, memory_order_relaxed);
	}
}

/* Modules the process mapped after its load (dlopen), from /proc: added to
 * the slot's list, which the process no longer writes once it is LIVE.
 * Their load bias is where their first page (file offset 0) is mapped, as
 * for a library linked to load at 0; no build ID to check. */
void slot_read_maps(struct area_slot *s)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->pid);
	FILE *f = fopen(path, "re");
	char line[PATH_MAX + 128];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perms, &off, &name_at) < 4 ||
		    !name_at || line[name_at] != '/')
			continue;
		char *name = line + name_at;
		name[strcspn(name, "\n")] = 0;
		struct area_module *m = NULL;
		for (uint32_t k = 0; k < s->n_modules && k < AREA_MAX_MODULES; k++)
			if (!strcmp(s->strings + s->modules[k].path, name) ||
			    (lo >= s->modules[k].lo && lo < s->modules[k].hi))
				m = &s->modules[k];
		if (m) {
			/* One we have; a later mapping of a new one widens it. */
			if (m->build_id_len == 0 && !strcmp(s->strings + m->path, name)) {
				if (lo < m->lo)
					m->lo = lo;
				if (hi > m->hi)
					m->hi = hi;
				if (off == 0)
					m->bias = lo;
			}
			continue;
		}
		size_t n = strlen(name) + 1;
		if (s->n_modules >= AREA_MAX_MODULES || n > AREA_STRINGS - s->strings_used)
			break;
		m = &s->modules[s->n_modules];
		memset(m, 0, sizeof(*m));
		m->lo = lo;
		m->hi = hi;
		m->bias = off == 0 ? lo : lo - off;
		m->path = s->strings_used;
		memcpy(s->strings + s->strings_used, name, n);
		s->strings_used += (uint32_t)n;
		s->n_modules++;
	}
	if (f)
		fclose(f);
}

/* What every thread had summed, into the records (stats_area.h, struct
 * area_sums): the process is gone, so plain adds. */
void slot_add_sums(struct area_slot *s)
{
	struct area_sums *sums = area_sums(s);
	struct stats_rec *recs = area_recs(s);
	uint32_t used = atomic_load_explicit(&s->recs_used, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&s->threads_used, memory_order_relaxed);
	for (uint32_t t = 0; t < n && t < AREA_MAX_THREADS; t++)
		for (uint32_t k = 0; k < AREA_SUM_SLOTS; k++) {
			struct area_sum *sl = &sums[t].slot[k];
			uint32_t idx = atomic_load_explicit(&sl->rec, memory_order_relaxed);
			if (!idx || idx >= used)
				continue;
			struct stats_rec *r = &recs[idx];
			for (int c = 0; c < STC_COUNT; c++) {
				uint64_t v = atomic_load_explicit(&sl->c[c], memory_order_relaxed);
				uint64_t have = atomic_load_explicit(&r->c[c], memory_order_relaxed);
				if (stats_counter_is_max(c))
					v = v > have ? v : have;
				else
					v += have;
				atomic_store_explicit(&r->c[c], v, memory_order_relaxed);
			}
			uint64_t end = atomic_load_explicit(&sl->last_end, memory_order_relaxed);
			if (end > atomic_load_explicit(&r->last_ns, memory_order_relaxed))
				atomic_store_explicit(&r->last_ns, end, memory_order_relaxed);
			atomic_store_explicit(&sl->rec, 0, memory_order_relaxed);
		}
}

static const bool is_time[STC_COUNT] = {
	[STC_W_WAIT_NS] = true, [STC_W_WAIT_MAX_NS] = true, [STC_R_WAIT_NS] = true,
	[STC_R_WAIT_MAX_NS] = true, [STC_HOLD_NS] = true, [STC_HOLD_MAX_NS] = true,
	[STC_C_WAIT_NS] = true,
};

static void scale(_Atomic uint64_t *v, double k)
{
	atomic_store_explicit(v, (uint64_t)((double)atomic_load_explicit(v, memory_order_relaxed) * k),
			      memory_order_relaxed);
}

/* The slot's times from TSC ticks to nanoseconds at ns_per_tick (a slot
 * timed with CLOCK_MONOTONIC has them so already); first and last become
 * CLOCK_MONOTONIC, from the slot's pair of readings at load. */
void slot_to_ns(struct area_slot *s, double k)
{
	if (!s->tsc)
		return;
	struct stats_rec *recs = area_recs(s);
	uint32_t used = atomic_load_explicit(&s->recs_used, memory_order_relaxed);
	for (uint32_t i = 1; i < used && i < AREA_MAX_RECS; i++) {
		struct stats_rec *r = &recs[i];
		r->first_ns = s->mono_base + (uint64_t)((double)(r->first_ns - s->tsc_base) * k);
		uint64_t last = atomic_load_explicit(&r->last_ns, memory_order_relaxed);
		if (last)
			atomic_store_explicit(&r->last_ns, s->mono_base + (uint64_t)((double)(last - s->tsc_base) * k),
					      memory_order_relaxed);
		for (int c = 0; c < STC_COUNT; c++)
			if (is_time[c])
				scale(&r->c[c], k);
	}
	struct stats_thread *t = area_threads(s);
	uint32_t n = atomic_load_explicit(&s->threads_used, memory_order_relaxed);
	for (uint32_t i = 0; i < n && i < AREA_MAX_THREADS; i++) {
		scale(&t[i].lock_wait_ns, k);
		scale(&t[i].cond_wait_ns, k);
	}
	scale(&s->omitted_lock_ns, k);
	scale(&s->omitted_cond_ns, k);
}

/* in, for the report of slot s's process (which ends as end says, at
 * end_ns; 0: now); program: room for its command line. */
void slot_report_input(const struct area_slot *s, struct stats_report *in, const char *end,
		       uint64_t end_ns, int top, char program[AREA_CMDLINE + 1])
{
	/* The command line: its arguments with spaces between. */
	uint32_t len = s->cmdline_len < AREA_CMDLINE ? s->cmdline_len : AREA_CMDLINE;
	memcpy(program, s->cmdline, len);
	program[len] = 0;
	for (uint32_t k = 0; len && k < len - 1; k++)
		if (!program[k])
			program[k] = ' ';
	if (!len)
		snprintf(program, AREA_CMDLINE + 1, "?");
	uint32_t used = atomic_load_explicit(&s->recs_used, memory_order_relaxed);
	uint32_t threads = atomic_load_explicit(&s->threads_used, memory_order_relaxed);
	*in = (struct stats_report){
		.pid = s->pid,
		.end = end,
		.program = program,
		.top = top,
		.start_ns = s->start_ns,
		.end_ns = end_ns ? end_ns : slot_clock_ns(CLOCK_BOOTTIME),
		.cpus = s->cpus,
		.nodes = s->nodes,
		.handoff_ns = s->handoff_ns,
		.spin_ns = s->spin_ns,
		.cna = s->cna,
		.recs = area_recs((void *)s),
		.n_recs = used < AREA_MAX_RECS ? used : AREA_MAX_RECS,
		.threads = area_threads((void *)s),
		.n_threads = threads < AREA_MAX_THREADS ? threads : AREA_MAX_THREADS,
		.threads_omitted = atomic_load_explicit(&s->threads_omitted, memory_order_relaxed),
		.omitted_lock_wait_ns = atomic_load_explicit(&s->omitted_lock_ns, memory_order_relaxed),
		.omitted_cond_wait_ns = atomic_load_explicit(&s->omitted_cond_ns, memory_order_relaxed),
		.objects_untracked = atomic_load_explicit(&s->untracked, memory_order_relaxed),
		.modules = s->modules,
		.n_modules = s->n_modules < AREA_MAX_MODULES ? s->n_modules : AREA_MAX_MODULES,
		.strings = s->strings,
	};
}
