/* SPDX-License-Identifier: MIT */
/* Text from a program (its command line, its threads' names, its modules'
 * paths and symbols) as valid UTF-8, for the report and above all for its
 * JSON, which must be UTF-8 to parse: each byte that does not begin a
 * well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF) becomes U+FFFD, and a text cut to fit is cut
 * before a whole character. */
#ifndef HOTLOCK_UTF8_H
#define HOTLOCK_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at s (n bytes left), or 0. */
static inline size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||      /* overlong, surrogate */
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))          /* overlong, > U+10FFFF */
		return 0;
	return len;
}

/* src, NUL-ended, into dst (size bytes, NUL-ended) as valid UTF-8. */
static inline void utf8_clean(char *dst, size_t size, const char *src)
{
	static const char replacement[] = "\xef\xbf\xbd";
	const unsigned char *s = (const unsigned char *)src;
	size_t n = strlen(src), o = 0;
	if (!size)
		return;
	while (n) {
		size_t len = utf8_seq(s, n);
		const char *put = len ? (const char *)s : replacement;
		size_t put_len = len ? len : 3;
		if (o + put_len >= size)
			break;
		memcpy(dst + o, put, put_len);
		o += put_len;
		s += len ? len : 1;
		n -= len ? len : 1;
	}
	dst[o] = 0;
}

#endif
