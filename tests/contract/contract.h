/* SPDX-License-Identifier: MIT */
/* The lock-contract tests (tests/contract/, README.md there): what they
 * share.  The lock's contract (docs/core.md) says every lock, unlock, wait, signal and
 * broadcast call may be made from anywhere a glibc pthread call may: no
 * system call but futex (either interface), the clock and sched_yield, no
 * file opened, nothing allocated, errno left as the caller left it, about
 * glibc's stack.  These helpers let one test source be built twice:
 *
 *   -DCONTRACT_NATIVE   hotlock's own API (hl_mutex_*, hl_rwlock_*,
 *                       hl_cond_*, hl_swap, hl_channel), linked with
 *                       hotlock_static;
 *   (nothing)           plain pthread calls, not linked with hotlock: run on
 *                       glibc (the control) and under hotlock-run (the shim).
 *
 * What is here:
 *  - a lock API layer (lk_*) over either API, and CALL(), which wraps every
 *    lock call of a test: it names the call for the reports (a TLS word the
 *    SIGSYS handler reads), sets errno to a sentinel before it and records
 *    any change of errno after it;
 *  - a report area shared with the forked parent (workers under a seccomp
 *    filter cannot write(); they store numbers there, the parent prints);
 *  - two seccomp filters: the contract's allowlist (anything else traps:
 *    SIGSYS, whose handler records the number and exits the child with
 *    CONTRACT_SYSCALL_EXIT) and one that answers open/openat with EPERM;
 *  - system call names, a child runner with a time limit, and which lock
 *    implementation is in use (glibc or the shim), so that a shim test
 *    cannot pass by not using the shim.
 * Everything a worker thread calls after its filter is installed makes no
 * system call but the allowed ones. */
#ifndef HOTLOCK_CONTRACT_H
#define HOTLOCK_CONTRACT_H

#include "common.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <dlfcn.h>
#include <ucontext.h>

#ifdef CONTRACT_NATIVE
#include <hotlock/hotlock.h>
#define CONTRACT_API "native"
#else
#define CONTRACT_API "pthread"
#endif

/* errno before every lock call; a lock call must leave it so. */
#define CONTRACT_ERRNO_SENTINEL 12345
/* The exit status of a child whose worker made a forbidden system call. */
#define CONTRACT_SYSCALL_EXIT 99

/* ---- the calls, named for the reports ------------------------------------ */

#ifdef CONTRACT_NATIVE
#define CONTRACT_NAME(native, posix) native
#else
#define CONTRACT_NAME(native, posix) posix
#endif

#define CONTRACT_CALLS(X)                                                            \
	X(NONE, "no lock call", "no lock call")                                      \
	X(THREAD_INIT, "hl_thread_init", "pthread_create")                           \
	X(MUTEX_LOCK, "hl_mutex_lock", "pthread_mutex_lock")                         \
	X(MUTEX_TRYLOCK, "hl_mutex_trylock", "pthread_mutex_trylock")                \
	X(MUTEX_TIMEDLOCK, "hl_mutex_timedlock", "pthread_mutex_clocklock")          \
	X(MUTEX_UNLOCK, "hl_mutex_unlock", "pthread_mutex_unlock")                   \
	X(RD_LOCK, "hl_rwlock_rdlock", "pthread_rwlock_rdlock")                      \
	X(RD_TRYLOCK, "hl_rwlock_tryrdlock", "pthread_rwlock_tryrdlock")             \
	X(RD_TIMEDLOCK, "hl_rwlock_timedrdlock", "pthread_rwlock_clockrdlock")       \
	X(WR_LOCK, "hl_rwlock_wrlock", "pthread_rwlock_wrlock")                      \
	X(WR_TRYLOCK, "hl_rwlock_trywrlock", "pthread_rwlock_trywrlock")             \
	X(WR_TIMEDLOCK, "hl_rwlock_timedwrlock", "pthread_rwlock_clockwrlock")       \
	X(RW_UNLOCK, "hl_rwlock_unlock", "pthread_rwlock_unlock")                    \
	X(COND_WAIT, "hl_cond_wait", "pthread_cond_wait")                            \
	X(COND_TIMEDWAIT, "hl_cond_timedwait", "pthread_cond_timedwait")             \
	X(COND_SIGNAL, "hl_cond_signal", "pthread_cond_signal")                      \
	X(COND_BROADCAST, "hl_cond_broadcast", "pthread_cond_broadcast")             \
	X(SWAP, "hl_swap", "-")                                                      \
	X(SWAP_TIMED, "hl_swap_timed", "-")                                          \
	X(WAIT_SELF, "hl_wait_self", "-")                                            \
	X(WAKE, "hl_wake", "-")                                                      \
	X(CHANNEL_CALL, "hl_channel_call", "-")                                      \
	X(CHANNEL_CALL_TIMED, "hl_channel_call_timed", "-")                          \
	X(CHANNEL_SERVE, "hl_channel_serve", "-")                                    \
	X(CHANNEL_SHUTDOWN, "hl_channel_shutdown", "-")

