/* SPDX-License-Identifier: MIT */
/* hotlock-bench compare OLD NEW: judges a change from the JSON of two runs.
 *
 * Run a suite (make bench, or any scenario with --json) before and after a
 * change, then compare the two files, or the two directories of files.  A
 * result file says how to read it (its "layout": the members that name a
 * result, the metric that judges it and which way is better; docs/
 * benchmarks.md, "The result files"); a file from before layouts, whose
 * results are (lock, threads), reads as the suites' layout.  For each
 * result on both sides, a row: the median of the metric on each side, NEW
 * over OLD, and a mark saying whether the change is beyond the run-to-run
 * spread the repeats show, with the spreads and the CPU time per op beside
 * it, so that the reader sees why.
 *
 * The mark.  Benchmarks on a shared machine wander by several percent from
 * run to run, so a ratio alone cannot tell a real change from noise; the
 * repeats (--repeat R) can.  A row is marked '+' when NEW's worst run is
 * better than OLD's best, '-' when NEW's best is worse than OLD's worst,
 * '~' when the two ranges overlap.  That is the exact Mann-Whitney
 * test at its most extreme outcome (U = 0): with no real change every
 * interleaving of the m + n runs is equally likely, and the ranges separate
 * by chance in 2 of C(m+n, m) of them: 10% with 3 runs a side, 0.8% with 5.
 * With fewer than 3 runs a side, chance alone separates them too often (1
 * in 3 with 2 + 2) for a mark to mean anything: '?'.  --threshold also asks
 * for a minimum size, for when a real change of 1% does not matter.
 *
 * Medians are the lower median of the runs (recomputed from "runs"), which
 * is what the scenario's table showed for that row.
 *
 * It is a report, not a gate: exit 0 whatever the marks.  Everything is
 * read and checked before anything is printed, so a bad file (exit 2) gives
 * a message and no half report.
 *
 * The files are read with jansson (Debian's libjansson-dev), every number
 * as a double (JSON_DECODE_INT_AS_REAL): compare computes with doubles
 * only, and a config's 4 and 4.0 are the same value. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compare.h"
#include "harness.h"

#define CMP "compare"
#define MIN_RUNS 3              /* a side needs this many runs for a mark */
#define MAX_DIFFS_SHOWN 8       /* config differences in the warning line */
#define MAX_KEY 8               /* members that name a result */
#define KEY_WIDTH 24            /* widest key column */
/* A larger file is refused unread: result files are tens of kilobytes, and
 * jansson takes about 20 times a file's size for a file of small values
 * (40 bytes a value), so this bounds what a hostile file can ask for. */
#define MAX_FILE_MIB 64
/* How compare has jansson read a file: any value at the top (a file that is
 * not an object is skipped, not refused), every number a double, and
 * "\u0000" in a string allowed (the string ends there for compare). */
#define LOAD_FLAGS (JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL)

/* What one side measured for one result. */
struct stats {
	size_t runs;            /* runs with a number for the metric */
	double med, min, max;   /* the metric over those runs; NAN with none */
	double cpu;             /* median cpu_s_per_mop; NAN if unknown */
	double spread;          /* (max - min) / med */
};

/* How a file's results are read: its "layout". */
struct layout {
	const char *key[MAX_KEY]; /* the members that name a result */
	size_t nkey;
	const char *metric;     /* each run's member that judges it */
	bool lower_better;      /* "better": "lower" (a time, not a rate) */
};

struct entry {
	const json_t *result;   /* in the file's tree */
	char *label;            /* "lock=glibc threads=4": what rows match by */
	struct stats st;
	bool matched;           /* found on the other side */
};

/* One JSON file of a side. */
struct file {
	char *path;
	const char *name;       /* what files are matched by: path's last part */
	json_t *root;           /* owns everything below; NULL if not loaded */
	bool readable;          /* has results compare can read */
	char why[160];          /* if not, why not */
	struct layout lay;
	const char *bench;      /* "mutex"; NULL if absent */
	json_t *config;         /* borrowed from root */
	struct entry *e;
	size_t n;
	size_t dups;            /* results named again, ignored */
	bool matched;
};

/* OLD or NEW: a file or a directory of files. */
struct side {
	const char *what;       /* "OLD" or "NEW" */
	const char *arg;
	bool dir;
	struct file *f;         /* sorted by name when dir */
	size_t n;
};

struct row {
	const struct entry *o, *n;
	double ratio, cpu_ratio;
	char mark;              /* + - ~ ? */
};

/* A file on both sides. */
struct pair {
	struct file *o, *n;
	const char *name;
	const char *skipped;    /* why it is not compared; NULL: it is */
	char **diffs;           /* config differences, "key OLD -> NEW" */
	size_t ndiffs;
	/* config's "busy" (--busy: CPU-bound processes beside the runs) of each
	 * side; 0 where absent (a file from before --busy, or a scenario
	 * without it). */
	double busy_o, busy_n;
	struct row *rows;
	size_t nrows;
};

struct totals {
	size_t rows, better, worse, within, unjudged;
	double log_gain_sum;    /* for the geometric mean of the gains */
	size_t nlog;
};

