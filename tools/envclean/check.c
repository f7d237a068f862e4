/* envclean --check: copies of a module, import hooks, source trees, user site, libraries */
#include "check.h"
#include "os.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "policy.h"
#include "proc.h"
#include "strv.h"
#include "util.h"

/* Asked of the interpreter once: sys.path after site ran, the site folders, the user
   site, extension suffixes, and what startup already imported. It imports nothing of
   the modules checked (they are only looked up in sys.modules). */
static const char probe_py[] =
	"import sys, os, site, _imp\n"
	"w = sys.stdout.buffer.write\n"
	"sys.stdout.flush()\n"
	"w(b'\\0envclean-probe\\0')\n"
	"def o(k, v):\n"
	"    w(k.encode() + b'\\0' + os.fsencode(str(v)) + b'\\0')\n"
	"o('version', '%d.%d.%d' % sys.version_info[:3])\n"
	"o('executable', sys.executable)\n"
	"o('prefix', sys.prefix)\n"
	"o('base_prefix', getattr(sys, 'base_prefix', sys.prefix))\n"
	"o('cwd', os.getcwd())\n"
	"o('stdlib', os.path.dirname(os.__file__))\n"
	"for p in sys.path: o('path', p)\n"
	"for p in getattr(site, 'getsitepackages', lambda: [])(): o('site', p)\n"
	"o('user_site', site.getusersitepackages() if hasattr(site, 'getusersitepackages') else '')\n"
	"o('user_site_enabled', bool(site.ENABLE_USER_SITE))\n"
	"for s in _imp.extension_suffixes(): o('ext', s)\n"
	"for n in ('sitecustomize', 'usercustomize'):\n"
	"    m = sys.modules.get(n)\n"
	"    if m is not None and getattr(m, '__file__', None): o(n, m.__file__)\n"
	"for n in sys.argv[1:]:\n"
	"    m = sys.modules.get(n)\n"
	"    if m is not None: o('loaded', n); o('loadedfile', getattr(m, '__file__', None) or '(built in)')\n"
	"for n, m in list(sys.modules.items()):\n"
	"    mp = getattr(m, 'MAPPING', None) if n.startswith('__editable__') else None\n"
	"    if isinstance(mp, dict):\n"
	"        for k, v in mp.items(): o('edfile', getattr(m, '__file__', '') or n); o('edmod', k); o('edpath', v)\n"
	"o('end', '')\n";

/* where a sys.path entry came from */
enum { O_CWD, O_PYTHONPATH, O_USER, O_SITE, O_PTH, O_PTHHOOK, O_EDITABLE, O_STDLIB, O_OTHER };
static const char *const origname[] = {
	"the working folder", "PYTHONPATH", "user site", "site-packages", ".pth path line",
	".pth import hook", "editable install", "standard library", "added at startup",
};

/* kinds of copies */
enum { K_PKG, K_EXT, K_PY, K_PYC, K_NS, K_EDIT };
static const char *const kindname[] = {
	"package", "extension module", "module", "bytecode module", "namespace portion",
	"editable install",
};

/* one sys.path entry, absolute, with its origin */
struct entry {
	char *path;        /* absolute */
	int origin;
	char *pth;         /* .pth file that adds it, if any */
	int pthline;
	int srctree;       /* holds setup.py / pyproject.toml */
};

/* one copy of a module */
struct copy {
	char *path;        /* the package folder or module file */
	int kind;
	size_t entry;      /* index in the entries; editable: (size_t)-1 */
	char *editfile;    /* the finder file of an editable copy */
	char *meta;        /* metadata found beside it: "name version (file)" */
};

/* one .pth line */
struct pthline {
	char *file;        /* the .pth file */
	int line;
	int kind;
	char *text;
	char *target;      /* PTH_PATH: the absolute folder */
};

/* a finding: one line */
enum { L_PROBLEM, L_NOTE };
struct finding {
	int level;
	const char *kind;
	char *module;
	char *text;
	char *fix;
	char **paths;
	size_t npaths;
};

struct state {
	const struct checkopt *o;
	struct probe pr;
	struct entry *e;
	size_t ne;
	struct pthline *pl;
	size_t npl, plcap;
	struct finding *f;
	size_t nf, fcap;
	char **pypath;     /* PYTHONPATH entries, absolute */
	size_t npypath;
	struct modres {    /* the copies found of each module, for --json */
		const char *name;
		struct copy *c;
		size_t nc;
	} *mods;
	size_t nmods;
};


/* qsort comparison of two strings */
static int
cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the sorted names in a folder (without . and ..), or NULL with *n = 0 */
static char **
listdir(const char *d, size_t *n)
{
	DIR *dp = opendir(d);
	struct dirent *de;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!dp)
		return NULL;
	while ((de = readdir(dp))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		v = xgrow(v, &cap, *n + 1, sizeof *v);
		v[(*n)++] = xstrdup(de->d_name);
	}
	closedir(dp);
	if (*n)
		qsort(v, *n, sizeof *v, cmpstr);
	return v;
}

