/* SPDX-License-Identifier: MIT */
/* The lock's contract, stack (docs/core.md): a lock call needs
 * about as much stack as glibc's, so that it may be made on a thread
 * created with a PTHREAD_STACK_MIN (16 KiB) stack and from a signal
 * handler on an 8 KiB alternate stack (crash and shutdown handlers take
 * log locks there; LTP's and glibc's own condvar tests run threads on
 * PTHREAD_STACK_MIN stacks).  When the waiting policy read /proc inside
 * lock calls, one contended lock wrote about 22 KB of stack under the
 * shim, and such threads died by SIGSEGV.
 *
 * Each case runs in a forked child.
 *
 * small-stack cases: three threads, each on a 16 KiB stack of the test's
 * own (pthread_attr_setstack; glibc puts its TCB and static TLS at the top,
 * as it does for pthread_attr_setstacksize(PTHREAD_STACK_MIN)) with 60 KiB
 * of canary bytes below it and a PROT_NONE guard page below those: one
 * makes a contended call 3,000 times (or for 300 ms) while two partners
 * hold the lock 20-60 us at a time (so the calls park).  All three are
 * small: whichever thread the library gives its slow path's rare work to
 * (a first registration, a periodic refresh) is watched.
 *   mutex        lock (and trylock), unlock;
 *   rwlock-write wrlock against a writer and a reader;
 *   rwlock-read  rdlock against two writers;
 *   cond         a ping-pong with a partner through two condvars (wait,
 *                timed wait, signal, broadcast) while a third thread
 *                contends for the mutex.
 * signal cases: a thread whose SIGUSR1 handler runs on an 8 KiB alternate
 * stack (malloc'ed, so no guard page: 60 KiB of canary bytes below it) is
 * sent 150 signals; the handler takes a lock that a holder thread keeps
 * 200 us of every 220 (so it parks), while the thread itself locks
 * another lock in a loop (the signal interrupts lock calls too):
 *   handler-mutex, handler-rwlock.
 *
 * Checked: the canary bytes below each stack (any written byte: FAIL,
 * "<case>: ... wrote N bytes below its 16 KiB stack"), checked at the
 * thread's start (before its first lock call), after hl_thread_init()
 * (native, where it exists) and after the calls; the child's death by a
 * signal (the guard page: SIGSEGV), reported with the call it was in; a
 * handler whose lock does not return in 5 s.  The deepest use of each
 * stack is printed (pattern bytes never overwritten), for comparison with
 * glibc's.
 *
 * The programs are linked with -z now: lazy binding's resolver saves the
 * vector registers on the stack of whichever call first reaches a PLT entry
 * (2-3 KB with AVX-512), a cost of the link, not of the lock; the stack
 * used inside the library, its own lazy bindings included, is measured.
 * errno is contract_errno's subject, not checked here.
 *
 * Native (contract_stack_native), and the pthread program on glibc (the
 * control) and under hotlock-run.
 *   contract_stack [--expect hotlock|glibc] [--case SUBSTRING] */
#include "contract.h"

#include <sys/mman.h>

static const char *prog = "contract_stack";

#define PATTERN 0xa5
#define SMALL_STACK (16 * 1024)
#define ALT_STACK (8 * 1024)
#define CANARY (60 * 1024)
#define ITERATIONS 3000
#define RUN_NS (300 * NSEC_PER_MSEC)

/* The call the small-stack or signalled thread is in, for the parent's
 * report when the child dies: cs->user[0], and the case's phase user[1]. */
#define NOTE(id) (cs->user[0] = C_##id)
#define SCALL(id, expr) __extension__({ NOTE(id); CALL(id, expr); })
#define SCALL0(id, expr)                                                             \
	do {                                                                         \
		NOTE(id);                                                            \
		CALL0(id, expr);                                                     \
	} while (0)
enum { PH_START = 1, PH_INIT, PH_CALLS, PH_DONE };
static const char *const phase_names[] = { "?", "at the thread's start", "in hl_thread_init",
					   "in its lock calls", "after its calls" };

