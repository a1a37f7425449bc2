/* SPDX-License-Identifier: MIT */
/* The lock's contract where a sandboxed program starts threads
 * (docs/core.md): a program that installs a seccomp allowlist after its
 * set-up and then starts worker threads lists what glibc's pthread_create,
 * pthread_join and thread exit need, beside the futex and the clock.
 * Under hotlock-run the shim registers every thread where it starts; that
 * must add nothing to the list but gettid (the thread's TID, which every
 * lock word names), and the threads' contended mutex, rwlock and condvar
 * calls nothing at all.  The library's futex-hash resize (a prctl) waits
 * for 64 threads, past what this test starts.
 *
 * The main thread starts and joins one thread (its set-up), installs the
 * filter (threads started later inherit it),
 * then starts 12 workers at once, which contend on a mutex, an rwlock and
 * a condvar for 200 ms and exit, are joined, and then 40 more, two at a
 * time (churn).  Anything not on the list traps (SIGSYS): the process
 * ends and the parent names the system call.  Every worker's increments
 * must all be there.
 *
 * Not linked with hotlock: run on glibc (the control: passes) and under
 * hotlock-run (it failed when a thread's first slow path asked the kernel
 * for its affinity and read /proc).
 *   contract_spawn [--expect hotlock|glibc] [--allow NR,...] */
#include "contract.h"

static const char *prog = "contract_spawn";

/* What glibc 2.36's pthread_create, a thread's start and exit, and
 * pthread_join make, and gettid, the one call the shim adds. */
static const long spawn_allowed[] = {
	SYS_clone, 435 /* clone3 */, SYS_mmap, SYS_munmap, SYS_mprotect, SYS_madvise,
	SYS_rt_sigprocmask, SYS_set_robust_list, 334 /* rseq */, SYS_exit, SYS_gettid,
};

#define WORKERS 12
#define CHURN 40

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counter, rw_counter;
static _Atomic long done_ops;
static int64_t until_ns;

static void *worker(void *arg)
{
	long ops = 0;
	bool churn = arg != NULL;
	do {
		pthread_mutex_lock(&mx);
		counter++;
		if (counter % 64 == 0)
			pthread_cond_broadcast(&cv);
		else if (counter % 97 == 0) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 200000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&cv, &mx, &ts);
		}
		pthread_mutex_unlock(&mx);
		if (ops % 4 == 0) {
			pthread_rwlock_wrlock(&rw);
			rw_counter++;
			pthread_rwlock_unlock(&rw);
		} else {
			pthread_rwlock_rdlock(&rw);
			(void)*(volatile long *)&rw_counter;
			pthread_rwlock_unlock(&rw);
		}
		ops++;
	} while (churn ? ops < 2000 : now_ns() < until_ns);
	atomic_fetch_add(&done_ops, ops);
	return NULL;
}

static int run(void *arg)
{
	(void)arg;
	contract_catch_sigsys();
	for (size_t i = 0; i < sizeof(spawn_allowed) / sizeof(spawn_allowed[0]); i++)
		contract_extra_allowed[contract_n_extra++] = spawn_allowed[i];
	/* Set-up: one thread started and joined before the filter, as a
	 * program's set-up does (glibc installs its own signal handlers at
	 * the first pthread_create). */
	static int setup_mark;
	pthread_t s0;
	if (pthread_create(&s0, NULL, worker, &setup_mark) != 0)
		return 3;
	pthread_join(s0, NULL);
	until_ns = now_ns() + 200 * NSEC_PER_MSEC;
	int err = contract_install_filter(false);
	if (err) {
		printf("%s: cannot install the filter: %s\n", prog, strerror(err));
		return 1;
	}
	pthread_t t[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 3;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < CHURN; i += 2) {
		static int churn_mark;
		pthread_t a, b;
		if (pthread_create(&a, NULL, worker, &churn_mark) != 0 ||
		    pthread_create(&b, NULL, worker, &churn_mark) != 0)
			return 3;
		pthread_join(a, NULL);
		pthread_join(b, NULL);
	}
	long ops = atomic_load(&done_ops);
	if (counter != ops) {
		printf("%s: FAIL: %ld increments under the mutex, %ld operations done\n", prog,
		       counter, ops);
		return 1;
	}
	/* No stdio: write is not on the list; the parent reports. */
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	contract_expect(&argc, argv, prog);
	contract_options(argc, argv, NULL, NULL);
	const char *why;
	if (!contract_seccomp_available(&why)) {
		printf("SKIP: %s\n", why);
		return 77;
	}
	contract_shared_init();
	int status = contract_run_child(run, NULL, 30000);
	if (status == -1) {
		printf("%s: FAIL: the sandboxed workers ran past 30 s\n", prog);
		return 1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == CONTRACT_SYSCALL_EXIT) {
		contract_print_syscall(prog, "a thread start or a lock call");
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("%s: FAIL: the sandboxed child %s (exit %d)\n", prog,
		       WIFSIGNALED(status) ? "was killed" : "failed",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
		return 1;
	}
	printf("%s: %d workers and %d more started two at a time under a seccomp allowlist "
	       "(glibc's thread calls and gettid beside the contract's): ok\n", prog, WORKERS, CHURN);
	return 0;
}
