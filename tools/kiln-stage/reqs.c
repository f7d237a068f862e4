/* build requirements and build backends of a source tree: pyproject.toml's
   [build-system] (a TOML subset: tables, keys, strings, arrays, comments), requirement
   files with their -r includes, and the lock of a folder of wheels.
   The shapes read are upstream's own: pytorch/pytorch pyproject.toml ([build-system]
   requires + build-backend) and requirements-build.txt; vllm-project/vllm
   requirements/build/{rocm,cuda,cpu}.txt, which start with "-r ../common.txt" and carry
   an "--extra-index-url" line (rocm.txt) that kiln never follows. */
#include "reqs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "hash.h"
#include "opt.h"
#include "os.h"
#include "schema.h"
#include "wheelname.h"
#include "wheelpath.h"
#include "zip.h"

/* --- pyproject.toml ----------------------------------------------------------------- */

struct tp {
	const char *p;
	int line;
};

/* skip blanks and a comment; with nl, newlines too */
static void
skipws(struct tp *t, int nl)
{
	for (;;) {
		if (*t->p == ' ' || *t->p == '\t' || *t->p == '\r') {
			t->p++;
		} else if (*t->p == '#') {
			t->p += strcspn(t->p, "\n");
		} else if (nl && *t->p == '\n') {
			t->p++;
			t->line++;
		} else {
			return;
		}
	}
}

/* append code point c to out as UTF-8 */
static void
pututf8(struct buf *out, unsigned long c)
{
	if (c < 0x80) {
		bufputc(out, (int)c);
	} else if (c < 0x800) {
		bufputc(out, (int)(0xc0 | c >> 6));
		bufputc(out, (int)(0x80 | (c & 0x3f)));
	} else if (c < 0x10000) {
		bufputc(out, (int)(0xe0 | c >> 12));
		bufputc(out, (int)(0x80 | (c >> 6 & 0x3f)));
		bufputc(out, (int)(0x80 | (c & 0x3f)));
	} else {
		bufputc(out, (int)(0xf0 | c >> 18));
		bufputc(out, (int)(0x80 | (c >> 12 & 0x3f)));
		bufputc(out, (int)(0x80 | (c >> 6 & 0x3f)));
		bufputc(out, (int)(0x80 | (c & 0x3f)));
	}
}

/* one escape of a basic string at t->p (just after the backslash) into out (when not
   NULL), as TOML 1.1 reads it: \b \t \n \f \r \e \" \\ \xHH \uHHHH \UHHHHHHHH, and in
   a triple-quoted string a backslash ending a line (the white space after it goes);
   0, or -2 for any other escape or a code point that is not a scalar value */
static int
tomlesc(struct tp *t, struct buf *out, int triple)
{
	static const char from[] = "btnfre\"\\", to[] = "\b\t\n\f\r\033\"\\";
	const char *k = strchr(from, *t->p);
	unsigned long c = 0;
	int n = *t->p == 'x' ? 2 : *t->p == 'u' ? 4 : *t->p == 'U' ? 8 : 0, i;

	if (triple && t->p[strspn(t->p, " \t\r")] == '\n') {
		for (; *t->p == ' ' || *t->p == '\t' || *t->p == '\r' || *t->p == '\n'; t->p++)
			t->line += *t->p == '\n';
		return 0;
	}
	if (*t->p && k) {
		if (out)
			bufputc(out, to[k - from]);
		t->p++;
		return 0;
	}
	if (!n)
		return -2;
	for (i = 1; i <= n; i++) {
		char h = t->p[i];
		if (!isdig((unsigned char)h) && ((h | 0x20) < 'a' || (h | 0x20) > 'f'))
			return -2;
		c = c << 4 | (unsigned long)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
	}
	if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
		return -2;
	if (out)
		pututf8(out, c);
	t->p += n + 1;
	return 0;
}

/* a TOML string at t->p ("...", '...', or their triple forms) into out (when not NULL);
   0, -1 when it does not end, -2 at an escape TOML does not have */
static int
tomlstr(struct tp *t, struct buf *out)
{
	char q = *t->p;
	int triple = t->p[1] == q && t->p[2] == q;

	t->p += triple ? 3 : 1;
	/* a newline right after the opening delimiter is not part of the string */
	if (triple && (*t->p == '\n' || (*t->p == '\r' && t->p[1] == '\n'))) {
		t->p += *t->p == '\r' ? 2 : 1;
		t->line++;
	}
	for (;;) {
		if (!*t->p || (!triple && *t->p == '\n'))
			return -1;
		if (*t->p == q && (!triple || (t->p[1] == q && t->p[2] == q))) {
			t->p += triple ? 3 : 1;
			return 0;
		}
		if (*t->p == '\n')
			t->line++;
		if (q == '"' && *t->p == '\\') {
			t->p++;
			if (tomlesc(t, out, triple) < 0)
				return -2;
			continue;
		}
		if (out)
			bufputc(out, *t->p);
		t->p++;
	}
}

