/* SPDX-License-Identifier: MIT */
/* hotlock-bench: registries of adapters (the parsing of --locks against
 * one, and its listing), and the registry of mutual-exclusion locks. */
#include "locks.h"

#include <string.h>

#include "harness.h"
#include "rwlocks.h"

size_t bench_registry_find(const struct bench_registry *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n && strcmp(r->name(i), name) != 0; i++)
		;
	return i;
}

/* "hotlock, glibc, ..." for error messages. */
static void valid_names(const struct bench_registry *r, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->n && n < len; i++) {
		int w = snprintf(buf + n, len - n, "%s%s", i ? ", " : "", r->name(i));

		if (w < 0)
			break;
		n += (size_t)w;
	}
}

const char *bench_registry_role(const struct bench_registry *r, size_t i)
{
	if (strncmp(r->name(i), "hotlock", 7) == 0)
		return "hotlock";
	return r->peer(i) ? "peer" : "reference";
}

const char *bench_lock_role(const char *name)
{
	const struct bench_registry *const regs[] = {
		&bench_lock_registry, &bench_rwlock_registry,
	};
	char base[64];
	size_t i;

	snprintf(base, sizeof base, "%.*s", (int)strcspn(name, "/"), name);
	for (size_t r = 0; r < sizeof regs / sizeof regs[0]; r++)
		if ((i = bench_registry_find(regs[r], base)) < regs[r]->n)
			return bench_registry_role(regs[r], i);
	return "reference";
}

struct registry_parse {
	const char *scenario;
	const struct bench_registry *r;
	size_t *out;
	size_t n, max;
	bool grouped;           /* a group ("all", "peers") was in the list */
};

static bool registry_listed(const struct registry_parse *rp, size_t k)
{
	for (size_t i = 0; i < rp->n; i++)
		if (rp->out[i] == k)
			return true;
	return false;
}

static void registry_add(struct registry_parse *rp, size_t k)
{
	if (rp->n == rp->max)
		bench_usage_error(rp->scenario, "--locks: more than %zu locks", rp->max);
	rp->out[rp->n++] = k;
}

/* "peers not built, left out: parking_lot (cargo not found), ..." on
 * stderr: a group asked for them. */
static void note_missing(const struct bench_registry *r)
{
	fprintf(stderr, "hotlock-bench: peers not built, left out:");
	for (size_t i = 0; i < r->nmissing; i++)
		fprintf(stderr, "%s %s (%s)", i ? "," : "", r->missing[i].name, r->missing[i].why);
	fprintf(stderr, "\n");
}

static void registry_item(void *ctx, const char *name)
{
	struct registry_parse *rp = ctx;
	const bool all = strcmp(name, "all") == 0, peers = strcmp(name, "peers") == 0;
	size_t k;
	char valid[256];

	if (all || peers) {
		for (k = 0; k < rp->r->n; k++)
			if ((all || rp->r->peer(k)) && !registry_listed(rp, k))
				registry_add(rp, k);
		rp->grouped = true;
		return;
	}
	k = bench_registry_find(rp->r, name);
	if (k == rp->r->n) {
		for (size_t m = 0; m < rp->r->nmissing; m++)
			if (strcmp(rp->r->missing[m].name, name) == 0)
				bench_usage_error(rp->scenario, "--locks: '%s' is not built into "
						  "this hotlock-bench: %s", name,
						  rp->r->missing[m].why);
		valid_names(rp->r, valid, sizeof valid);
		bench_usage_error(rp->scenario, "--locks: unknown lock '%s' (valid: %s, "
				  "and the groups all, peers)", name, valid);
	}
	if (registry_listed(rp, k))
		bench_usage_error(rp->scenario, "--locks: '%s' is listed twice", name);
	registry_add(rp, k);
}

size_t bench_registry_parse(const char *scenario, const struct bench_registry *r,
			    const char *list, size_t *out, size_t max)
{
	struct registry_parse rp = { .scenario = scenario, .r = r, .out = out, .max = max };

	bench_list_each(scenario, "--locks", list, registry_item, &rp);
	if (rp.grouped && r->nmissing)
		note_missing(r);
	return rp.n;
}

void bench_registry_print(const struct bench_registry *r, FILE *f, const char *indent)
{
	for (size_t i = 0; i < r->n; i++)
		fprintf(f, "%s%-15s %s%s\n", indent, r->name(i), r->summary(i),
			r->peer(i) ? " [peer]" : "");
	for (size_t i = 0; i < r->nmissing; i++)
		fprintf(f, "%s%-15s not built: %s\n", indent, r->missing[i].name,
			r->missing[i].why);
}

/* ---- the mutual-exclusion locks ------------------------------------------- */

const struct bench_lock *const bench_locks[] = {
	&bench_lock_hotlock,
	&bench_lock_hotlock_fifo,
	&bench_lock_hotlock_cna,
	&bench_lock_glibc,
	&bench_lock_glibc_adaptive,
	&bench_lock_futex3,
	&bench_lock_mcs,
#ifdef HOTLOCK_BENCH_RUST_PEERS
	&bench_lock_parking_lot,
	&bench_lock_rust_std,
#endif
#ifdef HOTLOCK_BENCH_ABSL
	&bench_lock_absl,
#endif
};
static const struct bench_missing missing_locks[] = {
#ifndef HOTLOCK_BENCH_RUST_PEERS
	{ "parking_lot", HOTLOCK_BENCH_RUST_MISSING },
	{ "rust-std", HOTLOCK_BENCH_RUST_MISSING },
#endif
#ifndef HOTLOCK_BENCH_ABSL
	{ "absl", HOTLOCK_BENCH_ABSL_MISSING },
#endif
	{ NULL, NULL },
};
BENCH_REGISTRY_DEFINE(bench_lock, bench_locks, missing_locks, bench_nlocks,
		      bench_lock_registry, bench_locks_parse, bench_locks_print)
