/* SPDX-License-Identifier: MIT */
/* hotlock-bench: a small streaming JSON writer (see harness.h).  Strings are
 * escaped and made valid UTF-8, non-finite numbers become null, commas and
 * indentation follow the nesting.  The file is written as FILE.tmp and
 * renamed to FILE when whole, so a reader never sees half a file; an early
 * exit removes FILE.tmp. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* The FILE.tmp being written, for bench_json_discard. */
static char *open_tmp;

#define JSON_MAX_DEPTH 16

struct bench_json {
	FILE *f;
	char *path, *tmp;
	int depth;
	char close[JSON_MAX_DEPTH];     /* '}' or ']' per open container */
	bool nonempty[JSON_MAX_DEPTH];
};

/* The length (1 to 4) of the valid UTF-8 sequence at p, or 0 where the
 * bytes there are none: a stray continuation byte, an overlong form (C0, C1,
 * E0 80-9F, F0 80-8F), a surrogate (ED A0-BF: U+D800-DFFF), a code point
 * above U+10FFFF (F4 90-BF, F5-FF) or a sequence cut short (the string's NUL
 * is no continuation byte, so nothing past it is read). */
static int utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;     /* the second byte's range */
	int n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	n = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* s as a JSON string.  s is arbitrary bytes (argv, in "command", may hold a
 * Latin-1 file name), but JSON is UTF-8 and compare's reader (jansson)
 * refuses a whole file that is not: valid sequences pass unchanged, and each
 * byte of an invalid one becomes U+FFFD, escaped, so that part stays ASCII. */
static void json_raw_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	fputc('"', f);
	for (; *p; p += n ? n : 1) {
		n = utf8_len(p);
		if (n == 0)
			fputs("\\ufffd", f);
		else if (n > 1)
			fwrite(p, 1, (size_t)n, f);
		else if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* Separator, indentation and key of the next member or element. */
static void json_member(struct bench_json *j, const char *key)
{
	if (j->depth > 0) {
		if (j->nonempty[j->depth - 1])
			fputc(',', j->f);
		j->nonempty[j->depth - 1] = true;
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	}
	if (key) {
		json_raw_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void json_open(struct bench_json *j, const char *key, char open, char close)
{
	if (j->depth == JSON_MAX_DEPTH)
		bench_fatal("JSON nested too deep (internal error)");
	json_member(j, key);
	fputc(open, j->f);
	j->close[j->depth] = close;
	j->nonempty[j->depth] = false;
	j->depth++;
}

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

void bench_json_object(struct bench_json *j, const char *key)
{
	json_open(j, key, '{', '}');
}

void bench_json_array(struct bench_json *j, const char *key)
{
	json_open(j, key, '[', ']');
}

void bench_json_end(struct bench_json *j)
{
	bool nonempty;

	if (j->depth == 0)
		bench_fatal("JSON end without a container (internal error)");
	nonempty = j->nonempty[--j->depth];
	if (nonempty)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(j->close[j->depth], j->f);
}

void bench_json_string(struct bench_json *j, const char *key, const char *v)
{
	json_member(j, key);
	json_raw_string(j->f, v);
}

void bench_json_number(struct bench_json *j, const char *key, double v)
{
	json_member(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.10g", v);
	else
		fputs("null", j->f);
}

void bench_json_uint(struct bench_json *j, const char *key, uint64_t v)
{
	json_member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void bench_json_bool(struct bench_json *j, const char *key, bool v)
{
	json_member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void bench_json_null(struct bench_json *j, const char *key)
{
	json_member(j, key);
	fputs("null", j->f);
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

void bench_json_close(struct bench_json *j)
{
	if (j->depth != 0)
		bench_fatal("JSON closed with %d containers open (internal error)", j->depth);
	fputc('\n', j->f);
	if (fflush(j->f) != 0 || ferror(j->f) || fsync(fileno(j->f)) != 0)
		bench_fatal("cannot write %s: %s", j->tmp, strerror(errno));
	if (fclose(j->f) != 0)
		bench_fatal("cannot write %s: %s", j->tmp, strerror(errno));
	if (rename(j->tmp, j->path) != 0)
		bench_fatal("cannot rename %s to %s: %s", j->tmp, j->path, strerror(errno));
	open_tmp = NULL;
	free(j->tmp);
	free(j->path);
	free(j);
}

void bench_json_discard(void)
{
	if (open_tmp)
		unlink(open_tmp);
	open_tmp = NULL;
}