/* skip one value (string, array, inline table or a bare word); 0 or -1 */
static int
skipvalue(struct tp *t)
{
	int depth = 0;

	for (;;) {
		skipws(t, depth > 0);
		if (!*t->p)
			return depth ? -1 : 0;
		if (*t->p == '"' || *t->p == '\'') {
			if (tomlstr(t, NULL) < 0)
				return -1;
		} else if (*t->p == '[' || *t->p == '{') {
			depth++;
			t->p++;
		} else if (*t->p == ']' || *t->p == '}') {
			if (--depth < 0)
				return -1;
			t->p++;
		} else if (*t->p == '\n') {
			return 0;
		} else {
			t->p++;
		}
		if (depth == 0 && (*t->p == '\n' || !*t->p || *t->p == '#'))
			return 0;
	}
}

/* an array of strings into l (and each one's line into lines, when not NULL) */
static int
strarray(struct tp *t, struct strv *l, struct strv *lines, char **err)
{
	struct buf s = {0};
	char *ln;
	int r;

	if (*t->p != '[') {
		*err = xasprintf("%d: expected an array of strings", t->line);
		return -1;
	}
	t->p++;
	for (;;) {
		skipws(t, 1);
		if (*t->p == ']') {
			t->p++;
			buffree(&s);
			return 0;
		}
		if (*t->p != '"' && *t->p != '\'') {
			*err = xasprintf("%d: expected a string in the array", t->line);
			buffree(&s);
			return -1;
		}
		bufreset(&s);
		bufputc(&s, 0);
		s.len = 0;
		if ((r = tomlstr(t, &s)) < 0) {
			*err = xasprintf(r == -2 ? "%d: an escape TOML does not have" : "%d: a string that does not end", t->line);
			buffree(&s);
			return -1;
		}
		if (s.len && memchr(s.s, 0, s.len)) {
			*err = xasprintf("%d: a string holding U+0000", t->line);
			buffree(&s);
			return -1;
		}
		bufputc(&s, 0);
		strv_add(l, s.s, 0);
		if (lines) {
			ln = xasprintf("pyproject.toml:%d", t->line);
			strv_add(lines, ln, 0);
			free(ln);
		}
		skipws(t, 1);
		if (*t->p == ',')
			t->p++;
		else if (*t->p != ']') {
			*err = xasprintf("%d: expected ',' or ']' in the array", t->line);
			buffree(&s);
			return -1;
		}
	}
}

/* a table header "[name]" or "[[name]]" at t->p: 1 if it is [build-system] */
static int
header(struct tp *t, char **err)
{
	const char *e = strchr(t->p, '\n');
	const char *a = t->p + 1, *b;
	size_t n;

	if (!e)
		e = t->p + strlen(t->p);
	b = memchr(a, ']', (size_t)(e - a));
	if (!b) {
		*err = xasprintf("%d: a table header without ']'", t->line);
		return -1;
	}
	t->p = e;
	while (*a == ' ' || *a == '\t')
		a++;
	n = (size_t)(b - a);
	while (n && (a[n - 1] == ' ' || a[n - 1] == '\t'))
		n--;
	return n == 12 && !strncmp(a, "build-system", 12);
}

/* one "key = value" line inside [build-system] (in) or elsewhere */
static int
keyvalue(struct tp *t, int in, struct buildsys *bs, char **err)
{
	struct buf k = {0};
	struct strv dummy = {0};
	int r = 0;

	if (*t->p == '"' || *t->p == '\'') {
		if (tomlstr(t, &k) < 0)
			r = -1;
	} else {
		while (isalnumc((unsigned char)*t->p) || *t->p == '_' || *t->p == '-' || *t->p == '.')
			bufputc(&k, *t->p++);
	}
	bufputc(&k, 0);
	skipws(t, 0);
	if (r < 0 || k.len == 1 || *t->p != '=') {
		*err = xasprintf("%d: expected KEY = VALUE", t->line);
		buffree(&k);
		return -1;
	}
	t->p++;
	skipws(t, 0);
	if (in && !strcmp(k.s, "requires")) {
		r = strarray(t, &bs->requires, &bs->lines, err);
	} else if (in && !strcmp(k.s, "build-backend")) {
		struct buf v = {0};
		if (*t->p != '"' && *t->p != '\'') {
			*err = xasprintf("%d: build-backend is not a string", t->line);
			r = -1;
		} else if ((r = tomlstr(t, &v)) < 0) {
			*err = xasprintf(r == -2 ? "%d: an escape TOML does not have" : "%d: a string that does not end", t->line);
			r = -1;
		} else {
			bufputc(&v, 0);
			free(bs->backend);
			bs->backend = bufdetach(&v);
		}
		buffree(&v);
	} else if (in && !strcmp(k.s, "backend-path")) {
		bs->backendpath = 1;
		r = strarray(t, &dummy, NULL, err);
		strv_free(&dummy);
	} else if (skipvalue(t) < 0) {
		*err = xasprintf("%d: a value that does not end", t->line);
		r = -1;
	}
	buffree(&k);
	return r;
}

