/* SPDX-License-Identifier: MIT */
/* hotlock-run: runs a program on hotlock's locks, through the pthread shim.
 *
 *   hotlock-run [options] -- program [args...]
 *
 * Sets LD_PRELOAD to libhotlock-preload.so (after any library already
 * preloaded), turns the options into the HOTLOCK_* settings the library
 * reads, and execs the program in its own place, so the program's exit
 * status and signals are the caller's to see.  With --stats and friends
 * it stays instead, as the program's parent and the collector of its
 * contention report (collector.c, docs/stats.md), and ends as the program
 * did.  A program the dynamic linker
 * would not preload into (a static or static-PIE binary, a setuid or setgid
 * one, one with file capabilities, another ELF class or machine) is refused
 * with one line and exit status 2: run on glibc, silently, it would measure
 * the wrong thing.  The dynamic loader itself, run directly, is let through,
 * and the program it is asked to run is checked instead.
 *
 * The library is found relative to this executable: <bindir>/<HOTLOCK_RUN_LIBREL>/,
 * which holds in the installed tree and in the build tree (both put
 * binaries and libraries in bin/ and lib/ directories side by side);
 * HOTLOCK_PRELOAD_LIB overrides it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <hotlock/config.h>
#include <hotlock/topology.h>

#include "collector.h"

#define EXIT_REFUSED 2

static const char usage[] =
	"usage: hotlock-run [options] -- program [args...]\n"
	"Runs program with its pthread mutexes, rwlocks and condition variables\n"
	"replaced by hotlock's (libhotlock-preload.so; see docs/shim.md).\n"
	"\n"
	"options:\n"
	"  --queue fifo|cna     order of each lock's waiter queue (HOTLOCK_QUEUE)\n"
	"  --spin-ns N          how long a waiter spins before it parks, 0-10000000\n"
	"                       (HOTLOCK_SPIN_NS)\n"
	"  --handoff-ns N       how long the queue head waits before the lock is\n"
	"                       handed to it, 0-10000000000 (HOTLOCK_HANDOFF_NS)\n"
	"  --topology SPEC      numa, llc or virtual:N (HOTLOCK_TOPOLOGY)\n"
	"  --rwlock-default prefer-reader|writer-yields\n"
	"                       what glibc's default rwlock kind runs as: glibc's\n"
	"                       reader preference (the default), or a waiting\n"
	"                       writer that keeps new readers out and yields to\n"
	"                       them after a bound (HOTLOCK_RWLOCK_DEFAULT;\n"
	"                       docs/shim.md)\n"
	"  --rwlock-yield-ns N  that bound, 100000-1000000000 (HOTLOCK_RWLOCK_YIELD_NS)\n"
	"  --stats[=FILE]       when each process of the program ends, a report of its\n"
	"                       most contended locks, where it first waited for them\n"
	"                       and what would help, on stderr or in FILE; written by\n"
	"                       hotlock-run, which stays beside the program for it\n"
	"  --stats-json FILE    the same report as JSON, one line per process\n"
	"                       (docs/stats.schema.json)\n"
	"  --stats-top N        locks per table, 1-1000 (10)\n"
	"                       FILE: %p in it is the pid; each process of the program\n"
	"                       appends its report, and hotlock-run empties FILE first\n"
	"  --deadlocks[=abort]  while the program runs, report its deadlocks (threads\n"
	"                       that wait for each other's locks) and hangs (a thread\n"
	"                       that waits for a lock whose holder does not wait for\n"
	"                       one), with the sites where each lock was taken; =abort:\n"
	"                       then send a deadlocked process SIGABRT (docs/deadlocks.md)\n"
	"  --deadlocks-after S  a wait is looked at once it has been seen for S s,\n"
	"                       0.1-3600 (1); --stats counts what it finds in its report\n"
	"  --lock-order         report lock-order inversions: locks taken in orders\n"
	"                       that make a cycle, whether or not the run deadlocked\n"
	"  --deadlocks-file FILE  those reports in FILE, not on stderr\n"
	"  --deadlocks-json FILE  ... and as JSON, one line each\n"
	"                       (docs/deadlocks.schema.json); FILE as for --stats\n"
	"  -h, --help           this text\n"
	"\n"
	"The program's exit status is hotlock-run's (a program killed by a signal:\n"
	"hotlock-run dies of it too).  Exit status 2: hotlock-run refused (bad option,\n"
	"or a program the shim cannot be loaded into: static or static-PIE,\n"
	"setuid/setgid, file capabilities, 32-bit or another machine's), or the program\n"
	"succeeded and a lock report could not be written (one line says which).\n";

__attribute__((format(printf, 1, 2)))
static _Noreturn void refuse(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("hotlock-run: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_REFUSED);
}

static void check_number_range(const char *opt, const char *v, unsigned long long min,
			       unsigned long long max)
{
	char *end;
	errno = 0;
	if (!*v || *v == '-' || *v == '+')
		goto bad;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || n < min || n > max)
		goto bad;
	return;
bad:
	fprintf(stderr, "hotlock-run: %s wants a whole number of nanoseconds from %llu to %llu, not '%s'\n",
		opt, min, max, v);
	exit(EXIT_REFUSED);
}

static void check_number(const char *opt, const char *v, unsigned long long max)
{
	check_number_range(opt, v, 0, max);
}

/* --deadlocks-after's seconds, 0.1 to 3600, as nanoseconds. */
static uint64_t check_seconds(const char *opt, const char *v)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (!*v || *v == ' ' || *v == '\t' || errno || *end || !(d >= 0.1 && d <= 3600))
		refuse("%s wants a number of seconds from 0.1 to 3600, not '%s'", opt, v);
	return (uint64_t)(d * 1e9 + 0.5);
}

