/* splitting a patch into per-repository sections: paths (quoted or not) are read as git
   writes them, submodule prefixes are removed, gitlink ("Subproject commit") sections are
   taken out as submodule moves, and every section is given in the form libgit2 parses */
#include "srcpin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
patchpath_ok(const char *p)
{
	const char *c = p;

	if (!p || !*p || *p == '/' || strchr(p, '\\'))
		return 0;
	while (*c) {
		size_t n = strcspn(c, "/");
		if ((n == 2 && strncmp(c, "..", 2) == 0) || (n == 1 && *c == '.') || n == 0 ||
		    (n == 4 && strncasecmp(c, ".git", 4) == 0))
			return 0;
		c += n;
		if (*c == '/')
			c++;
	}
	return 1;
}

void
linkmoves_free(struct linkmoves *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	memset(m, 0, sizeof *m);
}

/* true if the n-byte line p starts with s */
static int
linestarts(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);

	return n >= k && memcmp(p, s, k) == 0;
}

char *
cunquote(const char *s, const char *end, const char **next)
{
	struct buf b = {0};

	for (s++; s < end && *s != '"'; s++) {
		int c = (unsigned char)*s;
		if (c == '\\') {
			if (++s >= end)
				break;
			switch (*s) {
			case 'a': c = '\a'; break;
			case 'b': c = '\b'; break;
			case 't': c = '\t'; break;
			case 'n': c = '\n'; break;
			case 'v': c = '\v'; break;
			case 'f': c = '\f'; break;
			case 'r': c = '\r'; break;
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			default:
				if (*s < '0' || *s > '3' || s + 2 >= end || s[1] < '0' || s[1] > '7' ||
				    s[2] < '0' || s[2] > '7')
					goto bad;
				c = (s[0] - '0') * 64 + (s[1] - '0') * 8 + (s[2] - '0');
				s += 2;
			}
		}
		if (c == 0)
			goto bad;
		bufputc(&b, c);
	}
	if (s >= end)
		goto bad;
	*next = s + 1;
	bufputc(&b, 0);
	b.len--;
	return bufdetach(&b);
bad:
	buffree(&b);
	return NULL;
}

/* append lead and path p as git writes them: in quotes with C escapes when they hold a
   control character, a byte above 0x7f, a quote or a backslash; also (unlike git) when
   they hold a space, which libgit2 1.5.1 cannot split unquoted in every header */
static void
putpath(struct buf *b, const char *lead, const char *p)
{
	const unsigned char *c;
	int q = 0;

	for (c = (const unsigned char *)p; *c && !q; c++)
		q = *c <= 0x20 || *c >= 0x7f || *c == '"' || *c == '\\';
	for (c = (const unsigned char *)lead; *c && !q; c++)
		q = *c < 0x20 || *c >= 0x7f || *c == '"' || *c == '\\';
	if (!q) {
		bufprintf(b, "%s%s", lead, p);
		return;
	}
	bufputc(b, '"');
	for (int pass = 0; pass < 2; pass++)
		for (c = (const unsigned char *)(pass ? p : lead); *c; c++) {
			if (*c == '"' || *c == '\\')
				bufprintf(b, "\\%c", *c);
			else if (*c == '\t')
				bufputs(b, "\\t");
			else if (*c == '\n')
				bufputs(b, "\\n");
			else if (*c < 0x20 || *c >= 0x7f)
				bufprintf(b, "\\%03o", *c);
			else
				bufputc(b, *c);
		}
	bufputc(b, '"');
}

/* the path without its a/ or b/ (a fresh copy) */
static char *
unprefix(char *p)
{
	char *r;

	if ((p[0] == 'a' || p[0] == 'b') && p[1] == '/') {
		r = xstrdup(p + 2);
		free(p);
		return r;
	}
	return p;
}

/* Read the two paths of a "diff --git " line (s..end, without the line end), a/ and b/
   removed. Unquoted names with spaces are split where both halves name the same file
   (git writes a rename's real names again on its rename lines). Returns 0 or -1. */
