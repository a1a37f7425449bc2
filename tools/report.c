/* SPDX-License-Identifier: MIT */
/* The contention report of hotlock-run --stats (docs/stats.md): one
 * process's, made by the collector (collector.c) after the process has
 * ended, from the records it left in the stats area (stats_area.h).
 * elfutils' libdw names the call stacks (function, and file:line where the
 * program has debug information) from the modules the process had, and
 * libjansson writes the JSON.
 *
 * What it makes, for one process:
 *  - the text report: a header with the run's waiting share, the top N
 *    mutexes and rwlocks by total wait, the top N condition variables by
 *    waits, each with where it was first contended, its numbers and what
 *    would help; then the threads;
 *  - the JSON report: the same numbers, one line, as
 *    docs/stats.schema.json says, valid UTF-8 whatever bytes the process's
 *    names held.
 * Its memory is proportional to N, not to the process's records.
 *
 * The advice (advise(), below) is a set of rules on the numbers, each
 * stated with the numbers that fired it; the thresholds are named
 * constants there. */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <libelf.h>
#include <jansson.h>

#include "stats.h"
#include "stats_area.h"
#include "utf8.h"

/* ---- entries: a record with its numbers worked out ---- */

struct frame {
	uintptr_t pc;
	const char *function;           /* NULL: unknown */
	const char *file;
	int line;
	const char *module;
	uintptr_t offset;               /* pc in the module's own addresses */
	bool inlined;                   /* a function inlined at pc into the next frame */
};

#define MAX_FRAMES (STATS_FRAMES * 4)  /* return addresses with their inlined calls */

/* A call stack, named: its frames and where the program's own code starts. */
struct callstack {
	struct frame frames[MAX_FRAMES];
	int nframes;
	int site;                       /* the first frame of the program's own code */
};

struct entry {
	const struct stats_rec *r;
	uint64_t c[STC_COUNT];          /* a copy: threads may still count */
	struct callstack first;         /* where it was first contended */
	/* Where it was held while others waited (stats.h, struct stats_site):
	 * the sampled holder stacks, and each one's share of the samples. */
	struct callstack holder[STATS_HOLDER_SITES];
	double holder_share[STATS_HOLDER_SITES];
	int n_holders;
	uint64_t holder_samples;
	char name[128];                 /* object_name: the variable it is in; "": none */
	char mutex_name[128];           /* a condvar's mutex's */
	/* derived */
	uint64_t acq, contended, wait_ns, wait_max_ns;
	double contended_share, wait_mean_us, hold_mean_us, cross_share;
	double rewait_share, woken_per_broadcast;
	char advice_code[8][24];
	char *advice_text[8];
	int n_advice;
};

struct report {
	const struct stats_report *in;
	double elapsed_s, thread_s, lock_wait_s, cond_wait_s;
	struct entry *locks, *conds;    /* the top N of each, by rank */
	size_t n_locks, n_conds, tracked;
	char program[1024];             /* valid UTF-8 */
	char cpu[128];
	Dwfl *dwfl;
	char *demangled[MAX_FRAMES * 1024];
	size_t n_demangled;
};

static double s_of(uint64_t ns) { return (double)ns / 1e9; }
static double us_of(uint64_t ns) { return (double)ns / 1e3; }
static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

static void read_text_file(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
}

static void cpu_model(char *out, size_t len)
{
	char buf[8192];
	read_text_file("/proc/cpuinfo", buf, sizeof(buf));
	char *p = strstr(buf, "model name");
	if (!p || !(p = strchr(p, ':'))) {
		snprintf(out, len, "unknown CPU");
		return;
	}
	p += 1 + strspn(p + 1, " \t");
	snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
}

/* ---- names: elfutils' libdwfl on the modules the process had ---- */

static const char *demangle(struct report *rep, const char *name)
{
	/* C++ names, where the program has a C++ runtime to demangle them. */
	typedef char *demangle_fn(const char *, char *, size_t *, int *);
	static demangle_fn *fn;
	static bool looked;
	if (!looked) {
		/* libstdc++'s: hotlock-run is a C program, and loads it only
		 * where a name needs it. */
		void *h = strncmp(name, "_Z", 2) ? NULL : dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
		fn = h ? (demangle_fn *)dlsym(h, "__cxa_demangle") : NULL;
		looked = strncmp(name, "_Z", 2) == 0;
	}
	if (!fn || strncmp(name, "_Z", 2) != 0)
		return name;
	int status;
	char *d = fn(name, NULL, NULL, &status);
	if (!d || status)
		return name;
	if (rep->n_demangled < sizeof(rep->demangled) / sizeof(rep->demangled[0]))
		rep->demangled[rep->n_demangled++] = d;
	return d;
}

/* The C and C++ runtimes: their frames in a lock's stack are the lock's
 * plumbing (std::mutex's out-of-line code) or a thread's or the program's
 * entry (start_thread, __libc_start_call_main), never where to look.
 * They are named from their symbol tables only: reading their DWARF for a
 * line would cost more than the rest of the report (libc6-dbg's line
 * tables: 62 ms for start_thread's line, against 0.9 ms for its name). */
static bool runtime_module(const char *path)
{
	static const char *const runtimes[] = {
		"libc.so.", "ld-linux", "libpthread.so.", "libstdc++.so.", "libgcc_s.so.", "libm.so.", NULL,
	};
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	for (int i = 0; base && runtimes[i]; i++)
		if (!strncmp(base, runtimes[i], strlen(runtimes[i])))
			return true;
	return false;
}

static bool exists(const char *dir, const char *sub, const char *name)
{
	char path[4096];
	return snprintf(path, sizeof path, "%s%s%s", dir, sub, name) < (int)sizeof path && access(path, R_OK) == 0;
}

/* Whether a module's .gnu_debuglink names a file in one of the places
 * elfutils looks (beside the module, in .debug/ beside it, or under
 * /usr/lib/debug), from the module's path as mapped and as resolved. */
static bool debuglink_present(const char *file_name, const char *link)
{
	if (link[0] == '/')
		return access(link, R_OK) == 0;
	char *paths[2] = { strdup(file_name), realpath(file_name, NULL) };
	bool found = false;
	for (int i = 0; i < 2 && !found; i++) {
		char *slash = paths[i] ? strrchr(paths[i], '/') : NULL;
		if (!slash)
			continue;
		slash[1] = '\0';
		found = exists(paths[i], "", link) || exists(paths[i], ".debug/", link) ||
			exists("/usr/lib/debug", paths[i], link);
	}
	free(paths[0]);
	free(paths[1]);
	return found;
}

/* A module's separate debug file, from this machine only.  elfutils'
 * standard search ends, when it finds nothing, by asking debuginfod: that
 * loads libdebuginfod and libcurl's dozen libraries (16 ms at each
 * process's exit) even with no server set, and with one set it would
 * download at exit.  So: by build ID first (Debian's -dbg and -dbgsym
 * files), then the standard search only where the module's debuglink
 * names a file that is there.  The runtimes' debug files are searched too
 * (their full symbol tables name start_thread), but not their DWARF. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					      debuglink_crc, debuginfo_file_name);
	if (fd >= 0 || !file_name || !debuglink_file || !debuglink_present(file_name, debuglink_file))
		return fd;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}

/* Whether path is still the file the process mapped as module m: its GNU
 * build ID, where the process recorded one (a program rebuilt since would
 * be named wrongly). */
