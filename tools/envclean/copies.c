/* envclean --check: the copies of a module on sys.path, their metadata, and what
   shadows what */
#include <stdlib.h>
#include <string.h>

#include "checkint.h"
#include "os.h"

/* the copy of module in folder dir, if any: its path and kind */
static char *
findin(const struct probe *pr, const char *dir, const char *mod, int *kind)
{
	char *p, *f;
	size_t i;

	p = xasprintf("%s/%s", dir, mod);
	if (os_isdir(p)) {
		f = xasprintf("%s/__init__.py", p);
		if (os_isfile(f)) {
			free(f);
			*kind = K_PKG;
			return p;
		}
		free(f);
		for (i = 0; i < pr->next; i++) {
			f = xasprintf("%s/__init__%s", p, pr->ext[i]);
			if (os_isfile(f)) {
				free(f);
				*kind = K_PKG;
				return p;
			}
			free(f);
		}
		f = xasprintf("%s/__init__.pyc", p);
		if (os_isfile(f)) {
			free(f);
			*kind = K_PKG;
			return p;
		}
		free(f);
	}
	for (i = 0; i < pr->next; i++) {
		f = xasprintf("%s%s", p, pr->ext[i]);
		if (os_isfile(f)) {
			free(p);
			*kind = K_EXT;
			return f;
		}
		free(f);
	}
	f = xasprintf("%s.py", p);
	if (os_isfile(f)) {
		free(p);
		*kind = K_PY;
		return f;
	}
	free(f);
	f = xasprintf("%s.pyc", p);
	if (os_isfile(f)) {
		free(p);
		*kind = K_PYC;
		return f;
	}
	free(f);
	if (os_isdir(p)) {
		*kind = K_NS;
		return p;
	}
	free(p);
	return NULL;
}

/* the Version: of an unversioned metadata folder name (setup.py develop's NAME.egg-info) */
static char *
metaversion(const char *dir, const char *name)
{
	static const char *const files[] = {"PKG-INFO", "METADATA"};
	struct buf b = {0};
	char *f, *v = NULL;
	const char *p;
	size_t i;

	for (i = 0; i < 2 && !v; i++) {
		f = xasprintf("%s/%s/%s", dir, name, files[i]);
		if (readreg(f, &b, 1 << 20) == 0 && b.s) {
			p = startswith(b.s, "Version:") ? b.s : strstr(b.s, "\nVersion:");
			if (p) {
				p += *p == '\n' ? 9 : 8;
				while (*p == ' ')
					p++;
				v = xstrndup(p, strcspn(p, "\r\n"));
			}
		}
		bufreset(&b);
		free(f);
	}
	buffree(&b);
	return v ? v : xstrdup("(no version)");
}

/* metadata of distributions in dir that provide module: "name version" strings and the
   metadata paths, parallel arrays */
