/* a small JSON writer */
#include "json.h"

#include <inttypes.h>
#include <string.h>

void
json_init(struct json *j, struct buf *b)
{
	memset(j, 0, sizeof *j);
	j->b = b;
}

/* write the comma that separates this value from the previous one */
static void
sep(struct json *j)
{
	if (j->afterkey) {
		j->afterkey = 0;
		return;
	}
	if (j->count[j->depth]++)
		bufputc(j->b, ',');
}

static void
open1(struct json *j, int c)
{
	sep(j);
	bufputc(j->b, c);
	if (++j->depth >= JSON_MAXDEPTH)
		die("json: nesting deeper than %d", JSON_MAXDEPTH);
	j->count[j->depth] = 0;
	j->closer[j->depth] = c == '{' ? '}' : ']';
}

void
json_obj(struct json *j)
{
	open1(j, '{');
}

void
json_arr(struct json *j)
{
	open1(j, '[');
}

void
json_end(struct json *j)
{
	if (j->depth <= 0)
		die("json: end without open");
	bufputc(j->b, j->closer[j->depth--]);
}

void
json_key(struct json *j, const char *k)
{
	sep(j);
	json_quote(j->b, k, strlen(k));
	bufputc(j->b, ':');
	j->afterkey = 1;
}

void
json_quote(struct buf *b, const char *s, size_t n)
{
	size_t i, k;
	unsigned char c;

	bufputc(b, '"');
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		switch (c) {
		case '"': bufputs(b, "\\\""); break;
		case '\\': bufputs(b, "\\\\"); break;
		case '\n': bufputs(b, "\\n"); break;
		case '\r': bufputs(b, "\\r"); break;
		case '\t': bufputs(b, "\\t"); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				bufprintf(b, "\\u%04x", c);
			} else if (c < 0x80) {
				bufputc(b, c);
			} else if ((k = utf8_seq((const unsigned char *)s + i, n - i)) == 2 && c == 0xc2 &&
			           (unsigned char)s[i + 1] < 0xa0) {
				/* a C1 control (U+0080-U+009F): escaped, so no terminal acts on it */
				bufprintf(b, "\\u%04x", (unsigned char)s[i + 1]);
				i++;
			} else if (k == 3 && c == 0xe2 && (unsigned char)s[i + 1] == 0x80 &&
			           ((unsigned char)s[i + 2] & 0xfe) == 0xa8) {
				/* U+2028 and U+2029 are line breaks to JavaScript */
				bufprintf(b, "\\u%04x", 0x2000 | ((unsigned char)s[i + 2] - 0x80));
				i += 2;
			} else if (k > 0) {
				bufadd(b, s + i, k);
				i += k - 1;
			} else {
				bufprintf(b, "\\udc%02x", c);
			}
		}
	}
	bufputc(b, '"');
}

size_t
utf8_seq(const unsigned char *s, size_t n)
{
	size_t k, i;
	unsigned lo = 0x80, hi = 0xbf;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	k = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	/* the second byte's range rules out overlong forms, surrogates, > U+10FFFF */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < k || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < k; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return k;
}

size_t
utf8_badat(const char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if (!(k = utf8_seq((const unsigned char *)s + i, n - i)))
			return i;
		i += k;
	}
	return n;
}

void
json_strn(struct json *j, const char *s, size_t n)
{
	sep(j);
	json_quote(j->b, s, n);
}

void
json_str(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	json_strn(j, s, strlen(s));
}

void
json_int(struct json *j, int64_t v)
{
	sep(j);
	bufprintf(j->b, "%" PRId64, v);
}

void
json_uint(struct json *j, uint64_t v)
{
	sep(j);
	bufprintf(j->b, "%" PRIu64, v);
}

void
json_bool(struct json *j, int v)
{
	sep(j);
	bufputs(j->b, v ? "true" : "false");
}

void
json_null(struct json *j)
{
	sep(j);
	bufputs(j->b, "null");
}

void
json_kstr(struct json *j, const char *k, const char *s)
{
	json_key(j, k);
	json_str(j, s);
}

void
json_kint(struct json *j, const char *k, int64_t v)
{
	json_key(j, k);
	json_int(j, v);
}

void
json_kbool(struct json *j, const char *k, int v)
{
	json_key(j, k);
	json_bool(j, v);
}

void
json_kstrs(struct json *j, const char *k, char *const *v, size_t n)
{
	size_t i;

	json_key(j, k);
	json_arr(j);
	for (i = 0; i < n; i++)
		json_str(j, v[i]);
	json_end(j);
}