static bool same_build(const char *path, const struct area_module *m)
{
	if (!m->build_id_len)
		return true;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id = NULL;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	bool same = n == m->build_id_len && !memcmp(id, m->build_id, (size_t)n);
	if (elf)
		elf_end(elf);
	close(fd);
	return same;
}

static void open_dwfl(struct report *rep)
{
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = find_debuginfo,
	};
	/* The report must not fetch debug information over the network:
	 * debuginfod, reached only where a debuglink's file is there but is
	 * not the module's (find_debuginfo), reads this. */
	unsetenv("DEBUGINFOD_URLS");
	rep->dwfl = dwfl_begin(&callbacks);
	if (!rep->dwfl)
		return;
	dwfl_report_begin(rep->dwfl);
	const struct stats_report *in = rep->in;
	for (size_t i = 0; i < in->n_modules; i++) {
		const struct area_module *m = &in->modules[i];
		const char *path = in->strings + m->path;
		/* At the process's own load bias; a file replaced since (a
		 * rebuilt program) is left out: its names would be wrong. */
		if (same_build(path, m))
			dwfl_report_elf(rep->dwfl, path, path, -1, m->bias, true);
	}
	if (dwfl_report_end(rep->dwfl, NULL, NULL) != 0) {
		dwfl_end(rep->dwfl);
		rep->dwfl = NULL;
	}
}

/* The name of a DWARF function: its linkage name demangled (qualified, as
 * the symbol table has it), else its own name. */
static const char *die_function(struct report *rep, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!linkage)
		linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	return linkage ? demangle(rep, linkage) : dwarf_diename(die);
}

/* The frames of one return address pc, into out (at most max): where the
 * program was compiled with debug information, the functions inlined at
 * the call, innermost first, each with the line in it, then the function
 * itself with the line of the outermost inlined call (as addr2line -i
 * does); otherwise one frame, named from the symbol table.  Returns how
 * many frames it wrote (at least 1 where max > 0). */
static int name_pc(struct report *rep, uintptr_t pc, struct frame *out, int max)
{
	if (max <= 0)
		return 0;
	struct frame f = { .pc = pc };
	Dwfl_Module *mod = NULL;
	/* A return address: the call is the instruction before it. */
	Dwarf_Addr at = pc - 1;
	if (rep->dwfl && (mod = dwfl_addrmodule(rep->dwfl, at))) {
		/* The module's name: its path in /proc/self/maps; and the
		 * address as the module's file has it (addr2line's), for a
		 * module without symbols here whose debug file the user may
		 * have elsewhere. */
		Dwarf_Addr start = 0;
		f.module = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
		/* The module's own ELF's load bias, not its DWARF's (which
		 * dwfl_module_relocate_address reads: decompressing libc6-dbg's
		 * DWARF cost 33 ms). */
		GElf_Addr bias = 0;
		f.offset = dwfl_module_getelf(mod, &bias) ? (uintptr_t)(pc - bias) : (uintptr_t)(pc - start);
		const char *name = dwfl_module_addrname(mod, at);
		if (name)
			f.function = demangle(rep, name);
		if (runtime_module(f.module))
			mod = NULL;     /* its name only (runtime_module) */
	}
	if (!f.module) {
		/* A module the process had whose file is gone or changed:
		 * its path and the offset, for addr2line on the old file. */
		for (size_t i = 0; i < rep->in->n_modules; i++) {
			const struct area_module *m = &rep->in->modules[i];
			if (at >= m->lo && at < m->hi) {
				f.module = rep->in->strings + m->path;
				f.offset = pc - m->bias;
				break;
			}
		}
	}
	if (mod) {
		Dwfl_Line *line = dwfl_module_getsrc(mod, at);
		int lineno = 0;
		const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
		if (file && lineno > 0) {
			f.file = file;
			f.line = lineno;
		}
	}
	int n = 0;
	Dwarf_Addr bias;
	Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, at, &bias) : NULL;
	Dwarf_Die *scopes = NULL;
	int nscopes = cu ? dwarf_getscopes(cu, at - bias, &scopes) : 0;
	if (nscopes > 0) {
		/* dwarf_getscopes stops at the innermost inlined call's
		 * abstract scopes: the chain of concrete inlined calls up to
		 * the real function comes from the innermost scope's DIE. */
		Dwarf_Die inner = scopes[0];
		free(scopes);
		scopes = NULL;
		nscopes = dwarf_getscopes_die(&inner, &scopes);
	}
	Dwarf_Files *files = NULL;
	if (nscopes > 0 && dwarf_getsrcfiles(cu, &files, NULL) != 0)
		files = NULL;
	for (int i = 0; i < nscopes && n < max - 1; i++) {
		Dwarf_Die *sc = &scopes[i];
		if (dwarf_tag(sc) != DW_TAG_inlined_subroutine)
			continue;
		/* An inlined call: its function, at the line we are at in it;
		 * the line in its caller is the call's. */
		struct frame in = f;
		in.inlined = true;
		in.function = die_function(rep, sc);
		out[n++] = in;
		Dwarf_Attribute attr;
		Dwarf_Word file_idx = 0, call_line = 0;
		const char *call_file = NULL;
		if (files && dwarf_formudata(dwarf_attr(sc, DW_AT_call_file, &attr), &file_idx) == 0)
			call_file = dwarf_filesrc(files, file_idx, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(sc, DW_AT_call_line, &attr), &call_line) != 0)
			call_line = 0;
		f.file = call_file && call_line ? call_file : NULL;
		f.line = call_file && call_line ? (int)call_line : 0;
	}
	free(scopes);
	out[n++] = f;
	return n;
}

/* The variable an object at addr is in, into out ("" where none): the
 * data symbol that holds it, a global or a static (`LOCK_open`; a
 * function's `static pthread_mutex_t txn`, which gcc names txn.0, shows
 * as txn), with +0xOFFSET where the lock is a member of it.  A lock on
 * the heap or the stack, or in a module without symbols for it, has
 * none. */
static void object_name(struct report *rep, uintptr_t addr, char *out, size_t len)
{
	out[0] = '\0';
	Dwfl_Module *mod = rep->dwfl && addr ? dwfl_addrmodule(rep->dwfl, addr) : NULL;
	GElf_Sym sym;
	const char *name = mod ? dwfl_module_addrsym(mod, addr, &sym, NULL) : NULL;
	if (!name || GELF_ST_TYPE(sym.st_info) != STT_OBJECT || addr < sym.st_value ||
	    addr >= sym.st_value + sym.st_size)
		return;
	name = demangle(rep, name);
	size_t n = strlen(name);
	const char *dot = strrchr(name, '.');
	if (dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1))
		n = (size_t)(dot - name);       /* gcc's suffix of a function's static */
	if (addr > sym.st_value)
		snprintf(out, len, "%.*s+0x%" PRIxPTR, (int)n, name, (uintptr_t)(addr - sym.st_value));
	else
		snprintf(out, len, "%.*s", (int)n, name);
}

/* ---- where to look: past the lock's plumbing ----
 * The innermost frame is whatever called pthread_mutex_lock: often a
 * wrapper (std::mutex::lock inlined into libstdc++'s own code, a program's
 * Mutex::Lock, sqlite3_mutex_enter, absl::CondVar::Wait).  The site is the
 * first frame that is not: one with a name none of whose words is a
 * locking word, outside the C and C++ runtimes.  Names are split into
 * words at anything not a letter or digit and where a capital follows a
 * small letter (MutexLock: mutex, lock).  A frame without a name outside
 * the runtimes cannot be judged, and is the site, unless a named frame of
 * its module calls it (named_caller_in_module). */
