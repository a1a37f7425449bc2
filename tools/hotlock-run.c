/* hotlock-run: runs a program on hotlock's locks, through the pthread shim.
 *
 *   hotlock-run [options] -- program [args...]
 *
 * Sets LD_PRELOAD to libhotlock-preload.so (after any library already
 * preloaded), turns the options into the HOTLOCK_* settings the library
 * reads, and execs the program in its own place, so the program's exit
 * status and signals are the caller's to see.  A program the dynamic linker
 * would not preload into (a static binary, a setuid or setgid one, one with
 * file capabilities, another ELF class) is refused with one line and exit
 * status 2: run on glibc, silently, it would measure the wrong thing.
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
	"  -h, --help           this text\n"
	"\n"
	"The program's exit status is hotlock-run's.  Exit status 2: hotlock-run\n"
	"refused (bad option, or a program the shim cannot be loaded into: static,\n"
	"setuid/setgid, file capabilities, 32-bit).\n";

static _Noreturn void refuse(const char *fmt, const char *arg)
{
	fputs("hotlock-run: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(EXIT_REFUSED);
}

static void check_number(const char *opt, const char *v, unsigned long long max)
{
	char *end;
	errno = 0;
	if (!*v || *v == '-' || *v == '+')
		goto bad;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || n > max)
		goto bad;
	return;
bad:
	fprintf(stderr, "hotlock-run: %s wants a whole number of nanoseconds from 0 to %llu, not '%s'\n",
		opt, max, v);
	exit(EXIT_REFUSED);
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

/* Refuses (exit 2) a program the dynamic linker would not preload into.
 * depth: how many #! interpreters were followed. */
static void check_program(const char *path, int depth)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return;                 /* execvp reports it */
	if (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getgid()))
		refuse("%s is setuid or setgid: the dynamic linker ignores LD_PRELOAD for it, so it "
		       "cannot run on hotlock", path);
	if (getxattr(path, "security.capability", NULL, 0) > 0)
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
			check_program(interp, depth + 1);
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
	bool dynamic = false;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			dynamic = true;
	}
	close(fd);
	if (!dynamic && eh.e_type == ET_EXEC)
		refuse("%s is statically linked: LD_PRELOAD cannot replace its pthread functions, so "
		       "it cannot run on hotlock", path);
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
		const char *opts[] = { "--queue", "--spin-ns", "--handoff-ns", "--topology" };
		int k = -1;
		const char *v = NULL;
		for (int j = 0; j < 4; j++) {
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
			if (i + 1 >= argc)
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
		}
	}
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
	check_program(prog, 0);
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
	execv(prog, argv + i);
	err = errno;
	fprintf(stderr, "hotlock-run: %s: %s\n", prog, strerror(err));
	return err == ENOENT ? 127 : 126;
}