int
buildsys_parse(const char *text, struct buildsys *bs, char **err)
{
	struct tp t = {text, 1};
	int in = 0, h;

	memset(bs, 0, sizeof *bs);
	bs->backend = xstrdup("");
	for (;;) {
		skipws(&t, 1);
		if (!*t.p)
			return 0;
		if (*t.p == '[') {
			if ((h = header(&t, err)) < 0)
				return -1;
			in = h;
			bs->has |= h;
			continue;
		}
		if (keyvalue(&t, in, bs, err) < 0)
			return -1;
		skipws(&t, 0);
		if (*t.p && *t.p != '\n') {
			*err = xasprintf("%d: unexpected text after the value", t.line);
			return -1;
		}
	}
}

void
buildsys_free(struct buildsys *bs)
{
	free(bs->backend);
	strv_free(&bs->requires);
	strv_free(&bs->lines);
	memset(bs, 0, sizeof *bs);
}

/* read dir/name (a regular file of at most 4 MiB); 1 read, 0 absent, -1 with *err */
static int
treefile(const char *dir, const char *name, struct buf *b, char **err)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct stat st;
	int r = 1;

	bufreset(b);
	if (lstat(p, &st) < 0) {
		r = 0;
	} else if (os_readreg(p, 0, b, 4u << 20, err) < 0) {
		r = -1;
	} else if (b->len && memchr(b->s, 0, b->len)) {
		*err = xasprintf("%s: holds a NUL byte; it is not a text file", name);
		r = -1;
	} else {
		bufputc(b, 0);
		b->len--;
	}
	free(p);
	return r;
}

/* a backend a frontend can import: a dotted module, optionally ":object" */
static int
backendok(const char *b)
{
	const char *c = strchr(b, ':');
	char *m = c ? xstrndup(b, (size_t)(c - b)) : xstrdup(b);
	int ok = *m && isimport(m) && (!c || isimport(c + 1));

	free(m);
	return ok;
}

/* the message for a backend no frontend can import, its text escaped (fresh) */
static char *
badbackend(const char *backend)
{
	struct buf e = {0};
	char *m;

	wheelpath_escape(&e, backend);
	bufputc(&e, 0);
	m = xasprintf("pyproject.toml: build-backend = \"%s\" is not a module a frontend can import "
	              "(module.path or module.path:object)", e.s);
	buffree(&e);
	return m;
}

char *
tree_backend(const char *dir, char **backend, char **err)
{
	struct buf b = {0};
	struct buildsys bs;
	char *e = NULL, *p, *word = NULL;
	int r, setup;

	*backend = xstrdup("");
	p = xasprintf("%s/setup.py", dir);
	setup = os_isfile(p);
	free(p);
	if ((r = treefile(dir, "pyproject.toml", &b, err)) < 0)
		goto out;
	if (r == 0 || b.len == 0) {
		if (setup)
			word = xstrdup("setup");
		else
			*err = xstrdup("no setup.py and no pyproject.toml: kiln cannot tell how it builds");
		goto out;
	}
	if (buildsys_parse(b.s, &bs, &e) < 0) {
		*err = xasprintf("pyproject.toml:%s", e);
		free(e);
		buildsys_free(&bs);
		goto out;
	}
	free(*backend);
	*backend = xstrdup(bs.backend);
	if (!*bs.backend && !setup)
		*err = xstrdup("pyproject.toml: [build-system] names no build-backend and there is no "
		               "setup.py: kiln cannot tell how it builds");
	else if (*bs.backend && !backendok(bs.backend))
		*err = badbackend(bs.backend);
	else if (setup && (!*bs.backend || startswith(bs.backend, "setuptools.build_meta")))
		word = xstrdup("setup");
	else
		word = xstrdup("build");
	buildsys_free(&bs);
out:
	buffree(&b);
	return word;
}

/* --- requirement files ------------------------------------------------------------- */

/* the code point of the UTF-8 sequence at s (n bytes left) and its length in *len, or
   -1 (*len 1) where it is not valid UTF-8: a stray continuation, a truncated or overlong
   sequence, a surrogate, or a value past U+10FFFF */
static long
utf8at(const unsigned char *s, size_t n, size_t *len)
{
	size_t k = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : s[0] >= 0xe0 && s[0] < 0xf0 ? 3 :
	           s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : 0, i;
	long c = k == 1 ? s[0] : k == 2 ? s[0] & 0x1f : k == 3 ? s[0] & 0x0f : s[0] & 0x07;

	*len = 1;
	if (!k || k > n)
		return -1;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((k == 3 && c < 0x800) || (k == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c < 0xe000))
		return -1;
	*len = k;
	return c;
}

/* the first character of s (n bytes) that pip or a terminal takes for a line break or a
   control: what Python's str.splitlines() splits on (pip reads a requirement file with
   it: \n \v \f \r, U+001C-U+001E, U+0085, U+2028, U+2029), any other C0 control but a
   tab (when tabok), DEL, the C1 controls U+0080-U+009F, and any byte that is not UTF-8
   (read as latin-1, byte 0x85 is NEL); NULL when there is none, else a fresh
   description */