static int
gitpaths(const char *s, const char *end, char **pa, char **pb)
{
	const char *nx;
	size_t n = (size_t)(end - s);

	*pa = *pb = NULL;
	if (*s == '"') {
		if (!(*pa = cunquote(s, end, &nx)) || nx >= end || *nx != ' ')
			goto bad;
		s = nx + 1;
		*pb = *s == '"' ? cunquote(s, end, &nx) : xstrndup(s, (size_t)(end - s));
		if (!*pb || (*s == '"' && nx != end))
			goto bad;
	} else {
		const char *q = NULL, *sp = NULL;
		for (const char *c = s; c + 1 < end; c++)
			if (c[0] == ' ' && c[1] == '"') {
				q = c;
				break;
			}
		if (q) {
			*pa = xstrndup(s, (size_t)(q - s));
			if (!(*pb = cunquote(q + 1, end, &nx)) || nx != end)
				goto bad;
		} else {
			/* "a/X b/X": the middle space when both halves agree, else the first " b/" */
			if (n % 2 == 1 && n >= 5 && s[n / 2] == ' ' && memcmp(s + 1, s + n / 2 + 2, n / 2 - 1) == 0)
				sp = s + n / 2;
			for (const char *c = s; !sp && c + 3 <= end; c++)
				if (c[0] == ' ' && c[1] == 'b' && c[2] == '/')
					sp = c;
			if (!sp)
				goto bad;
			*pa = xstrndup(s, (size_t)(sp - s));
			*pb = xstrndup(sp + 1, (size_t)(end - sp - 1));
		}
	}
	*pa = unprefix(*pa);
	*pb = unprefix(*pb);
	return 0;
bad:
	free(*pa);
	free(*pb);
	*pa = *pb = NULL;
	return -1;
}

/* the index of the repository holding path: longest matching prefix in sp->subs, or
   sp->nsub */
static size_t
route(const char *path, const struct splitspec *sp)
{
	size_t best = sp->nsub, bestn = 0;

	for (size_t i = 0; i < sp->nsub; i++) {
		size_t n = strlen(sp->subs[i]);
		if (n > bestn && strncmp(path, sp->subs[i], n) == 0 && path[n] == '/') {
			best = i;
			bestn = n;
		}
	}
	return best;
}

/* the old and new line counts of a hunk header "@@ -a[,b] +c[,d] @@" */
static void
hunklen(const char *p, long *oc, long *nc)
{
	char *e;

	*oc = *nc = 1;
	p += 2;
	while (*p == ' ')
		p++;
	if (*p++ != '-')
		return;
	strtol(p, &e, 10);
	if (*e == ',')
		*oc = strtol(e + 1, &e, 10);
	while (*e == ' ')
		e++;
	if (*e++ != '+')
		return;
	strtol(e, &e, 10);
	if (*e == ',')
		*nc = strtol(e + 1, &e, 10);
}

/* one "diff --git" section while it is read */
struct sect {
	struct buf text;      /* as libgit2 will get it */
	size_t repo;
	size_t prelen;        /* length of the "sub/" removed from its paths */
	char *path;           /* the new path (the old one for a deletion), prefix removed */
	int hunks, bin;       /* hunks seen, inside a GIT binary patch */
	int gitlink;          /* a mode line or index line says 160000 */
	char from[GIT_OID_HEXSZ + 1], to[GIT_OID_HEXSZ + 1];  /* "Subproject commit" ids */
	int added, deleted;
};

/* one patch while it is split: how, into what, the section being read and the -p of
   its traditional headers */
struct splitter {
	const struct splitspec *sp;
	struct splitout *out;
	struct sect sc;
	struct tradp tp;
};

/* the path in a header line after lead ("--- ", "rename from "...), unquoted, with git's
   trailing tab (written after names holding a space) and the line end removed */
static char *
hdrpath(const char *p, size_t n, size_t lead)
{
	const char *s = p + lead, *e = p + n, *nx;

	while (e > s && (e[-1] == '\n' || e[-1] == '\r'))
		e--;
	if (s < e && *s == '"') {
		char *q = cunquote(s, e, &nx);
		if (q && nx != e) {
			free(q);   /* text after the closing quote: not a name git wrote */
			q = NULL;
		}
		return q;
	}
	if (e > s && e[-1] == '\t')
		e--;
	return xstrndup(s, (size_t)(e - s));
}

