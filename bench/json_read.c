/* hotlock-bench: a small JSON reader (see json_read.h), so that compare can
 * read back the files bench/json.c writes.
 *
 * A recursive-descent parser for the whole of RFC 8259 that builds a tree
 * (a DOM): objects, arrays, strings with every escape (\uXXXX becomes UTF-8,
 * a surrogate pair one code point), numbers, true, false, null.  It is meant
 * to be plainly correct, not fast: result files are tens of kilobytes.
 *
 * Input is untrusted (a file may be truncated by a crash, edited by hand, or
 * not JSON at all), so every read is bounds-checked against the length, not
 * a terminator (the text may hold NUL bytes); nesting, input size and the
 * number of values are limited (json_read.h), so neither the stack nor the
 * heap can be run out by a hostile file; and a failure reports the byte
 * offset (and line and column) of the first byte that does not fit, then
 * frees what was built.
 *
 * What it deliberately does not check: that strings are valid UTF-8.  The
 * writer copies bytes it was given (a command line, a file name) as they
 * are, and a reader that refused its own writer's files would be worse than
 * one that passes a stray byte through. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json_read.h"

struct parser {
	const char *s;
	size_t len, pos;
	size_t values;          /* parsed so far, against JV_MAX_VALUES */
	struct jv_error *err;
	bool failed;
};

static void set_position(struct jv_error *err, const char *s, size_t offset)
{
	err->io = false;
	err->offset = offset;
	err->line = 1;
	err->column = 1;
	for (size_t i = 0; i < offset; i++) {
		if (s[i] == '\n') {
			err->line++;
			err->column = 1;
		} else {
			err->column++;
		}
	}
}

/* Records the first failure only: an outer level that sees its child fail
 * returns without adding a vaguer message of its own. */
static void __attribute__((format(printf, 3, 4)))
fail(struct parser *p, size_t offset, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	set_position(p->err, p->s, offset);
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
	va_end(ap);
}

/* "unexpected 'x'", or the end of the input, which is what a truncated file
 * (a run killed while writing, a partial copy) looks like. */
static void fail_unexpected(struct parser *p, const char *expected)
{
	unsigned char c;

	if (p->pos >= p->len) {
		fail(p, p->pos, "unexpected end of input (truncated?): expected %s",
		     expected);
		return;
	}
	c = (unsigned char)p->s[p->pos];
	if (c > 0x20 && c < 0x7f)
		fail(p, p->pos, "unexpected '%c': expected %s", c, expected);
	else
		fail(p, p->pos, "unexpected byte 0x%02x: expected %s", c, expected);
}