#define CONTRACT_X_ENUM(id, n, p) C_##id,
enum contract_call { CONTRACT_CALLS(CONTRACT_X_ENUM) C_COUNT };
#undef CONTRACT_X_ENUM

static inline const char *call_name(int c)
{
#define CONTRACT_X_NAME(id, n, p) CONTRACT_NAME(n, p),
	static const char *const names[] = { CONTRACT_CALLS(CONTRACT_X_NAME) };
#undef CONTRACT_X_NAME
	return c >= 0 && c < C_COUNT ? names[c] : "?";
}

/* ---- the report area, shared with the forked parent ---------------------- */

enum contract_what {
	W_NONE,
	W_ERRNO,        /* a = the call's return value, b = errno after it */
	W_RC,           /* a = the call's unexpected return value */
	W_INVARIANT,    /* a = source line of the check, b = a value */
};

#define CONTRACT_STACK_WORDS 64

struct contract_shared {
	/* A forbidden system call (the SIGSYS handler). */
	_Atomic int sys_nr;         /* -1: none */
	_Atomic int sys_call;       /* the enum contract_call the thread was in */
	_Atomic int sys_thread;
	_Atomic uint32_t sys_arch;
	_Atomic uintptr_t sys_ip;
	_Atomic uintptr_t sys_sp0;  /* the word at the stack pointer: the syscall
				     * wrapper's return address when it is a leaf */
	/* The words above the stack pointer at the call: among them the
	 * return addresses of its callers (the report names those that fall
	 * in a function of a loaded object), since glibc keeps no frame
	 * pointers to walk. */
	_Atomic uintptr_t sys_stack[CONTRACT_STACK_WORDS];
	/* The first failure a worker recorded, and how many there were. */
	_Atomic int fails;
	_Atomic int fail_what;
	_Atomic int fail_call;
	_Atomic int fail_thread;
	_Atomic long fail_a, fail_b;
	/* Free for each test (progress, phases). */
	_Atomic long user[16];
};

static struct contract_shared *cs __attribute__((unused));
/* The call the thread is in (C_NONE outside) and its worker number: read by
 * the SIGSYS handler, so TLS of the executable itself (no lazy TLS). */
static __thread int cur_call __attribute__((unused));
static __thread int cur_thread __attribute__((unused)) = -1;

