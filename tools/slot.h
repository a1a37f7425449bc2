/* SPDX-License-Identifier: MIT */
/* A slot of the stats area, as the collector (collector.c) and hotlock-top
 * read it (slot.c). */
#ifndef HOTLOCK_SLOT_H
#define HOTLOCK_SLOT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "stats.h"
#include "stats_area.h"

uint64_t slot_clock_ns(clockid_t clock);
/* What shim_ticks reads in the program: the TSC where there is one. */
uint64_t slot_ticks_now(void);
/* The stat file at path (proc(5)) read into buf (len bytes); returns
 * where its fields after the name begin, or NULL where it cannot be read. */
const char *slot_read_stat(const char *path, char *buf, size_t len);
/* Field n (proc(5)'s numbering, 3 or more) of a stat so read (NULL: NULL). */
const char *slot_stat_field(const char *fields, int n);
/* When process pid started (CLOCK_BOOTTIME ns, from /proc), 0 if gone. */
uint64_t slot_process_start_ns(int32_t pid);
/* Whether pid is still the process that took a slot at since_ns. */
bool slot_same_process(int32_t pid, uint64_t since_ns);
/* Thread tid of process pid's name (comm), from /proc, into name; false
 * (name unchanged) where it cannot be read. */
bool slot_thread_name(int32_t pid, uint32_t tid, char name[STATS_NAME]);
/* The names and CPU times of slot s's running threads, from /proc. */
void slot_read_threads(struct area_slot *s);
/* The modules s's process mapped after its load, from /proc. */
void slot_read_maps(struct area_slot *s);
/* What s's threads summed, added to its records (the slot is the
 * caller's: its process ended, or it is a copy). */
void slot_add_sums(struct area_slot *s);
/* s's times from TSC ticks to nanoseconds, at ns_per_tick. */
void slot_to_ns(struct area_slot *s, double ns_per_tick);
/* The report's input for s (see slot.c). */
void slot_report_input(const struct area_slot *s, struct stats_report *in, const char *end,
		       uint64_t end_ns, int top, char program[AREA_CMDLINE + 1]);

#endif