static char *
linebreak(const char *s, size_t n, int tabok)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, len;
	long c;

	for (i = 0; i < n; i += len) {
		if ((c = utf8at(u + i, n - i, &len)) < 0)
			return xasprintf("byte 0x%02x, which is not UTF-8", u[i]);
		if ((c >= 0x0a && c <= 0x0d) || (c >= 0x1c && c <= 0x1e) || c == 0x85 || c == 0x2028 ||
		    c == 0x2029)
			return xasprintf("a line break (U+%04lX)", (unsigned long)c);
		if ((c < 0x20 && !(c == '\t' && tabok)) || (c >= 0x7f && c < 0xa0))
			return xasprintf("a control character (U+%04lX)", (unsigned long)c);
	}
	return NULL;
}

/* *err for the text s (n bytes) at from holding what (a fresh linebreak() answer, freed):
   one line, s shown escaped and cut at 120 bytes */
static void
brokenline(const char *from, const char *s, size_t n, char *what, char **err)
{
	char *cut = xstrndup(s, n > 120 ? 120 : n);
	struct buf e = {0};

	wheelpath_escape(&e, cut);
	bufputc(&e, 0);
	*err = xasprintf("%s: '%s'%s holds %s: pip would read what follows as a line of its own "
	                 "(an option such as --find-links); a requirement is one line of printable text",
	                 from, e.s, n > 120 ? "..." : "", what);
	free(what);
	free(cut);
	buffree(&e);
}

/* a set of strings (open addressing, FNV-1a): each insertion and lookup takes time
   linear in the string, whatever the set holds */
struct reqseen {
	char **v;
	size_t cap, n;
};

/* the slot of s in st: where it is, or the empty one where it goes */
static size_t
seenslot(const struct reqseen *st, const char *s)
{
	const unsigned char *p;
	size_t i, h = 2166136261u;

	for (p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 16777619u;
	for (i = h & (st->cap - 1); st->v[i] && strcmp(st->v[i], s); i = (i + 1) & (st->cap - 1))
		;
	return i;
}

/* add s to the set (created at first use); 1 when it was there already, else 0 */
static int
seenadd(struct reqseen **sp, const char *s)
{
	struct reqseen *st = *sp ? *sp : (*sp = xcalloc(1, sizeof **sp));
	char **old = st->v;
	size_t i, oc = st->cap;

	if (2 * (st->n + 1) > st->cap) {
		st->cap = oc ? 2 * oc : 64;
		st->v = xcalloc(st->cap, sizeof *st->v);
		for (i = 0; i < oc; i++)
			if (old[i])
				st->v[seenslot(st, old[i])] = old[i];
		free(old);
	}
	i = seenslot(st, s);
	if (st->v[i])
		return 1;
	st->v[i] = xstrdup(s);
	st->n++;
	return 0;
}

/* is s in the set */
static int
seenhas(const struct reqseen *st, const char *s)
{
	return st && st->v[seenslot(st, s)];
}

static void
seenfree(struct reqseen *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->cap; i++)
		free(st->v[i]);
	free(st->v);
	free(st);
}

static void
addreq(struct reqset *rs, const char *spec, const char *name, const char *from)
{
	if (seenadd(&rs->seen, spec))
		return;
	rs->v = xgrow(rs->v, &rs->cap, rs->n + 1, sizeof *rs->v);
	rs->v[rs->n].spec = xstrdup(spec);
	rs->v[rs->n].name = xstrdup(name);
	rs->v[rs->n].from = xstrdup(from);
	rs->n++;
}

