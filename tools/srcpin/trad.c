/* traditional unified diffs: the file header of a patch without a "diff --git" line (what
   diff -u, quilt and Debian's debian/patches write) read as git apply reads it: -p1 unless
   a name has no '/' (git's guess), a timestamp after the name (tab or spaces) dropped,
   /dev/null or the epoch's timestamp for a created or deleted file, the shorter of two
   names when one extends the other ("file" over "file.orig"). The rules follow git's own
   apply.c (git/git: find_name_traditional, diff_timestamp_len, guess_p_value,
   has_epoch_timestamp, parse_traditional_patch); the code is kiln's. */
#include "srcpin.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* the length of the line at s, without its '\n' (the text ends with a NUL) */
static size_t
linelen(const char *s)
{
	return strcspn(s, "\n");
}

static int
dig(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* the length of a time zone " +0500" or " +05:00" ending at e (line starts at l), or 0 */
static size_t
tzlen(const char *l, const char *e)
{
	size_t n = (size_t)(e - l);

	if (n >= 6 && e[-6] == ' ' && (e[-5] == '+' || e[-5] == '-') && dig(e - 4, 4))
		return 6;
	if (n >= 7 && e[-7] == ' ' && (e[-6] == '+' || e[-6] == '-') && dig(e - 5, 2) &&
	    e[-3] == ':' && dig(e - 2, 2))
		return 7;
	return 0;
}

/* the length of a time " 07:01:32" or " 07:01:32.620000023" ending at e, or 0 */
static size_t
timelen(const char *l, const char *e)
{
	const char *f = e;

	while (f > l && isdigit((unsigned char)f[-1]))
		f--;
	if (f > l && f[-1] == '.' && f < e)
		f--;   /* fractional seconds */
	else
		f = e;
	if (f - l >= 9 && f[-9] == ' ' && dig(f - 8, 2) && f[-6] == ':' && dig(f - 5, 2) &&
	    f[-3] == ':' && dig(f - 2, 2))
		return (size_t)(e - (f - 9));
	return 0;
}

/* the length of a date "2010-07-05" (or "10-07-05") ending at e, or 0 */
static size_t
datelen(const char *l, const char *e)
{
	const char *d = e - 8;

	if (e - l < 8 || !dig(d, 2) || d[2] != '-' || !dig(d + 3, 2) || d[5] != '-' || !dig(d + 6, 2))
		return 0;
	if (d - l >= 2 && dig(d - 2, 2))
		d -= 2;
	return (size_t)(e - d);
}

/* the length of the timestamp diff writes after a name (with the tab or spaces before it)
   at the end of the n-byte line l, or 0 */
static size_t
stamplen(const char *l, size_t n)
{
	const char *e = l + n;
	size_t k;

	if (!n || !isdigit((unsigned char)e[-1]))
		return 0;
	e -= tzlen(l, e);
	e -= timelen(l, e);
	if (!(k = datelen(l, e)))
		return 0;
	e -= k;
	if (e == l)
		return 0;
	if (e[-1] == '\t')
		return (size_t)(l + n - (e - 1));
	if (e[-1] != ' ')
		return 0;
	while (e > l && e[-1] == ' ')
		e--;
	return (size_t)(l + n - e);
}

/* true if the header name line s (after "--- ") ends with the epoch's timestamp after a
   tab, as diff -N writes for a file that one side lacks */
static int
epoch(const char *s)
{
	size_t n = linelen(s);
	const char *t = NULL, *c, *e = s + n;
	long h, m, z, zone;
	int west;

	for (c = s; c < e; c++)
		if (*c == '\t')
			t = c + 1;
	if (!t)
		return 0;
	if (e - t > 11 && !strncmp(t, "1969-12-31 ", 11))
		west = 1;
	else if (e - t > 11 && !strncmp(t, "1970-01-01 ", 11))
		west = 0;
	else
		return 0;
	t += 11;
	/* hh:mm:00[.0+] [+-]hh[:]mm */
	if (e - t < 8 || !dig(t, 2) || t[0] > '2' || t[2] != ':' || !dig(t + 3, 2) || t[3] > '5' ||
	    strncmp(t + 5, ":00", 3))
		return 0;
	h = (t[0] - '0') * 10 + (t[1] - '0');
	m = (t[3] - '0') * 10 + (t[4] - '0');
	t += 8;
	if (t < e && *t == '.') {
		for (t++; t < e && *t == '0'; t++)
			;
		if (t[-1] == '.')
			return 0;
	}
	if (e - t < 6 || t[0] != ' ' || (t[1] != '+' && t[1] != '-') || !dig(t + 2, 2) || t[2] > '2')
		return 0;
	z = (t[2] - '0') * 10 + (t[3] - '0');
	c = t + 4 + (t[4] == ':');
	if (e - c != 2 || !dig(c, 2) || c[0] > '5')
		return 0;
	zone = z * 60 + (c[0] - '0') * 10 + (c[1] - '0');
	if (t[1] == '-')
		zone = -zone;
	return h * 60 + m - zone == (west ? 24 * 60 : 0);
}

static int
devnull(const char *s)
{
	return !strncmp(s, "/dev/null", 9) && isspace((unsigned char)s[9]);
}

/* remove repeated slashes in place */
static char *
squash(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++)
		if (!(*r == '/' && w > s && w[-1] == '/'))
			*w++ = *r;
	*w = 0;
	return s;
}