static _Atomic bool stop;
static lk_mutex_t m, other;
static lk_rwlock_t rw;
static lk_cond_t cv_a, cv_b;
static bool flag_a, flag_b;             /* under m */
static _Atomic long handled;

/* ---- stacks and canaries ---- */

struct region {
	unsigned char *lo;      /* canary bytes from here ... */
	unsigned char *stack;   /* ... to here; the stack from here ... */
	unsigned char *hi;      /* ... to here */
};

/* The deepest byte of r written (canary or stack), as a distance below
 * r->hi; and how many of those bytes lie below the stack. */
static size_t deepest(const struct region *r, size_t *below)
{
	unsigned char *p = r->lo;
	while (p < r->hi && *p == PATTERN)
		p++;
	*below = p < r->stack ? (size_t)(r->stack - p) : 0;
	return (size_t)(r->hi - p);
}

static _Atomic long overflow_phase;     /* the first phase that found canary bytes written */
static _Atomic long overflow_bytes, overflow_thread;

static void check_canary(const struct region *r, int phase)
{
	size_t below;
	deepest(r, &below);
	long none = 0;
	if (below && atomic_compare_exchange_strong(&overflow_phase, &none, phase)) {
		overflow_bytes = (long)below;
		overflow_thread = cur_thread;
	}
}

/* A region of canary bytes and a stack above it, a guard page below. */
static void region_map(struct region *r, size_t stack)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *p = mmap(NULL, page + CANARY + stack, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(p != MAP_FAILED, "mmap: %s", strerror(errno));
	REQUIRE(mprotect(p, page, PROT_NONE) == 0, "mprotect: %s", strerror(errno));
	r->lo = p + page;
	r->stack = r->lo + CANARY;
	r->hi = r->stack + stack;
	memset(r->lo, PATTERN, CANARY + stack);
}

/* ---- small-stack cases ---- */

/* Every thread of a case (the caller and its two partners) runs on a
 * 16 KiB stack: whichever of them the library picks for its slow path's
 * rare work (a first registration, a periodic refresh) is watched. */
enum small_case { S_MUTEX, S_RW_WRITE, S_RW_READ, S_COND, S_COUNT };
static const char *const small_names[] = { "mutex", "rwlock-write", "rwlock-read", "cond" };
static enum small_case small_case;
static struct region small_stacks[3];
static long small_calls;

/* Thread 0: the case's calls, ITERATIONS times or for RUN_NS. */
static void small_calls_run(void)
{
	enum small_case c = small_case;
	int64_t end = now_ns() + RUN_NS;
	long i;
	for (i = 0; i < ITERATIONS && now_ns() < end; i++) {
		switch (c) {
		case S_MUTEX:
			if (i % 8 == 0) {
				if (SCALL(MUTEX_TRYLOCK, lk_mutex_trylock(&m)) != 0)
					SCALL0(MUTEX_LOCK, lk_mutex_lock(&m));
			} else {
				SCALL0(MUTEX_LOCK, lk_mutex_lock(&m));
			}
			SCALL0(MUTEX_UNLOCK, lk_mutex_unlock(&m));
			break;
		case S_RW_WRITE:
			SCALL0(WR_LOCK, lk_wrlock(&rw));
			SCALL0(RW_UNLOCK, lk_rwunlock(&rw));
			break;
		case S_RW_READ:
			SCALL0(RD_LOCK, lk_rdlock(&rw));
			SCALL0(RW_UNLOCK, lk_rwunlock(&rw));
			break;
		case S_COND:
			SCALL0(MUTEX_LOCK, lk_mutex_lock(&m));
			flag_b = true;
			if (i % 4 == 0)
				SCALL0(COND_BROADCAST, lk_cond_broadcast(&cv_b));
			else
				SCALL0(COND_SIGNAL, lk_cond_signal(&cv_b));
			while (!flag_a) {
				if (i % 4 == 1) {
					struct timespec ts = deadline_in(CLOCK_MONOTONIC,
									 5 * NSEC_PER_MSEC);
					NOTE(COND_TIMEDWAIT);
					CALL_OR(COND_TIMEDWAIT, lk_cond_timedwait(&cv_a, &m, &ts),
						ETIMEDOUT, ETIMEDOUT);
				} else {
					SCALL0(COND_WAIT, lk_cond_wait(&cv_a, &m));
				}
			}
			flag_a = false;
			SCALL0(MUTEX_UNLOCK, lk_mutex_unlock(&m));
			break;
		default:
			break;
		}
	}
	small_calls = i;
	NOTE(NONE);
	atomic_store(&stop, true);
	if (c == S_COND) {
		/* Let the ping-pong partner out. */
		CALL0(MUTEX_LOCK, lk_mutex_lock(&m));
		flag_b = true;
		CALL0(COND_BROADCAST, lk_cond_broadcast(&cv_b));
		CALL0(MUTEX_UNLOCK, lk_mutex_unlock(&m));
	}
}