static void
skip(struct reqset *rs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
skip(struct reqset *rs, const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;

	va_start(ap, fmt);
	bufvprintf(&b, fmt, ap);
	va_end(ap);
	strv_add(&rs->skipped, b.s, 0);
	buffree(&b);
}

/* one requirement (as written, comments gone) asked by from: checked, its name
   canonical; excluded names are noted, not added */
static int
onereq(struct reqset *rs, const struct reqopts *o, const char *spec, const char *from, char **err)
{
	struct buf name = {0};
	size_t n = 0;
	char *what;

	if ((what = linebreak(spec, strlen(spec), 0))) {
		brokenline(from, spec, strlen(spec), what, err);
		return -1;
	}
	while (isalnumc((unsigned char)spec[n]) || (spec[n] && strchr("._-", spec[n])))
		n++;
	if (n == 0 || !isalnumc((unsigned char)spec[n - 1])) {
		*err = xasprintf("%s: '%s' is not a requirement (NAME[extras] SPECIFIER)", from, spec);
		return -1;
	}
	if (strstr(spec, " @ ") || strstr(spec, "://")) {
		*err = xasprintf("%s: '%s' names a URL; kiln installs build requirements only from "
		                 "--index-url or --wheelhouse", from, spec);
		return -1;
	}
	canonname(&name, spec, n);
	if (o->exclude && strv_has(o->exclude, name.s))
		skip(rs, "%s: %s: kiln builds %s itself", from, spec, name.s);
	else
		addreq(rs, spec, name.s, from);
	buffree(&name);
	return 0;
}

static char *relnorm(const char *rel);
/* a read of a tree's requirement files in progress */
struct reqread {
	struct reqset *rs;          /* what was read so far */
	const struct reqopts *o;
	const char *dir;            /* the tree */
	int depth;                  /* how deep in -r includes the file being read is */
};
static int readreqs(struct reqread *q, const char *rel, char **err);

/* an option line of a requirement file: -r/-c FILE are read (constraints are not
   requirements: noted), index options are never followed */
static int
optline(struct reqread *q, const char *rel, const char *from, char *l, char **err)
{
	char *arg = l + strcspn(l, " \t=");
	char *inc, *norm;
	const char *slash;  /* strrchr of a const string is const (C23, glibc 2.43) */
	int r;

	if (*arg)
		*arg++ = 0;
	arg += strspn(arg, " \t=");
	if (!strcmp(l, "-r") || !strcmp(l, "--requirement")) {
		if (!*arg || *arg == '/' || strstr(arg, "://")) {
			*err = xasprintf("%s: -r %s: kiln reads only files inside the tree", from, arg);
			return -1;
		}
		slash = strrchr(rel, '/');
		inc = slash ? xasprintf("%.*s/%s", (int)(slash - rel), rel, arg) : xstrdup(arg);
		if (!(norm = relnorm(inc))) {
			free(inc);
			*err = xasprintf("%s: -r %s: leaves the source tree", from, arg);
			return -1;
		}
		free(norm);
		q->depth++;
		r = readreqs(q, inc, err);
		q->depth--;
		if (r == 0) {
			free(inc);
			*err = xasprintf("%s: -r %s: no such file in the tree", from, arg);
			return -1;
		}
		free(inc);
		return r < 0 ? -1 : 0;
	}
	if (!strcmp(l, "--extra-index-url") || !strcmp(l, "--index-url") || !strcmp(l, "-i") ||
	    !strcmp(l, "-f") || !strcmp(l, "--find-links") || !strcmp(l, "--trusted-host"))
		skip(q->rs, "%s: %s %s: not followed (kiln installs only from --index-url or --wheelhouse, "
		     "never an extra index)", from, l, arg);
	else
		skip(q->rs, "%s: %s%s%s: option not used by kiln", from, l, *arg ? " " : "", arg);
	return 0;
}

/* normalise a lexical relative path (a/b/../c -> a/c); NULL when it leaves the tree */
static char *
relnorm(const char *rel)
{
	char *cp = xstrdup(rel), *parts[64], *tok, *sp;
	struct buf b = {0};
	size_t n = 0, i;

	for (tok = strtok_r(cp, "/", &sp); tok; tok = strtok_r(NULL, "/", &sp)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			if (n == 0) {
				free(cp);
				return NULL;
			}
			n--;
		} else if (n < 64) {
			parts[n++] = tok;
		}
	}
	for (i = 0; i < n; i++)
		bufprintf(&b, "%s%s", i ? "/" : "", parts[i]);
	free(cp);
	return b.s ? bufdetach(&b) : NULL;
}

/* line ln of the requirement file rel (its '\n' gone): -1 with *err when it holds a line
   break or control, a CR ending it (CRLF) and tabs aside */
static int
rawline(const char *rel, int ln, const char *l, char **err)
{
	size_t n = strlen(l);
	char *what, *from;

	if (n && l[n - 1] == '\r')
		n--;
	if (!(what = linebreak(l, n, 1)))
		return 0;
	from = xasprintf("%s:%d", rel, ln);
	brokenline(from, l, n, what, err);
	free(from);
	return -1;
}

/* pip decodes a requirement file without a byte order mark with the encoding a PEP 263
   declaration names in its first two lines, "#...coding[:=] *NAME" (pip 23's
   utils/encoding.py auto_decode and ENCODING_RE): in UTF-7 "six+AAw-" is "six\f". Line
   ln's l (its '\n' gone): -1 with *err when it declares anything but UTF-8 or ASCII */
static int
codingline(const char *rel, int ln, const char *l, char **err)
{
	static const char *const ok[] = {"utf-8", "utf8", "utf_8", "u8", "utf-8-sig", "utf_8_sig",
	                                 "ascii", "us-ascii", "us_ascii", "646"};
	const char *c = l;
	size_t i, n;

	if (*l != '#')
		return 0;
	while ((c = strstr(c, "coding")) && c[6] != ':' && c[6] != '=')
		c += 6;
	if (!c)
		return 0;
	c += 7;
	c += strspn(c, " \t\f\v\r");
	for (n = 0; isalnumc((unsigned char)c[n]) || (c[n] && strchr("-_.", c[n])); n++)
		;
	if (!n)
		return 0;
	for (i = 0; i < sizeof ok / sizeof *ok; i++)
		if (strlen(ok[i]) == n && !strncasecmp(c, ok[i], n))
			return 0;
	*err = xasprintf("%s:%d: declares the encoding '%.*s' (PEP 263), which pip would decode the file "
	                 "with; a requirement file is read as UTF-8 only", rel, ln, (int)(n > 40 ? 40 : n), c);
	return -1;
}

