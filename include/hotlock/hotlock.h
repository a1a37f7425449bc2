/* SPDX-License-Identifier: MIT */
/* hotlock: userspace locks for Linux.  One include for the whole API. */
#ifndef HOTLOCK_H
#define HOTLOCK_H

#include <hotlock/cond.h>
#include <hotlock/config.h>
#include <hotlock/futex.h>
#include <hotlock/mutex.h>
#include <hotlock/rwlock.h>
#include <hotlock/swap.h>
#include <hotlock/thread.h>
#include <hotlock/topology.h>

#define HOTLOCK_VERSION_MAJOR 0
#define HOTLOCK_VERSION_MINOR 1

#endif
