/* SPDX-License-Identifier: MIT */
/* hotlock-bench: the JSON writer (see harness.h), on jansson.  The calls
 * build the document in memory (a few KB to some hundred KB); close has
 * jansson write it, indented by 2, numbers as "%.10g".  Strings are made
 * valid UTF-8 first, non-finite numbers become null.  The file is written
 * as FILE.tmp, opened at once so that an unwritable path fails before the
 * runs, and renamed to FILE when whole, so a reader never sees half a
 * file; an early exit removes FILE.tmp. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tools/utf8.h"
#include "harness.h"

/* The FILE.tmp being written, for bench_json_discard. */
static char *open_tmp;

#define JSON_MAX_DEPTH 16

/* Kept in key order (jansson >= 2.8 always does), 2 spaces an indent, reals
 * as "%.10g" (as the hand-written JSON before had them). */
#define JSON_DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

struct bench_json {
	FILE *f;                        /* FILE.tmp, from bench_json_open on */
	char *path, *tmp;
	json_t *root;                   /* the document; NULL until its first value */
	int depth;
	json_t *open[JSON_MAX_DEPTH];   /* the containers being filled, innermost last */
};

/* A copy of s (free it) that is valid UTF-8, as jansson requires.  s is
 * arbitrary bytes (argv, in "command", may hold a Latin-1 file name):
 * valid sequences pass unchanged, each byte of an invalid one becomes
 * U+FFFD (tools/utf8.h, as in hotlock-run's reports). */
static char *utf8_copy(const char *s)
{
	size_t size = 3 * strlen(s) + 1;
	char *copy = bench_xcalloc(size, 1);

	utf8_clean(copy, size, s);
	return copy;
}

/* s as a JSON string (a new reference). */
static json_t *json_text(const char *s)
{
	char *valid = utf8_copy(s);
	json_t *v = json_string_nocheck(valid);

	free(valid);
	return v;
}

/* Adds v (a new reference, NULL when jansson ran out of memory) to the
 * innermost open container: under key in an object, at the end of an
 * array (key NULL), or as the document itself when none is open. */
static void json_add(struct bench_json *j, const char *key, json_t *v)
{
	json_t *parent = j->depth > 0 ? j->open[j->depth - 1] : NULL;
	char *k;

	if (!v)
		bench_fatal("out of memory");
	if (!parent) {
		if (j->root || key)
			bench_fatal("JSON value outside the document (internal error)");
		j->root = v;
		return;
	}
	if (json_is_array(parent)) {
		if (key)
			bench_fatal("JSON key \"%s\" in an array (internal error)", key);
		if (json_array_append_new(parent, v) != 0)
			bench_fatal("out of memory");
		return;
	}
	if (!key)
		bench_fatal("JSON value without a key in an object (internal error)");
	k = utf8_copy(key);
	if (json_object_get(parent, k))
		bench_fatal("JSON key \"%s\" written twice (internal error)", k);
	if (json_object_set_new_nocheck(parent, k, v) != 0)
		bench_fatal("out of memory");
	free(k);
}

/* Adds the empty container c under key and makes it the innermost open
 * one, for the values up to the matching bench_json_end. */
static void json_open(struct bench_json *j, const char *key, json_t *c)
{
	if (j->depth == JSON_MAX_DEPTH)
		bench_fatal("JSON nested too deep (internal error)");
	json_add(j, key, c);
	j->open[j->depth++] = c;
}

/* A writer for path: creates path.tmp now (exits 1 when it cannot). */
struct bench_json *bench_json_open(const char *path)
{
	struct bench_json *j = bench_xcalloc(1, sizeof *j);
	size_t n = strlen(path);

	j->path = bench_xcalloc(n + 1, 1);
	memcpy(j->path, path, n);
	j->tmp = bench_xcalloc(n + 5, 1);
	memcpy(j->tmp, path, n);
	memcpy(j->tmp + n, ".tmp", 5);
	j->f = fopen(j->tmp, "w");
	if (!j->f)
		bench_fatal("cannot write %s: %s", j->tmp, strerror(errno));
	open_tmp = j->tmp;
	return j;
}

/* Opens an object under key, filled up to its bench_json_end. */
void bench_json_object(struct bench_json *j, const char *key)
{
	json_open(j, key, json_object());
}