/* The file name on the header line s (after "--- " or "+++ "), p leading components
   removed; def (may be NULL) is preferred when the name only extends it. NULL when there
   is no name (fewer components than p). Caller frees. */
static char *
tradname(const char *s, const char *def, int p)
{
	size_t n = linelen(s), k = 0;
	const char *start = p == 0 ? s : NULL, *c, *stop;

	if (*s == '"') {
		const char *nx;
		char *q = cunquote(s, s + n, &nx), *r = q;
		for (; q && r && p > 0; p--)
			if ((r = strchr(r, '/')))
				r++;
		if (q && r) {
			memmove(q, r, strlen(r) + 1);
			return squash(q);
		}
		free(q);   /* not a name git quotes: read it plain */
	}
	k = stamplen(s, n);
	stop = k ? s + n - k : NULL;
	for (c = s; c < s + n && c != stop; c++) {
		if (!stop && isspace((unsigned char)*c) && *c != ' ')
			break;
		if (*c == '/' && p > 0 && !--p)
			start = c + 1;
	}
	if (!start || c == start)
		return def ? xstrdup(def) : NULL;
	k = (size_t)(c - start);
	if (def && strlen(def) < k && !strncmp(start, def, strlen(def)))
		return xstrdup(def);
	return squash(xstrndup(start, k));
}

/* git's guess of -p from one name line: 0 when the name has no '/', else unknown (-1) */
static int
guessp(const char *s)
{
	char *name;
	int p = -1;

	if (devnull(s) || !(name = tradname(s, NULL, 0)))
		return -1;
	if (!strchr(name, '/'))
		p = 0;
	free(name);
	return p;
}

int
trad_start(const char *s)
{
	size_t n = linelen(s);

	if (strncmp(s, "--- ", 4) || !s[n])
		return 0;
	s += n + 1;
	n = linelen(s);
	if (strncmp(s, "+++ ", 4) || !s[n])
		return 0;
	return !strncmp(s + n + 1, "@@ -", 4);
}

int
trad_header(const char *s, struct tradp *tp, struct tradhdr *h)
{
	const char *first = s + 4, *second = s + linelen(s) + 1 + 4;

	memset(h, 0, sizeof *h);
	if (!tp->known) {
		int a = guessp(first), b = guessp(second);
		if (a < 0)
			a = b;
		if (a >= 0 && a == b) {
			tp->p = a;
			tp->known = 1;
		}
	}
	if (devnull(first)) {
		h->isnew = 1;
		h->name = tradname(second, NULL, tp->p);
	} else if (devnull(second)) {
		h->isdel = 1;
		h->name = tradname(first, NULL, tp->p);
	} else {
		char *fn = tradname(first, NULL, tp->p);
		h->name = tradname(second, fn, tp->p);
		free(fn);
		h->isnew = epoch(first);
		h->isdel = !h->isnew && epoch(second);
	}
	return h->name ? 0 : -1;
}