static const char *const plumbing_words[] = {
	"mutex", "lock", "rdlock", "wrlock", "rwlock", "spinlock", "guard", "gthread", "cond", "condvar",
	"condition", "critical", "sem", "semaphore", "futex", NULL,
};

static bool plumbing_word(const char *w, size_t n)
{
	for (int i = 0; plumbing_words[i]; i++)
		if (strlen(plumbing_words[i]) == n && !strncasecmp(w, plumbing_words[i], n))
			return true;
	return false;
}

static bool is_plumbing(const struct frame *f)
{
	if (runtime_module(f->module))
		return true;    /* named or not: a stripped libc names few */
	if (!f->function)
		return false;
	const char *p = f->function;
	while (*p) {
		while (*p && !isalnum((unsigned char)*p))
			p++;
		const char *w = p;
		while (*p && isalnum((unsigned char)*p) &&
		       !(p > w && isupper((unsigned char)*p) && islower((unsigned char)p[-1])))
			p++;
		if (p > w && plumbing_word(w, (size_t)(p - w)))
			return true;
	}
	return false;
}

/* Whether frame i, without a name, is followed by a named frame of the
 * same module before the stack leaves it: a static helper of a stripped
 * library (SQLite takes its mutexes so), whose named caller says more. */
static bool named_caller_in_module(const struct callstack *st, int i)
{
	const char *mod = st->frames[i].module;
	for (int j = i + 1; mod && j < st->nframes; j++) {
		if (!st->frames[j].module || strcmp(st->frames[j].module, mod))
			return false;
		if (st->frames[j].function)
			return true;
	}
	return false;
}

static int find_site(const struct callstack *st)
{
	for (int i = 0; i < st->nframes; i++)
		if (!is_plumbing(&st->frames[i]) && (st->frames[i].function || !named_caller_in_module(st, i)))
			return i;
	return 0;
}

/* The frames of n return addresses, named, with their site. */
static void name_stack(struct report *rep, const uintptr_t *pcs, uint32_t n, struct callstack *st)
{
	st->nframes = 0;
	for (uint32_t f = 0; f < n; f++)
		st->nframes += name_pc(rep, pcs[f], &st->frames[st->nframes], MAX_FRAMES - st->nframes);
	st->site = find_site(st);
}

/* ---- the advice ----
 * Each rule: when it fires, and the sentence with the numbers. */
#define MIN_CONTENDED 20                /* fewer waits: too few to judge */
#define SPLIT_WAITERS 1.0               /* split-or-shorten: on average a thread waits */
#define SPLIT_WAIT_NS 100000000ull      /* ... over 20 waits, or fewer waits of 100 ms in all */
#define WRITER_WAIT_NS 10000000ull      /* writers-wait: or writers waited 10 ms in all */
#define HANDOFF_SHARE 0.30              /* handoff-threshold: waits ended by a handoff */
#define SPIN_MIN 100
#define SPIN_WON_SHARE 0.10             /* spinning-off: at most this many spins win */
#define CROSS_SHARE 0.30                /* use-cna */
#define WRITER_WAIT_FACTOR 4.0          /* writers-wait: a writer waits 4x a reader */
#define WRITE_SHARE 0.80                /* mostly-writes */
#define TIMEOUT_SHARE 0.10
#define EMPTY_SIGNALS 10000             /* signal-no-waiter */
#define EMPTY_SIGNAL_SHARE 0.90
#define NO_ACTION_SHARE 0.01            /* waits under 1% of thread time */

__attribute__((format(printf, 3, 4)))
static void advise(struct entry *e, const char *code, const char *fmt, ...)
{
	if (e->n_advice >= 8)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *text = NULL;
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text)
		return;
	snprintf(e->advice_code[e->n_advice], sizeof(e->advice_code[0]), "%s", code);
	e->advice_text[e->n_advice++] = text;
}

static void advise_lock(struct report *rep, struct entry *e)
{
	const uint64_t *c = e->c;
	if (e->r->type & STATS_TYPE_GLIBC) {
		advise(e, "not-analysed",
		       "a mutex glibc keeps (process-shared, robust or priority-inheriting): threads "
		       "waited %.3f s for it, %.2f%% of their time, in %" PRIu64 " waits; its holds "
		       "are not timed and no rule is applied to it",
		       s_of(e->wait_ns), 100 * ratio(s_of(e->wait_ns), rep->thread_s), e->contended);
		return;
	}
	/* Its span: from its first contention to the end of its last wait
	 * (a lock busy in one phase of a program is judged by that phase). */
	uint64_t last = atomic_load_explicit(&e->r->last_ns, memory_order_relaxed);
	double span = last > e->r->first_ns ? s_of(last - e->r->first_ns) : 0;
	if (span < 1e-3)
		span = 1e-3;
	double waiters = s_of(e->wait_ns) / span;       /* Little's law: mean threads waiting */
	bool rw = e->r->obj == ST_RWLOCK;
	/* A lock its threads waited for under 1% of their time is not worth
	 * changing, whatever the shape of its numbers: handoffs, spins or
	 * writers' waits on it cost next to nothing.  Its timeouts, which the
	 * program sees as failures, are still stated. */
	bool matters = ratio(s_of(e->wait_ns), rep->thread_s) >= NO_ACTION_SHARE;
	/* Little's law: the mean number of threads waiting for it over its
	 * span is its total wait over the span's length.  At one thread or
	 * more, the lock itself is what they queue for. */
	if (matters && (e->contended >= MIN_CONTENDED || e->wait_ns >= SPLIT_WAIT_NS) && waiters >= SPLIT_WAITERS)
		advise(e, "split-or-shorten",
		       "on average %.1f threads were waiting for it in the %.2f s from its first "
		       "contention to its last (mean hold %.1f us, max %.1f us; %.0f%% of its %" PRIu64
		       " acquisitions waited, %.1f us on average): split the data it protects into "
		       "several locks, or do less while holding it",
		       waiters, span, e->hold_mean_us, us_of(c[STC_HOLD_MAX_NS]), 100 * e->contended_share,
		       e->acq, e->wait_mean_us);
	if (matters && e->contended >= MIN_CONTENDED &&
	    ratio((double)c[STC_HANDOFFS], (double)e->contended) >= HANDOFF_SHARE)
		advise(e, "handoff-threshold",
		       "%" PRIu64 " of %" PRIu64 " waits (%.0f%%) ended with the lock handed to a sleeping "
		       "waiter, each a wake-up the lock stood idle for: a longer handoff threshold "
		       "(hotlock-run --handoff-ns, now %" PRIu64 " ns) lets running threads take it "
		       "meanwhile",
		       c[STC_HANDOFFS], e->contended, 100 * ratio((double)c[STC_HANDOFFS], (double)e->contended),
		       rep->in->handoff_ns);
	if (matters && c[STC_SPINS] >= SPIN_MIN &&
	    ratio((double)c[STC_SPINS_WON], (double)c[STC_SPINS]) <= SPIN_WON_SHARE)
		advise(e, "spinning-off",
		       "only %" PRIu64 " of %" PRIu64 " spin phases (%.0f%%) got the lock; the others "
		       "burned CPU and then slept: spinning does not pay here (hotlock-run --spin-ns 0; "
		       "now %" PRIu64 " ns)",
		       c[STC_SPINS_WON], c[STC_SPINS], 100 * ratio((double)c[STC_SPINS_WON], (double)c[STC_SPINS]),
		       rep->in->spin_ns);
	/* The queue in force: CNA is the default wherever there are nodes. */
	if (matters && rep->in->nodes > 1 && !rep->in->cna && e->contended >= MIN_CONTENDED &&
	    e->cross_share >= CROSS_SHARE)
		advise(e, "use-cna",
		       "%.0f%% of contended acquisitions moved the lock to another NUMA node (%d nodes): "
		       "a NUMA-aware queue keeps it on one node longer (hotlock-run --queue cna)",
		       100 * e->cross_share, rep->in->nodes);
	if (matters && rw) {
		/* Readers' mean wait, compared with no less than 1 us: a
		 * writer's few microseconds against readers' nothing is noise. */
		double r_mean = ratio(us_of(c[STC_R_WAIT_NS]), (double)c[STC_R_CONTENDED]);
		double w_mean = ratio(us_of(c[STC_W_WAIT_NS]), (double)c[STC_W_CONTENDED]);
		uint64_t reads = c[STC_R_ACQ], writes = c[STC_W_ACQ];
		if ((c[STC_W_CONTENDED] >= MIN_CONTENDED || c[STC_W_WAIT_NS] >= WRITER_WAIT_NS) &&
		    reads >= 4 * writes &&
		    w_mean >= WRITER_WAIT_FACTOR * (r_mean > 1 ? r_mean : 1) &&
		    e->r->type != 2 /* PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP */)
			advise(e, "writers-wait",
			       "writers waited %.1f us on average (max %.1f us) against readers' %.1f us, "
			       "with %" PRIu64 " reads to %" PRIu64 " writes: readers keep the writers "
			       "out; a writer-preferring kind (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP) "
			       "lets them in",
			       w_mean, us_of(c[STC_W_WAIT_MAX_NS]), r_mean, reads, writes);
		if (reads + writes >= 100 && ratio((double)writes, (double)(reads + writes)) >= WRITE_SHARE)
			advise(e, "mostly-writes",
			       "%.0f%% of its %" PRIu64 " acquisitions were writes: readers rarely share it, "
			       "and a mutex costs less than an rwlock",
			       100 * ratio((double)writes, (double)(reads + writes)), reads + writes);
	}
	if (c[STC_TIMEOUTS] >= 10 &&
	    ratio((double)c[STC_TIMEOUTS], (double)(e->contended + c[STC_TIMEOUTS])) >= TIMEOUT_SHARE)
		advise(e, "timeouts",
		       "%" PRIu64 " timed waits timed out (%.0f%% of waits): holders keep it longer than its "
		       "callers are willing to wait (max hold %.1f us)",
		       c[STC_TIMEOUTS], 100 * ratio((double)c[STC_TIMEOUTS], (double)(e->contended + c[STC_TIMEOUTS])),
		       us_of(c[STC_HOLD_MAX_NS]));
	if (!e->n_advice)
		advise(e, "no-action",
		       "threads waited %.3f s for it, %.2f%% of their time%s: not worth changing",
		       s_of(e->wait_ns), 100 * ratio(s_of(e->wait_ns), rep->thread_s),
		       matters ? " (no rule found a cause)" : "");
}