/* Threads 1 and 2: hold the lock 20-60 us at a time (and thread 1 of the
 * cond case is the ping-pong partner). */
static void partner_run(int role)
{
	enum small_case c = small_case;
	test_rng_t rng;
	rng_seed(&rng, 11, (uint64_t)role);
	while (!atomic_load(&stop)) {
		int64_t hold = 20000 + (int64_t)rng_below(&rng, 40000);
		switch (c) {
		case S_MUTEX:
			CALL0(MUTEX_LOCK, lk_mutex_lock(&m));
			contract_busy_ns(hold);
			CALL0(MUTEX_UNLOCK, lk_mutex_unlock(&m));
			break;
		case S_RW_WRITE:
		case S_RW_READ:
			if (c == S_RW_WRITE && role == 2) {
				CALL0(RD_LOCK, lk_rdlock(&rw));
				contract_busy_ns(hold);
			} else {
				CALL0(WR_LOCK, lk_wrlock(&rw));
				contract_busy_ns(hold);
			}
			CALL0(RW_UNLOCK, lk_rwunlock(&rw));
			break;
		case S_COND:
			CALL0(MUTEX_LOCK, lk_mutex_lock(&m));
			if (role == 1) {
				while (!flag_b)
					CALL0(COND_WAIT, lk_cond_wait(&cv_b, &m));
				flag_b = false;
				flag_a = true;
				CALL0(COND_SIGNAL, lk_cond_signal(&cv_a));
			} else {
				contract_busy_ns(hold);
			}
			CALL0(MUTEX_UNLOCK, lk_mutex_unlock(&m));
			break;
		default:
			break;
		}
		contract_busy_ns(5000);
	}
}

static void *small_thread(void *arg)
{
	int me = (int)(intptr_t)arg;
	const struct region *r = &small_stacks[me];
	cur_thread = me;
	if (me == 0)
		cs->user[1] = PH_START;
	check_canary(r, PH_START);
	if (me == 0)
		cs->user[1] = PH_INIT;
	contract_thread_init();
	check_canary(r, PH_INIT);
	if (me == 0) {
		cs->user[1] = PH_CALLS;
		small_calls_run();
		cs->user[1] = PH_DONE;
	} else {
		partner_run(me);
	}
	check_canary(r, PH_CALLS);
	return NULL;
}