static void check_topology(const char *v)
{
	if (!strcmp(v, "numa") || !strcmp(v, "llc"))
		return;
	if (!strncmp(v, "virtual:", 8)) {
		char *end;
		errno = 0;
		long n = strtol(v + 8, &end, 10);
		if (!errno && v[8] && !*end && n >= 1 && n <= HL_TOPOLOGY_MAX_NODES)
			return;
	}
	fprintf(stderr, "hotlock-run: --topology wants numa, llc or virtual:N (N from 1 to %d), not '%s'\n",
		HL_TOPOLOGY_MAX_NODES, v);
	exit(EXIT_REFUSED);
}

/* A report file of --stats or --stats-json: emptied now (the reports of
 * this run append to it) unless its name holds the pid (%p); refused
 * where it cannot be written, before the program runs. */
static void check_report_file(const char *opt, const char *v)
{
	if (!*v)
		refuse("%s wants a file name", opt);
	if (strstr(v, "%p")) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", v);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		if (slash && *dir && access(dir, W_OK | X_OK) != 0)
			refuse("%s %s: cannot write in %s: %s", opt, v, dir, strerror(errno));
		return;
	}
	int fd = open(v, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		refuse("%s %s: cannot write it: %s", opt, v, strerror(errno));
	close(fd);
}

/* The file execvp would run for name: *path gets it; errno-style result. */
static int find_program(const char *name, char *path, size_t len)
{
	if (strchr(name, '/')) {
		snprintf(path, len, "%s", name);
		return access(path, F_OK) ? errno : 0;
	}
	const char *p = getenv("PATH");
	if (!p)
		p = "/usr/local/bin:/usr/bin:/bin";
	while (*p) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		snprintf(path, len, "%.*s%s%s", (int)n, p, n ? "/" : "", name);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0)
			return 0;
		p += n + (colon ? 1 : 0);
	}
	return ENOENT;
}

/* hotlock-run's own ELF header, as mapped (the linker defines the symbol). */
extern const ElfW(Ehdr) __ehdr_start;

/* The file name of the dynamic loader that runs hotlock-run (the last part
 * of its own PT_INTERP, "ld-linux-x86-64.so.2" here): the DT_SONAME a
 * loader found without a PT_INTERP must have to be let through.  "" for a
 * static hotlock-run. */
static const char *loader_name(void)
{
	const ElfW(Ehdr) *eh = &__ehdr_start;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
	uintptr_t bias = (uintptr_t)eh;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
			bias = (uintptr_t)eh - ph[i].p_vaddr;
			break;
		}
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_INTERP) {
			const char *interp = (const char *)(bias + ph[i].p_vaddr);
			const char *slash = strrchr(interp, '/');
			return slash ? slash + 1 : interp;
		}
	return "";
}

static bool read_phdr(int fd, const Elf64_Ehdr *eh, unsigned i, Elf64_Phdr *ph)
{
	return pread(fd, ph, sizeof(*ph), (off_t)(eh->e_phoff + (uint64_t)i * eh->e_phentsize)) ==
	       (ssize_t)sizeof(*ph);
}