/* finish a section: its text to its repository, or its gitlink change to the moves */
static int
flush(struct sect *sc, struct splitout *so, char **err)
{
	struct linkmoves *mv = so->mv;

	if (sc->repo == (size_t)-1)
		return 0;
	if (sc->gitlink) {
		struct linkmove *m;
		if ((!sc->added && !*sc->from) || (!sc->deleted && !*sc->to) || (!*sc->from && !*sc->to)) {
			*err = xasprintf("%s: a submodule change without its 'Subproject commit' lines", sc->path);
			return -1;
		}
		mv->v = xgrow(mv->v, &mv->cap, mv->n + 1, sizeof *mv->v);
		m = &mv->v[mv->n++];
		memset(m, 0, sizeof *m);
		m->repo = sc->repo;
		m->path = sc->path;
		sc->path = NULL;
		memcpy(m->from, sc->from, sizeof m->from);
		memcpy(m->to, sc->to, sizeof m->to);
	} else {
		bufadd(&so->out[sc->repo], sc->text.s, sc->text.len);
		/* a section of header lines only (an empty file added or deleted, a mode change,
		   a pure rename): libgit2 1.5.1 reads it only when a "-- " line ends it */
		if (!sc->hunks && !sc->bin)
			bufputs(&so->out[sc->repo], "-- \n");
	}
	buffree(&sc->text);
	free(sc->path);
	memset(sc, 0, sizeof *sc);
	sc->repo = (size_t)-1;
	return 0;
}

/* a line of a GIT binary patch: "literal N", "delta N", base85 data or the blank line
   between the forward and the reverse part */