/* append a copy of s to a string array */
static void
push(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = xstrdup(s);
}

/* a failed parse: release the pair and triple lists while their counts are raw */
static int
probefail(struct probe *pr)
{
	strs_free(pr->loaded, pr->nloaded);
	strs_free(pr->editable, pr->nedit);
	pr->loaded = pr->editable = NULL;
	pr->nloaded = pr->nedit = 0;
	return -1;
}

int
probe_parse(struct probe *pr, const char *s, size_t n)
{
	const char *end = s + n, *k, *v;
	int done = 0;

	memset(pr, 0, sizeof *pr);
	/* startup hooks may print before the answer: it starts after the marker */
	k = memmem(s, n, "\0envclean-probe\0", 16);
	if (!k)
		return -1;
	s = k + 16;
	while (s < end) {
		k = s;
		s = memchr(s, 0, (size_t)(end - s));
		if (!s)
			return probefail(pr);
		v = ++s;
		s = memchr(s, 0, (size_t)(end - s));
		if (!s)
			return probefail(pr);
		s++;
		if (done)
			return probefail(pr);
#define ONE(name) else if (strcmp(k, #name) == 0) { free(pr->name); pr->name = xstrdup(v); }
		if (strcmp(k, "end") == 0)
			done = 1;
		ONE(version) ONE(executable) ONE(prefix) ONE(base_prefix) ONE(cwd) ONE(stdlib)
		ONE(user_site) ONE(sitecustomize) ONE(usercustomize)
		else if (strcmp(k, "user_site_enabled") == 0)
			pr->user_site_enabled = strcmp(v, "True") == 0;
		else if (strcmp(k, "path") == 0)
			push(&pr->path, &pr->npath, v);
		else if (strcmp(k, "site") == 0)
			push(&pr->site, &pr->nsite, v);
		else if (strcmp(k, "ext") == 0)
			push(&pr->ext, &pr->next, v);
		else if (strcmp(k, "loaded") == 0 || strcmp(k, "loadedfile") == 0)
			push(&pr->loaded, &pr->nloaded, v);
		else if (strcmp(k, "edfile") == 0 || strcmp(k, "edmod") == 0 || strcmp(k, "edpath") == 0)
			push(&pr->editable, &pr->nedit, v);
#undef ONE
	}
	if (!done || !pr->version || !pr->cwd || !pr->stdlib || pr->nloaded % 2 || pr->nedit % 3)
		return probefail(pr);
	pr->nloaded /= 2;
	pr->nedit /= 3;
	return 0;
}

void
probe_free(struct probe *pr)
{
	free(pr->version);
	free(pr->executable);
	free(pr->prefix);
	free(pr->base_prefix);
	free(pr->cwd);
	free(pr->stdlib);
	free(pr->user_site);
	free(pr->sitecustomize);
	free(pr->usercustomize);
	strs_free(pr->path, pr->npath);
	strs_free(pr->site, pr->nsite);
	strs_free(pr->ext, pr->next);
	strs_free(pr->loaded, pr->nloaded * 2);
	strs_free(pr->editable, pr->nedit * 3);
	memset(pr, 0, sizeof *pr);
}

int
pth_kind(const char *line)
{
	const char *p;

	/* as site.addpackage: '#' in the first column, blank after strip(), "import " or
	   "import\t" in the first column; anything else is a folder to add */
	if (*line == '#')
		return PTH_BLANK;
	for (p = line; *p && isspace((unsigned char)*p); p++)
		;
	if (!*p)
		return PTH_BLANK;
	if (strncmp(line, "import ", 7) == 0 || strncmp(line, "import\t", 7) == 0)
		return PTH_IMPORT;
	return PTH_PATH;
}

/* true if word occurs in s with no identifier character on either side */
static int
hasword(const char *s, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = s; (p = strstr(p, word)); p++) {
		int before = p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';
		if (!before && !after)
			return 1;
	}
	return 0;
}

int
pth_touches(const char *line, const char *module)
{
	static const char *const hooks[] = {
		"sys.path", "sys.meta_path", "sys.modules", "sys.path_hooks", "PYTHONPATH",
		"site.addsitedir",
	};
	size_t i;

	for (i = 0; i < sizeof hooks / sizeof hooks[0]; i++)
		if (strstr(line, hooks[i]))
			return 1;
	return module && hasword(line, module);
}

char *
normname(const char *s, size_t n)
{
	struct buf b = {0};
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '-' || s[i] == '_' || s[i] == '.') {
			if (!b.len || b.s[b.len - 1] != '_')
				bufputc(&b, '_');
		} else {
			bufputc(&b, tolower((unsigned char)s[i]));
		}
	}
	if (!b.s)
		bufputs(&b, "");
	return bufdetach(&b);
}