/* The DT_SONAME of the 64-bit ELF open on fd, whose PT_DYNAMIC is dyn, into
 * name ("" if it has none). */
static void read_soname(int fd, const Elf64_Ehdr *eh, const Elf64_Phdr *dyn, char *name, size_t len)
{
	uint64_t strtab = UINT64_MAX, soname = UINT64_MAX;
	name[0] = 0;
	for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= dyn->p_filesz; off += sizeof(Elf64_Dyn)) {
		Elf64_Dyn d;
		if (pread(fd, &d, sizeof(d), (off_t)(dyn->p_offset + off)) != (ssize_t)sizeof(d) ||
		    d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_STRTAB)
			strtab = d.d_un.d_ptr;
		else if (d.d_tag == DT_SONAME)
			soname = d.d_un.d_val;
	}
	if (soname == UINT64_MAX || strtab == UINT64_MAX)
		return;
	for (unsigned i = 0; i < eh->e_phnum; i++) {       /* DT_STRTAB is an address */
		Elf64_Phdr ph;
		if (!read_phdr(fd, eh, i, &ph))
			return;
		if (ph.p_type == PT_LOAD && strtab >= ph.p_vaddr && strtab - ph.p_vaddr < ph.p_filesz) {
			ssize_t n = pread(fd, name, len - 1,
					  (off_t)(ph.p_offset + (strtab - ph.p_vaddr) + soname));
			name[n > 0 ? n : 0] = 0;
			return;
		}
	}
}

/* The program that the dynamic loader, run directly with args, runs: the
 * first argument after its options (glibc 2.36's), or NULL where it runs
 * none (--help, --version, --list, --verify, ...; an option it does not
 * know, which it refuses) or looks the name up in its library path (no
 * slash), so that the name is not a file hotlock-run could check. */
static const char *loader_program(char *const *args)
{
	static const char *const with_value[] = {
		"--library-path", "--inhibit-rpath", "--audit", "--preload", "--argv0",
		"--glibc-hwcaps-prepend", "--glibc-hwcaps-mask",
	};
	for (; args && *args; args++) {
		const char *a = *args;
		if (strncmp(a, "--", 2) != 0)
			return strchr(a, '/') ? a : NULL;
		if (!strcmp(a, "--inhibit-cache"))
			continue;
		bool takes_value = false;
		for (size_t j = 0; j < sizeof(with_value) / sizeof(with_value[0]); j++)
			takes_value |= !strcmp(a, with_value[j]);
		if (!takes_value || !*++args)
			return NULL;
	}
	return NULL;
}

/* Refuses (exit 2) a program the dynamic linker would not preload into.
 * args: its arguments (NULL: not known); depth: how many #! interpreters
 * or loaders were followed; loaded: it is run by the dynamic loader, not
 * exec'd, so its setuid bits and file capabilities do not count. */