/* the requirement file dir/rel (and its includes); 1 read, 0 absent, -1 with *err */
static int
readreqs(struct reqread *q, const char *rel, char **err)
{
	struct buf b = {0};
	char *norm = relnorm(rel), *cur, *l, *e, *from;
	int r, ln = 0, bom;

	if (!norm) {
		*err = xasprintf("%s: leaves the source tree", rel);
		return -1;
	}
	if (q->depth > 8) {
		*err = xasprintf("%s: -r includes nest deeper than 8 (a loop?)", norm);
		free(norm);
		return -1;
	}
	/* each file is read once, however often it is included: time stays linear */
	if (seenhas(q->rs->files, norm)) {
		free(norm);
		return 1;
	}
	if ((r = treefile(q->dir, norm, &b, err)) <= 0) {
		free(norm);
		buffree(&b);
		return r;
	}
	seenadd(&q->rs->files, norm);
	/* a UTF-8 byte order mark, which pip skips (and then reads the file as UTF-8) */
	bom = b.s && startswith(b.s, "\xef\xbb\xbf");
	cur = bom ? b.s + 3 : b.s;
	for (; cur && *cur; cur = e) {
		ln++;
		l = cur;
		if ((e = strchr(cur, '\n')))
			*e++ = 0;
		/* the whole line, comment too: pip splits lines before it drops comments */
		if ((r = rawline(norm, ln, l, err)) < 0 || (!bom && ln <= 2 && (r = codingline(norm, ln, l, err)) < 0))
			break;
		/* a comment starts a line or follows white space (pip's rule) */
		for (char *h = l; (h = strchr(h, '#')); h++)
			if (h == l || h[-1] == ' ' || h[-1] == '\t') {
				*h = 0;
				break;
			}
		l += strspn(l, " \t");
		strrtrim(l, " \t\r\\");
		if (!*l)
			continue;
		from = xasprintf("%s:%d", norm, ln);
		r = *l == '-' ? optline(q, norm, from, l, err) : onereq(q->rs, q->o, l, from, err);
		free(from);
		if (r < 0)
			break;
	}
	free(norm);
	buffree(&b);
	return r < 0 ? -1 : 1;
}

/* pyproject.toml's [build-system] requires */
static int
pyprojreqs(struct reqset *rs, const struct reqopts *o, const char *dir, char **err)
{
	struct buf b = {0};
	struct buildsys bs;
	char *e = NULL;
	size_t i;
	int r;

	if ((r = treefile(dir, "pyproject.toml", &b, err)) <= 0) {
		buffree(&b);
		return r;
	}
	if (buildsys_parse(b.s, &bs, &e) < 0) {
		*err = xasprintf("pyproject.toml:%s", e);
		free(e);
		buildsys_free(&bs);
		buffree(&b);
		return -1;
	}
	for (i = 0, r = 0; i < bs.requires.n && r == 0; i++)
		r = onereq(rs, o, bs.requires.v[i], bs.lines.v[i], err);
	buildsys_free(&bs);
	buffree(&b);
	return r;
}

/* did pyproject.toml's [build-system] requires list anything */
static int
haspyreqs(const struct reqset *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (startswith(rs->v[i].from, "pyproject.toml:"))
			return 1;
	return 0;
}

int
reqs_collect(const char *dir, const struct reqopts *o, struct reqset *rs, char **err)
{
	struct reqread q = {.rs = rs, .o = o, .dir = dir};
	char *backend = NULL, *how, *e = NULL, *f;
	int r;

	memset(rs, 0, sizeof *rs);
	if (pyprojreqs(rs, o, dir, err) < 0 || readreqs(&q, "requirements-build.txt", err) < 0)
		return -1;
	/* vLLM: requirements/build/FLAVOUR.txt (2026), requirements/build.txt before */
	f = xasprintf("requirements/build/%s.txt", o->flavour && *o->flavour ? o->flavour : "cpu");
	r = readreqs(&q, f, err);
	free(f);
	if (r == 0)
		r = readreqs(&q, "requirements/build.txt", err);
	if (r < 0 || (o->runtime && readreqs(&q, "requirements.txt", err) < 0))
		return -1;
	if (o->frontend) {
		how = tree_backend(dir, &backend, &e);
		f = xasprintf("%s/pyproject.toml", dir);
		if (!how && os_isfile(f)) {
			/* a backend no frontend can run: stop before anything is fetched */
			*err = e;
			free(f);
			free(backend);
			return -1;
		}
		free(f);
		if (how && !strcmp(how, "build"))
			addreq(rs, "build", "build", "kiln (python -m build, the PEP 517 frontend)");
		/* PEP 518: a pyproject.toml without [build-system] requires (vision's, audio's:
		   tool settings only) builds with setuptools and wheel; a tree without any
		   pyproject.toml declares nothing (its setup.py runs with what the target has) */
		f = xasprintf("%s/pyproject.toml", dir);
		if (how && !strcmp(how, "setup") && os_isfile(f) && !haspyreqs(rs)) {
			addreq(rs, "setuptools>=40.8.0", "setuptools", "kiln (PEP 518's default: pyproject.toml has no [build-system] requires)");
			addreq(rs, "wheel", "wheel", "kiln (PEP 518's default: pyproject.toml has no [build-system] requires)");
		}
		free(f);
		free(how);
		free(backend);
		free(e);
	}
	return 0;
}

