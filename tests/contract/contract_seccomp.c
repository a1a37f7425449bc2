/* SPDX-License-Identifier: MIT */
/* The lock's contract in a sandbox (docs/core.md): a lock call
 * makes no system call but the futex (futex, futex_wake, futex_wait,
 * futex_waitv), the clock (clock_gettime, gettimeofday) and sched_yield.
 * Programs that install a seccomp allowlist after their set-up (OpenSSH's
 * style: anything not listed kills the process; futex listed because glibc
 * needs it) must be able to keep using their locks.
 *
 * For each lock kind (workloads.h: mutex, rwlock of each kind, cond with
 * its mutex, and natively hl_swap and hl_channel), in a forked child: 4-6
 * threads contend on 2 CPUs for 300 ms, each under a filter of its own
 * (PR_SET_NO_NEW_PRIVS, then SECCOMP_SET_MODE_FILTER without TSYNC),
 * installed after the worker's set-up (after hl_thread_init() in the native
 * build, where the library has it) and before its loop.  The filter checks
 * the architecture and allows only the calls above (plus rt_sigreturn,
 * exit_group and restart_syscall, for the test's handler and the kernel's
 * restart of an interrupted futex wait); any other traps: the SIGSYS
 * handler records the number and which lock call the thread was in, and
 * exits the child with status 99.  A worker that is done does not exit (no
 * munmap, no exit allowed): it counts itself done and waits forever on a
 * futex word; the child's main thread, which has no filter, checks the
 * workload's invariants and _exits.
 *
 * The parent prints one line per kind:
 *   FAIL: <lock>: <call> made system call N (<name>), which the lock's
 *   contract does not allow [worker W, pc ...]
 *
 * Built twice: natively (contract_seccomp_native, the hl_* API) and as a
 * plain pthread program run on glibc (the control: it must pass) and under
 * hotlock-run (contract_seccomp_shim).
 *   contract_seccomp [--expect hotlock|glibc] [--kind SUBSTRING] [--ms N]
 *                    [--allow NR,NR...]
 * --allow adds system calls to the allowlist, for diagnosis only: which
 * calls would the lock make after the first one refused? */
#include "workloads.h"

static const char *prog = "contract_seccomp";

static void install(int idx)
{
	int rc = contract_install_filter(false);
	REQUIRE(rc == 0, "worker %d: cannot install its seccomp filter: %s", idx, strerror(rc));
}

static void block(int idx)
{
	(void)idx;
	contract_block_forever();
}

static int64_t run_ms = 300;

static int child(void *arg)
{
	const struct wl_kind *k = arg;
	struct wl_hooks h = { .before_loop = install, .after_loop = block, .run_ns = run_ms * NSEC_PER_MSEC };
	contract_catch_sigsys();
	return wl_run(prog, k, &h);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *impl = contract_expect(&argc, argv, prog);
	const char *only = NULL;
	contract_options(argc, argv, &only, &run_ms);
	const char *why;
	if (!contract_seccomp_available(&why)) {
		printf("%s: SKIP: %s\n", prog, why);
		return TEST_SKIP_CODE;
	}
	printf("%s: %s API, locks: %s, %lld ms per kind\n", prog, CONTRACT_API, impl,
	       (long long)run_ms);
	int failed = 0, ran = 0;
	for (int i = 0; i < WL_NKINDS; i++) {
		const struct wl_kind *k = &wl_kinds[i];
		if (only && !strstr(k->name, only))
			continue;
		ran++;
		contract_shared_init();
		int64_t t0 = now_ns();
		int status = contract_run_child(child, (void *)k, 30000);
		double ms = (double)(now_ns() - t0) / 1e6;
		char buf[128];
		if (status == -1) {
			fprintf(stderr, "%s: FAIL: %s: the child hung (killed after 30 s)\n", prog,
				k->name);
			failed++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == CONTRACT_SYSCALL_EXIT &&
			   cs->sys_nr >= 0) {
			contract_print_syscall(prog, k->name);
			failed++;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "%s: FAIL: %s: the child %s\n", prog, k->name,
				describe_status(status, buf, sizeof(buf)));
			failed++;
		} else {
			printf("%s: %s: ok, no system call outside the contract (%.0f ms)\n", prog,
			       k->name, ms);
		}
	}
	REQUIRE(ran > 0, "no kind matches --kind %s", only ? only : "");
	if (failed) {
		fprintf(stderr, "%s: FAILED: %d of %d lock kinds made system calls outside the "
			"contract, or failed\n", prog, failed, ran);
		return 1;
	}
	printf("%s: OK: %d lock kinds\n", prog, ran);
	return 0;
}