static int run_small(void *arg)
{
	small_case = (enum small_case)(intptr_t)arg;
	const char *name = small_names[small_case];
	lk_mutex_init(&m, LK_NORMAL);
	lk_rwlock_init(&rw, 0);
	lk_cond_init(&cv_a);
	lk_cond_init(&cv_b);
	pthread_t t[3];
	/* The partners first: the caller meets them holding the lock. */
	for (int i = 2; i >= 0; i--) {
		region_map(&small_stacks[i], SMALL_STACK);
		pthread_attr_t a;
		pthread_attr_init(&a);
		REQUIRE(pthread_attr_setstack(&a, small_stacks[i].stack, SMALL_STACK) == 0,
			"pthread_attr_setstack");
		int rc = pthread_create(&t[i], &a, small_thread, (void *)(intptr_t)i);
		if (rc) {
			fprintf(stderr, "%s: FAIL: %s: pthread_create with a 16 KiB stack: %s\n",
				prog, name, strerror(rc));
			_exit(1);
		}
		pthread_attr_destroy(&a);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);

	bool ok = !contract_print_fail(prog, name);
	size_t used[3], below;
	for (int i = 0; i < 3; i++)
		used[i] = deepest(&small_stacks[i], &below);
	if (overflow_phase) {
		int who = (int)overflow_thread;
		fprintf(stderr, "%s: FAIL: %s: a thread with a 16 KiB stack (%s) wrote %ld bytes "
			"below its stack %s (deepest use %zu bytes)\n", prog, name,
			who == 0 ? "the caller" : "a partner", (long)overflow_bytes,
			phase_names[overflow_phase], used[who >= 0 && who < 3 ? who : 0]);
		ok = false;
	}
	printf("%s: %s, 3 threads on 16 KiB stacks: %ld calls, deepest stack use %zu, %zu, %zu "
	       "bytes (TCB and static TLS at the top included)%s\n", prog, name, small_calls,
	       used[0], used[1], used[2], ok ? "" : ": FAILED");
	return ok ? 0 : 1;
}

/* ---- signal cases ---- */

enum sig_case { G_MUTEX, G_RWLOCK, G_COUNT };
static const char *const sig_names[] = { "handler-mutex", "handler-rwlock" };
static enum sig_case sig_case;
static struct region alt;

static void on_usr1(int sig)
{
	(void)sig;
	int saved = errno;
	int prev_call = (int)cs->user[0];
	if (sig_case == G_MUTEX) {
		SCALL0(MUTEX_LOCK, lk_mutex_lock(&m));
		SCALL0(MUTEX_UNLOCK, lk_mutex_unlock(&m));
	} else {
		if (handled % 2)
			SCALL0(RD_LOCK, lk_rdlock(&rw));
		else
			SCALL0(WR_LOCK, lk_wrlock(&rw));
		SCALL0(RW_UNLOCK, lk_rwunlock(&rw));
	}
	cs->user[0] = prev_call;
	atomic_fetch_add(&handled, 1);
	errno = saved;
}

static void *signalled(void *arg)
{
	(void)arg;
	cur_thread = 0;
	contract_thread_init();
	stack_t ss = { .ss_sp = alt.stack, .ss_size = ALT_STACK, .ss_flags = 0 };
	REQUIRE(sigaltstack(&ss, NULL) == 0, "sigaltstack: %s", strerror(errno));
	cs->user[1] = PH_CALLS;
	atomic_fetch_add(&handled, 0);
	cs->user[2] = 1;        /* ready */
	while (!atomic_load(&stop)) {
		/* Another lock, uncontended: the signal also interrupts lock calls. */
		SCALL0(MUTEX_LOCK, lk_mutex_lock(&other));
		SCALL0(MUTEX_UNLOCK, lk_mutex_unlock(&other));
		NOTE(NONE);
		contract_busy_ns(2000);
	}
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	return NULL;
}

static void *holder(void *arg)
{
	(void)arg;
	cur_thread = 1;
	contract_thread_init();
	while (!atomic_load(&stop)) {
		if (sig_case == G_MUTEX) {
			CALL0(MUTEX_LOCK, lk_mutex_lock(&m));
			contract_busy_ns(200000);
			CALL0(MUTEX_UNLOCK, lk_mutex_unlock(&m));
		} else {
			CALL0(WR_LOCK, lk_wrlock(&rw));
			contract_busy_ns(200000);
			CALL0(RW_UNLOCK, lk_rwunlock(&rw));
		}
		contract_busy_ns(20000);
	}
	return NULL;
}