static inline void contract_shared_init(void)
{
	if (!cs) {
		void *p = mmap(NULL, sizeof(*cs), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		REQUIRE(p != MAP_FAILED, "mmap: %s", strerror(errno));
		cs = p;
	}
	memset((void *)cs, 0, sizeof(*cs));
	cs->sys_nr = -1;
}

/* Records a failure (the first one's details, and a count).  No system
 * call: safe in a filtered worker and in a signal handler. */
static inline void contract_fail(int what, int call, long a, long b)
{
	if (atomic_fetch_add(&cs->fails, 1) == 0) {
		cs->fail_what = what;
		cs->fail_call = call;
		cs->fail_thread = cur_thread;
		cs->fail_a = a;
		cs->fail_b = b;
	}
}

/* An invariant of a workload (mutual exclusion, counts). */
#define WL_CHECK(cond, value)                                                        \
	do {                                                                         \
		if (!(cond))                                                         \
			contract_fail(W_INVARIANT, cur_call, __LINE__, (long)(value)); \
	} while (0)

/* A test about something else may leave errno to contract_errno. */
static bool contract_errno_unchecked __attribute__((unused));

/* One lock call: named, errno set to the sentinel before it and checked
 * after it (the contract holds for every call, failed ones included: glibc
 * returns its errors, it never sets errno). */
#define CALL(id, expr)                                                               \
	__extension__({                                                              \
		cur_call = C_##id;                                                   \
		errno = CONTRACT_ERRNO_SENTINEL;                                     \
		int rc_ = (expr);                                                    \
		int e_ = errno;                                                      \
		cur_call = C_NONE;                                                   \
		if (e_ != CONTRACT_ERRNO_SENTINEL && !contract_errno_unchecked)      \
			contract_fail(W_ERRNO, C_##id, rc_, e_);                     \
		rc_;                                                                 \
	})

/* A call that must return 0. */
#define CALL0(id, expr)                                                              \
	do {                                                                         \
		int r0_ = CALL(id, expr);                                            \
		if (r0_ != 0)                                                        \
			contract_fail(W_RC, C_##id, r0_, 0);                         \
	} while (0)

/* A call that may also return the errors in the mask (EBUSY, ETIMEDOUT...). */
#define CALL_OR(id, expr, ok1, ok2)                                                  \
	__extension__({                                                              \
		int r1_ = CALL(id, expr);                                            \
		if (r1_ != 0 && r1_ != (ok1) && r1_ != (ok2))                        \
			contract_fail(W_RC, C_##id, r1_, 0);                         \
		r1_;                                                                 \
	})

/* The first failure a worker recorded, as one line on stderr; returns
 * whether there was one. */
static inline bool contract_print_fail(const char *prog, const char *lock)
{
	int n = cs->fails;
	if (!n)
		return false;
	int c = cs->fail_call;
	long a = cs->fail_a, b = cs->fail_b;
	switch (cs->fail_what) {
	case W_ERRNO:
		fprintf(stderr, "%s: FAIL: %s: %s (worker %d) returned %ld and changed errno "
			"from %d to %ld (%s); %d such failures\n", prog, lock, call_name(c),
			cs->fail_thread, a, CONTRACT_ERRNO_SENTINEL, b, strerrorname_np((int)b)
			? strerrorname_np((int)b) : "?", n);
		break;
	case W_RC:
		fprintf(stderr, "%s: FAIL: %s: %s (worker %d) returned %ld (%s) unexpectedly; "
			"%d failures\n", prog, lock, call_name(c), cs->fail_thread, a,
			strerrorname_np((int)a) ? strerrorname_np((int)a) : "?", n);
		break;
	default:
		fprintf(stderr, "%s: FAIL: %s: the workload's check at %s:%ld failed (value %ld, "
			"worker %d, last call %s); %d failures\n", prog, lock, __FILE__, a, b,
			cs->fail_thread, call_name(c), n);
		break;
	}
	return true;
}

/* ---- system call names --------------------------------------------------- */

static inline const char *syscall_name(long nr)
{
	static const struct { long nr; const char *name; } t[] = {
		{ SYS_read, "read" }, { SYS_write, "write" }, { SYS_close, "close" },
		{ SYS_fstat, "fstat" }, { SYS_lseek, "lseek" }, { SYS_mmap, "mmap" },
		{ SYS_mprotect, "mprotect" }, { SYS_munmap, "munmap" }, { SYS_brk, "brk" },
		{ SYS_rt_sigaction, "rt_sigaction" }, { SYS_rt_sigprocmask, "rt_sigprocmask" },
		{ SYS_rt_sigreturn, "rt_sigreturn" }, { SYS_ioctl, "ioctl" },
		{ SYS_pread64, "pread64" }, { SYS_readv, "readv" }, { SYS_writev, "writev" },
		{ SYS_sched_yield, "sched_yield" }, { SYS_mremap, "mremap" },
		{ SYS_madvise, "madvise" }, { SYS_dup, "dup" }, { SYS_nanosleep, "nanosleep" },
		{ SYS_getpid, "getpid" }, { SYS_clone, "clone" }, { SYS_exit, "exit" },
		{ SYS_fcntl, "fcntl" }, { SYS_getdents64, "getdents64" },
		{ SYS_gettimeofday, "gettimeofday" }, { SYS_getrlimit, "getrlimit" },
		{ SYS_sysinfo, "sysinfo" }, { SYS_getuid, "getuid" }, { SYS_getppid, "getppid" },
		{ SYS_sched_setparam, "sched_setparam" }, { SYS_sched_getparam, "sched_getparam" },
		{ SYS_sched_setscheduler, "sched_setscheduler" },
		{ SYS_sched_getscheduler, "sched_getscheduler" }, { SYS_prctl, "prctl" },
		{ SYS_gettid, "gettid" }, { SYS_tkill, "tkill" }, { SYS_futex, "futex" },
		{ SYS_sched_setaffinity, "sched_setaffinity" },
		{ SYS_sched_getaffinity, "sched_getaffinity" },
		{ SYS_set_tid_address, "set_tid_address" }, { SYS_restart_syscall, "restart_syscall" },
		{ SYS_clock_gettime, "clock_gettime" }, { SYS_clock_getres, "clock_getres" },
		{ SYS_clock_nanosleep, "clock_nanosleep" }, { SYS_exit_group, "exit_group" },
		{ SYS_tgkill, "tgkill" }, { SYS_openat, "openat" }, { SYS_newfstatat, "newfstatat" },
		{ SYS_set_robust_list, "set_robust_list" }, { SYS_getcpu, "getcpu" },
		{ SYS_prlimit64, "prlimit64" }, { SYS_getrandom, "getrandom" },
		{ SYS_membarrier, "membarrier" }, { SYS_rseq, "rseq" }, { SYS_statx, "statx" },
		{ SYS_clone3, "clone3" }, { SYS_openat2, "openat2" },
		{ SYS_sched_getattr, "sched_getattr" }, { SYS_seccomp, "seccomp" },
#ifdef SYS_open
		{ SYS_open, "open" }, { SYS_stat, "stat" }, { SYS_access, "access" },
		{ SYS_getdents, "getdents" }, { SYS_time, "time" }, { SYS_readlink, "readlink" },
		{ SYS_arch_prctl, "arch_prctl" },
#endif
		{ 449, "futex_waitv" }, { 454, "futex_wake" }, { 455, "futex_wait" },
		{ 456, "futex_requeue" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].nr == nr)
			return t[i].name;
	return "?";
}

/* ---- seccomp ------------------------------------------------------------- */

#if defined(__x86_64__)
#define CONTRACT_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CONTRACT_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* The system calls the contract allows a lock call to make: the futex (the
 * old interface and futex2's futex_waitv 449, futex_wake 454, futex_wait
 * 455, the same numbers on every architecture), the clock (clock_gettime,
 * gettimeofday: where the vDSO falls back to the system call) and
 * sched_yield.  Then what the test itself needs: rt_sigreturn and
 * exit_group for its SIGSYS handler, and restart_syscall, which the kernel
 * itself substitutes for a timed futex wait interrupted by a stop signal
 * (SIGSTOP/SIGCONT: a debugger, a job-control stop), never a call the
 * library makes.  clock_nanosleep and nanosleep are not in the list. */
static const long contract_allowed[] __attribute__((unused)) = {
	SYS_futex, 449, 454, 455, SYS_clock_gettime, SYS_gettimeofday, SYS_sched_yield,
	SYS_rt_sigreturn, SYS_exit_group, SYS_restart_syscall,
};

/* Installs on the calling thread only (no TSYNC) a filter that allows the
 * contract's system calls and answers every other with SECCOMP_RET_TRAP
 * (SIGSYS), or, with deny_open, one that allows everything but answers
 * open/openat/openat2 with EPERM (as container runtimes answer calls their
 * profile does not list).  Another architecture's calls (a 32-bit or x32
 * call from this process) are not allowed either.  Returns 0 or an errno. */
/* More calls to allow, for diagnosis only (the tests' --allow option: what
 * would the lock call make after the first refused one?). */
static long contract_extra_allowed[24] __attribute__((unused));
static int contract_n_extra __attribute__((unused));

static inline int contract_install_filter(bool deny_open)
{
#ifdef CONTRACT_AUDIT_ARCH
	struct sock_filter f[64];
	int n = 0;
	long allowed[sizeof(contract_allowed) / sizeof(contract_allowed[0]) + 24];
	int n_allowed = 0;
	for (size_t i = 0; i < sizeof(contract_allowed) / sizeof(contract_allowed[0]); i++)
		allowed[n_allowed++] = contract_allowed[i];
	for (int i = 0; i < contract_n_extra; i++)
		allowed[n_allowed++] = contract_extra_allowed[i];
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CONTRACT_AUDIT_ARCH, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	/* x32 calls carry bit 30 (__X32_SYSCALL_BIT) with the same arch. */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
#endif
	if (deny_open) {
		const long nrs[] = {
#ifdef SYS_open
			SYS_open,
#endif
			SYS_openat, SYS_openat2,
		};
		const int k = (int)(sizeof(nrs) / sizeof(nrs[0]));
		for (int i = 0; i < k; i++)
			f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      (uint32_t)nrs[i],
							      (uint8_t)(k - i), 0);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	} else {
		for (int i = 0; i < n_allowed; i++)
			f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      (uint32_t)allowed[i],
							      (uint8_t)(n_allowed - i), 0);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		return errno;
	return 0;
#else
	(void)deny_open;
	return ENOTSUP;
#endif
}

/* SIGSYS (a call the allowlist traps): record it and end the process at
 * once with CONTRACT_SYSCALL_EXIT; the parent prints the report. */
static void contract_on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	int none = -1;
	if (atomic_compare_exchange_strong(&cs->sys_nr, &none, si->si_syscall)) {
		cs->sys_call = cur_call;
		cs->sys_thread = cur_thread;
		cs->sys_arch = si->si_arch;
		cs->sys_ip = (uintptr_t)si->si_call_addr;
#if defined(__x86_64__)
		const ucontext_t *u = uc;
		const uintptr_t *sp = (const uintptr_t *)u->uc_mcontext.gregs[REG_RSP];
		cs->sys_sp0 = sp[0];
		/* The stack above sp is the thread's own, mapped up to its
		 * base, far past these 512 bytes at any call. */
		for (int k = 0; k < CONTRACT_STACK_WORDS; k++)
			cs->sys_stack[k] = sp[k];
#endif
	}
	syscall(SYS_exit_group, CONTRACT_SYSCALL_EXIT);
}

static inline void contract_catch_sigsys(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = contract_on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGSYS, &sa, NULL) == 0, "sigaction(SIGSYS): %s", strerror(errno));
}