/* ---- small helpers ------------------------------------------------------- */

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = bench_xcalloc(n, 1);

	memcpy(d, s, n);
	return d;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		bench_fatal("vsnprintf failed");
	s = bench_xcalloc((size_t)n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* A bounded text buffer that notes when something did not fit. */
struct sbuf {
	char *b;
	size_t cap, len;
	bool full;
};

static void __attribute__((format(printf, 2, 3)))
sb_add(struct sbuf *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(s->b + s->len, s->cap - s->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= s->cap - s->len) {
		s->full = true;
		s->len = s->cap - 1;
	} else {
		s->len += (size_t)n;
	}
}

/* A value as compact JSON-ish text, for a config difference. */
static void sb_value(struct sbuf *s, const json_t *v)
{
	size_t i;

	switch (json_typeof(v)) {
	case JSON_NULL:    sb_add(s, "null"); break;
	case JSON_FALSE:   sb_add(s, "false"); break;
	case JSON_TRUE:    sb_add(s, "true"); break;
	case JSON_INTEGER:
	case JSON_REAL:    sb_add(s, "%.10g", json_number_value(v)); break;
	case JSON_STRING:  sb_add(s, "\"%s\"", json_string_value(v)); break;
	case JSON_ARRAY:
		sb_add(s, "[");
		for (i = 0; i < json_array_size(v); i++) {
			sb_add(s, "%s", i ? "," : "");
			sb_value(s, json_array_get(v, i));
		}
		sb_add(s, "]");
		break;
	case JSON_OBJECT:
		sb_add(s, "{...}");
		break;
	}
}

/* v's text, cut to fit buf with "..." at the end. */
static const char *value_text(char *buf, size_t len, const json_t *v)
{
	struct sbuf s = { .b = buf, .cap = len };

	buf[0] = '\0';
	if (!v) {
		snprintf(buf, len, "(absent)");
		return buf;
	}
	sb_value(&s, v);
	if (s.full && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

/* ---- reading a side ------------------------------------------------------ */

/* true and *out set if v is a number; v may be NULL (absent). */
static bool number(const json_t *v, double *out)
{
	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return true;
}

/* NAN unless v is a finite number. */
static double number_or_nan(const json_t *v)
{
	double x;

	return number(v, &x) && isfinite(x) ? x : NAN;
}

/* Deep equality as compare needs it: two absent values are equal (for
 * json_equal, NULL equals nothing). */
static bool same_value(const json_t *a, const json_t *b)
{
	return a && b ? json_equal(a, b) : a == b;
}

/* One result's runs: "runs"[].METRIC and cpu_s_per_mop (a null, for a run
 * that had none, is left out); a result without "runs" (written by some
 * other tool) counts as its one run. */
static void result_stats(const json_t *result, const char *metric, struct stats *st)
{
	const json_t *runs = json_object_get(result, "runs");
	size_t n = json_array_size(runs), nv = 0, ncpu = 0;
	double *v = bench_xcalloc(n + 1, sizeof *v);
	double *cpu = bench_xcalloc(n + 1, sizeof *cpu);
	double x;

	for (size_t i = 0; i < (json_is_array(runs) ? n : 1); i++) {
		const json_t *run = json_is_array(runs) ? json_array_get(runs, i) : result;

		if (!isnan(x = number_or_nan(json_object_get(run, metric))))
			v[nv++] = x;
		if (!isnan(x = number_or_nan(json_object_get(run, "cpu_s_per_mop"))))
			cpu[ncpu++] = x;
	}
	st->runs = nv;
	st->med = bench_lower_median(v, nv); /* sorts v */
	st->min = nv ? v[0] : NAN;
	st->max = nv ? v[nv - 1] : NAN;
	/* One run has no spread to show (0 would read as "very steady"). */
	st->spread = nv >= 2 && st->med > 0 ? (st->max - st->min) / st->med : NAN;
	st->cpu = bench_lower_median(cpu, ncpu);
	free(v);
	free(cpu);
}

/* The file's "layout", or for a file from before layouts whose results have
 * "lock" and "threads", the suites' own; false (with f->why) if neither. */
static bool read_layout(struct file *f, const json_t *results)
{
	const json_t *lay = json_object_get(f->root, "layout");
	const json_t *key = json_object_get(lay, "key");
	const json_t *first = json_array_get(results, 0);
	const char *better;

	if (!lay) {
		if (!json_object_get(first, "lock") || !json_object_get(first, "threads")) {
			snprintf(f->why, sizeof f->why, "no \"layout\", and its results "
				 "are not (lock, threads)");
			return false;
		}
		f->lay = (struct layout){ { "lock", "threads" }, 2, "ops_per_sec", false };
		return true;
	}
	f->lay.metric = json_string_value(json_object_get(lay, "metric"));
	better = json_string_value(json_object_get(lay, "better"));
	f->lay.nkey = json_array_size(key);
	if (!f->lay.metric || !better || (strcmp(better, "higher") != 0 &&
					  strcmp(better, "lower") != 0) ||
	    f->lay.nkey == 0 || f->lay.nkey > MAX_KEY) {
		snprintf(f->why, sizeof f->why, "its \"layout\" is not {\"key\": [1 to %d "
			 "names], \"metric\": NAME, \"better\": \"higher\" or \"lower\"}",
			 MAX_KEY);
		return false;
	}
	f->lay.lower_better = strcmp(better, "lower") == 0;
	for (size_t k = 0; k < f->lay.nkey; k++)
		if (!(f->lay.key[k] = json_string_value(json_array_get(key, k)))) {
			snprintf(f->why, sizeof f->why, "layout.key[%zu] is not a name", k);
			return false;
		}
	return true;
}

/* A key member's value as text: a string as it is, a number as %.10g;
 * NULL for anything else. */
static const char *key_text(char *buf, size_t len, const json_t *v)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_number(v)) {
		snprintf(buf, len, "%.10g", json_number_value(v));
		return buf;
	}
	return NULL;
}

/* Fills f's entries from its "results", or says why it cannot (f->why). */
static void read_results(struct file *f)
{
	const json_t *results = json_object_get(f->root, "results");
	size_t n = json_array_size(results);

	f->bench = json_string_value(json_object_get(f->root, "bench"));
	f->config = json_object_get(f->root, "config");
	if (!json_is_object(f->root)) {
		snprintf(f->why, sizeof f->why, "not a JSON object");
		return;
	}
	if (!json_is_array(results)) {
		snprintf(f->why, sizeof f->why, "no \"results\" array");
		return;
	}
	if (!read_layout(f, results))
		return;
	f->e = bench_xcalloc(n, sizeof *f->e);
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(results, i);
		struct sbuf label = { .b = bench_xcalloc(1, 512), .cap = 512 };
		size_t k;

		for (k = 0; k < f->lay.nkey; k++) {
			char num[32];
			const char *v = key_text(num, sizeof num,
						 json_object_get(r, f->lay.key[k]));

			if (!v) {
				snprintf(f->why, sizeof f->why, "results[%zu] has no string "
					 "or number \"%s\"", i, f->lay.key[k]);
				free(label.b);
				return;
			}
			sb_add(&label, "%s%s=%s", k ? " " : "", f->lay.key[k], v);
		}
		for (k = 0; k < f->n; k++)
			if (strcmp(f->e[k].label, label.b) == 0)
				break;
		if (k < f->n) {
			f->dups++;
			free(label.b);
			continue;
		}
		f->e[f->n].result = r;
		f->e[f->n].label = label.b;
		result_stats(r, f->lay.metric, &f->e[f->n++].st);
	}
	f->readable = true;
}

