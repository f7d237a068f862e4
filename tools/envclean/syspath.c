/* envclean --check: sys.path provenance (the working folder, PYTHONPATH, site folders,
   .pth lines, editable installs) and the startup hooks (.pth imports, sitecustomize) */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "checkint.h"
#include "os.h"

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

/* true if dir looks like a project root (a source checkout) */
int
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
const char *
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
void
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
			if (readreg(f, &b, 1 << 20) < 0) {
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
void
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

/* findings that do not depend on one module: import hooks, customize files */
void
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
				addfinding(st, &(struct newfinding){L_NOTE, "pth", NULL, s,
				    xstrdup("pip uninstall the package installed in development mode"),
				    pl->file, pl->target});
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
		addfinding(st, &(struct newfinding){bad ? L_PROBLEM : L_NOTE, "pth", NULL,
		                                    s, fix, pl->file, NULL});
	}
	stdlib = os_abspath(pr->stdlib, pr->cwd);
	if (pr->sitecustomize) {
		bad = !startswith(pr->sitecustomize, stdlib) && !startswith(pr->sitecustomize, "/etc/");
		s = xasprintf("%s: sitecustomize runs at every interpreter start%s", pr->sitecustomize,
		              bad ? " and can change sys.path" : " (installed with the interpreter)");
		fix = xasprintf("remove %s if you did not install it on purpose", pr->sitecustomize);
		addfinding(st, &(struct newfinding){bad ? L_PROBLEM : L_NOTE, "sitecustomize", NULL,
		                                    s, fix, pr->sitecustomize, NULL});
	}
	if (pr->usercustomize) {
		s = xasprintf("%s: usercustomize from the user site runs at every interpreter start",
		              pr->usercustomize);
		fix = xasprintf("remove %s, or set PYTHONNOUSERSITE=1 (envclean sets it)", pr->usercustomize);
		addfinding(st, &(struct newfinding){L_PROBLEM, "usercustomize", NULL,
		                                    s, fix, pr->usercustomize, NULL});
	}
	free(stdlib);
}
