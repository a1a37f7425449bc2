/* SPDX-License-Identifier: MIT */
/* Threads: what hotlock learns where a thread starts. */
#ifndef HOTLOCK_THREAD_H_PUBLIC
#define HOTLOCK_THREAD_H_PUBLIC

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the calling thread with hotlock, outside any lock call: its
 * record and waiter nodes, its TID, its scheduling policy (an RT thread's
 * wait is handed the lock at once) and CPU affinity (how many waiters may
 * spin), and the process's futex hash size where it grows with the
 * threads.  Call it at a thread's start, and again after changing the
 * thread's policy or affinity yourself.  A thread that never calls it is
 * registered at its first contended lock, without a system call beyond
 * gettid, but its policy and affinity stay unknown (not RT; its mask not
 * counted) until it does.  Under the pthread shim (hotlock-run) every
 * thread is registered where pthread_create starts it, and the shim's
 * pthread_setschedparam and sched_setscheduler keep its policy up to date
 * (a change of affinity counts from the next thread start, or the
 * thread's own call of this function).  The main thread is registered at
 * load.  Leaves errno as it was.  Returns 0, or ENOMEM when no record could
 * be had. */
int hl_thread_init(void);

#ifdef __cplusplus
}
#endif

#endif