void
reqs_free(struct reqset *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++) {
		free(rs->v[i].spec);
		free(rs->v[i].name);
		free(rs->v[i].from);
	}
	free(rs->v);
	seenfree(rs->seen);
	seenfree(rs->files);
	strv_free(&rs->skipped);
	memset(rs, 0, sizeof *rs);
}

/* --- the lock of a folder of wheels --------------------------------------------------- */

struct lockent {
	char *name, *line, *file;
};

static int
lockcmp(const void *a, const void *b)
{
	return strcmp(((const struct lockent *)a)->name, ((const struct lockent *)b)->name);
}

/* the wheel at path is one pip can install without writing outside its folders: a zip
   whose every offset, size and name zip_open checks (no absolute path, no "..", no two
   members pip would install to one path); 0, or -2 with *err naming the member */
static int
wheelsafe(const char *path, char **err)
{
	struct zipin z;
	char *e = NULL;

	if (zip_open(&z, path, &e) != 0) {
		*err = xasprintf("%s: %s; a wheel pip would install part of before it fails (or "
		                 "write outside the environment): refused before anything is installed",
		                 path, e);
		free(e);
		return -2;
	}
	zip_close(&z);
	return 0;
}

int
wheels_lock(const char *dir, struct buf *out, char **err)
{
	struct strv names = {0};
	struct lockent *v = NULL;
	struct wheelname w;
	struct buf h = {0};
	unsigned char d[32];
	const char *why;
	size_t i, n = 0, cap = 0;
	char *p;
	int r = 0;

	if (os_listdir(dir, &names) < 0) {
		*err = xasprintf("%s: cannot list the folder", dir);
		return -1;
	}
	for (i = 0; i < names.n; i++) {
		if (!endswith(names.v[i], ".whl"))
			continue;
		if (wheelname_parse(&w, names.v[i], 0, &why) < 0) {
			*err = xasprintf("%s/%s: not a wheel name (%s)", dir, names.v[i], why);
			r = -1;
			break;
		}
		p = xasprintf("%s/%s", dir, names.v[i]);
		if ((r = wheelsafe(p, err)) < 0 || sha256_file(p, d, NULL) < 0) {
			if (r == 0)
				*err = xasprintf("%s: cannot read", p);
			r = r < 0 ? r : -1;
			free(p);
			wheelname_free(&w);
			break;
		}
		free(p);
		bufreset(&h);
		hexenc(&h, d, 32);
		v = xgrow(v, &cap, n + 1, sizeof *v);
		v[n].name = xstrdup(w.name);
		v[n].file = xstrdup(names.v[i]);
		v[n++].line = xasprintf("%s==%s --hash=sha256:%s", w.name, w.verstr, h.s);
		wheelname_free(&w);
	}
	if (n)
		qsort(v, n, sizeof *v, lockcmp);
	for (i = 0; r == 0 && i < n; i++) {
		if (i && !strcmp(v[i].name, v[i - 1].name)) {
			*err = xasprintf("%s: two files for %s: %s and %s (keep one)", dir, v[i].name,
			                 v[i - 1].file, v[i].file);
			r = -1;
			break;
		}
		bufprintf(out, "%s\n", v[i].line);
	}
	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].line);
		free(v[i].file);
	}
	free(v);
	buffree(&h);
	strv_free(&names);
	return r;
}

/* --- the verbs ------------------------------------------------------------------------ */

static void
requsage(const char *error)
{
	opt_usage(error,
	          "usage: kiln-stage reqs [--flavour=rocm|cuda|cpu] [--runtime] [--exclude=NAME,...]\n"
	          "                       [--frontend] TREE\n"
	          "       kiln-stage backend [--wheels=DIR] TREE\n"
	          "       kiln-stage lock DIR\n");
}

/* kiln-stage reqs TREE: "REQUIREMENT<TAB>FILE:LINE" for each build requirement the tree
   declares; what was left out (kiln's own components, index options) on stderr */