/* "libc.so.6+0x1234" (for addr2line), from the parent, whose mappings are
 * the forked child's. */
static inline const char *contract_where(uintptr_t a, char *buf, size_t len)
{
	Dl_info di;
	if (a && dladdr((void *)a, &di) && di.dli_fname) {
		const char *base = strrchr(di.dli_fname, '/');
		snprintf(buf, len, "%s+%#lx", base ? base + 1 : di.dli_fname,
			 (unsigned long)(a - (uintptr_t)di.dli_fbase));
	} else {
		snprintf(buf, len, "%#lx", (unsigned long)a);
	}
	return buf;
}

/* The report of a trapped system call, one line on stderr. */
static inline void contract_print_syscall(const char *prog, const char *lock)
{
	int nr = cs->sys_nr;
	char w1[160], w2[160];
	if (cs->sys_arch != (uint32_t)CONTRACT_AUDIT_ARCH) {
		fprintf(stderr, "%s: FAIL: %s: %s made a system call of another architecture "
			"(arch %#x, nr %d)\n", prog, lock, call_name(cs->sys_call),
			(unsigned)cs->sys_arch, nr);
		return;
	}
	fprintf(stderr, "%s: FAIL: %s: %s made system call %d (%s), which the lock's contract "
		"does not allow [worker %d; pc %s, [sp] %s]\n", prog, lock,
		cs->sys_call == C_NONE ? "the test's own code, outside any lock call,"
				       : call_name(cs->sys_call), nr, syscall_name(nr),
		cs->sys_thread, contract_where(cs->sys_ip, w1, sizeof(w1)),
		contract_where(cs->sys_sp0, w2, sizeof(w2)));
	/* The callers: stack words that name a function of a loaded object
	 * (data pointers may show too; the first functions are the chain). */
	int shown = 0;
	for (int k = 0; k < CONTRACT_STACK_WORDS && shown < 12; k++) {
		Dl_info di;
		uintptr_t a = cs->sys_stack[k];
		if (!a || !dladdr((void *)a, &di) || !di.dli_sname || !di.dli_saddr)
			continue;
		fprintf(stderr, "%s:   [sp+%d] %s+%#lx (%s)\n", prog, 8 * k, di.dli_sname,
			(unsigned long)(a - (uintptr_t)di.dli_saddr), contract_where(a, w1, sizeof(w1)));
		shown++;
	}
}