/* "PATH: invalid JSON at byte 500 (line 20, column 14): WHY", on one line:
 * jansson's position is the byte where it stopped (the end of the input
 * for a truncated file), its column counts characters, and its text quotes
 * the input near there, whose control bytes are written as \xNN here. */
static void parse_error(const char *path, const json_error_t *err)
{
	fprintf(stderr, "hotlock-bench " CMP ": error: %s: invalid JSON at byte %d "
		"(line %d, column %d): ", path, err->position, err->line, err->column);
	for (const unsigned char *c = (const unsigned char *)err->text; *c; c++) {
		if (*c < 0x20 || *c == 0x7f)
			fprintf(stderr, "\\x%02x", *c);
		else
			fputc(*c, stderr);
	}
	fputc('\n', stderr);
}

/* Reads path into f; false (with a message) if it cannot be read or is not
 * JSON. */
static bool load_file(struct file *f, char *path)
{
	const char *slash = strrchr(path, '/');
	json_error_t err;
	struct stat st;
	FILE *in;

	f->path = path;
	f->name = slash ? slash + 1 : path;
	in = fopen(path, "rb");
	if (!in) {
		fprintf(stderr, "hotlock-bench " CMP ": error: %s: %s\n", path,
			strerror(errno));
		return false;
	}
	if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > (off_t)MAX_FILE_MIB << 20) {
		fprintf(stderr, "hotlock-bench " CMP ": error: %s: larger than %d MiB\n",
			path, MAX_FILE_MIB);
		fclose(in);
		return false;
	}
	errno = 0;
	f->root = json_loadf(in, LOAD_FLAGS, &err);
	if (!f->root) {
		/* A read error looks like the end of the input to jansson. */
		if (ferror(in))
			fprintf(stderr, "hotlock-bench " CMP ": error: %s: %s\n", path,
				errno ? strerror(errno) : "read error");
		else
			parse_error(path, &err);
		fclose(in);
		return false;
	}
	fclose(in);
	read_results(f);
	return true;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of a directory's *.json files (regular, not hidden), sorted;
 * -1 with a message if it cannot be read. */