int
reqs_main(int argc, char **argv)
{
	struct reqopts o = {0};
	struct strv ex = {0};
	struct reqset rs;
	const char *tree = NULL, *v;
	char *err = NULL, *cp, *tok, *sp;
	struct buf name = {0};
	size_t i;
	int a;

	for (a = 1; a < argc; a++) {
		if ((v = startswith(argv[a], "--flavour=") ? argv[a] + 10 : NULL)) {
			o.flavour = v;
		} else if (!strcmp(argv[a], "--runtime")) {
			o.runtime = 1;
		} else if (!strcmp(argv[a], "--frontend")) {
			o.frontend = 1;
		} else if (startswith(argv[a], "--exclude=")) {
			cp = xstrdup(argv[a] + 10);
			for (tok = strtok_r(cp, ", ", &sp); tok; tok = strtok_r(NULL, ", ", &sp)) {
				bufreset(&name);
				canonname(&name, tok, strlen(tok));
				strv_add(&ex, name.s, 1);
			}
			free(cp);
		} else if (argv[a][0] == '-' || tree) {
			requsage(xasprintf("reqs: unexpected argument '%s'", argv[a]));
		} else {
			tree = argv[a];
		}
	}
	if (!tree)
		requsage("reqs: give the source tree");
	if (o.flavour && strcmp(o.flavour, "rocm") && strcmp(o.flavour, "cuda") && strcmp(o.flavour, "cpu"))
		requsage("reqs: --flavour is rocm, cuda or cpu");
	o.exclude = &ex;
	if (!os_isdir(tree))
		dien(EXIT_USAGE, "%s: not a folder", tree);
	if (reqs_collect(tree, &o, &rs, &err) < 0)
		dien(EXIT_USAGE, "%s: %s", tree, err);
	for (i = 0; i < rs.skipped.n; i++)
		warn("note: %s", rs.skipped.v[i]);
	for (i = 0; i < rs.n; i++)
		printf("%s\t%s\n", rs.v[i].spec, rs.v[i].from);
	reqs_free(&rs);
	strv_free(&ex);
	buffree(&name);
	return EXIT_OK;
}

/* does the wheel at path hold the top-level module mod (MOD/... or MOD.py)? 1, 0, or -1
   with *err */
static int
wheel_holds(const char *path, const char *mod, char **err)
{
	struct zipin z;
	char *e = NULL;
	size_t i, n = strlen(mod);
	int r = 0;

	if (zip_open(&z, path, &e) != 0) {
		*err = xasprintf("%s: %s", path, e);
		free(e);
		return -1;
	}
	for (i = 0; i < z.n && !r; i++) {
		const char *m = z.e[i].name;
		r = !strncmp(m, mod, n) && (m[n] == '/' || !strcmp(m + n, ".py"));
	}
	zip_close(&z);
	return r;
}

int
wheels_provide(const char *dir, const char *mod, char **err)
{
	struct strv names = {0};
	size_t i;
	char *p;
	int r = 0;

	if (os_listdir(dir, &names) < 0) {
		*err = xasprintf("%s: cannot list the folder", dir);
		return -1;
	}
	for (i = 0; i < names.n && r == 0; i++) {
		if (!endswith(names.v[i], ".whl"))
			continue;
		p = xasprintf("%s/%s", dir, names.v[i]);
		r = wheel_holds(p, mod, err);
		free(p);
	}
	strv_free(&names);
	return r;
}

/* backend --wheels=DIR: the backend's top-level module must be in one of DIR's wheels */
static void
backend_provided(const char *tree, const char *backend, const char *dir)
{
	char *mod = xstrndup(backend, strcspn(backend, ".:")), *err = NULL;
	int r = wheels_provide(dir, mod, &err);

	if (r < 0)
		dien(EXIT_USAGE, "%s", err);
	if (r == 0)
		dien(EXIT_PROBLEM, "%s: pyproject.toml: build-backend = \"%s\": no build requirement "
		     "provides module %s (no wheel in %s holds it); [build-system] requires must list "
		     "the project that does", tree, backend, mod, dir);
	free(mod);
}

/* kiln-stage backend [--wheels=DIR] TREE: "setup" or "build BACKEND" */
int
backend_main(int argc, char **argv)
{
	char *backend = NULL, *err = NULL, *how;
	const char *wheels = NULL, *tree = NULL;
	int a;

	for (a = 1; a < argc; a++) {
		if (startswith(argv[a], "--wheels="))
			wheels = argv[a] + 9;
		else if (argv[a][0] == '-' || tree)
			requsage(xasprintf("backend: unexpected argument '%s'", argv[a]));
		else
			tree = argv[a];
	}
	if (!tree)
		requsage("backend: give the source tree");
	if (!(how = tree_backend(tree, &backend, &err)))
		dien(EXIT_USAGE, "%s: %s", tree, err);
	if (wheels && !strcmp(how, "build"))
		backend_provided(tree, backend, wheels);
	printf("%s%s%s\n", how, *backend ? " " : "", backend);
	free(how);
	free(backend);
	return EXIT_OK;
}

/* kiln-stage lock DIR: the lock lines of its wheels (one file per project) */
int
lock_main(int argc, char **argv)
{
	struct buf b = {0};
	char *err = NULL;
	int r;

	if (argc != 2 || argv[1][0] == '-')
		requsage("lock: give a folder of wheels");
	if ((r = wheels_lock(argv[1], &b, &err)) < 0)
		dien(r == -2 ? EXIT_USAGE : EXIT_PROBLEM, "%s", err);
	fwrite(b.s ? b.s : "", 1, b.len, stdout);
	buffree(&b);
	return EXIT_OK;
}