/* A condvar's wake-ups are stated as they are (woken, re-waits) and draw
 * no advice: a thread that re-waits with the mutex held may have found
 * its condition false, or done its work under the mutex and wait for the
 * next round (a generation broadcast), and telling a program to signal
 * one waiter where every woken one has work would deadlock it. */
static void advise_cond(struct report *rep, struct entry *e)
{
	const uint64_t *c = e->c;
	uint64_t signals = c[STC_C_SIGNALS] + c[STC_C_SIGNALS_EMPTY];
	if (c[STC_C_SIGNALS_EMPTY] >= EMPTY_SIGNALS &&
	    ratio((double)c[STC_C_SIGNALS_EMPTY], (double)signals) >= EMPTY_SIGNAL_SHARE)
		advise(e, "signal-no-waiter",
		       "%" PRIu64 " of %" PRIu64 " signals (%.0f%%) found nobody waiting: a count of waiters "
		       "kept under the mutex would skip them",
		       c[STC_C_SIGNALS_EMPTY], signals, 100 * ratio((double)c[STC_C_SIGNALS_EMPTY], (double)signals));
	if (c[STC_TIMEOUTS] >= 10 && ratio((double)c[STC_TIMEOUTS], (double)c[STC_C_WAITS]) >= TIMEOUT_SHARE)
		advise(e, "timeouts",
		       "%" PRIu64 " of %" PRIu64 " waits timed out (%.0f%%): a polling loop, or signals that "
		       "come late", c[STC_TIMEOUTS], c[STC_C_WAITS],
		       100 * ratio((double)c[STC_TIMEOUTS], (double)c[STC_C_WAITS]));
	(void)rep;
	if (!e->n_advice)
		advise(e, "no-action", "%" PRIu64 " waits, %" PRIu64 " woken: nothing to change",
		       c[STC_C_WAITS], c[STC_C_WOKEN]);
}

/* ---- gathering ---- */

static void fill(struct report *rep, struct entry *e, const struct stats_rec *r)
{
	memset(e, 0, sizeof(*e));
	e->r = r;
	for (int k = 0; k < STC_COUNT; k++)
		e->c[k] = atomic_load_explicit(&r->c[k], memory_order_relaxed);
	const uint64_t *c = e->c;
	e->acq = c[STC_W_ACQ] + c[STC_R_ACQ];
	e->contended = c[STC_W_CONTENDED] + c[STC_R_CONTENDED];
	e->wait_ns = c[STC_W_WAIT_NS] + c[STC_R_WAIT_NS];
	e->wait_max_ns = c[STC_W_WAIT_MAX_NS] > c[STC_R_WAIT_MAX_NS] ? c[STC_W_WAIT_MAX_NS] : c[STC_R_WAIT_MAX_NS];
	e->contended_share = ratio((double)e->contended, (double)e->acq);
	if (e->contended_share > 1)
		e->contended_share = 1;
	e->wait_mean_us = ratio(us_of(e->wait_ns), (double)e->contended);
	e->hold_mean_us = ratio(us_of(c[STC_HOLD_NS]), (double)c[STC_HOLDS]);
	e->cross_share = ratio((double)c[STC_CROSS_NODE], (double)e->contended);
	if (e->cross_share > 1)
		e->cross_share = 1;
	e->rewait_share = ratio((double)c[STC_C_REWAITS], (double)c[STC_C_WOKEN]);
	if (e->rewait_share > 1)
		e->rewait_share = 1;
	e->woken_per_broadcast = ratio((double)c[STC_C_BROADCAST_WAITERS], (double)c[STC_C_BROADCASTS]);
	(void)rep;
}

static int by_wait(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->wait_ns < y->wait_ns ? 1 : x->wait_ns > y->wait_ns ? -1 : 0;
}

/* Condvars: most waits first (each a sleep and a wake-up, by a signal or
 * by its time). */
static int by_waits(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	uint64_t wx = x->c[STC_C_WAITS], wy = y->c[STC_C_WAITS];
	return wx < wy ? 1 : wx > wy ? -1 : 0;
}

/* Puts e in list (n of at most top entries, most first by cmp), if it
 * ranks there: an insertion into a list of N, so that the report's
 * memory is proportional to N whatever the number of records. */
