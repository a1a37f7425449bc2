/* SPDX-License-Identifier: MIT */
/* The lock's contract, errno (docs/core.md): a lock call leaves
 * errno as the caller left it.  Code logs a failed call's errno after
 * taking a log lock (write() fails, lock, strerror(errno)); glibc's calls
 * never touch errno, so such code is right on glibc and must stay right
 * under hotlock.  (When the waiting policy called open/read/fopen inside
 * contended calls, it left ENOENT, EPERM or EMFILE behind.)
 *
 * Every lock call of the workloads (workloads.h: mutex, rwlock of each
 * kind, cond with its mutex, natively hl_swap and hl_channel) is made with
 * errno set to a sentinel (12345) and must leave it there, whatever it
 * returns.  Each kind runs in a fresh forked child (its first contended
 * lock is the process's first), 200 ms with 4-6 contending threads and a
 * churn thread that creates short-lived threads, one after another, each
 * making a few of the kind's calls (their first calls are their threads'
 * first), three times:
 *   plain        nothing else;
 *   open-EPERM   each thread under a seccomp filter that answers
 *                open/openat/openat2 with EPERM (as container runtimes
 *                answer calls their profile does not list);
 *   fds-full     the descriptor table full (RLIMIT_NOFILE 64, every
 *                number taken): an open would fail with EMFILE.
 * A failure prints: FAIL: <variant>: <lock>: <call> returned R and changed
 * errno from 12345 to E (<name>).
 *
 * Native (contract_errno_native), and the pthread program on glibc (the
 * control) and under hotlock-run.
 *   contract_errno [--expect hotlock|glibc] [--kind SUBSTRING] [--ms N] */
#include "workloads.h"

#include <fcntl.h>
#include <sys/resource.h>

static const char *prog = "contract_errno";
static int64_t run_ms = 200;

enum variant { V_PLAIN, V_DENY_OPEN, V_FDS_FULL, V_COUNT };
static const char *const variant_names[] = { "plain", "open-EPERM", "fds-full" };

static void deny_open(int idx)
{
	int rc = contract_install_filter(true);
	REQUIRE(rc == 0, "thread %d: cannot install its seccomp filter: %s", idx, strerror(rc));
}

struct job {
	const struct wl_kind *k;
	enum variant v;
};

static int child(void *arg)
{
	const struct job *j = arg;
	struct wl_hooks h = {
		.before_loop = j->v == V_DENY_OPEN ? deny_open : NULL,
		.churn = true,
		.run_ns = run_ms * NSEC_PER_MSEC,
	};
	if (j->v == V_FDS_FULL) {
		struct rlimit rl = { 64, 64 };
		REQUIRE(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
		rl.rlim_cur = 64;
		REQUIRE(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %s", strerror(errno));
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		REQUIRE(fd >= 0, "open /dev/null: %s", strerror(errno));
		while (dup(fd) >= 0)
			;
		REQUIRE(errno == EMFILE, "dup: %s", strerror(errno));
	}
	char name[128];
	snprintf(name, sizeof(name), "%s: %s", variant_names[j->v], j->k->name);
	struct wl_kind k = *j->k;
	k.name = name;
	return wl_run(prog, &k, &h);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *impl = contract_expect(&argc, argv, prog);
	const char *only = NULL;
	contract_options(argc, argv, &only, &run_ms);
	const char *why;
	bool have_seccomp = contract_seccomp_available(&why);
	if (!have_seccomp)
		printf("%s: the open-EPERM runs are skipped: %s\n", prog, why);
	printf("%s: %s API, locks: %s, %lld ms per kind and variant\n", prog, CONTRACT_API,
	       impl, (long long)run_ms);
	int failed = 0, ran = 0;
	for (int v = 0; v < V_COUNT; v++) {
		if (v == V_DENY_OPEN && !have_seccomp)
			continue;
		for (int i = 0; i < WL_NKINDS; i++) {
			struct job j = { &wl_kinds[i], (enum variant)v };
			if (only && !strstr(j.k->name, only))
				continue;
			ran++;
			contract_shared_init();
			int status = contract_run_child(child, &j, 30000);
			char buf[128];
			if (status == -1) {
				fprintf(stderr, "%s: FAIL: %s: %s: the child hung (killed after "
					"30 s)\n", prog, variant_names[v], j.k->name);
				failed++;
			} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
				/* The child said what failed. */
				if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
					fprintf(stderr, "%s: FAIL: %s: %s: the child %s\n", prog,
						variant_names[v], j.k->name,
						describe_status(status, buf, sizeof(buf)));
				failed++;
			} else {
				printf("%s: %s: %s: ok, errno kept\n", prog, variant_names[v],
				       j.k->name);
			}
		}
	}
	REQUIRE(ran > 0, "no kind matches --kind %s", only ? only : "");
	if (failed) {
		fprintf(stderr, "%s: FAILED: %d of %d runs changed errno or failed\n", prog, failed,
			ran);
		return 1;
	}
	printf("%s: OK: %d runs\n", prog, ran);
	return 0;
}