/* record one finding; text and fix become owned by it */
static void
addfinding(struct state *st, int level, const char *kind, const char *module, char *text,
           char *fix, const char *p1, const char *p2)
{
	struct finding *f;

	st->f = xgrow(st->f, &st->fcap, st->nf + 1, sizeof *st->f);
	f = &st->f[st->nf++];
	memset(f, 0, sizeof *f);
	f->level = level;
	f->kind = kind;
	f->module = module ? xstrdup(module) : NULL;
	f->text = text;
	f->fix = fix;
	if (p1)
		push(&f->paths, &f->npaths, p1);
	if (p2)
		push(&f->paths, &f->npaths, p2);
}

/* true if dir looks like a project root (a source checkout) */
static int
srctree(const char *dir)
{
	static const char *const marks[] = {"setup.py", "pyproject.toml", "setup.cfg"};
	size_t i;
	char *f;
	int yes = 0;

	for (i = 0; i < 3 && !yes; i++) {
		f = xasprintf("%s/%s", dir, marks[i]);
		yes = os_isfile(f);
		free(f);
	}
	return yes;
}

/* the project-root marker file in dir, for messages */
static const char *
srcmark(const char *dir)
{
	static const char *const marks[] = {"setup.py", "pyproject.toml", "setup.cfg"};
	size_t i;
	char *f;

	for (i = 0; i < 3; i++) {
		f = xasprintf("%s/%s", dir, marks[i]);
		if (os_isfile(f)) {
			free(f);
			return marks[i];
		}
		free(f);
	}
	return "setup.py";
}

/* read the .pth files of the site folders the interpreter processed */
static void
readpth(struct state *st)
{
	struct probe *pr = &st->pr;
	char **sites = NULL, **names, *f, *abs;
	size_t nsites = 0, i, j, nn;
	struct buf b = {0};

	for (i = 0; i < pr->nsite; i++)
		push(&sites, &nsites, pr->site[i]);
	if (pr->user_site_enabled && pr->user_site && *pr->user_site)
		push(&sites, &nsites, pr->user_site);
	for (i = 0; i < nsites; i++) {
		names = listdir(sites[i], &nn);
		for (j = 0; j < nn; j++) {
			const char *p, *eol;
			int line = 0;

			if (!endswith(names[j], ".pth") || names[j][0] == '.')
				continue;
			f = xasprintf("%s/%s", sites[i], names[j]);
			if (readfile(f, &b, 1 << 20) < 0) {
				free(f);
				continue;
			}
			for (p = b.s; p && p < b.s + b.len; p = eol + 1) {
				struct pthline *pl;
				char *text;

				eol = memchr(p, '\n', (size_t)(b.s + b.len - p));
				if (!eol)
					eol = b.s + b.len;
				line++;
				text = xstrndup(p, (size_t)(eol - p));
				if (*text && text[strlen(text) - 1] == '\r')
					text[strlen(text) - 1] = 0;
				if (pth_kind(text) == PTH_BLANK) {
					free(text);
					continue;
				}
				st->pl = xgrow(st->pl, &st->plcap, st->npl + 1, sizeof *st->pl);
				pl = &st->pl[st->npl++];
				pl->file = xstrdup(f);
				pl->line = line;
				pl->kind = pth_kind(text);
				pl->text = text;
				pl->target = NULL;
				if (pl->kind == PTH_PATH) {
					size_t tl = strlen(text);

					while (tl && isspace((unsigned char)text[tl - 1]))
						text[--tl] = 0;  /* site.py: line.rstrip() */
					abs = os_abspath(text, sites[i]);
					pl->target = abs;
				}
				if (eol >= b.s + b.len)
					break;
			}
			bufreset(&b);
			free(f);
		}
		strs_free(names, nn);
	}
	buffree(&b);
	strs_free(sites, nsites);
}

/* true if text holds path as a whole path (not the start of a longer one) */
static int
mentions(const char *text, const char *path)
{
	const char *p;
	size_t n = strlen(path);

	unsigned char c;

	for (p = text; (p = strstr(p, path)); p++) {
		c = (unsigned char)p[n];
		if (c == '/')
			c = (unsigned char)p[n + 1];  /* one trailing slash */
		if (c == 0 || !(isalnum(c) || c == '_' || c == '-' || c == '.' || c == '/'))
			return 1;
	}
	return 0;
}