static void skip_space(struct parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

/* Makes room for one more element in *v (n used of *cap, each size bytes),
 * doubling; false when out of memory or the size would overflow. */
static bool grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 4;
	if (ncap < *cap || ncap > SIZE_MAX / size)
		return false;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return false;
	*v = nv;
	*cap = ncap;
	return true;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The 4 hex digits at s[i..i+3] (i + 4 <= end), or -1. */
static long hex4(const char *s, size_t i, size_t end)
{
	long v = 0;

	if (end - i < 4)
		return -1;
	for (size_t k = 0; k < 4; k++) {
		int d = hex_digit(s[i + k]);

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static size_t put_utf8(char *out, unsigned long cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The string at p->pos (its opening quote), decoded into a new buffer.
 *
 * Two passes: the first finds the closing quote (a backslash always takes
 * the next byte with it), which bounds the decoded length, since no escape
 * decodes to more bytes than it is written with (\uXXXX: 6 bytes to at most
 * 3, a surrogate pair: 12 to 4); the second decodes and checks. */
static bool parse_string(struct parser *p, char **out, size_t *out_len)
{
	size_t open = p->pos, i = open + 1, end, n = 0;
	char *buf;

	while (i < p->len && p->s[i] != '"')
		i += p->s[i] == '\\' ? 2 : 1;
	if (i >= p->len) {
		fail(p, p->len, "unexpected end of input (truncated?): the string "
		     "opened at byte %zu is not closed", open);
		return false;
	}
	end = i;
	buf = malloc(end - open);       /* the bytes between the quotes, + NUL */
	if (!buf) {
		fail(p, open, "out of memory");
		return false;
	}
	for (i = open + 1; i < end; ) {
		unsigned char c = (unsigned char)p->s[i];
		long cp, lo;

		if (c < 0x20) {
			fail(p, i, "control byte 0x%02x in a string (must be escaped)", c);
			goto bad;
		}
		if (c != '\\') {
			buf[n++] = (char)c;
			i++;
			continue;
		}
		/* i + 1 < end: the first pass would not have stopped at end
		 * had the byte before it been an unescaped backslash. */
		switch (p->s[i + 1]) {
		case '"':  buf[n++] = '"';  i += 2; continue;
		case '\\': buf[n++] = '\\'; i += 2; continue;
		case '/':  buf[n++] = '/';  i += 2; continue;
		case 'b':  buf[n++] = '\b'; i += 2; continue;
		case 'f':  buf[n++] = '\f'; i += 2; continue;
		case 'n':  buf[n++] = '\n'; i += 2; continue;
		case 'r':  buf[n++] = '\r'; i += 2; continue;
		case 't':  buf[n++] = '\t'; i += 2; continue;
		case 'u':  break;
		default:
			c = (unsigned char)p->s[i + 1];
			if (c > 0x20 && c < 0x7f)
				fail(p, i, "invalid escape '\\%c' in a string", c);
			else
				fail(p, i, "invalid escape (backslash and byte 0x%02x) "
				     "in a string", c);
			goto bad;
		}
		cp = hex4(p->s, i + 2, end);
		if (cp < 0) {
			fail(p, i, "invalid \\u escape: \\u takes 4 hex digits");
			goto bad;
		}
		if (cp >= 0xdc00 && cp <= 0xdfff) {
			fail(p, i, "invalid \\u escape: low surrogate \\u%04lx without "
			     "a high one before it", cp);
			goto bad;
		}
		if (cp >= 0xd800 && cp <= 0xdbff) {
			/* A code point above U+FFFF: the low half must follow. */
			lo = -1;
			if (end - (i + 6) >= 6 && p->s[i + 6] == '\\' && p->s[i + 7] == 'u')
				lo = hex4(p->s, i + 8, end);
			if (lo < 0xdc00 || lo > 0xdfff) {
				fail(p, i, "invalid \\u escape: high surrogate \\u%04lx "
				     "not followed by a low one", cp);
				goto bad;
			}
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			i += 6;
		}
		n += put_utf8(buf + n, (unsigned long)cp);
		i += 6;
	}
	buf[n] = '\0';
	*out = buf;
	*out_len = n;
	p->pos = end + 1;
	return true;
bad:
	free(buf);
	return false;
}

/* A number as the grammar has it (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?),
 * checked here, then converted by strtod from a copy: strtod alone accepts
 * more (hex, inf, nan, a leading '+') and would read past the token ("0x1"). */
static bool parse_number(struct parser *p, double *out)
{
	const char *s = p->s;
	size_t start = p->pos, i = start, len;
	char small[64], *copy = small, *endp;
	double v;

#define DIGIT(k) ((k) < p->len && s[k] >= '0' && s[k] <= '9')
	if (i < p->len && s[i] == '-')
		i++;
	if (i < p->len && s[i] == '0') {
		i++;
	} else if (DIGIT(i)) {
		while (DIGIT(i))
			i++;
	} else {
		p->pos = i;
		fail_unexpected(p, "a digit");
		return false;
	}
	if (i < p->len && s[i] == '.') {
		i++;
		if (!DIGIT(i)) {
			p->pos = i;
			fail_unexpected(p, "a digit after the decimal point");
			return false;
		}
		while (DIGIT(i))
			i++;
	}
	if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < p->len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (!DIGIT(i)) {
			p->pos = i;
			fail_unexpected(p, "a digit in the exponent");
			return false;
		}
		while (DIGIT(i))
			i++;
	}
#undef DIGIT
	len = i - start;
	if (len >= sizeof small) {
		copy = malloc(len + 1);
		if (!copy) {
			fail(p, start, "out of memory");
			return false;
		}
	}
	memcpy(copy, s + start, len);
	copy[len] = '\0';
	errno = 0;
	v = strtod(copy, &endp);
	/* ERANGE also means underflow, to 0 or a subnormal: that is the
	 * nearest double and fine; only overflow (to infinity) is refused,
	 * so that callers never meet a non-finite number. */
	if (*endp != '\0' || (errno == ERANGE && isinf(v))) {
		fail(p, start, "number %.*s out of range", len > 40 ? 40 : (int)len,
		     copy);
		if (copy != small)
			free(copy);
		return false;
	}
	if (copy != small)
		free(copy);
	*out = v;
	p->pos = i;
	return true;
}

static bool parse_value(struct parser *p, struct jv *out, int depth);

static bool parse_array(struct parser *p, struct jv *out, int depth)
{
	size_t cap = 0;

	out->type = JV_ARRAY;
	p->pos++;                       /* '[' */
	skip_space(p);
	if (p->pos < p->len && p->s[p->pos] == ']') {
		p->pos++;
		return true;
	}
	for (;;) {
		void *v = out->u.array.v;

		if (!grow(&v, &cap, out->u.array.n, sizeof *out->u.array.v)) {
			fail(p, p->pos, "out of memory");
			return false;
		}
		out->u.array.v = v;
		/* Counted before it is parsed, so that whatever a failing
		 * element built is freed with the rest (a zeroed slot is an
		 * empty JV_NULL). */
		memset(&out->u.array.v[out->u.array.n], 0, sizeof *out->u.array.v);
		if (!parse_value(p, &out->u.array.v[out->u.array.n++], depth + 1))
			return false;
		skip_space(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == ']') {
			p->pos++;
			return true;
		}
		fail_unexpected(p, "',' or ']' in an array");
		return false;
	}
}

static bool parse_object(struct parser *p, struct jv *out, int depth)
{
	size_t cap = 0;

	out->type = JV_OBJECT;
	p->pos++;                       /* '{' */
	skip_space(p);
	if (p->pos < p->len && p->s[p->pos] == '}') {
		p->pos++;
		return true;
	}
	for (;;) {
		void *v = out->u.object.m;
		struct jv_member *m;

		skip_space(p);
		if (p->pos >= p->len || p->s[p->pos] != '"') {
			fail_unexpected(p, "a string (a member's name) in an object");
			return false;
		}
		if (!grow(&v, &cap, out->u.object.n, sizeof *out->u.object.m)) {
			fail(p, p->pos, "out of memory");
			return false;
		}
		out->u.object.m = v;
		m = &out->u.object.m[out->u.object.n];
		memset(m, 0, sizeof *m);
		if (!parse_string(p, &m->key, &m->key_len))
			return false;
		/* Counted once it has a key, for the same reason as in
		 * parse_array. */
		out->u.object.n++;
		skip_space(p);
		if (p->pos >= p->len || p->s[p->pos] != ':') {
			fail_unexpected(p, "':' after a member's name");
			return false;
		}
		p->pos++;
		if (!parse_value(p, &m->value, depth + 1))
			return false;
		skip_space(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == '}') {
			p->pos++;
			return true;
		}
		fail_unexpected(p, "',' or '}' in an object");
		return false;
	}
}

/* true, false or null; on a mismatch, the error points at the first byte
 * that differs ("nul" at the end of the input reads as truncated). */
static bool literal(struct parser *p, const char *word, const char *expected)
{
	size_t n = strlen(word), k;

	for (k = 0; k < n; k++)
		if (p->pos + k >= p->len || p->s[p->pos + k] != word[k])
			break;
	p->pos += k;
	if (k < n) {
		fail_unexpected(p, expected);
		return false;
	}
	return true;
}

/* depth: the containers around this value. */
static bool parse_value(struct parser *p, struct jv *out, int depth)
{
	char c;

	skip_space(p);
	out->offset = p->pos;
	if (++p->values > JV_MAX_VALUES) {
		fail(p, p->pos, "more than %u values", JV_MAX_VALUES);
		return false;
	}
	if (p->pos >= p->len) {
		fail_unexpected(p, "a value");
		return false;
	}
	c = p->s[p->pos];
	if ((c == '[' || c == '{') && depth >= JV_MAX_DEPTH) {
		fail(p, p->pos, "nested deeper than %d arrays and objects",
		     JV_MAX_DEPTH);
		return false;
	}
	switch (c) {
	case '{':
		return parse_object(p, out, depth);
	case '[':
		return parse_array(p, out, depth);
	case '"':
		if (!parse_string(p, &out->u.string.s, &out->u.string.len))
			return false;
		out->type = JV_STRING;
		return true;
	case 't':
		if (!literal(p, "true", "'true'"))
			return false;
		out->type = JV_TRUE;
		return true;
	case 'f':
		if (!literal(p, "false", "'false'"))
			return false;
		out->type = JV_FALSE;
		return true;
	case 'n':
		if (!literal(p, "null", "'null'"))
			return false;
		out->type = JV_NULL;
		return true;
	case '-':
	case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		if (!parse_number(p, &out->u.number))
			return false;
		out->type = JV_NUMBER;
		return true;
	default:
		break;
	}
	fail_unexpected(p, "a value");
	return false;
}

int jv_parse(const char *text, size_t len, struct jv *root, struct jv_error *err)
{
	struct parser p = { .s = text, .len = len, .err = err };

	memset(root, 0, sizeof *root);
	memset(err, 0, sizeof *err);
	if (parse_value(&p, root, 0)) {
		skip_space(&p);
		if (p.pos == p.len)
			return 0;
		fail_unexpected(&p, "the end of the input after the value");
	}
	jv_free(root);
	return -1;
}

int jv_parse_file(const char *path, struct jv *root, struct jv_error *err)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	struct stat st;
	FILE *f;
	int ret;

	memset(root, 0, sizeof *root);
	memset(err, 0, sizeof *err);
	err->io = true;
	f = fopen(path, "rb");
	if (!f) {
		snprintf(err->msg, sizeof err->msg, "%s", strerror(errno));
		return -1;
	}
	/* A regular file's size refuses a huge one without reading it; but
	 * the loop reads to the end rather than trust that size: a pipe or
	 * /proc file has none, and a file may grow while it is read. */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > (off_t)JV_MAX_BYTES) {
		snprintf(err->msg, sizeof err->msg, "larger than %u MiB",
			 JV_MAX_BYTES >> 20);
		goto fail;
	}
	for (;;) {
		size_t got;

		if (len == cap) {
			void *nb;

			if (cap > JV_MAX_BYTES) {
				snprintf(err->msg, sizeof err->msg,
					 "larger than %u MiB", JV_MAX_BYTES >> 20);
				goto fail;
			}
			cap = cap ? cap * 2 : 65536;
			if (cap > JV_MAX_BYTES + 1)
				cap = JV_MAX_BYTES + 1;
			nb = realloc(buf, cap);
			if (!nb) {
				snprintf(err->msg, sizeof err->msg, "out of memory");
				goto fail;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err->msg, sizeof err->msg, "%s",
			 errno ? strerror(errno) : "read error");
		goto fail;
	}
	if (len > JV_MAX_BYTES) {
		snprintf(err->msg, sizeof err->msg, "larger than %u MiB",
			 JV_MAX_BYTES >> 20);
		goto fail;
	}
	fclose(f);
	ret = jv_parse(buf, len, root, err);
	free(buf);
	return ret;
fail:
	fclose(f);
	free(buf);
	return -1;
}

void jv_free(struct jv *v)
{
	size_t i;

	if (!v)
		return;
	switch (v->type) {
	case JV_STRING:
		free(v->u.string.s);
		break;
	case JV_ARRAY:
		for (i = 0; i < v->u.array.n; i++)
			jv_free(&v->u.array.v[i]);
		free(v->u.array.v);
		break;
	case JV_OBJECT:
		for (i = 0; i < v->u.object.n; i++) {
			free(v->u.object.m[i].key);
			jv_free(&v->u.object.m[i].value);
		}
		free(v->u.object.m);
		break;
	default:
		break;
	}
	memset(v, 0, sizeof *v);
}

/* ---- lookups ------------------------------------------------------------- */

static const struct jv *member(const struct jv *v, const char *key, size_t key_len)
{
	if (!v || v->type != JV_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->u.object.n; i++) {
		const struct jv_member *m = &v->u.object.m[i];

		if (m->key_len == key_len && memcmp(m->key, key, key_len) == 0)
			return &m->value;
	}
	return NULL;
}

const struct jv *jv_get(const struct jv *v, const char *key)
{
	return member(v, key, strlen(key));
}

size_t jv_len(const struct jv *v)
{
	return v && v->type == JV_ARRAY ? v->u.array.n : 0;
}

const struct jv *jv_at(const struct jv *v, size_t i)
{
	return i < jv_len(v) ? &v->u.array.v[i] : NULL;
}

bool jv_number(const struct jv *v, double *out)
{
	if (!v || v->type != JV_NUMBER)
		return false;
	*out = v->u.number;
	return true;
}

const char *jv_string(const struct jv *v)
{
	return v && v->type == JV_STRING ? v->u.string.s : NULL;
}

bool jv_is(const struct jv *v, enum jv_type type)
{
	return v && v->type == type;
}

bool jv_equal(const struct jv *a, const struct jv *b)
{
	size_t i;

	if (!a || !b)
		return a == b;
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case JV_NUMBER:
		return a->u.number == b->u.number;
	case JV_STRING:
		return a->u.string.len == b->u.string.len &&
			memcmp(a->u.string.s, b->u.string.s, a->u.string.len) == 0;
	case JV_ARRAY:
		if (a->u.array.n != b->u.array.n)
			return false;
		for (i = 0; i < a->u.array.n; i++)
			if (!jv_equal(&a->u.array.v[i], &b->u.array.v[i]))
				return false;
		return true;
	case JV_OBJECT:
		if (a->u.object.n != b->u.object.n)
			return false;
		for (i = 0; i < a->u.object.n; i++) {
			const struct jv_member *m = &a->u.object.m[i];

			if (!jv_equal(&m->value, member(b, m->key, m->key_len)))
				return false;
		}
		return true;
	default:
		return true;            /* null, true, false */
	}
}
