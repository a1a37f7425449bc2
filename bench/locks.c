/* hotlock-bench: registries of adapters (the parsing of --locks against
 * one, and its listing), and the registry of mutual-exclusion locks. */
#include "locks.h"

#include <string.h>

#include "harness.h"

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

struct registry_parse {
	const char *scenario;
	const struct bench_registry *r;
	size_t *out;
	size_t n, max;
};

static void registry_item(void *ctx, const char *name)
{
	struct registry_parse *rp = ctx;
	size_t k = bench_registry_find(rp->r, name);
	char valid[256];

	if (k == rp->r->n) {
		valid_names(rp->r, valid, sizeof valid);
		bench_usage_error(rp->scenario, "--locks: unknown lock '%s' (valid: %s)",
				  name, valid);
	}
	for (size_t i = 0; i < rp->n; i++)
		if (rp->out[i] == k)
			bench_usage_error(rp->scenario, "--locks: '%s' is listed twice", name);
	if (rp->n == rp->max)
		bench_usage_error(rp->scenario, "--locks: more than %zu locks", rp->max);
	rp->out[rp->n++] = k;
}

size_t bench_registry_parse(const char *scenario, const struct bench_registry *r,
			    const char *list, size_t *out, size_t max)
{
	struct registry_parse rp = { .scenario = scenario, .r = r, .out = out, .max = max };

	bench_list_each(scenario, "--locks", list, registry_item, &rp);
	return rp.n;
}

void bench_registry_print(const struct bench_registry *r, FILE *f, const char *indent)
{
	for (size_t i = 0; i < r->n; i++)
		fprintf(f, "%s%-15s %s\n", indent, r->name(i), r->summary(i));
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
};
BENCH_REGISTRY_DEFINE(bench_lock, bench_locks, bench_nlocks, lock_registry,
		      bench_locks_parse, bench_locks_print)

const struct bench_lock *bench_lock_find(const char *name)
{
	size_t i = bench_registry_find(&lock_registry, name);

	return i < bench_nlocks ? bench_locks[i] : NULL;
}