static void
metadata(const char *dir, const char *mod, char ***desc, char ***where, size_t *n)
{
	char **names, *nm, *f, *norm_mod = normname(mod, strlen(mod));
	size_t nn, i, namelen_;
	struct buf b = {0};

	*n = 0;
	*desc = *where = NULL;
	names = listdir(dir, &nn);
	for (i = 0; i < nn; i++) {
		const char *e = names[i], *dash, *sfx;
		int yes = 0, isd;

		if (endswith(e, ".dist-info"))
			sfx = ".dist-info";
		else if (endswith(e, ".egg-info"))
			sfx = ".egg-info";
		else
			continue;
		dash = memchr(e, '-', strlen(e) - strlen(sfx));
		namelen_ = dash ? (size_t)(dash - e) : strlen(e) - strlen(sfx);
		nm = normname(e, namelen_);
		yes = strcmp(nm, norm_mod) == 0;
		f = xasprintf("%s/%s", dir, e);
		isd = os_isdir(f);
		free(f);
		if (!yes && isd) {
			f = xasprintf("%s/%s/top_level.txt", dir, e);
			if (readreg(f, &b, 1 << 20) == 0) {
				const char *p = b.s, *eol;
				for (; p < b.s + b.len && !yes; p = eol + 1) {
					eol = memchr(p, '\n', (size_t)(b.s + b.len - p));
					if (!eol)
						eol = b.s + b.len;
					yes = (size_t)(eol - p) == strlen(mod) && memcmp(p, mod, strlen(mod)) == 0;
				}
			} else if (strcmp(sfx, ".dist-info") == 0) {
				/* no top_level.txt: the first folder of each RECORD row */
				free(f);
				f = xasprintf("%s/%s/RECORD", dir, e);
				if (readreg(f, &b, 64 << 20) == 0) {
					const char *p = b.s, *eol;
					size_t ml = strlen(mod);
					for (; p < b.s + b.len && !yes; p = eol + 1) {
						eol = memchr(p, '\n', (size_t)(b.s + b.len - p));
						if (!eol)
							eol = b.s + b.len;
						yes = (size_t)(eol - p) > ml && memcmp(p, mod, ml) == 0 &&
						      (p[ml] == '/' || p[ml] == '.');
					}
				}
			}
			bufreset(&b);
			free(f);
		}
		if (yes) {
			char *ver;
			const char *vend;

			if (dash) {
				vend = e + strlen(e) - strlen(sfx);
				if (strcmp(sfx, ".egg-info") == 0) {
					const char *py = strstr(dash + 1, "-py");
					if (py && py < vend)
						vend = py;
				}
				ver = xstrndup(dash + 1, (size_t)(vend - dash - 1));
			} else {
				ver = metaversion(dir, e);
			}
			*desc = xrealloc(*desc, (*n + 1) * sizeof **desc);
			*where = xrealloc(*where, (*n + 1) * sizeof **where);
			(*desc)[*n] = xasprintf("%.*s %s", (int)namelen_, e, ver);
			(*where)[*n] = xasprintf("%s/%s", dir, e);
			(*n)++;
			free(ver);
		}
		free(nm);
	}
	buffree(&b);
	strs_free(names, nn);
	free(norm_mod);
}

/* true if a dist-info folder records an editable install (PEP 660 direct_url.json) */
static int
editablemeta(const char *distinfo)
{
	struct buf b = {0};
	char *f = xasprintf("%s/direct_url.json", distinfo);
	int yes = readreg(f, &b, 1 << 20) == 0 && b.s && strstr(b.s, "\"editable\"") &&
	          strstr(b.s, "true");

	buffree(&b);
	free(f);
	return yes;
}

/* the origin of a copy in words, e.g. "PYTHONPATH" or "line 1 of /x/dev.pth" */
char *
origintext(const struct state *st, const struct copy *c)
{
	const struct entry *e;

	if (c->kind == K_EDIT)
		return xasprintf("editable install, finder %s", c->editfile);
	e = &st->e[c->entry];
	switch (e->origin) {
	case O_PTH:
		return xasprintf("added by line %d of %s", e->pthline, e->pth);
	case O_PTHHOOK:
		return xasprintf("added by the import hook on line %d of %s", e->pthline, e->pth);
	case O_OTHER:
		return xasprintf("sys.path entry %s added at startup by code (sitecustomize or a .pth hook)", e->path);
	default:
		return xstrdup(origname[e->origin]);
	}
}

/* the origin of a copy (O_EDITABLE for an editable finder) */
static int
originof(const struct state *st, const struct copy *c)
{
	return c->kind == K_EDIT ? O_EDITABLE : st->e[c->entry].origin;
}

/* the fix for a copy that should not be there */
static char *
fixfor(const struct state *st, const struct copy *c, const char *mod)
{
	const struct entry *e = c->kind == K_EDIT ? NULL : &st->e[c->entry];

	switch (originof(st, c)) {
	case O_CWD:
		return xasprintf("run from another folder than %s (a script run here puts its folder "
		                 "first on sys.path), or build out of tree", e->path);
	case O_PYTHONPATH:
		return xasprintf("unset PYTHONPATH or drop %s from it (envclean removes PYTHONPATH)", e->path);
	case O_USER:
		return xasprintf("pip uninstall --user %s, or set PYTHONNOUSERSITE=1 (envclean sets it)", mod);
	case O_PTH:
		return xasprintf("remove line %d of %s (or the file)", e->pthline, e->pth);
	case O_PTHHOOK:
		return xasprintf("remove the import hook on line %d of %s (or the file)", e->pthline, e->pth);
	case O_EDITABLE:
		return xasprintf("pip uninstall the editable install of %s (finder %s)", mod, c->editfile);
	case O_SITE:
		return xasprintf("pip uninstall %s with the Python that owns %s, keeping one copy", mod, e->path);
	default:
		return xasprintf("find what adds %s to sys.path at startup (sitecustomize, .pth hooks) and "
		                 "remove it", e->path);
	}
}

