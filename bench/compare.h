/* SPDX-License-Identifier: MIT */
/* hotlock-bench compare: judges a change from two runs' JSON (see compare.c). */
#ifndef HOTLOCK_BENCH_COMPARE_H
#define HOTLOCK_BENCH_COMPARE_H

/* argv[0] is "compare"; returns the exit status. */
int bench_compare_main(int argc, char **argv);

#endif