/* --allow NR[,NR...]: diagnosis only (contract_extra_allowed). */
static inline void contract_parse_allow(const char *list)
{
	char *end;
	for (const char *p = list; *p && contract_n_extra < 24; p = *end ? end + 1 : end) {
		contract_extra_allowed[contract_n_extra++] = strtol(p, &end, 0);
		if (end == p)
			break;
	}
}

/* The tests' shared options, after --expect: --kind NAME (the workloads
 * whose name contains it; only may be NULL where a test has no kinds),
 * --ms N (run_ms may be NULL likewise) and --allow NR,... */
static inline void contract_options(int argc, char **argv, const char **only, int64_t *run_ms)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--kind") && only)
			*only = argv[i + 1];
		else if (!strcmp(argv[i], "--ms") && run_ms)
			*run_ms = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--allow"))
			contract_parse_allow(argv[i + 1]);
	}
}

/* Whether this kernel lets a thread install a filter: tried in a child. */
static inline bool contract_seccomp_available(const char **why)
{
	static char buf[96];
	pid_t pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		_exit(contract_install_filter(true));
	int status;
	REQUIRE(reap_with_timeout(pid, 10000, &status) == 0, "the probe child hung");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	snprintf(buf, sizeof(buf), "seccomp filters cannot be installed here (%s)",
		 WIFEXITED(status) ? strerror(WEXITSTATUS(status)) : "killed");
	*why = buf;
	return false;
}