static int run_signal(void *arg)
{
	sig_case = (enum sig_case)(intptr_t)arg;
	unsigned char *buf = aligned_alloc(64, CANARY + ALT_STACK);
	REQUIRE(buf, "aligned_alloc");
	alt.lo = buf;
	alt.stack = buf + CANARY;
	alt.hi = alt.stack + ALT_STACK;
	memset(alt.lo, PATTERN, CANARY + ALT_STACK);
	lk_mutex_init(&m, LK_NORMAL);
	lk_mutex_init(&other, LK_NORMAL);
	lk_rwlock_init(&rw, 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");

	pthread_t h, t;
	REQUIRE(pthread_create(&h, NULL, holder, NULL) == 0, "pthread_create");
	REQUIRE(pthread_create(&t, NULL, signalled, NULL) == 0, "pthread_create");
	while (!cs->user[2])
		sleep_ns(NSEC_PER_MSEC);
	bool ok = true;
	int sent;
	for (sent = 0; sent < 150; sent++) {
		long before = atomic_load(&handled);
		REQUIRE(pthread_kill(t, SIGUSR1) == 0, "pthread_kill");
		int64_t limit = now_ns() + 5 * NSEC_PER_SEC;
		while (atomic_load(&handled) == before && now_ns() < limit)
			sleep_ns(100 * NSEC_PER_USEC);
		if (atomic_load(&handled) == before) {
			fprintf(stderr, "%s: FAIL: %s: the handler's %s did not return in 5 s "
				"(signal %d)\n", prog, sig_names[sig_case],
				call_name((int)cs->user[0]), sent + 1);
			fflush(stderr);
			_exit(1);
		}
		sleep_ns(NSEC_PER_MSEC);
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	pthread_join(h, NULL);
	size_t below, used = deepest(&alt, &below);
	ok &= !contract_print_fail(prog, sig_names[sig_case]);
	if (below) {
		fprintf(stderr, "%s: FAIL: %s: the handler on an 8 KiB alternate stack wrote %zu "
			"bytes below it (deepest use %zu bytes, the kernel's signal frame "
			"included)\n", prog, sig_names[sig_case], below, used);
		ok = false;
	}
	printf("%s: %s on an 8 KiB alternate stack: %d signals, deepest stack use %zu bytes "
	       "(the kernel's signal frame included)%s\n", prog, sig_names[sig_case], sent, used,
	       ok ? "" : ": FAILED");
	return ok ? 0 : 1;
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	contract_errno_unchecked = true;        /* contract_errno's subject */
	const char *impl = contract_expect(&argc, argv, prog);
	const char *only = argc == 3 && !strcmp(argv[1], "--case") ? argv[2] : NULL;
	printf("%s: %s API, locks: %s\n", prog, CONTRACT_API, impl);
	int failed = 0, ran = 0;
	for (int i = 0; i < S_COUNT + G_COUNT; i++) {
		bool small = i < S_COUNT;
		const char *name = small ? small_names[i] : sig_names[i - S_COUNT];
		if (only && !strstr(name, only))
			continue;
		ran++;
		contract_shared_init();
		int status = contract_run_child(small ? run_small : run_signal,
						(void *)(intptr_t)(small ? i : i - S_COUNT), 30000);
		char buf[128];
		if (status == -1) {
			fprintf(stderr, "%s: FAIL: %s: the child hung (killed after 30 s) %s, in %s\n",
				prog, name, phase_names[cs->user[1]], call_name((int)cs->user[0]));
			failed++;
		} else if (WIFSIGNALED(status)) {
			fprintf(stderr, "%s: FAIL: %s: the child was %s %s, in %s%s\n", prog, name,
				describe_status(status, buf, sizeof(buf)), phase_names[cs->user[1]],
				call_name((int)cs->user[0]),
				WTERMSIG(status) == SIGSEGV ? " (a stack overflow into the guard "
				"page?)" : "");
			failed++;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			failed++;       /* the child said what failed */
		}
	}
	REQUIRE(ran > 0, "no case matches --case %s", only ? only : "");
	if (failed) {
		fprintf(stderr, "%s: FAILED: %d of %d cases\n", prog, failed, ran);
		return 1;
	}
	printf("%s: OK: %d cases\n", prog, ran);
	return 0;
}
