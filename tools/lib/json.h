/* a small JSON writer: correct escaping and commas, nothing more */
#ifndef KILN_JSON_H
#define KILN_JSON_H

#include <stdint.h>

#include "util.h"

#define JSON_MAXDEPTH 32

/* writer state over a growable string */
struct json {
	struct buf *b;
	int depth;
	int count[JSON_MAXDEPTH]; /* items written at each level */
	char closer[JSON_MAXDEPTH]; /* '}' or ']' for each open level */
	int afterkey;             /* a key was just written: no comma before the value */
};

/* start writing into b */
void json_init(struct json *j, struct buf *b);
/* open an object / array (as a value, or after json_key) */
void json_obj(struct json *j);
void json_arr(struct json *j);
/* close the innermost object or array */
void json_end(struct json *j);
/* write an object key; the next call writes its value */
void json_key(struct json *j, const char *k);
/* values; json_str(NULL) writes null */
void json_str(struct json *j, const char *s);
void json_strn(struct json *j, const char *s, size_t n);
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);
/* shorthands for key + value */
void json_kstr(struct json *j, const char *k, const char *s);
void json_kint(struct json *j, const char *k, int64_t v);
void json_kbool(struct json *j, const char *k, int v);
/* key k and an array of the n strings of v */
void json_kstrs(struct json *j, const char *k, char *const *v, size_t n);

/* append s as a quoted JSON string: UTF-8 passed through, controls escaped (C0, DEL, the
   C1 controls U+0080-U+009F, U+2028 and U+2029 as \uXXXX), and a byte
   that is not part of valid UTF-8 written as \udcXX (Python's surrogateescape: json.loads
   and os.fsencode give the byte back), so the output is always valid JSON */
void json_quote(struct buf *b, const char *s, size_t n);

/* the length of the valid UTF-8 sequence at s (at most n bytes): 1 for ASCII, 2 to 4,
   or 0 when the byte there does not start one (overlong, surrogate, past U+10FFFF,
   cut short) */
size_t utf8_seq(const unsigned char *s, size_t n);
/* the offset of the first byte of s (n bytes) that is not valid UTF-8, or n */
size_t utf8_badat(const char *s, size_t n);

#endif