/* decide the origin of each sys.path entry */
static void
entries(struct state *st)
{
	struct probe *pr = &st->pr;
	const char *pp = getenv("PYTHONPATH"), *p, *end;
	size_t i, j;
	char *a;

	if (pp && *pp) {
		for (p = pp;; p = end + 1) {
			end = strchr(p, ':');
			if (!end)
				end = p + strlen(p);
			if (end > p) {
				char *ent = xstrndup(p, (size_t)(end - p));
				st->pypath = xrealloc(st->pypath, (st->npypath + 1) * sizeof *st->pypath);
				st->pypath[st->npypath++] = os_abspath(ent, pr->cwd);
				free(ent);
			}
			if (!*end)
				break;
		}
	}
	st->e = xcalloc(pr->npath + 1, sizeof *st->e);
	for (i = 0; i < pr->npath; i++) {
		struct entry *e = &st->e[st->ne++];
		const char *raw = pr->path[i];

		e->path = os_abspath(*raw ? raw : ".", pr->cwd);
		e->origin = O_OTHER;
		e->srctree = os_isdir(e->path) && srctree(e->path);
		if (!*raw || (i == 0 && strcmp(e->path, pr->cwd) == 0 && !os_isfile(e->path))) {
			e->origin = O_CWD;
			continue;
		}
		for (j = 0; j < st->npypath; j++)
			if (strcmp(st->pypath[j], e->path) == 0)
				e->origin = O_PYTHONPATH;
		if (e->origin != O_OTHER)
			continue;
		if (pr->user_site && *pr->user_site) {
			a = os_abspath(pr->user_site, pr->cwd);
			if (strcmp(a, e->path) == 0)
				e->origin = O_USER;
			free(a);
			if (e->origin != O_OTHER)
				continue;
		}
		for (j = 0; j < pr->nsite; j++) {
			a = os_abspath(pr->site[j], pr->cwd);
			if (strcmp(a, e->path) == 0)
				e->origin = O_SITE;
			free(a);
		}
		if (e->origin != O_OTHER)
			continue;
		for (j = 0; j < st->npl && e->origin == O_OTHER; j++) {
			if (st->pl[j].kind == PTH_PATH && strcmp(st->pl[j].target, e->path) == 0)
				e->origin = O_PTH;
			else if (st->pl[j].kind == PTH_IMPORT && mentions(st->pl[j].text, e->path))
				e->origin = O_PTHHOOK;
			if (e->origin != O_OTHER) {
				e->pth = st->pl[j].file;
				e->pthline = st->pl[j].line;
			}
		}
		if (e->origin != O_OTHER)
			continue;
		a = os_abspath(pr->stdlib, pr->cwd);
		if (startswith(e->path, a))
			e->origin = O_STDLIB;
		else {
			char *d = xstrdup(a), *s = strrchr(d, '/');
			if (s && s != d)
				*s = 0;
			/* pythonNN.zip lives beside the standard library folder */
			if (startswith(e->path, d) && endswith(e->path, ".zip"))
				e->origin = O_STDLIB;
			free(d);
		}
		free(a);
	}
}

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
		if (readfile(f, &b, 1 << 20) == 0 && b.s) {
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
			if (readfile(f, &b, 1 << 20) == 0) {
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
				if (readfile(f, &b, 64 << 20) == 0) {
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
	int yes = readfile(f, &b, 1 << 20) == 0 && b.s && strstr(b.s, "\"editable\"") &&
	          strstr(b.s, "true");

	buffree(&b);
	free(f);
	return yes;
}

/* the origin of a copy in words, e.g. "PYTHONPATH" or "line 1 of /x/dev.pth" */
static char *
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

/* check one module */
static void
checkmod(struct state *st, const char *mod)
{
	struct probe *pr = &st->pr;
	struct copy *c = NULL;
	size_t nc = 0, i, j, nmeta, nreg = 0;
	char **desc, **where, *p, *s, *fix;
	int kind, cwdseen = 0, editmeta;

	/* the copies, in the order the import system finds them */
	for (i = 0; i < st->ne; i++) {
		if (st->e[i].origin == O_CWD)
			cwdseen = 1;
		if (!os_isdir(st->e[i].path))
			continue;
		p = findin(pr, st->e[i].path, mod, &kind);
		if (!p)
			continue;
		if (samefile(c, nc, p)) {
			free(p);	/* one folder reached twice ('' and its absolute path) */
			continue;
		}
		c = xrealloc(c, (nc + 1) * sizeof *c);
		memset(&c[nc], 0, sizeof *c);
		c[nc].path = p;
		c[nc].kind = kind;
		c[nc].entry = i;
		nc++;
	}
	for (i = 0; i < pr->nedit; i++) {
		if (strcmp(pr->editable[3 * i + 1], mod) != 0)
			continue;
		c = xrealloc(c, (nc + 1) * sizeof *c);
		memset(&c[nc], 0, sizeof *c);
		c[nc].path = xstrdup(pr->editable[3 * i + 2]);
		c[nc].kind = K_EDIT;
		c[nc].entry = (size_t)-1;
		c[nc].editfile = xstrdup(pr->editable[3 * i]);
		nc++;
	}

	/* metadata: beside each copy; stale or doubled metadata on sys.path */
	for (i = 0; i < st->ne; i++) {
		int here = -1, present = 0;

		if (st->e[i].origin == O_STDLIB || !os_isdir(st->e[i].path))
			continue;
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
			p = findin(pr, st->e[i].path, mod, &kind);
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
			addfinding(st, L_PROBLEM, "metadata", mod, s, fix, where[0], where[1]);
		}
		for (j = 0; j < nmeta; j++) {
			editmeta = editablemeta(where[j]);
			if (!present && !editmeta && !(nc && c[0].kind == K_EDIT)) {
				s = xasprintf("%s: %s says %s is installed in %s, but that folder holds no "
				              "%s; Python imports %s", mod, where[j], desc[j],
				              st->e[i].path, mod, nc ? c[0].path : "nothing");
				fix = xasprintf("remove the stale metadata (rm -r %s) or reinstall %s",
				                where[j], mod);
				addfinding(st, L_PROBLEM, "metadata", mod, s, fix, where[j], nc ? c[0].path : NULL);
			}
		}
		strs_free(desc, nmeta);
		strs_free(where, nmeta);
	}

	/* an editable copy's metadata lives beside its finder */
	for (i = 0; i < nc; i++) {
		char *d, *slash;

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

	/* several regular copies: the first one wins, the others wait to be mixed in */
	for (i = 0; i < nc; i++)
		if (c[i].kind != K_NS)
			nreg++;
	if (nreg > 1) {
		struct copy *first = NULL;

		for (i = 0; i < nc; i++) {
			char *d0, *d1;

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
			addfinding(st, L_PROBLEM, "copies", mod, s, fix, first->path, c[i].path);
			free(d0);
			free(d1);
		}
	} else if (nreg == 1) {
		struct copy *only = NULL;

		for (i = 0; i < nc; i++)
			if (c[i].kind != K_NS)
				only = &c[i];
		if (originof(st, only) == O_CWD && st->e[only->entry].srctree) {
			s = xasprintf("%s: the working folder %s is a source checkout (%s + %s); Python "
			              "imports it instead of an installed %s", mod, st->e[only->entry].path,
			              srcmark(st->e[only->entry].path), only->path, mod);
			addfinding(st, L_PROBLEM, "cwd", mod, s, fixfor(st, only, mod), only->path, NULL);
		} else if (originof(st, only) == O_PYTHONPATH && st->e[only->entry].srctree) {
			s = xasprintf("%s: PYTHONPATH holds the source tree %s (%s + %s); Python imports it "
			              "instead of an installed %s", mod, st->e[only->entry].path,
			              srcmark(st->e[only->entry].path), only->path, mod);
			addfinding(st, L_PROBLEM, "pythonpath", mod, s, fixfor(st, only, mod), only->path, NULL);
		} else if (originof(st, only) == O_USER) {
			s = xasprintf("%s: the user site %s holds the only copy (%s) and is enabled; the build "
			              "then depends on ~/.local", mod, st->e[only->entry].path, only->path);
			addfinding(st, L_PROBLEM, "usersite", mod, s, fixfor(st, only, mod), only->path, NULL);
		}
	}

	/* a source checkout in the working folder that sys.path does not show: a script run
	   there (python setup.py) puts it first */
	if (!cwdseen) {
		p = findin(pr, pr->cwd, mod, &kind);
		if (p && kind != K_NS && srctree(pr->cwd)) {
			s = xasprintf("%s: the working folder %s is a source checkout (%s + %s); a script run "
			              "there (python %s) imports it before %s", mod, pr->cwd,
			              srcmark(pr->cwd), p, srcmark(pr->cwd), nreg ? c[0].path : "any installed copy");
			fix = xasprintf("run the build from another folder than %s, or build out of tree", pr->cwd);
			addfinding(st, L_PROBLEM, "cwd", mod, s, fix, p, nreg ? c[0].path : NULL);
		}
		free(p);
	}

	/* the user site holding a copy while disabled here */
	if (!pr->user_site_enabled && pr->user_site && *pr->user_site) {
		p = findin(pr, pr->user_site, mod, &kind);
		if (p && kind != K_NS) {
			s = xasprintf("%s: the user site %s holds a copy (%s); it is disabled here, but "
			              "enabled for any run without PYTHONNOUSERSITE=1 or a venv", mod,
			              pr->user_site, p);
			fix = xasprintf("pip uninstall --user %s", mod);
			addfinding(st, L_NOTE, "usersite", mod, s, fix, p, NULL);
		}
		free(p);
	}

	/* already imported at startup */
	for (i = 0; i < pr->nloaded; i++) {
		if (strcmp(pr->loaded[2 * i], mod) != 0)
			continue;
		s = xasprintf("%s: imported at interpreter startup (by a .pth hook or sitecustomize) "
		              "from %s; every process gets this copy before any path setting", mod,
		              pr->loaded[2 * i + 1]);
		fix = xstrdup("find the .pth import hook or sitecustomize that imports it (envclean "
		              "--check -v lists them) and remove it");
		addfinding(st, L_PROBLEM, "startup", mod, s, fix, pr->loaded[2 * i + 1], NULL);
	}

	/* libraries the module ships, reached through LD_LIBRARY_PATH from elsewhere */
	if (nreg) {
		struct copy *first = NULL;
		const char *ld = getenv("LD_LIBRARY_PATH"), *q, *end;
		char **libs = NULL, **libpath = NULL, **names, *d;
		size_t nlib = 0, nl = 0, k, nn;
		struct stat sa, sb;

		for (i = 0; i < nc && !first; i++)
			if (c[i].kind != K_NS)
				first = &c[i];
		if (ld && *ld && first->kind == K_PKG) {
			static const char *const sub[] = {"", "/lib", "/lib64", "/.libs", "/_libs"};
			char *base = xstrdup(first->path);

			for (k = 0; k < 6; k++) {
				d = k < 5 ? xasprintf("%s%s", base, sub[k]) : xasprintf("%s.libs", base);
				names = listdir(d, &nn);
				for (j = 0; j < nn; j++) {
					if (!startswith(names[j], "lib") || !strstr(names[j], ".so"))
						continue;
					p = xasprintf("%s/%s", d, names[j]);
					if (os_isfile(p)) {
						push(&libs, &nlib, names[j]);
						push(&libpath, &nl, p);
					}
					free(p);
				}
				strs_free(names, nn);
				free(d);
			}
			free(base);
			for (q = ld; nlib;) {
				char *dir;

				end = strchr(q, ':');
				if (!end)
					end = q + strlen(q);
				dir = end > q ? xstrndup(q, (size_t)(end - q)) : xstrdup(".");
				d = os_abspath(dir, pr->cwd);
				free(dir);
				names = listdir(d, &nn);
				for (k = 0; k < nlib; k++) {
					const char *so = strstr(libs[k], ".so");
					size_t stem = (size_t)(so - libs[k]) + 3;

					for (j = 0; j < nn; j++) {
						if (strncmp(names[j], libs[k], stem) != 0 ||
						    (names[j][stem] != 0 && names[j][stem] != '.'))
							continue;
						p = xasprintf("%s/%s", d, names[j]);
						if (stat(p, &sa) == 0 && stat(libpath[k], &sb) == 0 &&
						    (sa.st_dev != sb.st_dev || sa.st_ino != sb.st_ino)) {
							s = xasprintf("%s: LD_LIBRARY_PATH reaches %s, another copy of %s "
							              "than the one %s ships (%s); the loader takes the "
							              "LD_LIBRARY_PATH one first and two builds meet in "
							              "one process", mod, p, libs[k], mod, libpath[k]);
							fix = xasprintf("unset LD_LIBRARY_PATH or drop %s from it "
							                "(envclean removes LD_LIBRARY_PATH)", d);
							addfinding(st, L_PROBLEM, "ldpath", mod, s, fix, p, libpath[k]);
						}
						free(p);
						break;
					}
				}
				strs_free(names, nn);
				free(d);
				if (!*end)
					break;
				q = end + 1;
			}
			strs_free(libs, nlib);
			strs_free(libpath, nl);
		}
	}

	st->mods = xrealloc(st->mods, (st->nmods + 1) * sizeof *st->mods);
	st->mods[st->nmods].name = mod;
	st->mods[st->nmods].c = c;
	st->mods[st->nmods].nc = nc;
	st->nmods++;
}

/* findings that do not depend on one module: import hooks, customize files */
static void
checkhooks(struct state *st)
{
	struct probe *pr = &st->pr;
	size_t i, m;
	const char *base;
	char *s, *fix, *stdlib;
	int bad;

	for (i = 0; i < st->npl; i++) {
		struct pthline *pl = &st->pl[i];

		base = strrchr(pl->file, '/');
		base = base ? base + 1 : pl->file;
		if (pl->kind == PTH_PATH) {
			if (strcmp(base, "easy-install.pth") == 0 || startswith(base, "__editable__")) {
				s = xasprintf("%s:%d: %s adds %s to sys.path (a develop or editable install)",
				              pl->file, pl->line, base, pl->target);
				addfinding(st, L_NOTE, "pth", NULL, s,
				           xstrdup("pip uninstall the package installed in development mode"),
				           pl->file, pl->target);
			}
			continue;
		}
		bad = 0;
		for (m = 0; m < st->o->nmodules && !bad; m++)
			bad = pth_touches(pl->text, st->o->modules[m]);
		if (strcmp(base, "distutils-precedence.pth") == 0 || endswith(base, "-nspkg.pth") ||
		    strcmp(base, "_virtualenv.pth") == 0 ||
		    (startswith(base, "__editable__") && strstr(pl->text, "__editable__")))
			bad = 0;
		s = xasprintf("%s:%d: import hook runs at every interpreter start%s: %.120s%s", pl->file,
		              pl->line, bad ? " and changes what gets imported" : "", pl->text,
		              strlen(pl->text) > 120 ? "..." : "");
		fix = xasprintf("remove line %d of %s (or the file) if you did not install it on purpose",
		                pl->line, pl->file);
		addfinding(st, bad ? L_PROBLEM : L_NOTE, "pth", NULL, s, fix, pl->file, NULL);
	}
	stdlib = os_abspath(pr->stdlib, pr->cwd);
	if (pr->sitecustomize) {
		bad = !startswith(pr->sitecustomize, stdlib) && !startswith(pr->sitecustomize, "/etc/");
		s = xasprintf("%s: sitecustomize runs at every interpreter start%s", pr->sitecustomize,
		              bad ? " and can change sys.path" : " (installed with the interpreter)");
		fix = xasprintf("remove %s if you did not install it on purpose", pr->sitecustomize);
		addfinding(st, bad ? L_PROBLEM : L_NOTE, "sitecustomize", NULL, s, fix, pr->sitecustomize, NULL);
	}
	if (pr->usercustomize) {
		s = xasprintf("%s: usercustomize from the user site runs at every interpreter start",
		              pr->usercustomize);
		fix = xasprintf("remove %s, or set PYTHONNOUSERSITE=1 (envclean sets it)", pr->usercustomize);
		addfinding(st, L_PROBLEM, "usercustomize", NULL, s, fix, pr->usercustomize, NULL);
	}
	free(stdlib);
}

/* print the findings: lines (notes only with -v) or one JSON object */
static void
report(struct state *st)
{
	struct buf b = {0};
	struct json j;
	size_t i, k;

	if (st->o->json) {
		json_init(&j, &b);
		json_obj(&j);
		json_kstr(&j, "python", st->pr.executable);
		json_kstr(&j, "version", st->pr.version);
		json_kstr(&j, "prefix", st->pr.prefix);
		json_kstr(&j, "cwd", st->pr.cwd);
		json_kbool(&j, "user_site_enabled", st->pr.user_site_enabled);
		json_key(&j, "modules");
		json_arr(&j);
		for (i = 0; i < st->nmods; i++) {
			struct modres *m = &st->mods[i];
			int first = 1;

			json_obj(&j);
			json_kstr(&j, "name", m->name);
			json_key(&j, "copies");
			json_arr(&j);
			for (k = 0; k < m->nc; k++) {
				struct copy *c = &m->c[k];
				char *o = origintext(st, c);

				json_obj(&j);
				json_kstr(&j, "path", c->path);
				json_kstr(&j, "kind", kindname[c->kind]);
				json_kstr(&j, "origin", o);
				json_kstr(&j, "sys_path_entry", c->kind == K_EDIT ? NULL : st->e[c->entry].path);
				json_kstr(&j, "metadata", c->meta);
				json_kbool(&j, "imported", first && c->kind != K_NS);
				json_end(&j);
				if (c->kind != K_NS)
					first = 0;
				free(o);
			}
			json_end(&j);
			json_end(&j);
		}
		json_end(&j);
		json_key(&j, "sys_path");
		json_arr(&j);
		for (i = 0; i < st->ne; i++) {
			json_obj(&j);
			json_kstr(&j, "path", st->e[i].path);
			json_kstr(&j, "origin", origname[st->e[i].origin]);
			json_end(&j);
		}
		json_end(&j);
		json_key(&j, "findings");
		json_arr(&j);
		for (i = 0; i < st->nf; i++) {
			struct finding *f = &st->f[i];

			json_obj(&j);
			json_kstr(&j, "level", f->level == L_PROBLEM ? "problem" : "note");
			json_kstr(&j, "kind", f->kind);
			json_kstr(&j, "module", f->module);
			json_kstr(&j, "message", f->text);
			json_kstr(&j, "fix", f->fix);
			json_key(&j, "paths");
			json_arr(&j);
			for (k = 0; k < f->npaths; k++)
				json_str(&j, f->paths[k]);
			json_end(&j);
			json_end(&j);
		}
		json_end(&j);
		json_end(&j);
		bufputc(&b, '\n');
	} else {
		for (i = 0; i < st->nf; i++) {
			struct finding *f = &st->f[i];

			if (f->level == L_NOTE && !st->o->verbose)
				continue;
			bufprintf(&b, "%s%s; fix: %s\n", f->level == L_NOTE ? "note: " : "", f->text, f->fix);
		}
	}
	fwrite(b.s ? b.s : "", 1, b.len, stdout);
	fflush(stdout);
	buffree(&b);
}

/* true if m is a top-level module name (an identifier) */
static int
validmod(const char *m)
{
	const char *p;

	if (!*m || isdigit((unsigned char)*m))
		return 0;
	for (p = m; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return 0;
	return 1;
}

int
check_run(const struct checkopt *o0)
{
	static const char *const deflt[] = {"torch"};
	struct checkopt o = *o0;
	struct state st;
	struct buf out = {0}, err = {0};
	struct procres res;
	char **argv, *python, *cwdabs, *first;
	size_t i, problems = 0;
	int rc;

	memset(&st, 0, sizeof st);
	if (!o.nmodules) {
		o.modules = (const char **)deflt;
		o.nmodules = 1;
	}
	for (i = 0; i < o.nmodules; i++)
		if (!validmod(o.modules[i])) {
			fprintf(stderr, "envclean: --module=%s: give a top-level module name (like torch)\n",
			        o.modules[i]);
			return EXIT_USAGE;
		}
	st.o = &o;
	if (!o.python)
		python = xstrdup("python3");
	else if (os_isdir(o.python))
		python = xasprintf("%s/bin/python", o.python);
	else
		python = xstrdup(o.python);
	if (strchr(python, '/') && python[0] != '/') {
		char wd[4096];
		char *a;

		if (!getcwd(wd, sizeof wd)) {
			free(python);
			die("cannot read the working folder:");
		}
		a = os_abspath(python, wd);
		free(python);
		python = a;
	}
	if (!os_isdir(o.cwd)) {
		fprintf(stderr, "envclean: --cwd=%s: not a folder\n", o.cwd);
		free(python);
		return EXIT_USAGE;
	}
	cwdabs = xstrdup(o.cwd);
	if (chdir(cwdabs) < 0) {
		fprintf(stderr, "envclean: --cwd=%s: %s\n", o.cwd, strerror(errno));
		free(python);
		free(cwdabs);
		return EXIT_USAGE;
	}
	argv = xcalloc(o.nmodules + 4, sizeof *argv);
	argv[0] = python;
	argv[1] = (char *)"-c";
	argv[2] = (char *)probe_py;
	for (i = 0; i < o.nmodules; i++)
		argv[3 + i] = (char *)o.modules[i];
	rc = proc_capture(argv, NULL, &out, &err, 16 << 20, 60000, &res);
	free(argv);
	if (rc < 0 || res.notfound) {
		fprintf(stderr, "envclean: --python=%s: %s\n", o.python ? o.python : python,
		        strerror(rc < 0 ? errno : res.err));
		free(python);
		free(cwdabs);
		buffree(&out);
		buffree(&err);
		return EXIT_USAGE;
	}
	if (res.status != 0 || probe_parse(&st.pr, out.s, out.len) < 0) {
		first = err.s ? xstrndup(err.s, strcspn(err.s, "\n")) : xstrdup("");
		if (res.timedout)
			fprintf(stderr, "envclean: --python=%s: no answer within 60 s\n", o.python ? o.python : python);
		else
			fprintf(stderr, "envclean: --python=%s: not a Python interpreter (exit %d%s%s)\n",
			        o.python ? o.python : python, res.status, *first ? ": " : "", first);
		free(first);
		probe_free(&st.pr);
		free(python);
		free(cwdabs);
		buffree(&out);
		buffree(&err);
		return EXIT_USAGE;
	}
	buffree(&out);
	buffree(&err);

	readpth(&st);
	entries(&st);
	for (i = 0; i < o.nmodules; i++)
		checkmod(&st, o.modules[i]);
	checkhooks(&st);
	report(&st);
	for (i = 0; i < st.nf; i++)
		problems += st.f[i].level == L_PROBLEM;

	for (i = 0; i < st.nf; i++) {
		free(st.f[i].module);
		free(st.f[i].text);
		free(st.f[i].fix);
		strs_free(st.f[i].paths, st.f[i].npaths);
	}
	free(st.f);
	for (i = 0; i < st.nmods; i++) {
		size_t k;

		for (k = 0; k < st.mods[i].nc; k++) {
			free(st.mods[i].c[k].path);
			free(st.mods[i].c[k].editfile);
			free(st.mods[i].c[k].meta);
		}
		free(st.mods[i].c);
	}
	free(st.mods);
	for (i = 0; i < st.npl; i++) {
		free(st.pl[i].file);
		free(st.pl[i].text);
		free(st.pl[i].target);
	}
	free(st.pl);
	for (i = 0; i < st.ne; i++)
		free(st.e[i].path);
	free(st.e);
	strs_free(st.pypath, st.npypath);
	probe_free(&st.pr);
	free(python);
	free(cwdabs);
	return problems ? EXIT_PROBLEM : EXIT_OK;
}