static int list_dir(const char *dir, char ***names, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t cap = 0;

	*names = NULL;
	*n = 0;
	if (!d) {
		fprintf(stderr, "hotlock-bench " CMP ": error: %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;
		char *path;

		if (de->d_name[0] == '.' || len <= 5 ||
		    strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		/* stat, not d_type: a symlink to a file counts, and some file
		 * systems leave d_type unknown. */
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (*n == cap) {
				char **nn;

				cap = cap ? 2 * cap : 16;
				nn = realloc(*names, cap * sizeof *nn);
				if (!nn)
					bench_fatal("out of memory");
				*names = nn;
			}
			(*names)[(*n)++] = path;
		} else {
			free(path);
		}
	}
	closedir(d);
	if (*n > 1)
		qsort(*names, *n, sizeof **names, cmp_name);
	return 0;
}

/* Reads a side: a file, or every *.json in a directory.  -1 (with a
 * message) if anything cannot be read or is not JSON. */
static int load_side(struct side *s)
{
	struct stat st;
	char **paths;
	size_t n;

	if (stat(s->arg, &st) != 0) {
		fprintf(stderr, "hotlock-bench " CMP ": error: %s %s: %s\n", s->what,
			s->arg, strerror(errno));
		return -1;
	}
	s->dir = S_ISDIR(st.st_mode);
	if (s->dir) {
		if (list_dir(s->arg, &paths, &n) != 0)
			return -1;
	} else {
		paths = bench_xcalloc(1, sizeof *paths);
		paths[0] = xstrdup(s->arg);
		n = 1;
	}
	s->f = bench_xcalloc(n, sizeof *s->f);
	/* Each path is owned by its file from here, loaded or not. */
	for (s->n = 0; s->n < n; s->n++) {
		if (!load_file(&s->f[s->n], paths[s->n])) {
			for (size_t i = ++s->n; i < n; i++)
				free(paths[i]);
			free(paths);
			return -1;
		}
	}
	free(paths);
	return 0;
}

static void free_side(struct side *s)
{
	for (size_t i = 0; i < s->n; i++) {
		for (size_t k = 0; k < s->f[i].n; k++)
			free(s->f[i].e[k].label);
		json_decref(s->f[i].root);
		free(s->f[i].e);
		free(s->f[i].path);
	}
	free(s->f);
}

/* ---- comparing ----------------------------------------------------------- */

static void add_diff(struct pair *p, const char *key, const json_t *o,
		     const json_t *n)
{
	char a[48], b[48];

	p->diffs = realloc(p->diffs, (p->ndiffs + 1) * sizeof *p->diffs);
	if (!p->diffs)
		bench_fatal("out of memory");
	p->diffs[p->ndiffs++] = xasprintf("%s %s -> %s", key,
					  value_text(a, sizeof a, o),
					  value_text(b, sizeof b, n));
}

/* Keys of "config" that differ between any two runs, whatever they
 * measured: how the run was started and when; and "busy" and "busy_nice",
 * compared apart (compare_pair). */
static bool config_ignored(const char *prefix, const char *key)
{
	return prefix[0] == '\0' &&
		(strcmp(key, "command") == 0 || strcmp(key, "date") == 0 ||
		 strcmp(key, "busy") == 0 || strcmp(key, "busy_nice") == 0);
}

/* A config's --busy: its "busy", 0 where absent (no load was started). */
static double busy_of(const json_t *config)
{
	double b;

	return number(json_object_get(config, "busy"), &b) ? b : 0;
}

/* Records every member of two config objects that differs, by its dotted
 * path ("hotlock_config.spin_ns"); values that are not both objects are
 * compared whole (a "threads" list is one difference, not one per entry). */
static void diff_config(struct pair *p, const char *prefix, json_t *o, json_t *n)
{
	char key[128];
	const char *name;
	json_t *v;

	if (!json_is_object(o) || !json_is_object(n)) {
		if (!same_value(o, n))
			add_diff(p, prefix[0] ? prefix : "config", o, n);
		return;
	}
	/* Members in the file's order (jansson keeps it). */
	json_object_foreach(o, name, v) {
		if (config_ignored(prefix, name))
			continue;
		snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", name);
		diff_config(p, key, v, json_object_get(n, name));
	}
	json_object_foreach(n, name, v) {
		if (config_ignored(prefix, name) || json_object_get(o, name))
			continue;
		snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", name);
		add_diff(p, key, NULL, v);
	}
}

/* The mark of a row whose metric is higher_better or not. */
static char mark(const struct stats *o, const struct stats *n, double ratio,
		 double threshold, bool lower_better)
{
	/* NEW over OLD as a gain: > 1 is better whichever way the metric goes. */
	double gain = lower_better ? 1 / ratio : ratio;
	bool better = lower_better ? n->max < o->min : n->min > o->max;
	bool worse = lower_better ? n->min > o->max : n->max < o->min;

	if (o->runs < MIN_RUNS || n->runs < MIN_RUNS)
		return '?';
	if (better && gain - 1 >= threshold)
		return '+';
	if (worse && 1 - gain >= threshold)
		return '-';
	return '~';
}

/* Whether two files read their results alike. */
static bool same_layout(const struct layout *a, const struct layout *b)
{
	if (a->nkey != b->nkey || a->lower_better != b->lower_better ||
	    strcmp(a->metric, b->metric) != 0)
		return false;
	for (size_t k = 0; k < a->nkey; k++)
		if (strcmp(a->key[k], b->key[k]) != 0)
			return false;
	return true;
}

static void compare_pair(struct pair *p, double threshold, struct totals *t)
{
	struct file *o = p->o, *n = p->n;

	if (!(o->bench && n->bench && strcmp(o->bench, n->bench) == 0))
		add_diff(p, "bench", json_object_get(o->root, "bench"),
			 json_object_get(n->root, "bench"));
	/* First, so that it is among the differences shown. */
	p->busy_o = busy_of(o->config);
	p->busy_n = busy_of(n->config);
	if (p->busy_o != p->busy_n) {
		p->diffs = realloc(p->diffs, (p->ndiffs + 1) * sizeof *p->diffs);
		if (!p->diffs)
			bench_fatal("out of memory");
		p->diffs[p->ndiffs++] = xasprintf("busy %g -> %g", p->busy_o, p->busy_n);
	} else if (p->busy_o > 0 && !same_value(json_object_get(o->config, "busy_nice"),
						json_object_get(n->config, "busy_nice"))) {
		/* The same load at another priority. */
		add_diff(p, "busy_nice", json_object_get(o->config, "busy_nice"),
			 json_object_get(n->config, "busy_nice"));
	}
	diff_config(p, "", o->config, n->config);
	p->rows = bench_xcalloc(o->n, sizeof *p->rows);
	for (size_t i = 0; i < o->n; i++) {
		struct entry *eo = &o->e[i];
		struct row *r;
		size_t k;

		for (k = 0; k < n->n; k++)
			if (strcmp(n->e[k].label, eo->label) == 0)
				break;
		if (k == n->n)
			continue;
		eo->matched = n->e[k].matched = true;
		r = &p->rows[p->nrows++];
		r->o = eo;
		r->n = &n->e[k];
		r->ratio = eo->st.med > 0 ? r->n->st.med / eo->st.med : NAN;
		r->cpu_ratio = eo->st.cpu > 0 ? r->n->st.cpu / eo->st.cpu : NAN;
		r->mark = mark(&eo->st, &r->n->st, r->ratio, threshold, o->lay.lower_better);
		t->rows++;
		switch (r->mark) {
		case '+': t->better++; break;
		case '-': t->worse++; break;
		case '~': t->within++; break;
		default:  t->unjudged++; break;
		}
		if (r->ratio > 0 && isfinite(r->ratio)) {
			t->log_gain_sum += o->lay.lower_better ? -log(r->ratio) : log(r->ratio);
			t->nlog++;
		}
	}
}

/* ---- output -------------------------------------------------------------- */

/* A table cell after two spaces; NAN (unknown) prints "-". */
static void cell(int width, int prec, double v, const char *unit)
{
	if (isnan(v))
		printf("  %*s%s", width, "-", unit[0] ? " " : "");
	else
		printf("  %*.*f%s", width, prec, v, unit);
}

/* A metric's value to 4 significant digits, in fixed point (a rate or a
 * time of any size: 0.3444, 2.326, 74000); NAN prints "-". */
static void value_cell(int width, double v)
{
	int decimals = v != 0 && isfinite(v) ? 3 - (int)floor(log10(fabs(v))) : 3;

	if (isnan(v))
		printf("%*s", width, "-");
	else
		printf("%*.*f", width, decimals < 0 ? 0 : decimals > 6 ? 6 : decimals, v);
}

/* "OLD: PATH (repeat 3): COMMAND": where a side's figures come from. */
static void print_origin(const char *what, const struct file *f)
{
	const char *cmd = json_string_value(json_object_get(f->config, "command"));
	double repeat;

	printf("%s: %s", what, f->path);
	if (number(json_object_get(f->config, "repeat"), &repeat))
		printf(" (repeat %g)", repeat);
	if (cmd)
		printf(": %s\n", cmd);
	else
		printf(", no command recorded\n");
}

/* "only in OLD: lock=glibc threads=4; lock=mcs threads=2": f's results
 * that the other side lacks. */
static void print_only(const char *what, const struct file *f)
{
	bool any = false;

	for (size_t i = 0; i < f->n; i++) {
		if (f->e[i].matched)
			continue;
		printf("%s %s", any ? ";" : what, f->e[i].label);
		any = true;
	}
	if (any)
		printf("\n");
}

/* How a metric's values are shown: its heading and the factor its values
 * are multiplied by; the suites' ops/s as Mops/s, any other as it is. */
static const char *metric_heading(const char *metric, double *scale)
{
	*scale = 1;
	if (strcmp(metric, "ops_per_sec") == 0) {
		*scale = 1e-6;
		return "Mops/s";
	}
	return metric;
}

static void print_pair(const struct pair *p)
{
	const struct layout *lay = &p->o->lay;
	int kw[MAX_KEY], mw;
	char head[2][64], num[32];
	double scale;
	const char *unit = metric_heading(lay->metric, &scale);
	size_t i, k;

	for (k = 0; k < lay->nkey; k++) {
		kw[k] = (int)strlen(lay->key[k]);
		for (i = 0; i < p->nrows; i++) {
			const char *v = key_text(num, sizeof num,
						 json_object_get(p->rows[i].o->result, lay->key[k]));
			int len = (int)strlen(v);

			if (len > kw[k])
				kw[k] = len < KEY_WIDTH ? len : KEY_WIDTH;
		}
	}
	snprintf(head[0], sizeof head[0], "OLD %s", unit);
	snprintf(head[1], sizeof head[1], "NEW %s", unit);
	mw = (int)strlen(head[0]) > 10 ? (int)strlen(head[0]) : 10;
	printf("\n== %s: %s ==\n", p->name, p->o->bench ? p->o->bench : "?");
	print_origin("OLD", p->o);
	print_origin("NEW", p->n);
	if (p->busy_o != p->busy_n)
		printf("warning: OLD ran beside %g and NEW beside %g CPU-bound processes "
		       "of --busy: a different load, not only a different lock, moves "
		       "these figures\n", p->busy_o, p->busy_n);
	if (p->ndiffs) {
		printf("warning: config differs:");
		for (i = 0; i < p->ndiffs && i < MAX_DIFFS_SHOWN; i++)
			printf("%s %s", i ? ";" : "", p->diffs[i]);
		if (p->ndiffs > MAX_DIFFS_SHOWN)
			printf("; and %zu more", p->ndiffs - MAX_DIFFS_SHOWN);
		printf("\n");
	}
	if (p->o->dups || p->n->dups)
		printf("note: %zu (OLD) and %zu (NEW) results named again ignored, the "
		       "first of each name is used\n", p->o->dups, p->n->dups);
	if (p->nrows == 0) {
		printf("no result on both sides\n");
	} else {
		if (lay->lower_better)
			printf("%s: lower is better\n", lay->metric);
		for (k = 0; k < lay->nkey; k++)
			printf("%-*s  ", kw[k], lay->key[k]);
		printf("%*s  %*s  %7s  %4s  %10s  %10s  %11s\n", mw, head[0], mw, head[1],
		       "NEW/OLD", "mark", "spread OLD", "spread NEW", "cpu NEW/OLD");
		for (i = 0; i < p->nrows; i++) {
			const struct row *r = &p->rows[i];

			for (k = 0; k < lay->nkey; k++)
				printf("%-*.*s  ", kw[k], kw[k],
				       key_text(num, sizeof num,
						json_object_get(r->o->result, lay->key[k])));
			value_cell(mw, r->o->st.med * scale);
			printf("  ");
			value_cell(mw, r->n->st.med * scale);
			cell(7, 3, r->ratio, "");
			printf("  %4c", r->mark);
			cell(9, 1, 100 * r->o->st.spread, "%");
			cell(9, 1, 100 * r->n->st.spread, "%");
			cell(11, 3, r->cpu_ratio, "");
			printf("\n");
		}
	}
	print_only("only in OLD:", p->o);
	print_only("only in NEW:", p->n);
}

static void print_header(const struct side *o, const struct side *n,
			 double threshold)
{
	printf("hotlock-bench compare: OLD %s, NEW %s\n", o->arg, n->arg);
	printf("  NEW/OLD  the median of the file's metric (ops/s for a suite), NEW "
	       "over OLD\n"
	       "  mark     + better beyond the run-to-run spread: NEW's worst run "
	       "beats OLD's best\n"
	       "           - worse beyond it: NEW's best run is worse than OLD's "
	       "worst\n");
	if (threshold > 0)
		printf("             (either also needs a gain or loss of at least "
		       "%g%%)\n", 100 * threshold);
	printf("           ~ within the spread; ? not judged: fewer than %d runs "
	       "on a side\n"
	       "  spread   (largest - smallest run) / median, of each side\n"
	       "  cpu      median CPU s per Mop, NEW over OLD (< 1: NEW uses less)\n",
	       MIN_RUNS);
}

static void help(FILE *f)
{
	fprintf(f,
		"Usage: hotlock-bench compare [OPTIONS] OLD NEW\n"
		"\n"
		"Judges a change: run a suite before and after it (make bench, or any\n"
		"scenario with --json FILE), then compare; e.g. make bench, mv results\n"
		"results.old (make bench empties results/), change, make bench, then\n"
		"hotlock-bench compare results.old results.  OLD and NEW are each a JSON\n"
		"file written by 'hotlock-bench SCENARIO --json FILE', or a directory of\n"
		"them.  Two files are compared whatever their names; otherwise files are\n"
		"matched by name, and one on a side only is listed as 'only in OLD/NEW'.\n"
		"Each file says how its results are read (its \"layout\": the members that\n"
		"name a result, the metric that judges it, whether higher or lower is\n"
		"better); a file from before layouts reads as (lock, threads) judged by\n"
		"ops/s.  A file compare cannot read is skipped with a line saying why.\n"
		"\n"
		"For each result of a file on both sides, a row: the members that name it,\n"
		"  OLD, NEW           the median of the runs' metric (the lower median for\n"
		"                     an even count: the run the scenario's table showed);\n"
		"                     ops/s shown as Mops/s\n"
		"  NEW/OLD            NEW's median over OLD's\n"
		"  mark               '+' NEW better beyond the run-to-run spread: NEW's\n"
		"                     worst run beats OLD's best; '-' NEW worse beyond it:\n"
		"                     NEW's best run is worse than OLD's worst; '~' within\n"
		"                     the spread (the ranges overlap); '?' cannot judge:\n"
		"                     fewer than %d runs on a side (--repeat)\n"
		"  spread OLD, NEW    (largest - smallest run) / median, of each side\n"
		"  cpu NEW/OLD        median CPU seconds per million ops, NEW over OLD\n"
		"                     (< 1: NEW burns less CPU for the same work)\n"
		"\n"
		"Why this rule: with no real change, any order of the m + n runs is as\n"
		"likely as any other, and the two ranges separate by chance in 2 of\n"
		"C(m+n, m) orders (the exact Mann-Whitney test at U = 0): 10%% of rows with\n"
		"3 runs a side, 2.9%% with 4, 0.8%% with 5.  Use --repeat 5 where a false\n"
		"mark would cost you (a table of 20 rows of 3 runs a side shows about 2\n"
		"marks by chance); with 2 runs a side it would be 33%%, hence '?'.\n"
		"The spread is within a session; OLD's and NEW's runs were not\n"
		"interleaved, so a change in the machine's load between the two moves\n"
		"every lock alike: the locks the change cannot affect (glibc) are the\n"
		"control.\n"
		"\n"
		"Each file's table is headed by the commands that made OLD and NEW (when\n"
		"recorded) and a warning if their config differs other than in command\n"
		"and date (durations, cs, the hotlock_config from HOTLOCK_* variables,\n"
		"the machine...); runs made beside different --busy loads (config busy,\n"
		"0 in a file without it) get a warning line of their own.  A summary line\n"
		"counts the rows of each mark, and the geometric mean of the gains (NEW\n"
		"over OLD where higher is better, OLD over NEW where lower is).\n"
		"\n"
		"Options:\n"
		"  --threshold PCT    a mark also needs a gain or loss of at least PCT%%\n"
		"                     (default 0: any change beyond the spread is marked)\n"
		"  --json FILE        also write the comparison as JSON to FILE\n"
		"  --help             this text\n"
		"\n"
		"Exit status: 0 compared (also when NEW is slower: this is a report, not a\n"
		"gate), 1 nothing to compare (no result of a file on both sides), or\n"
		"the --json FILE could not be written, 2 bad command line, or a file that\n"
		"cannot be read or is not JSON (the message gives the byte offset).\n",
		MIN_RUNS);
}

/* A side's figures of a row: SIDE_runs, SIDE_median, ... */
static void json_stats(struct bench_json *j, const char *side, const struct stats *st)
{
	const struct { const char *name; double v; } figs[] = {
		{ "median", st->med }, { "min", st->min }, { "max", st->max },
		{ "spread", st->spread }, { "cpu_s_per_mop", st->cpu },
	};
	char key[32];

	snprintf(key, sizeof key, "%s_runs", side);
	bench_json_uint(j, key, st->runs);
	for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++) {
		snprintf(key, sizeof key, "%s_%s", side, figs[k].name);
		bench_json_number(j, key, figs[k].v);
	}
}