static void rank_in(struct entry *list, size_t *n, size_t top, const struct entry *e,
		    int (*cmp)(const void *, const void *))
{
	size_t at = *n;
	while (at > 0 && cmp(e, &list[at - 1]) < 0)
		at--;
	if (at >= top)
		return;
	size_t last = *n < top ? *n : top - 1;
	memmove(&list[at + 1], &list[at], (last - at) * sizeof(*list));
	list[at] = *e;
	if (*n < top)
		(*n)++;
}

static void gather(struct report *rep)
{
	const struct stats_report *in = rep->in;
	size_t top = in->top > 0 ? (size_t)in->top : 1;
	rep->locks = calloc(top, sizeof(struct entry));
	rep->conds = calloc(top, sizeof(struct entry));
	struct entry *e = calloc(1, sizeof(*e));
	if (!rep->locks || !rep->conds || !e) {
		free(e);
		return;
	}
	for (size_t i = 1; i < in->n_recs; i++) {
		const struct stats_rec *r = &in->recs[i];
		if (!atomic_load_explicit(&r->addr, memory_order_relaxed))
			continue;
		rep->tracked += atomic_load_explicit(&r->objects, memory_order_relaxed);
		fill(rep, e, r);
		if (r->obj == ST_COND) {
			if (e->c[STC_C_WAITS])
				rank_in(rep->conds, &rep->n_conds, top, e, by_waits);
		} else if (e->contended || e->c[STC_TRY_BUSY] || e->c[STC_TIMEOUTS]) {
			/* A condvar's mutex is tracked at the condvar's first
			 * wait; one that never waited is left out. */
			rank_in(rep->locks, &rep->n_locks, top, e, by_wait);
		}
	}
	free(e);
	open_dwfl(rep);
	struct entry *lists[2] = { rep->locks, rep->conds };
	size_t counts[2] = { rep->n_locks, rep->n_conds };
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < counts[l]; i++) {
			struct entry *x = &lists[l][i];
			name_stack(rep, x->r->stack, x->r->nframes, &x->first);
			uint64_t other = atomic_load_explicit(&x->r->holder_other, memory_order_relaxed);
			x->holder_samples = other;
			for (int h = 0; h < STATS_HOLDER_SITES; h++)
				x->holder_samples += atomic_load_explicit(&x->r->holders[h].samples,
									   memory_order_relaxed);
			for (int h = 0; h < STATS_HOLDER_SITES && x->holder_samples; h++) {
				const struct stats_site *site = &x->r->holders[h];
				uint64_t n = atomic_load_explicit(&site->samples, memory_order_relaxed);
				if (!n || !site->nframes)
					continue;
				int k = x->n_holders++;
				name_stack(rep, site->stack, site->nframes, &x->holder[k]);
				x->holder_share[k] = (double)n / (double)x->holder_samples;
			}
			if (x->n_holders == 2 && x->holder_share[1] > x->holder_share[0]) {
				struct callstack t = x->holder[0];
				double ts = x->holder_share[0];
				x->holder[0] = x->holder[1];
				x->holder_share[0] = x->holder_share[1];
				x->holder[1] = t;
				x->holder_share[1] = ts;
			}
			object_name(rep, atomic_load_explicit(&x->r->addr, memory_order_relaxed), x->name,
				    sizeof(x->name));
			if (l == 1)
				object_name(rep, atomic_load_explicit(&x->r->cond_mutex, memory_order_relaxed),
					    x->mutex_name, sizeof(x->mutex_name));
			if (l == 0)
				advise_lock(rep, x);
			else
				advise_cond(rep, x);
		}
}

static void thread_totals(struct report *rep)
{
	const struct stats_report *in = rep->in;
	uint64_t alive = 0, lock = in->omitted_lock_wait_ns, cond = in->omitted_cond_wait_ns;
	for (size_t i = 0; i < in->n_threads; i++) {
		const struct stats_thread *t = &in->threads[i];
		uint64_t end = atomic_load_explicit(&t->end_ns, memory_order_relaxed);
		if (!end)
			end = in->end_ns;
		alive += end > t->start_ns ? end - t->start_ns : 0;
		lock += atomic_load_explicit(&t->lock_wait_ns, memory_order_relaxed);
		cond += atomic_load_explicit(&t->cond_wait_ns, memory_order_relaxed);
	}
	rep->thread_s = s_of(alive);
	rep->lock_wait_s = s_of(lock);
	rep->cond_wait_s = s_of(cond);
	rep->elapsed_s = s_of(in->end_ns > in->start_ns ? in->end_ns - in->start_ns : 0);
}

/* Threads by lock wait, most first: indices into in->threads. */
static size_t *thread_order(const struct stats_report *in)
{
	size_t *ix = malloc((in->n_threads + 1) * sizeof(size_t));
	if (!ix)
		return NULL;
	for (size_t i = 0; i < in->n_threads; i++)
		ix[i] = i;
	for (size_t i = 1; i < in->n_threads; i++)     /* insertion sort: few threads */
		for (size_t j = i; j > 0; j--) {
			uint64_t a = atomic_load_explicit(&in->threads[ix[j - 1]].lock_wait_ns, memory_order_relaxed);
			uint64_t b = atomic_load_explicit(&in->threads[ix[j]].lock_wait_ns, memory_order_relaxed);
			if (a >= b)
				break;
			size_t t = ix[j];
			ix[j] = ix[j - 1];
			ix[j - 1] = t;
		}
	return ix;
}

static double thread_alive_s(const struct stats_report *in, const struct stats_thread *t)
{
	uint64_t end = atomic_load_explicit(&t->end_ns, memory_order_relaxed);
	if (!end)
		end = in->end_ns;
	return s_of(end > t->start_ns ? end - t->start_ns : 0);
}

/* ---- the text report ---- */

static const char *type_name(const struct stats_rec *r)
{
	static const char *const mutex[] = { "normal", "recursive", "errorcheck", "adaptive" };
	static const char *const rw[] = { "prefer-reader", "prefer-writer", "prefer-writer-nonrecursive" };
	if (r->obj == ST_MUTEX && (r->type & STATS_TYPE_GLIBC))
		return "kept-by-glibc";
	if (r->obj == ST_MUTEX)
		return r->type < 4 ? mutex[r->type] : "normal";
	if (r->obj == ST_RWLOCK)
		return r->type < 3 ? rw[r->type] : "prefer-reader";
	return r->type ? "monotonic" : "realtime";
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path;
}

static void print_frame(FILE *f, const struct frame *fr)
{
	if (fr->function)
		fprintf(f, "%s", fr->function);
	else if (fr->module)
		fprintf(f, "%s+0x%" PRIxPTR, base_name(fr->module), fr->offset);
	else
		fprintf(f, "0x%" PRIxPTR, fr->pc);
	if (fr->file)
		fprintf(f, " (%s:%d)", base_name(fr->file), fr->line);
}

/* The site, the plumbing it called through, and three of its callers. */
/* The site, the plumbing it called through, and three of its callers. */
static void print_stack(FILE *f, const struct callstack *st, const char *what)
{
	fprintf(f, "   %s ", what);
	if (!st->nframes) {
		fprintf(f, "(no call stack)\n");
		return;
	}
	print_frame(f, &st->frames[st->site]);
	for (int i = st->site - 1; i >= 0; i--) {
		fprintf(f, i == st->site - 1 ? ", through " : " -> ");
		print_frame(f, &st->frames[i]);
	}
	for (int i = st->site + 1; i < st->nframes && i <= st->site + 3; i++) {
		fprintf(f, "\n      <- ");
		print_frame(f, &st->frames[i]);
	}
	fprintf(f, "\n");
}

