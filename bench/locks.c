/* hotlock-bench: the registry of mutual-exclusion lock adapters, and the
 * parsing of --locks against it. */
#include "locks.h"

#include <string.h>

#include "harness.h"

const struct bench_lock *const bench_locks[] = {
	&bench_lock_hotlock,
	&bench_lock_hotlock_fifo,
	&bench_lock_hotlock_cna,
	&bench_lock_glibc,
	&bench_lock_glibc_adaptive,
	&bench_lock_futex3,
	&bench_lock_mcs,
};
const size_t bench_nlocks = sizeof bench_locks / sizeof bench_locks[0];

const struct bench_lock *bench_lock_find(const char *name)
{
	for (size_t i = 0; i < bench_nlocks; i++)
		if (strcmp(bench_locks[i]->name, name) == 0)
			return bench_locks[i];
	return NULL;
}

/* "hotlock, glibc, ..." for error messages. */
static void valid_names(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < bench_nlocks && n < len; i++) {
		int w = snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
				 bench_locks[i]->name);

		if (w < 0)
			break;
		n += (size_t)w;
	}
}

struct locks_parse {
	const char *scenario;
	const struct bench_lock **out;
	size_t n, max;
};

static void locks_item(void *ctx, const char *name)
{
	struct locks_parse *lp = ctx;
	const struct bench_lock *lk = bench_lock_find(name);
	char valid[256];

	if (!lk) {
		valid_names(valid, sizeof valid);
		bench_usage_error(lp->scenario, "--locks: unknown lock '%s' (valid: %s)",
				  name, valid);
	}
	for (size_t i = 0; i < lp->n; i++)
		if (lp->out[i] == lk)
			bench_usage_error(lp->scenario, "--locks: '%s' is listed twice", name);
	if (lp->n == lp->max)
		bench_usage_error(lp->scenario, "--locks: more than %zu locks", lp->max);
	lp->out[lp->n++] = lk;
}

size_t bench_locks_parse(const char *scenario, const char *list,
			 const struct bench_lock **out, size_t max)
{
	struct locks_parse lp = { .scenario = scenario, .out = out, .max = max };

	bench_list_each(scenario, "--locks", list, locks_item, &lp);
	return lp.n;
}

void bench_locks_print(FILE *f, const char *indent)
{
	for (size_t i = 0; i < bench_nlocks; i++)
		fprintf(f, "%s%-15s %s\n", indent, bench_locks[i]->name,
			bench_locks[i]->summary);
}