/* The members of f's layout key from result r, as they are in the file. */
static void json_key(struct bench_json *j, const struct file *f, const json_t *r)
{
	for (size_t k = 0; k < f->lay.nkey; k++) {
		const json_t *v = json_object_get(r, f->lay.key[k]);

		if (json_is_string(v))
			bench_json_string(j, f->lay.key[k], json_string_value(v));
		else
			bench_json_number(j, f->lay.key[k], json_number_value(v));
	}
}

static void json_only(struct bench_json *j, const char *key, const struct file *f)
{
	bench_json_array(j, key);
	for (size_t i = 0; i < f->n; i++) {
		if (f->e[i].matched)
			continue;
		bench_json_object(j, NULL);
		json_key(j, f, f->e[i].result);
		bench_json_end(j);
	}
	bench_json_end(j);
}

static const char *verdict(char m)
{
	switch (m) {
	case '+': return "better";
	case '-': return "worse";
	case '~': return "within";
	default:  return "unjudged";
	}
}

static void write_json(const char *path, const struct side *o, const struct side *n,
		       double threshold, const struct pair *pairs, size_t npairs,
		       const struct totals *t)
{
	struct bench_json *j = bench_json_open(path);
	size_t i, k;

	bench_json_object(j, NULL);
	bench_json_string(j, "compare", "hotlock-bench compare");
	bench_json_string(j, "old", o->arg);
	bench_json_string(j, "new", n->arg);
	bench_json_number(j, "threshold_pct", 100 * threshold);
	bench_json_uint(j, "min_runs", MIN_RUNS);
	bench_json_string(j, "rule", "+: NEW's worst run beats OLD's best; "
			  "-: NEW's best run is worse than OLD's worst; either with "
			  "at least min_runs runs a side and a gain or loss of at least "
			  "threshold_pct; ~: otherwise; ?: fewer than min_runs runs "
			  "on a side");
	bench_json_array(j, "files");
	for (i = 0; i < npairs; i++) {
		const struct pair *p = &pairs[i];

		if (p->skipped)
			continue;
		bench_json_object(j, NULL);
		bench_json_string(j, "file", p->name);
		bench_json_string(j, "old_path", p->o->path);
		bench_json_string(j, "new_path", p->n->path);
		if (p->o->bench)
			bench_json_string(j, "bench", p->o->bench);
		else
			bench_json_null(j, "bench");
		bench_json_string(j, "metric", p->o->lay.metric);
		bench_json_string(j, "better", p->o->lay.lower_better ? "lower" : "higher");
		bench_json_array(j, "config_differs");
		for (k = 0; k < p->ndiffs; k++)
			bench_json_string(j, NULL, p->diffs[k]);
		bench_json_end(j);
		bench_json_array(j, "rows");
		for (k = 0; k < p->nrows; k++) {
			const struct row *r = &p->rows[k];
			char m[2] = { r->mark, '\0' };

			bench_json_object(j, NULL);
			json_key(j, p->o, r->o->result);
			json_stats(j, "old", &r->o->st);
			json_stats(j, "new", &r->n->st);
			bench_json_number(j, "ratio", r->ratio);
			bench_json_string(j, "mark", m);
			bench_json_string(j, "verdict", verdict(r->mark));
			bench_json_number(j, "cpu_ratio", r->cpu_ratio);
			bench_json_end(j);
		}
		bench_json_end(j);
		json_only(j, "only_in_old", p->o);
		json_only(j, "only_in_new", p->n);
		bench_json_end(j);
	}
	bench_json_end(j);
	bench_json_array(j, "skipped");
	for (i = 0; i < npairs; i++) {
		if (!pairs[i].skipped)
			continue;
		bench_json_object(j, NULL);
		bench_json_string(j, "file", pairs[i].name);
		bench_json_string(j, "why", pairs[i].skipped);
		bench_json_end(j);
	}
	bench_json_end(j);
	bench_json_array(j, "only_in_old");
	for (i = 0; i < o->n; i++)
		if (!o->f[i].matched)
			bench_json_string(j, NULL, o->f[i].name);
	bench_json_end(j);
	bench_json_array(j, "only_in_new");
	for (i = 0; i < n->n; i++)
		if (!n->f[i].matched)
			bench_json_string(j, NULL, n->f[i].name);
	bench_json_end(j);
	bench_json_object(j, "summary");
	bench_json_uint(j, "rows", t->rows);
	bench_json_uint(j, "better", t->better);
	bench_json_uint(j, "worse", t->worse);
	bench_json_uint(j, "within", t->within);
	bench_json_uint(j, "unjudged", t->unjudged);
	bench_json_number(j, "geomean_gain", t->nlog ? exp(t->log_gain_sum / t->nlog) : NAN);
	bench_json_end(j);
	bench_json_end(j);
	bench_json_close(j);
}