/* Where it was held while others waited: each sampled holder site with
 * its share, and the share of the others. */
static void print_holders(FILE *f, const struct entry *e)
{
	if (!e->holder_samples)
		return;
	double shown = 0;
	for (int k = 0; k < e->n_holders; k++) {
		char what[96];
		snprintf(what, sizeof(what), "held while others waited (%.0f%% of %" PRIu64 " sampled releases) in",
			 100 * e->holder_share[k], e->holder_samples);
		print_stack(f, &e->holder[k], what);
		shown += e->holder_share[k];
	}
	if (shown < 0.995)
		fprintf(f, "   ... and elsewhere (%.0f%% of the sampled releases)\n", 100 * (1 - shown));
}

static void print_advice(FILE *f, const struct entry *e)
{
	for (int i = 0; i < e->n_advice; i++)
		fprintf(f, "   => %s: %s\n", e->advice_code[i], e->advice_text[i]);
}

static void write_text(struct report *rep, FILE *f)
{
	const struct stats_report *in = rep->in;
	fprintf(f, "== hotlock lock report: pid %d: %s\n", in->pid, rep->program);
	if (!strcmp(in->end, "running"))
		fprintf(f, "   running for %.2f s, as it stands now; %s, %d CPUs, %d NUMA node%s\n", rep->elapsed_s,
			rep->cpu, in->cpus, in->nodes, in->nodes == 1 ? "" : "s");
	else
		fprintf(f, "   ended by %s after %.2f s; %s, %d CPUs, %d NUMA node%s\n", in->end, rep->elapsed_s,
			rep->cpu, in->cpus, in->nodes, in->nodes == 1 ? "" : "s");
	fprintf(f, "   threads waited for locks %.3f s of their %.3f s (%.1f%%), in condition variables %.3f s\n",
		rep->lock_wait_s, rep->thread_s, 100 * ratio(rep->lock_wait_s, rep->thread_s), rep->cond_wait_s);
	fprintf(f, "   %zu objects had contention records", rep->tracked);
	if (in->objects_untracked)
		fprintf(f, "; %" PRIu64 " more found the record table full", in->objects_untracked);
	fprintf(f, "\n");
	if (in->deadlocks || in->hangs)
		fprintf(f, "   deadlocks: %" PRIu64 " found while it ran, hangs: %" PRIu64 "; hotlock-run "
			"--deadlocks names the sites\n", in->deadlocks, in->hangs);
	fprintf(f, "\n");
	if (!rep->n_locks)
		fprintf(f, "No mutex or rwlock was contended.\n\n");
	for (size_t i = 0; i < rep->n_locks; i++) {
		const struct entry *e = &rep->locks[i];
		const uint64_t *c = e->c;
		fprintf(f, "#%zu %s (%s) %s%s0x%" PRIxPTR, i + 1, e->r->obj == ST_RWLOCK ? "rwlock" : "mutex",
			type_name(e->r), e->name, e->name[0] ? " at " : "",
			atomic_load_explicit(&e->r->addr, memory_order_relaxed));
		uint64_t objects = atomic_load_explicit(&e->r->objects, memory_order_relaxed);
		if (objects > 1)
			fprintf(f, " and %" PRIu64 " more of the same kind and stack", objects - 1);
		fprintf(f, ": waited %.3f s in all\n", s_of(e->wait_ns));
		print_stack(f, &e->first, "first contended in");
		print_holders(f, e);
		fprintf(f, "   acquisitions %" PRIu64 ", %.1f%% waited: mean wait %.1f us, max %.1f us; "
			"hold mean %.1f us, max %.1f us\n", e->acq, 100 * e->contended_share, e->wait_mean_us,
			us_of(e->wait_max_ns), e->hold_mean_us, us_of(c[STC_HOLD_MAX_NS]));
		if (e->r->obj == ST_RWLOCK)
			fprintf(f, "   reads %" PRIu64 " (%" PRIu64 " waited, mean %.1f us), writes %" PRIu64
				" (%" PRIu64 " waited, mean %.1f us)\n", c[STC_R_ACQ], c[STC_R_CONTENDED],
				ratio(us_of(c[STC_R_WAIT_NS]), (double)c[STC_R_CONTENDED]), c[STC_W_ACQ],
				c[STC_W_CONTENDED], ratio(us_of(c[STC_W_WAIT_NS]), (double)c[STC_W_CONTENDED]));
		fprintf(f, "   futex waits %" PRIu64 ", wakes %" PRIu64 "; handoffs %" PRIu64 "; spins %" PRIu64
			", %" PRIu64 " got the lock; cross-node %.0f%%", c[STC_FUTEX_WAITS], c[STC_FUTEX_WAKES],
			c[STC_HANDOFFS], c[STC_SPINS], c[STC_SPINS_WON], 100 * e->cross_share);
		if (c[STC_TRY_BUSY])
			fprintf(f, "; busy trylocks %" PRIu64, c[STC_TRY_BUSY]);
		if (c[STC_TIMEOUTS])
			fprintf(f, "; timeouts %" PRIu64, c[STC_TIMEOUTS]);
		fprintf(f, "\n");
		print_advice(f, e);
		fprintf(f, "\n");
	}
	for (size_t i = 0; i < rep->n_conds; i++) {
		const struct entry *e = &rep->conds[i];
		const uint64_t *c = e->c;
		uintptr_t mutex = atomic_load_explicit(&e->r->cond_mutex, memory_order_relaxed);
		char rank[32] = "";
		for (size_t k = 0; k < rep->n_locks; k++)
			if ((atomic_load_explicit(&rep->locks[k].r->addr, memory_order_relaxed)) == mutex)
				snprintf(rank, sizeof(rank), " (#%zu above)", k + 1);
		fprintf(f, "cond #%zu (%s clock) %s%s0x%" PRIxPTR ", with mutex %s%s0x%" PRIxPTR "%s: %" PRIu64
			" waits, %.3f s in all\n", i + 1, type_name(e->r), e->name, e->name[0] ? " at " : "",
			atomic_load_explicit(&e->r->addr, memory_order_relaxed), e->mutex_name,
			e->mutex_name[0] ? " at " : "", mutex, rank, c[STC_C_WAITS], s_of(c[STC_C_WAIT_NS]));
		print_stack(f, &e->first, "first waited on in");
		fprintf(f, "   signals %" PRIu64 " (%" PRIu64 " found no waiter), broadcasts %" PRIu64
			" (%.1f waiters each); woken %" PRIu64 ", %" PRIu64 " of them waited on it again with "
			"the mutex held (re-waits); timeouts %" PRIu64 "\n",
			c[STC_C_SIGNALS] + c[STC_C_SIGNALS_EMPTY], c[STC_C_SIGNALS_EMPTY], c[STC_C_BROADCASTS],
			e->woken_per_broadcast, c[STC_C_WOKEN], c[STC_C_REWAITS], c[STC_TIMEOUTS]);
		print_advice(f, e);
		fprintf(f, "\n");
	}
	bool unnamed = false;
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < (l ? rep->n_conds : rep->n_locks); i++) {
			const struct entry *e = l ? &rep->conds[i] : &rep->locks[i];
			for (int k = 0; k < e->first.nframes; k++)
				unnamed |= !e->first.frames[k].function && e->first.frames[k].module;
		}
	if (unnamed)
		fprintf(f, "Frames shown as module+0xOFFSET are in a module without symbols here: its debug\n"
			"file (Debian: the package's -dbgsym) names them: addr2line -f -e MODULE 0xOFFSET.\n\n");
	size_t *ix = thread_order(in);
	size_t shown = in->n_threads < (size_t)in->top ? in->n_threads : (size_t)in->top;
	fprintf(f, "threads, most lock wait first:\n");
	for (size_t i = 0; ix && i < shown; i++) {
		const struct stats_thread *t = &in->threads[ix[i]];
		double alive = thread_alive_s(in, t);
		double lw = s_of(atomic_load_explicit(&t->lock_wait_ns, memory_order_relaxed));
		fprintf(f, "   tid %-7u %-16s lock wait %8.3f s of %8.3f s (%5.1f%%), condvar wait %8.3f s, "
			"CPU %8.3f s%s\n",
			t->tid, t->name[0] ? t->name : "?", lw, alive, 100 * ratio(lw, alive),
			s_of(atomic_load_explicit(&t->cond_wait_ns, memory_order_relaxed)),
			s_of(atomic_load_explicit(&t->cpu_ns, memory_order_relaxed)),
			atomic_load_explicit(&t->exited, memory_order_relaxed) ? ", exited" : "");
	}
	if (in->n_threads > shown || in->threads_omitted)
		fprintf(f, "   ... and %zu more\n", in->n_threads - shown + (size_t)in->threads_omitted);
	free(ix);
	fprintf(f, "== end of hotlock lock report: pid %d\n", in->pid);
}

