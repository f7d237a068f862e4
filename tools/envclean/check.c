/* envclean --check: ask the interpreter once, then run the checks of the other
   check modules (syspath.c, copies.c, ldpath.c) and report (report.c) */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkint.h"
#include "os.h"
#include "proc.h"

/* the origins and kinds in words (checkint.h) */
const char *const origname[] = {
	"the working folder", "PYTHONPATH", "user site", "site-packages", ".pth path line",
	".pth import hook", "editable install", "standard library", "added at startup",
};
const char *const kindname[] = {
	"package", "extension module", "module", "bytecode module", "namespace portion",
	"editable install",
};

/* readfile for the files --check finds in site folders: a FIFO or device there is
   refused (-1, errno EINVAL) at once, never opened blocking */
int
readreg(const char *path, struct buf *b, size_t max)
{
	return os_readreg(path, 0, b, max, NULL);
}

/* the sorted names in a folder (without . and ..), or NULL with *n = 0 */
char **
listdir(const char *d, size_t *n)
{
	struct strv l = {0};

	*n = 0;
	if (os_listdir(d, &l) < 0)
		return NULL;
	*n = l.n;
	return l.v;
}

/* append a copy of s to a string array */
void
push(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = xstrdup(s);
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

/* the interpreter --python names (default python3; a venv's bin/python), absolute when it
   is a relative path; malloc'd */
static char *
pyof(const struct checkopt *o)
{
	char wd[4096], *python, *a;

	if (!o->python)
		python = xstrdup("python3");
	else if (os_isdir(o->python))
		python = xasprintf("%s/bin/python", o->python);
	else
		python = xstrdup(o->python);
	if (strchr(python, '/') && python[0] != '/') {
		if (!getcwd(wd, sizeof wd)) {
			free(python);
			die("cannot read the working folder:");
		}
		a = os_abspath(python, wd);
		free(python);
		python = a;
	}
	return python;
}

/* the probe run by PYTHON for O's modules, its answer parsed into st->pr; 0, or -1 after
   one line on stderr naming --python */
static int
probe(struct state *st, const struct checkopt *o, char *python)
{
	struct buf out = {0}, err = {0};
	struct procres res;
	const char *name = o->python ? o->python : python;
	char **argv, *first;
	struct stat sb;
	size_t i;
	int rc;

	argv = xcalloc(o->nmodules + 4, sizeof *argv);
	argv[0] = python;
	argv[1] = (char *)"-c";
	argv[2] = (char *)probe_py;
	for (i = 0; i < o->nmodules; i++)
		argv[3 + i] = (char *)o->modules[i];
	rc = proc_capture(argv, NULL, &out, &err, 16 << 20, 60000, &res);
	free(argv);
	if (rc < 0 || res.notfound) {
		int e = rc < 0 ? errno : res.err;
		/* a FIFO, a device or a folder is named as such */
		if (stat(python, &sb) == 0 && !S_ISREG(sb.st_mode))
			fprintf(stderr, "envclean: --python=%s: is %s, not a Python interpreter\n", name,
			        os_ftype(sb.st_mode));
		else
			fprintf(stderr, "envclean: --python=%s: %s\n", name, strerror(e));
		rc = -1;
	} else if (res.status != 0 || probe_parse(&st->pr, out.s, out.len) < 0) {
		first = err.s ? xstrndup(err.s, strcspn(err.s, "\n")) : xstrdup("");
		if (res.timedout)
			fprintf(stderr, "envclean: --python=%s: no answer within 60 s\n", name);
		else
			fprintf(stderr, "envclean: --python=%s: not a Python interpreter (exit %d%s%s)\n",
			        name, res.status, *first ? ": " : "", first);
		free(first);
		rc = -1;
	} else {
		rc = 0;
	}
	buffree(&out);
	buffree(&err);
	return rc;
}

/* what a check's state holds */
static void
state_free(struct state *st)
{
	size_t i, k;

	for (i = 0; i < st->nf; i++) {
		free(st->f[i].module);
		free(st->f[i].text);
		free(st->f[i].fix);
		strs_free(st->f[i].paths, st->f[i].npaths);
	}
	free(st->f);
	for (i = 0; i < st->nmods; i++) {
		for (k = 0; k < st->mods[i].nc; k++) {
			free(st->mods[i].c[k].path);
			free(st->mods[i].c[k].editfile);
			free(st->mods[i].c[k].meta);
		}
		free(st->mods[i].c);
	}
	free(st->mods);
	for (i = 0; i < st->npl; i++) {
		free(st->pl[i].file);
		free(st->pl[i].text);
		free(st->pl[i].target);
	}
	free(st->pl);
	for (i = 0; i < st->ne; i++)
		free(st->e[i].path);
	free(st->e);
	strs_free(st->pypath, st->npypath);
	probe_free(&st->pr);
}

int
check_run(const struct checkopt *o0)
{
	static const char *const deflt[] = {"torch"};
	struct checkopt o = *o0;
	struct state st;
	char *python;
	size_t i, problems = 0;

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
	if (!os_isdir(o.cwd)) {
		fprintf(stderr, "envclean: --cwd=%s: not a folder\n", o.cwd);
		return EXIT_USAGE;
	}
	python = pyof(&o);
	if (chdir(o.cwd) < 0) {
		fprintf(stderr, "envclean: --cwd=%s: %s\n", o.cwd, strerror(errno));
		free(python);
		return EXIT_USAGE;
	}
	if (probe(&st, &o, python) < 0) {
		probe_free(&st.pr);
		free(python);
		return EXIT_USAGE;
	}
	free(python);
	readpth(&st);
	entries(&st);
	for (i = 0; i < o.nmodules; i++)
		checkmod(&st, o.modules[i]);
	checkhooks(&st);
	report(&st);
	for (i = 0; i < st.nf; i++)
		problems += st.f[i].level == L_PROBLEM;
	state_free(&st);
	return problems ? EXIT_PROBLEM : EXIT_OK;
}