/* ---- main ---------------------------------------------------------------- */

static double parse_threshold(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || !isfinite(v))
		bench_usage_error(CMP, "--threshold: '%s' is not a number (percent)", s);
	if (v < 0 || v > 1000 || errno == ERANGE)
		bench_usage_error(CMP, "--threshold: %s is out of range; it must be "
				  "0 to 1000 (percent)", s);
	return v / 100;
}

int bench_compare_main(int argc, char **argv)
{
	struct side o = { .what = "OLD" }, n = { .what = "NEW" };
	const char *json = NULL, *v;
	double threshold = 0;
	struct pair *pairs = NULL;
	size_t npairs = 0, ncompared = 0, i, k;
	struct totals t = { 0 };
	bool options = true;
	int status = 2;

	for (int a = 1; a < argc; a++) {
		if (options && (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0)) {
			help(stdout);
			return 0;
		}
		if (options && strcmp(argv[a], "--") == 0) {
			options = false;
		} else if (options && (v = bench_opt_value(CMP, argc, argv, &a, "--threshold"))) {
			threshold = parse_threshold(v);
		} else if (options && (v = bench_opt_value(CMP, argc, argv, &a, "--json"))) {
			if (!*v)
				bench_usage_error(CMP, "--json: empty file name");
			json = v;
		} else if (options && argv[a][0] == '-' && argv[a][1] != '\0') {
			bench_usage_error(CMP, "unknown option '%s'", argv[a]);
		} else if (!o.arg) {
			o.arg = argv[a];
		} else if (!n.arg) {
			n.arg = argv[a];
		} else {
			bench_usage_error(CMP, "unexpected argument '%s' (OLD and NEW "
					  "are given already)", argv[a]);
		}
	}
	if (!n.arg)
		bench_usage_error(CMP, "needs two files or directories, OLD and NEW");

	if (load_side(&o) != 0 || load_side(&n) != 0)
		goto out;

	/* Pair the files: two plain files whatever their names, else by name
	 * (a search: simplest with a plain file against a directory). */
	pairs = bench_xcalloc(o.n, sizeof *pairs);
	for (i = 0; i < o.n; i++) {
		struct pair *p;

		for (k = 0; k < n.n; k++)
			if (!n.f[k].matched && (!(o.dir || n.dir) ||
						strcmp(o.f[i].name, n.f[k].name) == 0))
				break;
		if (k == n.n)
			continue;
		o.f[i].matched = n.f[k].matched = true;
		p = &pairs[npairs++];
		p->o = &o.f[i];
		p->n = &n.f[k];
		p->name = o.f[i].name;
		if (!p->o->readable || !p->n->readable)
			p->skipped = !p->o->readable ? p->o->why : p->n->why;
		else if (!same_layout(&p->o->lay, &p->n->lay))
			p->skipped = "OLD and NEW read their results differently (their "
				     "\"layout\" differs)";
		else
			compare_pair(p, threshold, &t);
	}

	print_header(&o, &n, threshold);
	for (i = 0; i < npairs; i++) {
		if (pairs[i].skipped)
			printf("\nskipped %s (%s): %s\n", pairs[i].name,
			       pairs[i].o->bench ? pairs[i].o->bench : "?",
			       pairs[i].skipped);
		else
			print_pair(&pairs[i]);
		ncompared += !pairs[i].skipped;
	}
	printf("\n");
	for (i = 0; i < o.n; i++)
		if (!o.f[i].matched)
			printf("only in OLD: %s\n", o.f[i].path);
	for (i = 0; i < n.n; i++)
		if (!n.f[i].matched)
			printf("only in NEW: %s\n", n.f[i].path);
	if (o.n == 0)
		printf("no .json files in OLD %s\n", o.arg);
	if (n.n == 0)
		printf("no .json files in NEW %s\n", n.arg);
	printf("summary: %zu row%s in %zu file%s: %zu better beyond the spread (+), "
	       "%zu worse beyond it (-), %zu within it (~), %zu unjudged (?)",
	       t.rows, t.rows == 1 ? "" : "s", ncompared, ncompared == 1 ? "" : "s",
	       t.better, t.worse, t.within, t.unjudged);
	if (t.nlog)
		printf("; geometric mean gain %.3f", exp(t.log_gain_sum / t.nlog));
	printf("\n");
	if (t.unjudged)
		printf("('?': rerun with --repeat %d or more to judge those rows)\n",
		       MIN_RUNS);
	fflush(stdout);
	if (json)
		write_json(json, &o, &n, threshold, pairs, npairs, &t);
	if (t.rows == 0) {
		fprintf(stderr, "hotlock-bench " CMP ": nothing to compare: no result "
			"of a file on both sides\n");
		status = 1;
	} else {
		status = 0;
	}
out:
	for (i = 0; i < npairs; i++) {
		for (k = 0; k < pairs[i].ndiffs; k++)
			free(pairs[i].diffs[k]);
		free(pairs[i].diffs);
		free(pairs[i].rows);
	}
	free(pairs);
	free_side(&o);
	free_side(&n);
	return status;
}