/* A filtered worker that is done: it must not exit (exit, munmap, madvise
 * are not allowed), so it waits on a futex word nobody wakes until the
 * process ends. */
static inline _Noreturn void contract_block_forever(void)
{
	static uint32_t never;
	for (;;)
		syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

/* ---- children ------------------------------------------------------------ */

/* Forks; the child runs fn(arg) and exits with its value.  Returns the wait
 * status, or -1 when the child ran past timeout_ms (then killed). */
static inline int contract_run_child(int (*fn)(void *), void *arg, int64_t timeout_ms)
{
	int status;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int rc = fn(arg);
		fflush(stdout);
		fflush(stderr);
		_exit(rc);
	}
	if (reap_with_timeout(pid, timeout_ms, &status) != 0)
		return -1;
	return status;
}

/* ---- which implementation the pthread calls reach ------------------------ */

/* "hotlock" when a locked normal pthread mutex holds the owner's TID at
 * byte 0 (the shim's layout), "glibc" when it holds 1 (glibc's lock word),
 * as tests/shim/shim_active.c decides. */
static inline const char *contract_impl(void)
{
#ifdef CONTRACT_NATIVE
	return "native";
#else
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	uint32_t w;
	pthread_mutex_lock(&m);
	memcpy(&w, &m, sizeof(w));
	pthread_mutex_unlock(&m);
	return w == test_gettid() ? "hotlock" : w == 1 ? "glibc" : "unknown";
#endif
}

/* --expect hotlock|glibc (pthread builds): exits 2 when the calls do not
 * reach what the test was told to expect.  Returns the implementation. */
static inline const char *contract_expect(int *argc, char **argv, const char *prog)
{
	const char *impl = contract_impl();
	for (int i = 1; i + 1 < *argc; i++) {
		if (strcmp(argv[i], "--expect") != 0)
			continue;
		if (strcmp(argv[i + 1], impl) != 0) {
			fprintf(stderr, "%s: FAIL: the pthread calls reach %s, expected %s "
				"(is the shim loaded?)\n", prog, impl, argv[i + 1]);
			exit(2);
		}
		for (int j = i; j + 2 <= *argc; j++)
			argv[j] = argv[j + 2];
		*argc -= 2;
		break;
	}
	return impl;
}

/* Where the library offers it, the call that registers a thread outside
 * lock calls (the native contract is promised for threads that made it).
 * CMake defines HL_HAVE_THREAD_INIT when include/hotlock/ declares it. */
static inline void contract_thread_init(void)
{
#if defined(CONTRACT_NATIVE) && defined(HL_HAVE_THREAD_INIT)
	int rc = hl_thread_init();
	if (rc != 0)
		contract_fail(W_RC, C_THREAD_INIT, rc, 0);
#endif
}

/* ---- the lock API layer -------------------------------------------------- */

/* Mutex kinds (the pthread types; the native API has one). */
enum { LK_NORMAL, LK_RECURSIVE, LK_ERRORCHECK };
/* Rwlock kinds: 0 the API's default, 1 the other preference, 2 fair
 * (native only). */

#ifdef CONTRACT_NATIVE
typedef hl_mutex_t lk_mutex_t;
typedef hl_rwlock_t lk_rwlock_t;
typedef hl_cond_t lk_cond_t;