/* ---- the JSON report ---- */

/* A string of the program's as JSON: valid UTF-8 (utf8.h). */
static json_t *json_text(const char *text)
{
	size_t size = strlen(text) * 3 + 1;
	char *clean = malloc(size);
	if (!clean)
		return json_string("?");
	utf8_clean(clean, size, text);
	json_t *j = json_string(clean);
	free(clean);
	return j;
}

static json_t *addr_json(uintptr_t a)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "0x%" PRIxPTR, a);
	return json_string(buf);
}

static json_t *stack_json(const struct callstack *st)
{
	json_t *a = json_array();
	for (int i = 0; i < st->nframes; i++) {
		const struct frame *fr = &st->frames[i];
		json_t *o = json_object();
		json_object_set_new(o, "address", addr_json(fr->pc));
		if (fr->function)
			json_object_set_new(o, "function", json_text(fr->function));
		if (fr->file) {
			json_object_set_new(o, "file", json_text(fr->file));
			json_object_set_new(o, "line", json_integer(fr->line));
		}
		if (fr->inlined)
			json_object_set_new(o, "inlined", json_true());
		if (fr->module) {
			json_object_set_new(o, "module", json_text(fr->module));
			json_object_set_new(o, "module_offset", addr_json(fr->offset));
		}
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *advice_json(const struct entry *e)
{
	json_t *a = json_array();
	for (int i = 0; i < e->n_advice; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "code", e->advice_code[i], "text", e->advice_text[i]));
	return a;
}

static json_t *waits_json(uint64_t acq, uint64_t contended, uint64_t wait_ns, uint64_t max_ns)
{
	double share = ratio((double)contended, (double)acq);
	return json_pack("{s:I, s:I, s:f, s:f, s:f, s:f}", "acquisitions", (json_int_t)acq, "contended",
			 (json_int_t)contended, "contended_share", share > 1 ? 1.0 : share, "wait_s", s_of(wait_ns),
			 "wait_mean_us", ratio(us_of(wait_ns), (double)contended), "wait_max_us", us_of(max_ns));
}

/* What a lock's and a condvar's entries have alike: rank, address, name,
 * kind, objects, and where it was first contended. */
static json_t *entry_json(const struct entry *e, size_t rank, const char *kind)
{
	json_t *o = json_object();
	json_object_set_new(o, "rank", json_integer((json_int_t)rank));
	json_object_set_new(o, "address", addr_json(atomic_load_explicit(&e->r->addr, memory_order_relaxed)));
	if (e->name[0])
		json_object_set_new(o, "name", json_text(e->name));
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "objects", json_integer((json_int_t)atomic_load_explicit(&e->r->objects, memory_order_relaxed)));
	json_object_set_new(o, "stack", stack_json(&e->first));
	json_object_set_new(o, "site", json_integer(e->first.site));
	return o;
}

static json_t *lock_json(const struct entry *e, size_t rank)
{
	const uint64_t *c = e->c;
	json_t *o = entry_json(e, rank, e->r->obj == ST_RWLOCK ? "rwlock" : "mutex");
	json_object_set_new(o, "type", json_string(type_name(e->r)));
	if (e->holder_samples) {
		json_t *h = json_array();
		for (int k = 0; k < e->n_holders; k++)
			json_array_append_new(h, json_pack("{s:o, s:i, s:f}", "stack", stack_json(&e->holder[k]),
							   "site", e->holder[k].site, "share",
							   e->holder_share[k]));
		json_object_set_new(o, "holders", h);
		json_object_set_new(o, "holder_samples", json_integer((json_int_t)e->holder_samples));
	}
	json_object_set_new(o, "acquisitions", json_integer((json_int_t)e->acq));
	json_object_set_new(o, "contended", json_integer((json_int_t)e->contended));
	json_object_set_new(o, "contended_share", json_real(e->contended_share));
	json_object_set_new(o, "wait_s", json_real(s_of(e->wait_ns)));
	json_object_set_new(o, "wait_mean_us", json_real(e->wait_mean_us));
	json_object_set_new(o, "wait_max_us", json_real(us_of(e->wait_max_ns)));
	json_object_set_new(o, "hold_mean_us", json_real(e->hold_mean_us));
	json_object_set_new(o, "hold_max_us", json_real(us_of(c[STC_HOLD_MAX_NS])));
	static const struct { const char *name; int k; } counts[] = {
		{ "futex_waits", STC_FUTEX_WAITS }, { "futex_wakes", STC_FUTEX_WAKES },
		{ "handoffs", STC_HANDOFFS }, { "spins", STC_SPINS }, { "spins_won", STC_SPINS_WON },
		{ "cross_node", STC_CROSS_NODE }, { "trylock_busy", STC_TRY_BUSY }, { "timeouts", STC_TIMEOUTS },
	};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		json_object_set_new(o, counts[i].name, json_integer((json_int_t)c[counts[i].k]));
	json_object_set_new(o, "cross_node_share", json_real(e->cross_share));
	if (e->r->obj == ST_RWLOCK) {
		json_object_set_new(o, "read", waits_json(c[STC_R_ACQ], c[STC_R_CONTENDED], c[STC_R_WAIT_NS],
							  c[STC_R_WAIT_MAX_NS]));
		json_object_set_new(o, "write", waits_json(c[STC_W_ACQ], c[STC_W_CONTENDED], c[STC_W_WAIT_NS],
							   c[STC_W_WAIT_MAX_NS]));
	}
	json_object_set_new(o, "advice", advice_json(e));
	return o;
}