static void check_program(const char *path, char *const *args, int depth, bool loaded)
{
	struct stat st;
	if (stat(path, &st) != 0 || (!loaded && access(path, X_OK) != 0))
		return;                 /* execvp reports it */
	if (!loaded && (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
			((st.st_mode & S_ISGID) && st.st_gid != getgid())))
		refuse("%s is setuid or setgid: the dynamic linker ignores LD_PRELOAD for it, so it "
		       "cannot run on hotlock", path);
	if (!loaded && getxattr(path, "security.capability", NULL, 0) > 0)
		refuse("%s has file capabilities: the dynamic linker ignores LD_PRELOAD for it, so it "
		       "cannot run on hotlock", path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;                 /* execvp reports it */
	unsigned char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n >= 2 && buf[0] == '#' && buf[1] == '!' && depth < 4) {
		close(fd);
		buf[n < (ssize_t)sizeof(buf) ? n : (ssize_t)sizeof(buf) - 1] = 0;
		char *interp = (char *)buf + 2;
		interp += strspn(interp, " \t");
		interp[strcspn(interp, " \t\n")] = 0;
		if (*interp)
			check_program(interp, NULL, depth + 1, false);
		return;
	}
	if (n < (ssize_t)sizeof(Elf64_Ehdr) || memcmp(buf, ELFMAG, SELFMAG) != 0) {
		close(fd);
		return;                 /* not ELF: execvp says what it is */
	}
	if (buf[EI_CLASS] != ELFCLASS64) {
		close(fd);
		refuse("%s is not a 64-bit program; the shim is built for 64-bit ones", path);
	}
	Elf64_Ehdr eh;
	memcpy(&eh, buf, sizeof(eh));
	if (eh.e_machine != __ehdr_start.e_machine) {
		close(fd);
		refuse("%s is built for another machine (ELF machine %u, this one is %u); the shim is "
		       "built for this one", path, eh.e_machine, __ehdr_start.e_machine);
	}
	bool dynamic = false;
	Elf64_Phdr dyn = { .p_type = PT_NULL };
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (!read_phdr(fd, &eh, i, &ph))
			break;
		if (ph.p_type == PT_INTERP)
			dynamic = true;
		else if (ph.p_type == PT_DYNAMIC)
			dyn = ph;
	}
	/* No PT_INTERP: the kernel runs the file itself, no dynamic linker
	 * does, and nothing reads LD_PRELOAD.  But for one such file, the
	 * dynamic loader, which loads the program it is given. */
	char soname[64] = "";
	if (!dynamic && eh.e_type == ET_DYN && dyn.p_type == PT_DYNAMIC)
		read_soname(fd, &eh, &dyn, soname, sizeof(soname));
	close(fd);
	if (dynamic || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return;                 /* dynamic, or not a program: execvp says */
	if (eh.e_type == ET_EXEC)
		refuse("%s is statically linked: LD_PRELOAD cannot replace its pthread functions, so "
		       "it cannot run on hotlock", path);
	if (!*soname || strcmp(soname, loader_name()) != 0)
		refuse("%s is statically linked (static-PIE: no PT_INTERP): LD_PRELOAD cannot replace "
		       "its pthread functions, so it cannot run on hotlock", path);
	const char *prog = loader_program(args);
	if (prog && depth < 4)
		check_program(prog, NULL, depth + 1, true);
}

/* libhotlock-preload.so beside this executable (see the top). */
static void preload_path(char *out, size_t len)
{
	const char *env = getenv("HOTLOCK_PRELOAD_LIB");
	if (env && *env) {
		snprintf(out, len, "%s", env);
	} else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			refuse("cannot find its own executable (/proc/self/exe): %s", strerror(errno));
		self[n] = 0;
		char *slash = strrchr(self, '/');
		*slash = 0;
		snprintf(out, len, "%s/%s/libhotlock-preload.so", self, HOTLOCK_RUN_LIBREL);
	}
	if (access(out, R_OK) != 0)
		refuse("the shim library %s is missing (install hotlock, or set HOTLOCK_PRELOAD_LIB)", out);
	char real[PATH_MAX];
	if (realpath(out, real))
		snprintf(out, len, "%s", real);
}

