/* hotlock-bench: a small JSON reader (a DOM parser), for reading back what
 * bench/json.c wrote (hotlock-bench compare).  See json_read.c. */
#ifndef HOTLOCK_BENCH_JSON_READ_H
#define HOTLOCK_BENCH_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

/* The limits of a document (beyond them parsing fails with a message, never
 * a crash): nesting, input size, and values (each takes sizeof(struct jv)
 * bytes, so a file of "[0,0,0,..." cannot ask for much more memory than
 * JV_MAX_VALUES of them). */
#define JV_MAX_DEPTH  128
#define JV_MAX_BYTES  (256u << 20)
#define JV_MAX_VALUES (32u << 20)

enum jv_type {
	JV_NULL = 0,    /* also what a zeroed struct jv is */
	JV_FALSE,
	JV_TRUE,
	JV_NUMBER,
	JV_STRING,
	JV_ARRAY,
	JV_OBJECT,
};

struct jv_member;

/* One JSON value; a document is a tree of them owned by its root. */
struct jv {
	enum jv_type type;
	size_t offset;          /* of its first byte in the input */
	union {
		double number;
		struct {
			char *s;        /* NUL-terminated; may hold "\u0000" */
			size_t len;     /* bytes, without the terminator */
		} string;
		struct {
			struct jv *v;
			size_t n;
		} array;
		struct {
			struct jv_member *m;    /* in input order */
			size_t n;
		} object;
	} u;
};

struct jv_member {
	char *key;              /* decoded, NUL-terminated */
	size_t key_len;
	struct jv value;
};

/* Where and why parsing failed. */
struct jv_error {
	bool io;                /* the file could not be read: msg only */
	size_t offset;          /* bytes from the start of the input */
	size_t line, column;    /* 1-based; the column counts bytes */
	char msg[96];
};

/* Parses len bytes of text (they need not be NUL-terminated) into *root.
 * Returns 0, or -1 with *err filled and *root left empty (JV_NULL, nothing
 * to free).  Numbers are read with strtod in the C locale the bench runs
 * in; a number beyond double's range is an error. */
int jv_parse(const char *text, size_t len, struct jv *root, struct jv_error *err);
/* Reads the whole file at path (at most JV_MAX_BYTES) and parses it.
 * Returns 0, or -1 with *err filled: for an I/O error (or a file over the
 * limit) err->io is set and msg says why, with no position. */
int jv_parse_file(const char *path, struct jv *root, struct jv_error *err);
/* Frees everything under v and leaves it JV_NULL.  NULL is fine. */
void jv_free(struct jv *v);

/* ---- lookups: each takes NULL or a value of any type, so that a chain
 * of them needs one check at the end. */

/* The first member named key of an object; NULL if v is not an object or
 * has no such member. */
const struct jv *jv_get(const struct jv *v, const char *key);
/* Elements of an array (0 for anything else). */
size_t jv_len(const struct jv *v);
/* Element i of an array; NULL if v is not an array or i is out of range. */
const struct jv *jv_at(const struct jv *v, size_t i);
/* true and *out set if v is a number. */
bool jv_number(const struct jv *v, double *out);
/* The string, or NULL if v is not a string. */
const char *jv_string(const struct jv *v);
bool jv_is(const struct jv *v, enum jv_type type);
/* Deep equality: same type, numbers equal (==), strings byte-equal,
 * arrays elementwise, objects with the same keys whose values are equal
 * (in any order: JSON objects are unordered). */
bool jv_equal(const struct jv *a, const struct jv *b);

#endif