/* Opens an array under key, filled up to its bench_json_end. */
void bench_json_array(struct bench_json *j, const char *key)
{
	json_open(j, key, json_array());
}

/* Closes the innermost open object or array. */
void bench_json_end(struct bench_json *j)
{
	if (j->depth == 0)
		bench_fatal("JSON end without a container (internal error)");
	j->depth--;
}

/* The string v under key. */
void bench_json_string(struct bench_json *j, const char *key, const char *v)
{
	json_add(j, key, json_text(v));
}

/* v under key: null when not finite; an integer where "%.10g" writes one
 * ("3", not jansson's "3.0" for a real), as the hand-written JSON had it;
 * else a real, which jansson writes with "%.10g" too (JSON_DUMP_FLAGS). */
void bench_json_number(struct bench_json *j, const char *key, double v)
{
	char text[32];

	if (!isfinite(v)) {
		json_add(j, key, json_null());
		return;
	}
	snprintf(text, sizeof text, "%.10g", v);
	if (strspn(text, "-0123456789") == strlen(text))
		json_add(j, key, json_integer(strtoll(text, NULL, 10)));
	else
		json_add(j, key, json_real(v));
}

/* v under key; above jansson's integers (2^63 - 1, no count gets there) a
 * real. */
void bench_json_uint(struct bench_json *j, const char *key, uint64_t v)
{
	if (v > LLONG_MAX)
		json_add(j, key, json_real((double)v));
	else
		json_add(j, key, json_integer((json_int_t)v));
}

/* true or false under key. */
void bench_json_bool(struct bench_json *j, const char *key, bool v)
{
	json_add(j, key, json_boolean(v));
}

/* null under key. */
void bench_json_null(struct bench_json *j, const char *key)
{
	json_add(j, key, json_null());
}

/* [v[0], ..., v[n-1]] under key. */
void bench_json_uint_array(struct bench_json *j, const char *key, const unsigned *v, size_t n)
{
	bench_json_array(j, key);
	for (size_t i = 0; i < n; i++)
		bench_json_uint(j, NULL, v[i]);
	bench_json_end(j);
}

/* ["v[0]", ..., "v[n-1]"] under key. */
void bench_json_string_array(struct bench_json *j, const char *key, const char *const *v,
			     size_t n)
{
	bench_json_array(j, key);
	for (size_t i = 0; i < n; i++)
		bench_json_string(j, NULL, v[i]);
	bench_json_end(j);
}

/* Writes the document and a newline to FILE.tmp, syncs it, renames it to
 * FILE and frees the writer; exits 1 on an I/O error. */
void bench_json_close(struct bench_json *j)
{
	if (j->depth != 0)
		bench_fatal("JSON closed with %d containers open (internal error)", j->depth);
	if (!j->root)
		bench_fatal("JSON closed empty (internal error)");
	errno = 0;
	if (json_dumpf(j->root, j->f, JSON_DUMP_FLAGS) != 0 || fputc('\n', j->f) == EOF ||
	    fflush(j->f) != 0 || ferror(j->f) || fsync(fileno(j->f)) != 0)
		bench_fatal("cannot write %s: %s", j->tmp, strerror(errno));
	if (fclose(j->f) != 0)
		bench_fatal("cannot write %s: %s", j->tmp, strerror(errno));
	if (rename(j->tmp, j->path) != 0)
		bench_fatal("cannot rename %s to %s: %s", j->tmp, j->path, strerror(errno));
	open_tmp = NULL;
	json_decref(j->root);
	free(j->tmp);
	free(j->path);
	free(j);
}

/* Removes the FILE.tmp of a writer still open (on an early exit). */
void bench_json_discard(void)
{
	if (open_tmp)
		unlink(open_tmp);
	open_tmp = NULL;
}

void bench_json_layout(struct bench_json *j, const char *const *key, size_t nkey,
		       const char *metric, bool lower_better)
{
	bench_json_object(j, "layout");
	bench_json_string_array(j, "key", key, nkey);
	bench_json_string(j, "metric", metric);
	bench_json_string(j, "better", lower_better ? "lower" : "higher");
	bench_json_end(j);
}