static json_t *cond_json(const struct entry *e, size_t rank)
{
	const uint64_t *c = e->c;
	json_t *o = entry_json(e, rank, "cond");
	json_object_set_new(o, "clock", json_string(type_name(e->r)));
	json_object_set_new(o, "mutex", addr_json(atomic_load_explicit(&e->r->cond_mutex, memory_order_relaxed)));
	if (e->mutex_name[0])
		json_object_set_new(o, "mutex_name", json_text(e->mutex_name));
	json_object_set_new(o, "waits", json_integer((json_int_t)c[STC_C_WAITS]));
	json_object_set_new(o, "wait_s", json_real(s_of(c[STC_C_WAIT_NS])));
	json_object_set_new(o, "signals", json_integer((json_int_t)(c[STC_C_SIGNALS] + c[STC_C_SIGNALS_EMPTY])));
	json_object_set_new(o, "broadcasts", json_integer((json_int_t)c[STC_C_BROADCASTS]));
	json_object_set_new(o, "woken", json_integer((json_int_t)c[STC_C_WOKEN]));
	json_object_set_new(o, "woken_per_broadcast", json_real(e->woken_per_broadcast));
	json_object_set_new(o, "rewaits", json_integer((json_int_t)c[STC_C_REWAITS]));
	json_object_set_new(o, "rewait_share", json_real(e->rewait_share));
	json_object_set_new(o, "timeouts", json_integer((json_int_t)c[STC_TIMEOUTS]));
	json_object_set_new(o, "advice", advice_json(e));
	return o;
}

static char *json_report(struct report *rep)
{
	const struct stats_report *in = rep->in;
	json_t *root = json_object();
	json_object_set_new(root, "hotlock_stats", json_integer(1));
	json_object_set_new(root, "pid", json_integer(in->pid));
	json_object_set_new(root, "program", json_text(rep->program));
	json_object_set_new(root, "end", json_string(in->end));
	json_object_set_new(root, "elapsed_s", json_real(rep->elapsed_s));
	json_object_set_new(root, "cpu", json_text(rep->cpu));
	json_object_set_new(root, "cpus", json_integer(in->cpus));
	json_object_set_new(root, "nodes", json_integer(in->nodes));
	json_object_set_new(root, "thread_time_s", json_real(rep->thread_s));
	json_object_set_new(root, "lock_wait_s", json_real(rep->lock_wait_s));
	json_object_set_new(root, "cond_wait_s", json_real(rep->cond_wait_s));
	double share = ratio(rep->lock_wait_s, rep->thread_s);
	json_object_set_new(root, "lock_wait_share", json_real(share > 1 ? 1 : share));
	json_object_set_new(root, "threads_omitted", json_integer((json_int_t)in->threads_omitted));
	json_t *threads = json_array();
	size_t *ix = thread_order(in);
	for (size_t i = 0; ix && i < in->n_threads; i++) {
		const struct stats_thread *t = &in->threads[ix[i]];
		double alive = thread_alive_s(in, t);
		double lw = s_of(atomic_load_explicit(&t->lock_wait_ns, memory_order_relaxed));
		double ts = ratio(lw, alive);
		json_array_append_new(threads, json_pack("{s:i, s:o, s:f, s:f, s:f, s:f, s:f, s:b}", "tid",
							 (int)t->tid, "name", json_text(t->name[0] ? t->name : "?"),
							 "alive_s", alive, "lock_wait_s", lw, "cond_wait_s",
							 s_of(atomic_load_explicit(&t->cond_wait_ns, memory_order_relaxed)),
							 "lock_wait_share", ts > 1 ? 1.0 : ts, "cpu_s",
							 s_of(atomic_load_explicit(&t->cpu_ns, memory_order_relaxed)),
							 "exited",
							 (int)atomic_load_explicit(&t->exited, memory_order_relaxed)));
	}
	free(ix);
	json_object_set_new(root, "threads", threads);
	json_object_set_new(root, "locks_tracked", json_integer((json_int_t)rep->tracked));
	json_object_set_new(root, "locks_untracked", json_integer((json_int_t)in->objects_untracked));
	json_object_set_new(root, "deadlocks", json_integer((json_int_t)in->deadlocks));
	json_object_set_new(root, "hangs", json_integer((json_int_t)in->hangs));
	json_t *locks = json_array(), *conds = json_array();
	for (size_t i = 0; i < rep->n_locks; i++)
		json_array_append_new(locks, lock_json(&rep->locks[i], i + 1));
	for (size_t i = 0; i < rep->n_conds; i++)
		json_array_append_new(conds, cond_json(&rep->conds[i], i + 1));
	json_object_set_new(root, "locks", locks);
	json_object_set_new(root, "conds", conds);
	char *s = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(root);
	return s;
}

/* ---- names for hotlock-top ---- */

struct stats_namer {
	struct stats_report in;
	struct report rep;
};

struct stats_namer *stats_namer_open(const struct stats_report *in)
{
	struct stats_namer *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->in = *in;
	n->rep.in = &n->in;
	open_dwfl(&n->rep);
	return n;
}

void stats_namer_site(struct stats_namer *n, const uintptr_t *pcs, uint32_t count, char *out, size_t len)
{
	struct callstack *st = malloc(sizeof(*st));
	char *buf = NULL;
	size_t blen = 0;
	FILE *f = st ? open_memstream(&buf, &blen) : NULL;
	if (f) {
		name_stack(&n->rep, pcs, count, st);
		if (st->nframes)
			print_frame(f, &st->frames[st->site]);
		fclose(f);
	}
	utf8_clean(out, len, buf && *buf ? buf : "(no call stack)");
	free(buf);
	free(st);
}

void stats_namer_object(struct stats_namer *n, uintptr_t addr, char *out, size_t len)
{
	char name[256];
	object_name(&n->rep, addr, name, sizeof(name));
	utf8_clean(out, len, name);
}

void stats_namer_close(struct stats_namer *n)
{
	if (!n)
		return;
	if (n->rep.dwfl)
		dwfl_end(n->rep.dwfl);
	for (size_t i = 0; i < n->rep.n_demangled; i++)
		free(n->rep.demangled[i]);
	free(n);
}

/* ---- the entry point ---- */

int stats_report_make(const struct stats_report *in, char **text, size_t *text_len, char **json,
		      size_t *json_len)
{
	struct report *rep = calloc(1, sizeof(*rep));
	if (!rep)
		return -1;
	rep->in = in;
	utf8_clean(rep->program, sizeof(rep->program), in->program ? in->program : "?");
	cpu_model(rep->cpu, sizeof(rep->cpu));
	thread_totals(rep);
	gather(rep);
	int err = 0;
	if (text) {
		*text = NULL;
		*text_len = 0;
		FILE *f = open_memstream(text, text_len);
		if (f) {
			write_text(rep, f);
			if (fclose(f))
				err = -1;
		} else {
			err = -1;
		}
	}
	if (json) {
		*json = NULL;
		char *s = json_report(rep);
		size_t n = s ? strlen(s) : 0;
		char *line = s ? malloc(n + 2) : NULL;
		if (line) {
			memcpy(line, s, n);
			line[n] = '\n';
			line[n + 1] = 0;
			*json = line;
			*json_len = n + 1;
		} else {
			err = -1;
		}
		free(s);
	}
	if (rep->dwfl)
		dwfl_end(rep->dwfl);
	for (size_t l = 0; l < 2; l++) {
		struct entry *list = l ? rep->conds : rep->locks;
		size_t n = l ? rep->n_conds : rep->n_locks;
		for (size_t i = 0; list && i < n; i++)
			for (int a = 0; a < list[i].n_advice; a++)
				free(list[i].advice_text[a]);
	}
	for (size_t i = 0; i < rep->n_demangled; i++)
		free(rep->demangled[i]);
	free(rep->locks);
	free(rep->conds);
	free(rep);
	return err;
}
