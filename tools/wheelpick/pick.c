/* choosing a wheel (see pick.h). The ranking is pip's finder's _sort_key: version, then
   the best supported tag, then the build tag; wheelpick breaks the remaining ties by the
   newest mtime, then by file name. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "pick.h"
#include "wheelpath.h"
#include "os.h"

static void
addcand(struct pickset *ps, char *path)
{
	struct cand *c;

	ps->c = xgrow(ps->c, &ps->cap, ps->n + 1, sizeof *ps->c);
	c = &ps->c[ps->n++];
	memset(c, 0, sizeof *c);
	c->path = path;
	c->base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	c->rank = -1;
}

/* folder + "/" + name in one allocation */
static char *
joinpath(const char *dir, size_t dl, const char *name, size_t nl)
{
	char *p = xmalloc(dl + nl + 2);

	memcpy(p, dir, dl);
	if (dl && dir[dl - 1] == '/')
		dl--;
	p[dl] = '/';
	memcpy(p + dl + 1, name, nl + 1);
	return p;
}

int
pick_add(struct pickset *ps, const char *path)
{
	char real[PATH_MAX];
	struct stat st;
	DIR *d;
	struct dirent *e;
	size_t rl;

	if (stat(path, &st) < 0)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		if (!realpath(path, real) || !(d = opendir(path)))
			return -1;
		rl = strlen(real);
		while ((e = readdir(d))) {
			size_t l = strlen(e->d_name);
			struct stat es;
			int type = e->d_type;
			es.st_mode = 0;
			if (l < 4 || strcmp(e->d_name + l - 4, ".whl") || type == DT_DIR)
				continue;
			/* only regular files are candidates: the winner is opened later, and a FIFO
			   named *.whl would wait for a writer forever. Links are followed; a
			   dangling one stays a candidate and fails when it is read. */
			if ((type == DT_LNK || type == DT_UNKNOWN) && fstatat(dirfd(d), e->d_name, &es, 0) == 0)
				type = S_ISREG(es.st_mode) ? DT_REG : S_ISDIR(es.st_mode) ? DT_DIR : DT_FIFO;
			else if (type != DT_REG && type != DT_LNK && type != DT_UNKNOWN)
				es.st_mode = type == DT_FIFO ? S_IFIFO : type == DT_CHR ? S_IFCHR :
				             type == DT_BLK ? S_IFBLK : type == DT_SOCK ? S_IFSOCK : 0;
			if (type == DT_DIR)
				continue;
			if (type != DT_REG && type != DT_LNK && type != DT_UNKNOWN) {
				char *p = joinpath(real, rl, e->d_name, l);
				char *m = xasprintf("%s: is %s, not a wheel file; skipped", p, os_ftype(es.st_mode));
				strv_add(&ps->warnings, m, 1);
				free(m);
				free(p);
				continue;
			}
			addcand(ps, joinpath(real, rl, e->d_name, l));
		}
		closedir(d);
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		dien(EXIT_USAGE, "%s: is %s, not a wheel file", path, os_ftype(st.st_mode));
	{
		/* a file: make its folder absolute, keep its own name (it may be a link) */
		const char *sl = strrchr(path, '/');
		char *dir = sl ? xstrndup(path, (size_t)(sl - path) + (sl == path)) : xstrdup(".");
		if (!realpath(dir, real)) {
			free(dir);
			return -1;
		}
		free(dir);
		addcand(ps, xasprintf("%s%s%s", real, strcmp(real, "/") ? "/" : "", sl ? sl + 1 : path));
	}
	return 0;
}