int main(int argc, char **argv)
{
	struct collector_opts stats = { .top = 10, .deadlocks_after_ns = 1000000000ull };
	bool after_given = false;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(a, "--stats")) {
			stats.text_path = "";
			continue;
		}
		if (!strncmp(a, "--stats=", 8)) {
			check_report_file("--stats", a + 8);
			stats.text_path = a + 8;
			continue;
		}
		if (!strcmp(a, "--deadlocks") || !strncmp(a, "--deadlocks=", 12)) {
			if (a[11] && strcmp(a + 12, "abort"))
				refuse("--deadlocks takes no value but =abort, not '%s'", a + 12);
			stats.deadlocks = true;
			stats.deadlocks_abort |= a[11] != 0;
			continue;
		}
		if (!strcmp(a, "--lock-order")) {
			stats.lock_order = true;
			continue;
		}
		const char *opts[] = { "--queue",      "--spin-ns",  "--handoff-ns",     "--topology",
				       "--stats-json", "--stats-top", "--rwlock-default", "--rwlock-yield-ns",
				       "--deadlocks-after", "--deadlocks-file", "--deadlocks-json" };
		int k = -1;
		const char *v = NULL;
		for (int j = 0; j < (int)(sizeof(opts) / sizeof(opts[0])); j++) {
			size_t n = strlen(opts[j]);
			if (!strncmp(a, opts[j], n) && (a[n] == '=' || !a[n])) {
				k = j;
				v = a[n] == '=' ? a + n + 1 : NULL;
			}
		}
		if (k < 0) {
			if (a[0] == '-')
				refuse("unknown option '%s' (see hotlock-run --help)", a);
			break;          /* the program, without "--" */
		}
		if (!v) {
			if (i + 1 >= argc || !strcmp(argv[i + 1], "--"))
				refuse("%s needs a value (see hotlock-run --help)", opts[k]);
			v = argv[++i];
		}
		switch (k) {
		case 0:
			if (strcmp(v, "fifo") && strcmp(v, "cna"))
				refuse("--queue wants fifo or cna, not '%s'", v);
			setenv("HOTLOCK_QUEUE", v, 1);
			break;
		case 1:
			check_number("--spin-ns", v, HL_SPIN_NS_MAX);
			setenv("HOTLOCK_SPIN_NS", v, 1);
			break;
		case 2:
			check_number("--handoff-ns", v, HL_HANDOFF_NS_MAX);
			setenv("HOTLOCK_HANDOFF_NS", v, 1);
			break;
		case 3:
			check_topology(v);
			setenv("HOTLOCK_TOPOLOGY", v, 1);
			break;
		case 4:
			check_report_file("--stats-json", v);
			stats.json_path = v;
			break;
		case 5: {
			char *end;
			errno = 0;
			long n = strtol(v, &end, 10);
			if (errno || !*v || *end || n < 1 || n > 1000)
				refuse("--stats-top wants a number from 1 to 1000, not '%s'", v);
			stats.top = (int)n;
			break;
		}
		case 6:
			if (strcmp(v, "prefer-reader") && strcmp(v, "writer-yields"))
				refuse("--rwlock-default wants prefer-reader or writer-yields, not '%s'",
				       v);
			setenv("HOTLOCK_RWLOCK_DEFAULT", v, 1);
			break;
		case 7:
			check_number_range("--rwlock-yield-ns", v, HL_RWLOCK_YIELD_NS_MIN,
					   HL_RWLOCK_YIELD_NS_MAX);
			setenv("HOTLOCK_RWLOCK_YIELD_NS", v, 1);
			break;
		case 8:
			stats.deadlocks_after_ns = check_seconds("--deadlocks-after", v);
			after_given = true;
			break;
		case 9:
			stats.deadlocks_text_path = v;
			break;
		case 10:
			stats.deadlocks_json_path = v;
			break;
		}
	}
	bool reports = stats.deadlocks || stats.lock_order;
	if (!reports && (stats.deadlocks_text_path || stats.deadlocks_json_path))
		refuse("--deadlocks-%s says where --deadlocks and --lock-order report: give one of them",
		       stats.deadlocks_text_path ? "file" : "json");
	if (after_given && !stats.deadlocks && !stats.text_path && !stats.json_path)
		refuse("--deadlocks-after is for --deadlocks (or the counts of --stats): give one of them");
	if (stats.deadlocks_text_path)
		check_report_file("--deadlocks-file", stats.deadlocks_text_path);
	if (stats.deadlocks_json_path)
		check_report_file("--deadlocks-json", stats.deadlocks_json_path);
	if (i >= argc) {
		fputs("hotlock-run: no program given\n", stderr);
		fputs(usage, stderr);
		return EXIT_REFUSED;
	}
	char lib[PATH_MAX + 64];
	preload_path(lib, sizeof(lib));
	char prog[PATH_MAX];
	int err = find_program(argv[i], prog, sizeof(prog));
	if (err) {
		fprintf(stderr, "hotlock-run: %s: %s\n", argv[i], strerror(err));
		return 127;
	}
	check_program(prog, argv + i + 1, 0, false);
	const char *old = getenv("LD_PRELOAD");
	if (old && *old) {
		size_t n = strlen(old) + strlen(lib) + 2;
		char *both = malloc(n);
		if (!both)
			refuse("%s", "out of memory");
		snprintf(both, n, "%s:%s", old, lib);
		setenv("LD_PRELOAD", both, 1);
	} else {
		setenv("LD_PRELOAD", lib, 1);
	}
	if (stats.text_path || stats.json_path || reports) {
		collector_prepare(&stats);
		return collector_run(prog, argv + i);
	}
	execv(prog, argv + i);
	err = errno;
	fprintf(stderr, "hotlock-run: %s: %s\n", prog, strerror(err));
	return err == ENOENT ? 127 : 126;
}