/* one copy in words: path (origin; kind; source tree; metadata) */
static char *
describe(const struct state *st, const struct copy *c)
{
	char *o = origintext(st, c), *s;
	int tree = c->kind != K_EDIT && st->e[c->entry].srctree;

	int plain = c->kind == K_PKG || c->kind == K_EDIT;

	s = xasprintf("%s (%s%s%s%s%s%s; %s%s)", c->path, o, plain ? "" : "; ",
	              plain ? "" : kindname[c->kind], tree ? "; source tree with " : "",
	              tree ? srcmark(st->e[c->entry].path) : "", "", c->meta ? "metadata " : "no metadata",
	              c->meta ? c->meta : "");
	free(o);
	return s;
}

/* true if path is the same file as one of the copies already found */
static int
samefile(const struct copy *c, size_t nc, const char *path)
{
	struct stat a, b;
	size_t i;

	if (stat(path, &a) < 0)
		return 0;
	for (i = 0; i < nc; i++)
		if (stat(c[i].path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return 1;
	return 0;
}

/* true if two of the n "name version" descriptions name the same project */
static int
sameproject(char **desc, size_t n)
{
	size_t i, k;
	int same = 0;

	for (i = 0; i < n && !same; i++)
		for (k = i + 1; k < n && !same; k++) {
			char *a = normname(desc[i], strcspn(desc[i], " "));
			char *b = normname(desc[k], strcspn(desc[k], " "));
			same = strcmp(a, b) == 0;
			free(a);
			free(b);
		}
	return same;
}

/* one more copy of a module, found at path */
static struct copy *
addcopy(struct copy **c, size_t *nc, char *path, int kind, size_t entry)
{
	struct copy *n;

	*c = xrealloc(*c, (*nc + 1) * sizeof **c);
	n = &(*c)[(*nc)++];
	memset(n, 0, sizeof *n);
	n->path = path;
	n->kind = kind;
	n->entry = entry;
	return n;
}

/* the copies of mod, in the order the import system finds them, then the editable ones;
   *cwdseen when sys.path shows the working folder */
static void
findcopies(struct state *st, const char *mod, struct copy **c, size_t *nc, int *cwdseen)
{
	struct probe *pr = &st->pr;
	size_t i;
	int kind;
	char *p;

	for (i = 0; i < st->ne; i++) {
		if (st->e[i].origin == O_CWD)
			*cwdseen = 1;
		if (!os_isdir(st->e[i].path) || !(p = findin(pr, st->e[i].path, mod, &kind)))
			continue;
		if (samefile(*c, *nc, p))
			free(p);	/* one folder reached twice ('' and its absolute path) */
		else
			addcopy(c, nc, p, kind, i);
	}
	for (i = 0; i < pr->nedit; i++)
		if (!strcmp(pr->editable[3 * i + 1], mod))
			addcopy(c, nc, xstrdup(pr->editable[3 * i + 2]), K_EDIT, (size_t)-1)->editfile =
				xstrdup(pr->editable[3 * i]);
}

/* the metadata in sys.path entry i: beside its copy; stale or doubled */
static void
metain(struct state *st, const char *mod, size_t i, struct copy *c, size_t nc)
{
	size_t j, nmeta;
	char **desc, **where, *p, *s, *fix;
	int kind, here = -1, present = 0;

	metadata(st->e[i].path, mod, &desc, &where, &nmeta);
	for (j = 0; j < nc; j++) {
		if (c[j].kind == K_EDIT || c[j].entry != i)
			continue;
		present = 1;
		if (c[j].kind != K_NS)
			here = (int)j;
	}
	if (!present && nmeta) {
		/* the copy may have been deduplicated: this folder reached twice */
		p = findin(&st->pr, st->e[i].path, mod, &kind);
		present = p != NULL;
		free(p);
	}
	if (here >= 0 && nmeta)
		c[here].meta = xasprintf("%s", desc[0]);
	/* several projects may share a namespace package (nvidia, google); one project
	   twice, or two projects installing one regular module, is a conflict */
	if (nmeta > 1 && (here >= 0 || sameproject(desc, nmeta))) {
		s = xasprintf("%s: %zu metadata folders for one module in %s: %s and %s; pip and "
		              "importlib.metadata may read either", mod, nmeta, st->e[i].path,
		              desc[0], desc[1]);
		fix = xasprintf("remove the stale one (rm -r %s or %s, whichever is not the "
		                "installed version)", where[0], where[1]);
		addfinding(st, &(struct newfinding){L_PROBLEM, "metadata", mod,
		                                    s, fix, where[0], where[1]});
	}
	for (j = 0; j < nmeta; j++) {
		if (present || editablemeta(where[j]) || (nc && c[0].kind == K_EDIT))
			continue;
		s = xasprintf("%s: %s says %s is installed in %s, but that folder holds no "
		              "%s; Python imports %s", mod, where[j], desc[j],
		              st->e[i].path, mod, nc ? c[0].path : "nothing");
		fix = xasprintf("remove the stale metadata (rm -r %s) or reinstall %s", where[j], mod);
		addfinding(st, &(struct newfinding){L_PROBLEM, "metadata", mod,
		                                    s, fix, where[j], nc ? c[0].path : NULL});
	}
	strs_free(desc, nmeta);
	strs_free(where, nmeta);
}

/* an editable copy's metadata lives beside its finder */
static void
editmeta(const char *mod, struct copy *c, size_t nc)
{
	size_t i, nmeta;
	char **desc, **where, *d, *slash;

	for (i = 0; i < nc; i++) {
		if (c[i].kind != K_EDIT || !(slash = strrchr(c[i].editfile, '/')))
			continue;
		d = xstrndup(c[i].editfile, (size_t)(slash - c[i].editfile));
		metadata(d, mod, &desc, &where, &nmeta);
		if (nmeta)
			c[i].meta = xstrdup(desc[0]);
		strs_free(desc, nmeta);
		strs_free(where, nmeta);
		free(d);
	}
}

/* several regular copies: the first one wins, the others wait to be mixed in */
static void
shadowed(struct state *st, const char *mod, struct copy *c, size_t nc, size_t nreg)
{
	struct copy *first = NULL;
	char *d0, *d1, *s, *fix;
	size_t i;

	for (i = 0; i < nc; i++) {
		if (c[i].kind == K_NS)
			continue;
		if (!first) {
			first = &c[i];
			continue;
		}
		d0 = describe(st, first);
		d1 = describe(st, &c[i]);
		s = xasprintf("%s: %zu copies on sys.path: %s is imported and shadows %s", mod,
		              nreg, d0, d1);
		fix = fixfor(st, originof(st, first) == O_SITE || originof(st, first) == O_STDLIB ?
		              &c[i] : first, mod);
		addfinding(st, &(struct newfinding){L_PROBLEM, "copies", mod,
		                                    s, fix, first->path, c[i].path});
		free(d0);
		free(d1);
	}
}

/* the one regular copy comes from where a build should not take it */
static void
onlycopy(struct state *st, const char *mod, struct copy *only)
{
	const struct entry *e = &st->e[only->entry];
	char *s;

	if (originof(st, only) == O_CWD && e->srctree) {
		s = xasprintf("%s: the working folder %s is a source checkout (%s + %s); Python "
		              "imports it instead of an installed %s", mod, e->path,
		              srcmark(e->path), only->path, mod);
		addfinding(st, &(struct newfinding){L_PROBLEM, "cwd", mod,
		                                    s, fixfor(st, only, mod), only->path, NULL});
	} else if (originof(st, only) == O_PYTHONPATH && e->srctree) {
		s = xasprintf("%s: PYTHONPATH holds the source tree %s (%s + %s); Python imports it "
		              "instead of an installed %s", mod, e->path,
		              srcmark(e->path), only->path, mod);
		addfinding(st, &(struct newfinding){L_PROBLEM, "pythonpath", mod,
		                                    s, fixfor(st, only, mod), only->path, NULL});
	} else if (originof(st, only) == O_USER) {
		s = xasprintf("%s: the user site %s holds the only copy (%s) and is enabled; the build "
		              "then depends on ~/.local", mod, e->path, only->path);
		addfinding(st, &(struct newfinding){L_PROBLEM, "usersite", mod,
		                                    s, fixfor(st, only, mod), only->path, NULL});
	}
}

/* a source checkout in the working folder that sys.path does not show: a script run
   there (python setup.py) puts it first */
static void
hiddencwd(struct state *st, const char *mod, const struct copy *c, size_t nreg)
{
	struct probe *pr = &st->pr;
	char *p, *s, *fix;
	int kind;

	p = findin(pr, pr->cwd, mod, &kind);
	if (p && kind != K_NS && srctree(pr->cwd)) {
		s = xasprintf("%s: the working folder %s is a source checkout (%s + %s); a script run "
		              "there (python %s) imports it before %s", mod, pr->cwd,
		              srcmark(pr->cwd), p, srcmark(pr->cwd), nreg ? c[0].path : "any installed copy");
		fix = xasprintf("run the build from another folder than %s, or build out of tree", pr->cwd);
		addfinding(st, &(struct newfinding){L_PROBLEM, "cwd", mod,
		                                    s, fix, p, nreg ? c[0].path : NULL});
	}
	free(p);
}

/* the user site holding a copy while disabled here; mod imported at startup */
static void
usersite_startup(struct state *st, const char *mod)
{
	struct probe *pr = &st->pr;
	char *p, *s, *fix;
	size_t i;
	int kind;

	if (!pr->user_site_enabled && pr->user_site && *pr->user_site) {
		p = findin(pr, pr->user_site, mod, &kind);
		if (p && kind != K_NS) {
			s = xasprintf("%s: the user site %s holds a copy (%s); it is disabled here, but "
			              "enabled for any run without PYTHONNOUSERSITE=1 or a venv", mod,
			              pr->user_site, p);
			fix = xasprintf("pip uninstall --user %s", mod);
			addfinding(st, &(struct newfinding){L_NOTE, "usersite", mod,
			                                    s, fix, p, NULL});
		}
		free(p);
	}
	for (i = 0; i < pr->nloaded; i++) {
		if (strcmp(pr->loaded[2 * i], mod) != 0)
			continue;
		s = xasprintf("%s: imported at interpreter startup (by a .pth hook or sitecustomize) "
		              "from %s; every process gets this copy before any path setting", mod,
		              pr->loaded[2 * i + 1]);
		fix = xstrdup("find the .pth import hook or sitecustomize that imports it (envclean "
		              "--check -v lists them) and remove it");
		addfinding(st, &(struct newfinding){L_PROBLEM, "startup", mod,
		                                    s, fix, pr->loaded[2 * i + 1], NULL});
	}
}

/* check one module */
void
checkmod(struct state *st, const char *mod)
{
	struct copy *c = NULL, *only = NULL;
	size_t nc = 0, i, nreg = 0;
	int cwdseen = 0;

	findcopies(st, mod, &c, &nc, &cwdseen);
	for (i = 0; i < st->ne; i++)
		if (st->e[i].origin != O_STDLIB && os_isdir(st->e[i].path))
			metain(st, mod, i, c, nc);
	editmeta(mod, c, nc);
	for (i = 0; i < nc; i++)
		if (c[i].kind != K_NS) {
			nreg++;
			only = &c[i];
		}
	if (nreg > 1)
		shadowed(st, mod, c, nc, nreg);
	else if (nreg == 1)
		onlycopy(st, mod, only);
	if (!cwdseen)
		hiddencwd(st, mod, c, nreg);
	usersite_startup(st, mod);
	check_ldpath(st, mod, c, nc, nreg);

	st->mods = xrealloc(st->mods, (st->nmods + 1) * sizeof *st->mods);
	st->mods[st->nmods].name = mod;
	st->mods[st->nmods].c = c;
	st->mods[st->nmods].nc = nc;
	st->nmods++;
}