static int64_t
mtimeof(struct cand *c)
{
	struct stat st;

	if (!c->hasmtime) {
		c->hasmtime = 1;
		c->mtime = stat(c->path, &st) == 0 ?
			(int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec : INT64_MIN;
	}
	return c->mtime;
}

static int
cmpbuild(const struct cand *a, const struct cand *b)
{
	int c;

	if (a->w.hasbuild != b->w.hasbuild)
		return a->w.hasbuild ? 1 : -1;
	if (!a->w.hasbuild)
		return 0;
	if (a->w.buildnum != b->w.buildnum)
		return a->w.buildnum < b->w.buildnum ? -1 : 1;
	c = strcmp(a->w.buildrest, b->w.buildrest);
	return c < 0 ? -1 : c > 0;
}

/* >0 when a ranks above b */
static int
cmpcand(struct cand *a, struct cand *b)
{
	int c;
	int64_t ma, mb;

	if ((c = pep440_cmp(&a->w.ver, &b->w.ver)))
		return c;
	if (a->rank != b->rank)
		return a->rank < b->rank ? 1 : -1;
	if ((c = cmpbuild(a, b)))
		return c;
	ma = mtimeof(a);
	mb = mtimeof(b);
	if (ma != mb)
		return ma > mb ? 1 : -1;
	c = strcmp(a->base, b->base);
	return c < 0 ? 1 : c > 0 ? -1 : 0;
}

static void
mark(struct cand *c, int state, int why)
{
	c->state = state;
	c->why = why;
}

/* the distinct values of one part (0 py, 1 abi, 2 plat) of the target's tags */
static void
partset(const struct target *t, int part, struct strv *out)
{
	size_t k;

	for (k = 0; k < t->tags.n; k++) {
		const char *s = t->tags.v[k], *d1 = strchr(s, '-'), *d2 = strchr(d1 + 1, '-');
		char *v = part == 0 ? xstrndup(s, (size_t)(d1 - s)) :
		          part == 1 ? xstrndup(d1 + 1, (size_t)(d2 - d1 - 1)) : xstrdup(d2 + 1);
		strv_add(out, v, 1);
		free(v);
	}
}

/* why none of c's tags is supported: the first part that nothing accepts */
static char *
tagwhy(const struct cand *c, const struct strv sets[3], const char *who)
{
	static const char *const what[] = { "python", "abi", "platform" };
	size_t k;
	int part;

	for (part = 0; part < 3; part++) {
		const char *bad = NULL;
		int ok = 0;
		for (k = 0; k < c->w.ntags; k++) {
			const char *v = part == 0 ? c->w.tags[k].py : part == 1 ? c->w.tags[k].abi :
			                c->w.tags[k].plat;
			if (strv_has(&sets[part], v))
				ok = 1;
			else if (!bad)
				bad = v;
		}
		if (!ok)
			return xasprintf("%s tag %s not supported by %s", what[part], bad, who);
	}
	return xasprintf("no tag of %s is supported by %s (each part is, not together)",
	                 c->w.tagstr, who);
}

/* the local label's first segment split into letters and a number ("rocm10" ->
   "rocm", 10); 0 if it is not of that form */
static int
labelform(const struct pep440 *v, char *pre, size_t pn, uint64_t *num)
{
	const char *s;
	size_t k;

	if (!v->nloc || v->loc[0].isnum)
		return 0;
	s = v->loc[0].s;
	for (k = 0; s[k] >= 'a' && s[k] <= 'z'; k++)
		;
	if (!k || !s[k] || k >= pn || strspn(s + k, "0123456789") != strlen(s + k) ||
	    strlen(s + k) > 18)
		return 0;
	memcpy(pre, s, k);
	pre[k] = 0;
	*num = strtoull(s + k, NULL, 10);
	return 1;
}

/* numeric order of two labels of one letter prefix: first number, then the following
   numeric segments */
static int
numorder(const struct pep440 *a, uint64_t na, const struct pep440 *b, uint64_t nb)
{
	size_t k;

	if (na != nb)
		return na < nb ? -1 : 1;
	for (k = 1; k < a->nloc && k < b->nloc; k++) {
		if (!a->loc[k].isnum || !b->loc[k].isnum)
			return 0;
		if (strlen(a->loc[k].s) != strlen(b->loc[k].s))
			return strlen(a->loc[k].s) < strlen(b->loc[k].s) ? -1 : 1;
		if (strcmp(a->loc[k].s, b->loc[k].s))
			return strcmp(a->loc[k].s, b->loc[k].s) < 0 ? -1 : 1;
	}
	return 0;
}

/* warn where PEP 440's local-label order is not what a ROCm user expects */
static void
traps(struct pickset *ps, const struct cand *ch)
{
	char cp[64], op[64];
	uint64_t cn, on;
	struct buf a = { 0 }, b = { 0 };
	size_t k;

	if (!labelform(&ch->w.ver, cp, sizeof cp, &cn))
		return;
	for (k = 0; k < ps->n; k++) {
		const struct cand *c = &ps->c[k];
		char *msg = NULL;
		if (c->state != C_LOST || pep440_cmppublic(&c->w.ver, &ch->w.ver) ||
		    !labelform(&c->w.ver, op, sizeof op, &on))
			continue;
		bufreset(&a);
		bufreset(&b);
		pep440_local(&a, &ch->w.ver);
		pep440_local(&b, &c->w.ver);
		if (!strcmp(cp, op) && numorder(&c->w.ver, on, &ch->w.ver, cn) > 0)
			msg = xasprintf("+%s sorts below +%s: PEP 440 compares a local segment that mixes "
			                "letters and digits as text ('%s%llu' < '%s%llu'), so pip installs "
			                "+%s; pass --local %s (or --require '==...+%s') to take +%s",
			                b.s, a.s, op, (unsigned long long)on, cp, (unsigned long long)cn,
			                a.s, b.s, b.s, b.s);
		else if (strcmp(cp, op) && startswith(cp, op))
			msg = xasprintf("+%s sorts above +%s: a local label '%s...' compares above "
			                "'%s<digits>' as text, so every +%sDATE wheel wins over every +%sX.Y "
			                "wheel of the same version; pass --local %s to take +%s",
			                a.s, b.s, cp, op, cp, op, b.s, b.s);
		if (msg) {
			strv_add(&ps->warnings, msg, 1);
			free(msg);
		}
	}
	buffree(&a);
	buffree(&b);
}

static int
bystr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
samelocal(const struct pep440 *a, const struct pep440 *b)
{
	size_t k;

	if (a->nloc != b->nloc)
		return 0;
	for (k = 0; k < a->nloc; k++)
		if (a->loc[k].isnum != b->loc[k].isnum || strcmp(a->loc[k].s, b->loc[k].s))
			return 0;
	return 1;
}

/* the best candidate still in the running, or -1 */
static long
bestof(struct pickset *ps)
{
	long best = -1;
	size_t k;

	for (k = 0; k < ps->n; k++)
		if (ps->c[k].state == C_CHOSEN && (best < 0 || cmpcand(&ps->c[k], &ps->c[best]) > 0))
			best = (long)k;
	return best;
}

/* every candidate's name parsed (a bad one skipped with a warning); the projects' names
   into NAMES when none was asked for */
static void
parsecands(struct pickset *ps, const char *name, struct strv *names)
{
	size_t k;

	for (k = 0; k < ps->n; k++) {
		struct cand *c = &ps->c[k];
		if (wheelname_parse(&c->w, c->base, 0, &c->bad) < 0) {
			char *m = xasprintf("%s: skipped: not a valid wheel file name: %s", c->path, c->bad);
			mark(c, C_INVALID, W_BADNAME);
			strv_add(&ps->warnings, m, 0);
			free(m);
			continue;
		}
		c->state = C_CHOSEN; /* still in the running */
		if (!name)
			strv_add(names, c->w.name, 1);
	}
}

/* the candidates of another project, with no tag the target takes, or outside --require
   skipped; each one's best tag ranked; 1 when a final release is left */
static int
filtercands(struct pickset *ps, const struct target *t, const struct pickopts *o, const char *name)
{
	size_t k, j;
	int anyfinal = 0;

	for (k = 0; k < ps->n; k++) {
		struct cand *c = &ps->c[k];
		if (c->state != C_CHOSEN)
			continue;
		if (name && strcmp(c->w.name, name)) {
			mark(c, C_SKIPPED, W_NAME);
			continue;
		}
		for (j = 0; j < c->w.ntags; j++) {
			long r = target_rank(t, c->w.tags[j].py, c->w.tags[j].abi, c->w.tags[j].plat);
			if (r >= 0 && (c->rank < 0 || r < c->rank)) {
				c->rank = r;
				c->best = &c->w.tags[j];
			}
		}
		if (c->rank < 0) {
			mark(c, C_SKIPPED, W_TAG);
			continue;
		}
		if (!pep440_specset_contains(&o->spec, &c->w.ver, c->w.verstr)) {
			mark(c, C_SKIPPED, W_SPEC);
			continue;
		}
		if (!pep440_isprerelease(&c->w.ver))
			anyfinal = 1;
	}
	return anyfinal;
}

/* --local LABEL: the candidates without it skipped, unless none has it (then a warning) */
static void
filterlocal(struct pickset *ps, const struct pickopts *o)
{
	size_t k;
	int anylocal = 0;
	char *m;

	for (k = 0; k < ps->n; k++)
		if (ps->c[k].state == C_CHOSEN && samelocal(&ps->c[k].w.ver, &o->local))
			anylocal = 1;
	if (!anylocal) {
		m = xasprintf("no suitable wheel has the local label %s; choosing among all", o->localtext);
		strv_add(&ps->warnings, m, 1);
		free(m);
		return;
	}
	for (k = 0; k < ps->n; k++) {
		struct cand *c = &ps->c[k];
		if (c->state == C_CHOSEN && !samelocal(&c->w.ver, &o->local))
			mark(c, C_SKIPPED, W_LOCAL);
	}
}

/* 1 when the wheel C's Requires-Python excludes the interpreter PYVER (C keeps the text);
   an unreadable one warns, an invalid one is ignored, as pip does */
static int
reqpyexcludes(struct pickset *ps, struct cand *c, const struct pep440 *pyver)
{
	struct pep440_specset ss;
	char *rp = NULL, *err = NULL;
	const char *why;
	size_t at;
	int excluded = 0, r = wheel_requirespython(c->path, &rp, &err);

	if (r == -2) {
		char *m = xasprintf("Requires-Python not read (%s)", err);
		strv_add(&ps->warnings, m, 1);
		free(m);
	}
	if (r == 1 && pep440_specset_parse(&ss, rp, &why, &at) == 0) {
		excluded = !pep440_specset_contains(&ss, pyver, NULL);
		pep440_specset_free(&ss);
	}
	free(err);
	if (excluded)
		c->reqpy = rp;
	else
		free(rp);
	return excluded;
}

int
pick_run(struct pickset *ps, const struct target *t, const struct pickopts *o)
{
	struct strv names = { 0 };
	const char *name = o->name;
	size_t k;
	long best;
	int anyfinal;

	ps->chosen = -1;
	parsecands(ps, name, &names);
	if (!name && names.n > 1) {
		struct buf b = { 0 };
		qsort(names.v, names.n, sizeof *names.v, bystr);
		for (k = 0; k < names.n; k++)
			bufprintf(&b, "%s%s", k ? ", " : "", names.v[k]);
		ps->names = bufdetach(&b);
		strv_free(&names);
		return 2;
	}
	if (!name && names.n == 1)
		name = names.v[0];
	ps->name = name ? xstrdup(name) : NULL;
	/* pre-releases: when asked, when a clause names one, or when nothing else is left
	   (packaging >= 26.0's PEP 440 rule) */
	anyfinal = filtercands(ps, t, o, name);
	for (k = 0; anyfinal && !o->pre && !pep440_specset_pre(&o->spec) && k < ps->n; k++)
		if (ps->c[k].state == C_CHOSEN && pep440_isprerelease(&ps->c[k].w.ver))
			mark(&ps->c[k], C_SKIPPED, W_PRE);
	if (o->local.nloc)
		filterlocal(ps, o);
	/* pip reads the chosen wheel's Requires-Python and falls back to the next one when
	   it excludes the interpreter (a wheel it cannot read keeps its place: pip fails on
	   it, and so do wheelpick's own checks after the choice) */
	for (best = bestof(ps); best >= 0 && o->pyver && reqpyexcludes(ps, &ps->c[best], o->pyver);
	     best = bestof(ps))
		mark(&ps->c[best], C_SKIPPED, W_REQPY);
	ps->chosen = best;
	for (k = 0; k < ps->n && best >= 0; k++)
		if (ps->c[k].state == C_CHOSEN && (long)k != best)
			mark(&ps->c[k], C_LOST, W_LOST);
	if (best >= 0)
		traps(ps, &ps->c[best]);
	strv_free(&names);
	return 0;
}

void
pick_explain(struct pickset *ps, const struct target *t, const struct pickopts *o)
{
	struct strv sets[3] = { { 0 } };
	struct buf v1 = { 0 }, v2 = { 0 };
	struct cand *ch = ps->chosen >= 0 ? &ps->c[ps->chosen] : NULL;
	size_t k;
	int part;

	for (part = 0; part < 3; part++)
		partset(t, part, &sets[part]);
	for (k = 0; k < ps->n; k++) {
		struct cand *c = &ps->c[k];
		char *r = NULL;
		if (c->reason || c == ch)
			continue;
		bufreset(&v1);
		if (c->state != C_INVALID)
			pep440_str(&v1, &c->w.ver);
		switch (c->why) {
		case W_BADNAME:
			r = xasprintf("not a valid wheel file name: %s", c->bad);
			break;
		case W_NAME:
			r = xasprintf("project %s, not %s", c->w.name, ps->name);
			break;
		case W_TAG:
			r = tagwhy(c, sets, o->who);
			break;
		case W_SPEC:
			r = xasprintf("version %s does not match %s", v1.s, o->spectext);
			break;
		case W_PRE:
			r = xasprintf("%s is a pre-release (pass --pre, or name one in --require)", v1.s);
			break;
		case W_LOCAL:
			bufreset(&v2);
			pep440_local(&v2, &c->w.ver);
			r = c->w.ver.nloc ? xasprintf("local label %s, not %s (--local)", v2.s, o->localtext) :
			    xasprintf("no local label, not %s (--local)", o->localtext);
			break;
		case W_REQPY:
			r = xasprintf("its Requires-Python %s excludes Python %s", c->reqpy, o->pyvertext);
			break;
		case W_LOST:
			bufreset(&v2);
			pep440_str(&v2, &ch->w.ver);
			if (pep440_cmp(&c->w.ver, &ch->w.ver))
				r = xasprintf("version %s is below %s", v1.s, v2.s);
			else if (c->rank != ch->rank)
				r = xasprintf("same version; its best tag %s-%s-%s ranks %ld, the chosen "
				              "%s-%s-%s ranks %ld", c->best->py, c->best->abi, c->best->plat,
				              c->rank, ch->best->py, ch->best->abi, ch->best->plat, ch->rank);
			else if (cmpbuild(c, ch))
				r = xasprintf("same version and tag; lower build tag");
			else if (mtimeof(c) != mtimeof(ch))
				r = xasprintf("same version, tag and build; older file");
			else
				r = xasprintf("same version, tag, build and mtime; file name sorts after");
			break;
		}
		c->reason = r;
	}
	for (part = 0; part < 3; part++)
		strv_free(&sets[part]);
	buffree(&v1);
	buffree(&v2);
}

void
pick_free(struct pickset *ps)
{
	size_t k;

	for (k = 0; k < ps->n; k++) {
		free(ps->c[k].path);
		free(ps->c[k].reason);
		free(ps->c[k].reqpy);
		wheelname_free(&ps->c[k].w);
	}
	free(ps->c);
	free(ps->names);
	free(ps->name);
	strv_free(&ps->warnings);
	memset(ps, 0, sizeof *ps);
}
