/* build.ninja's tools half: ninja and shell escaping (the one place for each), and one
   emitter for every variant of the tools (release, sanitized with unit tests, fuzz) */
#include "emit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kv.h"
#include "os.h"
#include "proc.h"
#include "strv.h"

void
ninja_esc(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '$' || *s == ' ' || *s == ':')
			bufputc(b, '$');
		bufputc(b, *s);
	}
}

void
ninja_shq(struct buf *b, const char *s)
{
	struct buf q = {0};

	shquote(&q, s);
	ninja_esc(b, q.s);
	buffree(&q);
}

char **
lsdir(const char *dir, const char *suffix, int wantdir, size_t *n)
{
	struct strv all = {0}, keep = {0};
	struct stat st;
	size_t i;
	char *p;

	*n = 0;
	if (os_listdir(dir, &all) < 0)
		return NULL;
	for (i = 0; i < all.n; i++) {
		if (all.v[i][0] == '.' || (suffix && !endswith(all.v[i], suffix)))
			continue;
		p = xasprintf("%s/%s", dir, all.v[i]);
		if (stat(p, &st) == 0 && (wantdir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
			strv_add(&keep, all.v[i], 0);
		free(p);
	}
	strv_free(&all);
	*n = keep.n;
	return keep.v;
}

/* what a build.conf says: PKGS (pkg-config names, compiled and linked against), OPEN
   (pkg-config names compiled against and opened at run time, not linked: kiln-stage's
   lazylib.c), LIBS (link flags) and STATIC (those of PKGS linked from their static
   archive where one is installed) */
struct buildconf {
	char *pkgs, *open, *libs, *statics;
};

static void
buildconf_free(struct buildconf *bc)
{
	free(bc->pkgs), free(bc->open), free(bc->libs), free(bc->statics);
}

/* *slot = the value of key in f, or "" */
static void
kvtake(struct kvfile *f, const char *key, char **slot)
{
	const char *v = f ? kv_get(f, key) : NULL;

	*slot = xstrdup(v ? v : "");
}

static int
buildconf(const char *path, struct buildconf *bc, char **err)
{
	struct kvfile f, *fp = NULL;

	if (access(path, F_OK) == 0) {
		if (kv_load(&f, path, err) < 0) {
			kv_free(&f);
			return -1;
		}
		fp = &f;
	}
	kvtake(fp, "PKGS", &bc->pkgs);
	kvtake(fp, "OPEN", &bc->open);
	kvtake(fp, "LIBS", &bc->libs);
	kvtake(fp, "STATIC", &bc->statics);
	if (fp)
		kv_free(fp);
	return 0;
}

/* run argv and take its output as one line (trailing blanks and newlines cut) into o;
   0 when it ran and exited 0 */
static int
runline(char *const argv[], struct buf *o)
{
	struct procres res;

	bufreset(o);
	if (proc_capture(argv, NULL, o, NULL, 0, 0, &res) < 0 || res.status != 0)
		return -1;
	bufrtrim(o, " \n");
	return 0;
}

/* the questions asked this run (argv's words, each ended by '\n') and their answers:
   pkg-config gives the same answer to the same question within one run, so each is
   asked once (two tools with the same PKGS, a|b resolved for --cflags and for --libs) */
static struct asked {
	char *q, *out;
	int rc;
} *asked;
static size_t nasked, capasked;

/* runline, memoized: argv is run only the first time this run asks it */
static int
askline(char *const argv[], struct buf *o)
{
	struct buf q = {0};
	size_t i;
	int rc;

	for (i = 0; argv[i]; i++)
		bufprintf(&q, "%s\n", argv[i]);
	for (i = 0; i < nasked && strcmp(asked[i].q, q.s); i++)
		;
	if (i < nasked) {
		buffree(&q);
		bufreset(o);
		bufputs(o, asked[i].out);
		return asked[i].rc;
	}
	rc = runline(argv, o);
	asked = xgrow(asked, &capasked, nasked + 1, sizeof *asked);
	asked[nasked].q = bufdetach(&q);
	asked[nasked].out = xstrdup(o->s ? o->s : "");
	asked[nasked++].rc = rc;
	return rc;
}

/* forget the answers askline keeps */
static void
askfree(void)
{
	size_t i;

	for (i = 0; i < nasked; i++)
		free(asked[i].q), free(asked[i].out);
	free(asked);
	asked = NULL;
	nasked = capasked = 0;
}

/* a|b|c (a word of PKGS): the first that pkg-config knows, cut out of w in place; the
   first when none is known, so pkg-config names what is missing. A library whose .pc
   file was renamed needs both: msgpack-c 6 installs msgpack-c.pc (Debian 13), older
   releases msgpack.pc (Debian 12) */
static const char *
pkgalt(const char *pkgconfig, char *w)
{
	char *alt, *sp, *first = NULL, *argv[4];
	struct buf o = {0};

	if (!strchr(w, '|'))
		return w;
	argv[0] = (char *)pkgconfig, argv[1] = "--exists", argv[3] = NULL;
	for (alt = strtok_r(w, "|", &sp); alt; alt = strtok_r(NULL, "|", &sp)) {
		if (!first)
			first = alt;
		argv[2] = alt;
		if (askline(argv, &o) == 0) {
			buffree(&o);
			return alt;
		}
	}
	buffree(&o);
	return first ? first : w;
}

/* pkg-config's flags (what: --cflags or --libs) for the space-separated pkgs, one line;
   a word a|b is the first of them that pkg-config knows */
static int
pkgflags(const char *pkgconfig, const char *what, const char *pkgs, char **out, char **err)
{
	char *copy = xstrdup(pkgs), *w, *sp;
	char **argv = NULL;
	size_t n = 0, cap = 0;
	struct buf o = {0};

	argv = xgrow(argv, &cap, 3, sizeof *argv);
	argv[n++] = (char *)pkgconfig;
	argv[n++] = (char *)what;
	for (w = strtok_r(copy, " \t", &sp); w; w = strtok_r(NULL, " \t", &sp)) {
		argv = xgrow(argv, &cap, n + 2, sizeof *argv);
		argv[n++] = (char *)pkgalt(pkgconfig, w);
	}
	argv[n] = NULL;
	if (askline(argv, &o) < 0) {
		*err = xasprintf("pkg-config cannot find %s", pkgs);
		free(argv);
		free(copy);
		buffree(&o);
		return -1;
	}
	*out = o.s ? bufdetach(&o) : xstrdup("");
	free(argv);
	free(copy);
	return 0;
}

/* replace the word w of the space-separated flags *fl by to (the first one only) */
static void
replaceword(char **fl, const char *w, const char *to)
{
	size_t n = strlen(w);
	char *p = *fl, *q;

	for (; (p = strstr(p, w)); p += n)
		if ((p == *fl || p[-1] == ' ') && (p[n] == ' ' || !p[n])) {
			q = xasprintf("%.*s%s%s", (int)(p - *fl), *fl, to, p + n);
			free(*fl);
			*fl = q;
			return;
		}
}

/* the first of the folders dirs ("\n"-ended lines; NULL: none) that holds libNAME.a
   (l: -lNAME): the word l of *pl becomes that archive's path; 1 when one did */
static int
archin(const char *dirs, const char *l, char **pl)
{
	const char *d, *e;
	char *a;
	int found = 0;

	for (d = dirs; d && *d && !found; d = e + 1) {
		e = strchr(d, '\n');
		a = xasprintf("%.*s/lib%s.a", (int)(e - d), d, l + 2);
		if (access(a, R_OK) == 0) {
			replaceword(pl, l, a);
			found = 1;
		}
		free(a);
	}
	return found;
}

/* the folder where the compiler's own search (cc -print-file-name; cc's words split as
   the shell splits them) finds libNAME.a (l: -lNAME), one "\n"-ended line in o; 0 when
   it names one */
static int
ccsearch(const char *cc, const char *l, struct buf *o)
{
	char *copy = xstrdup(cc), *argv[16], *tok, *sp, *d;
	size_t n = 0;
	int r = -1;

	for (tok = strtok_r(copy, " \t\n", &sp); tok && n < 14; tok = strtok_r(NULL, " \t\n", &sp))
		argv[n++] = tok;
	argv[n] = xasprintf("-print-file-name=lib%s.a", l + 2);
	argv[n + 1] = NULL;
	if (askline(argv, o) == 0 && o->len && o->s[0] == '/' && (d = strrchr(o->s, '/'))) {
		o->len = (size_t)(d - o->s);
		*d = 0;
		bufputc(o, '\n');
		r = 0;
	}
	free(argv[n]);
	free(copy);
	return r;
}

/* one package w of STATIC: its -lNAME from libNAME.a, by path in *pl, where an -L folder
   pkg-config gives, its libdir, or the compiler's own search (cc -print-file-name) holds
   one, looked in that order (each asked only when the ones before hold none); a package
   without its archive stays shared */
static void
staticpkg(const char *pkgconfig, const char *cc, const char *w, char **pl)
{
	char *fl = NULL, *err = NULL, *d, *l = NULL, *sp;
	char *vargv[] = {(char *)pkgconfig, "--variable=libdir", (char *)w, NULL};
	struct buf dirs = {0}, o = {0};

	if (pkgflags(pkgconfig, "--libs", w, &fl, &err) < 0) {
		free(err), free(fl);
		return;
	}
	/* the package's library (one per package: libdeflate, libzstd...), its -L folders */
	for (d = strtok_r(fl, " ", &sp); d; d = strtok_r(NULL, " ", &sp)) {
		if (!l && strncmp(d, "-l", 2) == 0)
			l = d;
		else if (strncmp(d, "-L", 2) == 0 && d[2])
			bufprintf(&dirs, "%s\n", d + 2);
	}
	if (l && !archin(dirs.s, l, pl)) {
		if (askline(vargv, &o) == 0 && o.len) {
			bufputc(&o, '\n');
			if (archin(o.s, l, pl))
				l = NULL;
		}
		/* the compiler's search: multiarch folders that a .pc's libdir leaves out */
		if (l && cc && *cc && ccsearch(cc, l, &o) == 0)
			archin(o.s, l, pl);
	}
	buffree(&dirs);
	buffree(&o);
	free(fl);
}

/* STATIC: link each package's -lNAME from libNAME.a (staticpkg). Debian's libdeflate.a
   deflates about 20% faster than libdeflate.so.0 (same bytes out), and fatwheel's time
   is mostly deflate. */
static void
linkstatic(const char *pkgconfig, const char *cc, const char *statics, char **pl)
{
	char *copy = xstrdup(statics), *w, *sp;

	for (w = strtok_r(copy, " \t", &sp); w; w = strtok_r(NULL, " \t", &sp))
		staticpkg(pkgconfig, cc, w, pl);
	free(copy);
}

/* one tool's flags, read once */
struct tool {
	char *name, *pc, *pl, *libs;
	char **src;   /* NAME.c first, then its modules */
	size_t nsrc;
};

static void
objof(struct buf *b, const char *v, const char *rel)
{
	bufprintf(b, "$bdir/%s/obj/", v);
	ninja_esc(b, rel);
	b->len -= 2;
	b->s[b->len] = 0;
	bufputs(b, ".o");
}

/* a compile edge: out for src (both relative to tools/), with the variant's flags */
static void
cc(struct buf *b, const char *v, const char *rel, const char *extra)
{
	bufputs(b, "build ");
	objof(b, v, rel);
	bufputs(b, ": cc $srcdir/tools/");
	ninja_esc(b, rel);
	bufputc(b, '\n');
	if (!strcmp(v, "fuzz"))
		bufputs(b, "  cc = $fuzzcc\n");
	bufprintf(b, "  extra = %s\n", extra);
}

/* the variant's flags: rel none, san $sanflags, fuzz $fuzzflags */
static const char *
vflags(const char *v)
{
	return !strcmp(v, "rel") ? "" : !strcmp(v, "san") ? "$sanflags" : "$fuzzflags";
}

/* the build edges of one variant being written */
struct vedges {
	struct buf *b;              /* build.ninja's text */
	const char *v;              /* the variant: rel, san or fuzz */
	const struct emitcfg *ec;
	struct buf *outs;           /* the names of its binaries and tests */
	struct buf mods;            /* the objects of the tool at hand, but its main */
};

/* libkiln.a of the variant: tools/lib's objects */
static void
varlib(struct vedges *e)
{
	struct buf x = {0};
	char *rel;
	size_t i;

	bufprintf(&x, "%s %s", vflags(e->v), e->ec->libcflags);
	for (i = 0; i < e->ec->nlib; i++) {
		rel = xasprintf("lib/%s", e->ec->lib[i]);
		cc(e->b, e->v, rel, x.s);
		free(rel);
	}
	bufprintf(e->b, "build $bdir/%s/libkiln.a: ar", e->v);
	for (i = 0; i < e->ec->nlib; i++) {
		rel = xasprintf("lib/%s", e->ec->lib[i]);
		bufputc(e->b, ' ');
		objof(e->b, e->v, rel);
		free(rel);
	}
	bufputc(e->b, '\n');
	buffree(&x);
}

/* the objects of tool t (none for tools/lib, lib != 0; not its main for fuzz), each
   but its main's named in e->mods */
static void
varmods(struct vedges *e, const struct tool *t, int lib)
{
	struct buf x = {0};
	char *rel;
	size_t j;

	bufreset(&e->mods);
	bufprintf(&x, "%s %s", vflags(e->v), t->pc);
	for (j = lib ? t->nsrc : 0; j < t->nsrc; j++) {
		if (!strcmp(e->v, "fuzz") && j == 0)
			continue;
		rel = xasprintf("%s/%s", t->name, t->src[j]);
		cc(e->b, e->v, rel, x.s);
		if (j > 0) {
			bufputc(&e->mods, ' ');
			objof(&e->mods, e->v, rel);
		}
		free(rel);
	}
	buffree(&x);
}

/* the link edge of binary bin: main's object rel, the tool's modules (e->mods), then
   libkiln.a as an implicit input */
static void
varlink(struct vedges *e, const char *bin, const char *rel)
{
	bufprintf(e->b, "build %s: link ", bin);
	objof(e->b, e->v, rel);
	bufprintf(e->b, "%s | $bdir/%s/libkiln.a\n", e->mods.s ? e->mods.s : "", e->v);
}

/* tool t's binary, in $bdir/bin (rel) or $bdir/san/bin */
static void
vartool(struct vedges *e, const struct tool *t)
{
	char *p = !strcmp(e->v, "rel") ? xasprintf("$bdir/bin/%s", t->name) :
	                                 xasprintf("$bdir/san/bin/%s", t->name);
	char *rel = xasprintf("%s/%s", t->name, t->src[0]);

	bufputc(e->outs, ' ');
	bufputs(e->outs, p);
	varlink(e, p, rel);
	bufprintf(e->b, "  extra = %s\n", vflags(e->v));
	bufprintf(e->b, "  libs = $bdir/%s/libkiln.a %s %s %s\n", e->v, t->pl, t->libs,
	          e->ec->libcryptolibs);
	free(rel);
	free(p);
}

/* tool t's unit tests (san: tools/NAME/tests/X.c) or fuzz targets (tools/NAME/fuzz/X.c),
   each linked with its modules */
static void
vartests(struct vedges *e, const struct tool *t, char **tests, size_t ntests)
{
	int fuzz = !strcmp(e->v, "fuzz");
	struct buf x = {0};
	char *n, *rel, *p;
	size_t k;

	for (k = 0; k < ntests; k++) {
		n = xstrndup(tests[k], strlen(tests[k]) - 2);
		rel = xasprintf("%s/%s/%s", t->name, fuzz ? "fuzz" : "tests", tests[k]);
		bufreset(&x);
		bufprintf(&x, "%s %s -I$qsrcdir/tools/%s", vflags(e->v), t->pc, t->name);
		cc(e->b, e->v, rel, x.s);
		p = fuzz ? xasprintf("$bdir/fuzz/bin/%s", n) : xasprintf("$bdir/san/test/%s-%s", t->name, n);
		varlink(e, p, rel);
		bufputs(e->b, fuzz ? "  cc = $fuzzcc\n  extra = -fsanitize=fuzzer,address,undefined\n"
		                   : "  extra = $sanflags\n");
		bufprintf(e->b, "  libs = $bdir/%s/libkiln.a %s %s %s\n", e->v, t->pl, t->libs,
		          e->ec->libcryptolibs);
		bufputc(e->outs, ' ');
		bufputs(e->outs, p);
		free(p);
		free(rel);
		free(n);
	}
	buffree(&x);
}

/* the build edges of one variant (e->v) of the tools t[0..nt) (t[0]: tools/lib);
   names of its binaries and tests go to e->outs */
static void
variant(struct vedges *e, const struct tool *t, size_t nt)
{
	int fuzz = !strcmp(e->v, "fuzz");
	char **tests, *p;
	size_t i, ntests;

	varlib(e);
	/* tools/lib itself is the first "tool" of a fuzz build (its fuzz/ targets) */
	for (i = fuzz ? 0 : 1; i < nt; i++) {
		tests = NULL;
		ntests = 0;
		if (fuzz || !strcmp(e->v, "san")) {
			p = xasprintf("%s/tools/%s/%s", e->ec->srcdir, t[i].name, fuzz ? "fuzz" : "tests");
			tests = lsdir(p, ".c", 0, &ntests);
			free(p);
		}
		if (fuzz && !ntests)
			continue;
		varmods(e, &t[i], i == 0);
		if (!fuzz)
			vartool(e, &t[i]);
		vartests(e, &t[i], tests, ntests);
		strs_free(tests, ntests);
	}
	bufputc(e->b, '\n');
	buffree(&e->mods);
}

static void
tool_free(struct tool *t)
{
	free(t->name);
	free(t->pc);
	free(t->pl);
	free(t->libs);
	strs_free(t->src, t->nsrc);
}

/* tools/NAME's sources, NAME.c first (tools/lib: all of them); 0 when it is no tool */
static int
toolsources(const struct emitcfg *ec, const char *name, int islib, struct tool *tl)
{
	char *p = xasprintf("%s/tools/%s", ec->srcdir, name), **src, *m;
	size_t ns, j;

	src = lsdir(p, ".c", 0, &ns);
	free(p);
	p = xasprintf("%s.c", name);
	for (j = 0; j < ns && strcmp(src[j], p); j++)
		;
	free(p);
	if (!islib && j == ns) {
		strs_free(src, ns);
		return 0;
	}
	if (!islib) {
		m = src[j];
		memmove(src + 1, src, j * sizeof *src);
		src[0] = m;
	}
	tl->name = xstrdup(name);
	tl->src = src;
	tl->nsrc = ns;
	return 1;
}

/* tools/NAME: its sources and what its build.conf asks to link; 1 a tool, 0 none there,
   -1 with *err */
static int
loadtool(const struct emitcfg *ec, const char *name, int islib, struct tool *tl, char **err)
{
	struct buildconf bc = {0};
	char *path, *cpkgs, *e;
	int r = 1;

	if (!toolsources(ec, name, islib, tl))
		return 0;
	path = xasprintf("%s/tools/%s/build.conf", ec->srcdir, name);
	r = buildconf(path, &bc, err) < 0 ? -1 : 1;
	free(path);
	tl->libs = bc.libs, bc.libs = NULL;
	tl->pc = xstrdup("");
	tl->pl = xstrdup("");
	cpkgs = xasprintf("%s %s", bc.pkgs ? bc.pkgs : "", bc.open ? bc.open : "");
	if (r > 0 && strspn(cpkgs, " ") < strlen(cpkgs) && !islib) {
		free(tl->pc);
		free(tl->pl);
		tl->pc = tl->pl = NULL;
		if (pkgflags(ec->pkgconfig, "--cflags", cpkgs, &tl->pc, err) < 0 ||
		    (*bc.pkgs ? pkgflags(ec->pkgconfig, "--libs", bc.pkgs, &tl->pl, err)
		              : (tl->pl = xstrdup(""), 0)) < 0) {
			e = *err;
			*err = xasprintf("tools/%s/build.conf: %s", name, e);
			free(e);
			r = -1;
		} else if (*bc.statics) {
			linkstatic(ec->pkgconfig, ec->cc, bc.statics, &tl->pl);
		}
	}
	free(cpkgs);
	buildconf_free(&bc);
	if (r < 0)
		tool_free(tl);
	return r;
}

/* whether tools/NAME has fuzz targets */
static int
hasfuzz(const struct emitcfg *ec, const char *name)
{
	char *p = xasprintf("%s/tools/%s/fuzz", ec->srcdir, name), **fv;
	size_t nf;

	fv = lsdir(p, ".c", 0, &nf);
	strs_free(fv, nf);
	free(p);
	return nf > 0;
}

/* unit tests of tools/lib (its tests folder), each into san's list */
static void
libtests(struct buf *b, const struct emitcfg *ec, struct buf *san)
{
	char *p = xasprintf("%s/tools/lib/tests", ec->srcdir), **tests, *n, *rl;
	struct buf x = {0};
	size_t nts, k;

	tests = lsdir(p, ".c", 0, &nts);
	free(p);
	for (k = 0; k < nts; k++) {
		n = xstrndup(tests[k], strlen(tests[k]) - 2);
		rl = xasprintf("lib/tests/%s", tests[k]);
		bufreset(&x);
		bufprintf(&x, "$sanflags %s", ec->libcflags);
		cc(b, "san", rl, x.s);
		bufprintf(b, "build $bdir/san/test/lib-%s: link ", n);
		objof(b, "san", rl);
		bufprintf(b, " | $bdir/san/libkiln.a\n  extra = $sanflags\n"
		          "  libs = $bdir/san/libkiln.a %s\n", ec->libcryptolibs);
		bufprintf(san, " $bdir/san/test/lib-%s", n);
		free(rl);
		free(n);
	}
	buffree(&x);
	strs_free(tests, nts);
}

/* the top targets: fuzz, tools, check, check-quick, check-san, check-real, install,
 * clean-tools */
static void
toptargets(struct buf *b, const struct buf *rel, const struct buf *san, const struct buf *fz)
{
	bufprintf(b, "build fuzz: phony%s\n", fz->s ? fz->s : "");
	bufputs(b, "build fuzz-smoke: fuzz_smoke | fuzz\n");
	bufprintf(b, "build tools: phony%s\n", rel->s ? rel->s : "");
	bufprintf(b, "build check-build: phony%s%s\n", san->s ? san->s : "", fz->s ? fz->s : "");
	bufputs(b, "build check: check | check-build tools\n");
	bufputs(b, "build check-quick: check_quick | check-build tools\n");
	bufputs(b, "build check-san: check_san | check-build tools\n");
	bufputs(b, "build check-real: check_real | tools\n");
	bufputs(b, "build install: install | tools\n");
	bufputs(b, "build clean-tools: clean_tools\n");
}

/* what makes configure rerun: the folders (a new tool or source), build.conf files */
static void
toolregen(const struct emitcfg *ec, void (*regen)(const char *path), char **dirs, size_t nd)
{
	static const char *const sub[] = {"", "/tests", "/fuzz", "/build.conf"};
	char *p = xasprintf("%s/tools", ec->srcdir);
	struct stat st;
	size_t i, k;

	regen(p);
	free(p);
	for (i = 0; i < nd; i++)
		for (k = 0; k < sizeof sub / sizeof sub[0]; k++) {
			p = xasprintf("%s/tools/%s%s", ec->srcdir, dirs[i], sub[k]);
			if (stat(p, &st) == 0)
				regen(p);
			free(p);
		}
}

int
emit_tools(struct buf *b, const struct emitcfg *ec, void (*regen)(const char *path),
           struct strv *names, char **err)
{
	struct tool *t = NULL, tl;
	struct buf rel = {0}, san = {0}, fz = {0};
	char **dirs, *p;
	const char *name;
	size_t nd, i, nt = 0, cap = 0;
	int r = 0, anyfuzz = 0, got;

	/* tools/lib is t[0]; then every tools/NAME with a NAME.c */
	p = xasprintf("%s/tools", ec->srcdir);
	dirs = lsdir(p, NULL, 1, &nd);
	free(p);
	memset(names, 0, sizeof *names);
	for (i = 0; i < nd + 1 && r == 0; i++) {
		name = i == 0 ? "lib" : dirs[i - 1];
		memset(&tl, 0, sizeof tl);
		if (i > 0 && !strcmp(name, "lib"))
			continue;
		if ((got = loadtool(ec, name, i == 0, &tl, err)) <= 0) {
			r = got;
			continue;
		}
		t = xgrow(t, &cap, nt + 1, sizeof *t);
		t[nt++] = tl;
		if (i > 0)
			strv_add(names, name, 0);
		anyfuzz |= hasfuzz(ec, name);
	}
	if (r == 0) {
		variant(&(struct vedges){.b = b, .v = "rel", .ec = ec, .outs = &rel}, t, nt);
		variant(&(struct vedges){.b = b, .v = "san", .ec = ec, .outs = &san}, t, nt);
		libtests(b, ec, &san);
		if (ec->fuzzcc && *ec->fuzzcc && anyfuzz)
			variant(&(struct vedges){.b = b, .v = "fuzz", .ec = ec, .outs = &fz}, t, nt);
		toptargets(b, &rel, &san, &fz);
		toolregen(ec, regen, dirs, nd);
	}
	for (i = 0; i < nt; i++)
		tool_free(&t[i]);
	free(t);
	askfree();
	strs_free(dirs, nd);
	buffree(&rel);
	buffree(&san);
	buffree(&fz);
	return r;
}