static int
binline(const char *p, size_t n)
{
	if (n == 1 && *p == '\n')
		return 1;
	if (linestarts(p, n, "literal ") || linestarts(p, n, "delta "))
		return 1;
	return (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z');
}

/* take a 40-hex id after "Subproject commit " on a hunk line */
static void
subcommit(const char *p, size_t n, char *id)
{
	const char *s = p + 1 + 18;

	if (n >= 1 + 18 + GIT_OID_HEXSZ && memcmp(p + 1, "Subproject commit ", 18) == 0 &&
	    strspn(s, "0123456789abcdef") >= GIT_OID_HEXSZ) {
		memcpy(id, s, GIT_OID_HEXSZ);
		id[GIT_OID_HEXSZ] = 0;
	}
}

/* Start the section of the traditional header at s (trad_start said yes) in sc, in the
   form libgit2 parses: a "diff --git" line for its one name (a created or deleted file
   with its mode line, 100644 as git apply gives it), then its ---/+++ lines. Returns the
   length of the two header lines, or 0 with a message in err. */
static size_t
tradsect(struct splitter *st, const char *s, char **err)
{
	const struct splitmode *sm = st->sp->sm;
	struct sect *sc = &st->sc;
	struct tradp *tp = &st->tp;
	unsigned mode = 0;
	struct tradhdr h;
	size_t l1 = strcspn(s, "\n") + 1, l2 = strcspn(s + l1, "\n") + 1;
	const char *np;

	if (trad_header(s, tp, &h) < 0) {
		*err = xasprintf("cannot read a file name from '%.*s' and '%.*s' (-p%d)", (int)l1 - 1, s,
		                 (int)l2 - 1, s + l1, tp->p);
		return 0;
	}
	if (!patchpath_ok(h.name)) {
		*err = xasprintf("%s: path escapes the source tree; refused", h.name);
		free(h.name);
		return 0;
	}
	sc->repo = route(h.name, st->sp);
	sc->prelen = sc->repo < st->sp->nsub ? strlen(st->sp->subs[sc->repo]) + 1 : 0;
	np = h.name + sc->prelen;
	bufputs(&sc->text, "diff --git ");
	putpath(&sc->text, "a/", np);
	bufputc(&sc->text, ' ');
	putpath(&sc->text, "b/", np);
	/* the file's mode where it is known: git apply keeps it (libgit2 1.5.1 would make it
	   100644); an index line carries it, as git diff writes one for a file whose mode
	   stays (libgit2 reads "old mode"/"new mode" of equal modes as a bad header) */
	if (!h.isnew && sm && sm->mode)
		mode = sm->mode(sc->repo, np, sm->arg);
	if (h.isnew)
		bufputs(&sc->text, "\nnew file mode 100644\n");
	else if (h.isdel)
		bufprintf(&sc->text, "\ndeleted file mode %06o\n", mode ? mode : 0100644);
	else if (mode)
		bufprintf(&sc->text, "\nindex 0000000..0000000 %06o\n", mode);
	else
		bufputc(&sc->text, '\n');
	bufputs(&sc->text, "--- ");
	if (h.isnew)
		bufputs(&sc->text, "/dev/null");
	else
		putpath(&sc->text, "a/", np);
	bufputs(&sc->text, "\n+++ ");
	if (h.isdel)
		bufputs(&sc->text, "/dev/null");
	else
		putpath(&sc->text, "b/", np);
	bufputc(&sc->text, '\n');
	sc->path = xstrdup(np);
	sc->added = h.isnew;
	sc->deleted = h.isdel;
	free(h.name);
	return l1 + l2;
}

/* a "diff --git a/A b/B" line: a new section, routed by its a/ and b/ paths to the
   repository (the superproject or a submodule) both lie in; 0 or -1 with *err */
static int
gitsect(struct splitter *st, const char *p, size_t n, char **err)
{
	struct sect *sc = &st->sc;
	const char *a = p + 11, *le = p + n;
	char *pa, *pb;
	size_t ra, rb;
	int r = -1;

	while (le > a && (le[-1] == '\n' || le[-1] == '\r'))
		le--;
	if (gitpaths(a, le, &pa, &pb) < 0) {
		*err = xasprintf("cannot read the file names of '%.*s'", (int)(le - p), p);
		return -1;
	}
	ra = route(pa, st->sp);
	rb = route(pb, st->sp);
	if (!patchpath_ok(pa) || !patchpath_ok(pb)) {
		*err = xasprintf("%s: path escapes the source tree; refused", patchpath_ok(pa) ? pb : pa);
	} else if (ra != rb) {
		*err = xasprintf("%s -> %s: a rename across a submodule boundary cannot be applied", pa, pb);
	} else {
		sc->repo = ra;
		sc->prelen = ra < st->sp->nsub ? strlen(st->sp->subs[ra]) + 1 : 0;
		bufputs(&sc->text, "diff --git ");
		putpath(&sc->text, "a/", pa + sc->prelen);
		bufputc(&sc->text, ' ');
		putpath(&sc->text, "b/", pb + sc->prelen);
		bufputc(&sc->text, '\n');
		sc->path = xstrdup(pb + sc->prelen);
		r = 0;
	}
	free(pa);
	free(pb);
	return r;
}

/* the start of a header line that holds a path, and whether it is a ---/+++ line */
struct hdrlead {
	const char *s;
	int old;
};

/* a header line with a path ("--- ", "+++ ", rename/copy from/to, as hl says): the prefix
   removed, quoted as git quotes; the path must stay in the tree and in the section's
   repository; 0 or -1 with *err */
static int
pathline(struct splitter *st, const char *p, size_t n, const struct hdrlead *hl, char **err)
{
	struct sect *sc = &st->sc;
	size_t lead = strlen(hl->s);
	int old = hl->old;
	char *hp = hdrpath(p, n, lead), *u;
	const char *ab = "";
	int dev, r = -1;

	if (!hp) {
		*err = xasprintf("cannot read the file name of '%.*s'", (int)n - 1, p);
		return -1;
	}
	dev = old && strcmp(hp, "/dev/null") == 0;
	if (old && !dev) {
		u = unprefix(xstrdup(hp));
		ab = hp[0] == 'a' && hp[1] == '/' ? "a/" : hp[0] == 'b' && hp[1] == '/' ? "b/" : "";
		free(hp);
		hp = u;
	}
	if (!dev && !patchpath_ok(hp)) {
		*err = xasprintf("%s: path escapes the source tree; refused", hp);
	} else if (!dev && route(hp, st->sp) != sc->repo) {
		*err = xasprintf("%s: not in the repository its section '%s' is in", hp, sc->path);
	} else {
		bufadd(&sc->text, p, lead);
		if (dev)
			bufputs(&sc->text, hp);
		else
			putpath(&sc->text, ab, hp + sc->prelen);
		bufputc(&sc->text, '\n');
		r = 0;
	}
	free(hp);
	return r;
}

/* a mode, index or similarity line of a section's header: a gitlink (mode 160000), a file
   made or deleted; kept as it is */
static void
modeline(const char *p, size_t n, struct sect *sc)
{
	const char *m = p + n;

	while (m > p && (m[-1] == '\n' || m[-1] == '\r' || m[-1] == ' '))
		m--;
	if (m - p >= 6 && memcmp(m - 6, "160000", 6) == 0 && !linestarts(p, n, "Binary files "))
		sc->gitlink = 1;
	if (linestarts(p, n, "new file mode "))
		sc->added = 1;
	if (linestarts(p, n, "deleted file mode "))
		sc->deleted = 1;
	bufadd(&sc->text, p, n);
}

/* a line of a section's extended header; 0 or -1 with *err */
static int
hdrline(struct splitter *st, const char *p, size_t n, char **err)
{
	static const struct hdrlead leads[] = {{"--- ", 1}, {"+++ ", 1}, {"rename from ", 0},
	                                       {"rename to ", 0}, {"copy from ", 0}, {"copy to ", 0}};
	struct sect *sc = &st->sc;
	static const char *const ext[] = {"old mode ", "new mode ", "deleted file mode ",
	                                  "new file mode ", "similarity index ",
	                                  "dissimilarity index ", "index ", "Binary files "};
	size_t i;

	for (i = 0; i < sizeof leads / sizeof *leads; i++)
		if (linestarts(p, n, leads[i].s))
			return pathline(st, p, n, &leads[i], err);
	for (i = 0; i < sizeof ext / sizeof *ext; i++)
		if (linestarts(p, n, ext[i])) {
			modeline(p, n, sc);
			return 0;
		}
	if (linestarts(p, n, "GIT binary patch")) {
		sc->bin = 1;
		bufadd(&sc->text, p, n);
	}
	/* else: text after a section with no hunk (the signature): dropped */
	return 0;
}

/* a hunk line: ' ' counts for both sides, '-' old, '+' new, '\' none */
static void
hunkline(const char *p, size_t n, struct sect *sc, long *left_old, long *left_new)
{
	if (*p == ' ' || *p == '\n' || (*p == '\r' && n == 2)) {
		(*left_old)--;
		(*left_new)--;
	} else if (*p == '-') {
		(*left_old)--;
		subcommit(p, n, sc->from);
	} else if (*p == '+') {
		(*left_new)--;
		subcommit(p, n, sc->to);
	}
	bufadd(&sc->text, p, n);
}

/* patch_split over text that has a NUL at text[len] (the line parsers rely on it) */
static int
patch_split1(struct splitter *st, const char *text, size_t len, char **err)
{
	const char *p = text, *end = text + len, *nl;
	struct sect *sc = &st->sc;
	int inhdr = 0, inhunk;
	long left_old = 0, left_new = 0;  /* lines still due in the current hunk */
	size_t n, hl, i;

	memset(sc, 0, sizeof *sc);
	sc->repo = (size_t)-1;
	for (; p < end; p += n) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		inhunk = left_old > 0 || left_new > 0;
		if (n >= 11 && strncmp(p, "diff --git ", 11) == 0 && !inhunk) {
			if (flush(sc, st->out, err) < 0 || gitsect(st, p, n, err) < 0)
				goto fail;
			inhdr = 1;
			left_old = left_new = 0;
		} else if (!inhunk && !inhdr && sc->bin != 1 && trad_start(p)) {
			/* a traditional header (no "diff --git" line): diff -u, quilt, debian/patches */
			if (flush(sc, st->out, err) < 0 || !(hl = tradsect(st, p, err)))
				goto fail;
			n = hl;
		} else if (sc->repo == (size_t)-1) {
			/* mail headers and message before the first section: not part of any diff */
		} else if (n >= 2 && strncmp(p, "@@", 2) == 0 && !inhunk && !sc->bin) {
			inhdr = 0;
			sc->hunks++;
			hunklen(p, &left_old, &left_new);
			bufadd(&sc->text, p, n);
		} else if (inhdr && !sc->bin) {
			if (hdrline(st, p, n, err) < 0)
				goto fail;
		} else if (sc->bin) {
			if (sc->bin == 1 && binline(p, n))
				bufadd(&sc->text, p, n);
			else
				sc->bin = 2;   /* the binary data ended: what follows is not part of it */
		} else if (inhunk) {
			hunkline(p, n, sc, &left_old, &left_new);
		} else if (*p == '\\') {
			bufadd(&sc->text, p, n);   /* "\ No newline at end of file" */
		}
		/* else: after the last hunk: the format-patch signature ("-- ", version) or
		   trailing text; dropped */
	}
	if (flush(sc, st->out, err) < 0)
		goto fail;
	for (i = 0; i <= st->sp->nsub; i++)
		if (st->out->out[i].len)
			bufputc(&st->out->out[i], 0), st->out->out[i].len--;
	return 0;
fail:
	buffree(&sc->text);
	free(sc->path);
	return -1;
}

int
patch_split(const char *text, size_t len, const struct splitspec *sp, struct splitout *out,
            char **err)
{
	struct splitter st = {.sp = sp, .out = out, .tp = {1, 0}};   /* git apply's default: -p1 */
	char *copy = xstrndup(text, len);
	int r = patch_split1(&st, copy, len, err);

	free(copy);
	return r;
}