static inline void lk_mutex_init(lk_mutex_t *m, int type)
{
	(void)type;
	REQUIRE(hl_mutex_init(m) == 0, "hl_mutex_init");
}
#define lk_mutex_lock(m) hl_mutex_lock(m)
#define lk_mutex_trylock(m) hl_mutex_trylock(m)
#define lk_mutex_timedlock(m, ts) hl_mutex_timedlock(m, CLOCK_MONOTONIC, ts)
#define lk_mutex_unlock(m) hl_mutex_unlock(m)
static inline void lk_rwlock_init(lk_rwlock_t *l, int kind)
{
	static const int kinds[] = { HL_RWLOCK_PREFER_WRITER, HL_RWLOCK_PREFER_READER,
				     HL_RWLOCK_FAIR };
	REQUIRE(hl_rwlock_init_kind(l, kinds[kind]) == 0, "hl_rwlock_init_kind");
}
#define lk_rdlock(l) hl_rwlock_rdlock(l)
#define lk_tryrdlock(l) hl_rwlock_tryrdlock(l)
#define lk_timedrdlock(l, ts) hl_rwlock_timedrdlock(l, CLOCK_MONOTONIC, ts)
#define lk_wrlock(l) hl_rwlock_wrlock(l)
#define lk_trywrlock(l) hl_rwlock_trywrlock(l)
#define lk_timedwrlock(l, ts) hl_rwlock_timedwrlock(l, CLOCK_MONOTONIC, ts)
#define lk_rwunlock(l) hl_rwlock_unlock(l)
static inline void lk_cond_init(lk_cond_t *c)
{
	REQUIRE(hl_cond_init(c) == 0, "hl_cond_init");
}
#define lk_cond_wait(c, m) hl_cond_wait(c, m)
#define lk_cond_timedwait(c, m, ts) hl_cond_timedwait(c, m, CLOCK_MONOTONIC, ts)
#define lk_cond_signal(c) hl_cond_signal(c)
#define lk_cond_broadcast(c) hl_cond_broadcast(c)
#else
typedef pthread_mutex_t lk_mutex_t;
typedef pthread_rwlock_t lk_rwlock_t;
typedef pthread_cond_t lk_cond_t;

static inline void lk_mutex_init(lk_mutex_t *m, int type)
{
	static const int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE,
				     PTHREAD_MUTEX_ERRORCHECK };
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, types[type]);
	REQUIRE(pthread_mutex_init(m, &a) == 0, "pthread_mutex_init");
	pthread_mutexattr_destroy(&a);
}
#define lk_mutex_lock(m) pthread_mutex_lock(m)
#define lk_mutex_trylock(m) pthread_mutex_trylock(m)
#define lk_mutex_timedlock(m, ts) pthread_mutex_clocklock(m, CLOCK_MONOTONIC, ts)
#define lk_mutex_unlock(m) pthread_mutex_unlock(m)
static inline void lk_rwlock_init(lk_rwlock_t *l, int kind)
{
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, kind == 1 ? PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
						    : PTHREAD_RWLOCK_PREFER_READER_NP);
	REQUIRE(pthread_rwlock_init(l, &a) == 0, "pthread_rwlock_init");
	pthread_rwlockattr_destroy(&a);
}
#define lk_rdlock(l) pthread_rwlock_rdlock(l)
#define lk_tryrdlock(l) pthread_rwlock_tryrdlock(l)
#define lk_timedrdlock(l, ts) pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, ts)
#define lk_wrlock(l) pthread_rwlock_wrlock(l)
#define lk_trywrlock(l) pthread_rwlock_trywrlock(l)
#define lk_timedwrlock(l, ts) pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, ts)
#define lk_rwunlock(l) pthread_rwlock_unlock(l)
static inline void lk_cond_init(lk_cond_t *c)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	REQUIRE(pthread_cond_init(c, &a) == 0, "pthread_cond_init");
	pthread_condattr_destroy(&a);
}
#define lk_cond_wait(c, m) pthread_cond_wait(c, m)
#define lk_cond_timedwait(c, m, ts) pthread_cond_timedwait(c, m, ts)
#define lk_cond_signal(c) pthread_cond_signal(c)
#define lk_cond_broadcast(c) pthread_cond_broadcast(c)
#endif

/* Busy for about ns (the clock through the vDSO: no system call where the
 * clock source has one; clock_gettime is allowed anyway). */
static inline void contract_busy_ns(int64_t ns)
{
	int64_t end = now_ns() + ns;
	while (now_ns() < end)
		test_cpu_relax();
}

#endif
