/* wheelpick: choose the wheel a Python interpreter would install out of a folder of
   wheels, as pip ranks them, say why, print the exact pip command, verify the wheel */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "json.h"
#include "opt.h"
#include "os.h"
#include "pick.h"
#include "target.h"

static void
usage(const char *err)
{
	opt_usage(err,
	          "usage: wheelpick [--python=PATH] [--python-version=X.Y] [--abi=ABI[,ABI]]\n"
	          "                 [--platform=PLAT]... [--tag-order=pip|packaging] [--name NAME]\n"
	          "                 [--require SPEC] [--pre] [--local LABEL] [--pip] [--json] [-v]\n"
	          "                 [--check] [--ignore-requires-python] [--no-cache] DIR|WHEEL...\n"
	          "       wheelpick --tags [TARGET OPTIONS]\n"
	          "       wheelpick --version\n"
	          "Prints the absolute path of the wheel the interpreter would install (exit 0),\n"
	          "or why none fits (exit 1); 2 for usage or unreadable input. See wheelpick(1).\n");
}

/* split a requirement "name[extras] SPEC" into the name (canonical, or NULL) and SPEC
   (both fresh strings) */
static void
splitreq(const char *req, char **name, char **spec)
{
	const char *p = req, *st;

	while (*p == ' ' || *p == '\t')
		p++;
	st = p;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
	       *p == '.' || *p == '_' || *p == '-')
		p++;
	*name = NULL;
	if (p > st) {
		char *raw = xstrndup(st, (size_t)(p - st));
		struct buf b = { 0 };
		if (!name_valid(raw))
			dien(EXIT_USAGE, "--require '%s': '%s' is not a valid project name", req, raw);
		canonname(&b, raw, strlen(raw));
		*name = bufdetach(&b);
		free(raw);
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '[') {
			p = strchr(p, ']');
			if (!p)
				dien(EXIT_USAGE, "--require '%s': unclosed '['", req);
			p++;
		}
	}
	if (strchr(p, ';'))
		dien(EXIT_USAGE, "--require '%s': environment markers (;) are not supported", req);
	if (strchr(p, '@'))
		dien(EXIT_USAGE, "--require '%s': direct references (@ URL) are not supported", req);
	/* PEP 508 also allows the specifiers in parentheses: "torch (>=2.6)" */
	if (*p == '(') {
		const char *e = strrchr(p, ')');
		const char *q = e ? e + 1 : p;
		while (*q == ' ' || *q == '\t')
			q++;
		if (!e || *q)
			dien(EXIT_USAGE, "--require '%s': unbalanced '('", req);
		*spec = xstrndup(p + 1, (size_t)(e - p - 1));
		return;
	}
	*spec = xstrdup(p);
}

static const char *const statename[] = { "invalid", "skipped", "lost", "chosen" };

/* order near misses: valid names first, newest version first */
static int
bymiss(const void *a, const void *b)
{
	const struct cand *x = *(const struct cand *const *)a, *y = *(const struct cand *const *)b;

	if ((x->state == C_INVALID) != (y->state == C_INVALID))
		return x->state == C_INVALID ? 1 : -1;
	if (x->state == C_INVALID)
		return strcmp(x->base, y->base);
	return -pep440_cmp(&x->w.ver, &y->w.ver);
}

static void
pipcmd(struct buf *b, const struct target *t, const char *wheel)
{
	shquote(b, t->python ? t->python : "python3");
	bufputs(b, " -m pip install --no-deps --force-reinstall ");
	shquote(b, wheel);
}

static void
writejson(const struct pickset *ps, const struct target *t, const char *checkerr, int checked)
{
	struct buf b = { 0 }, v = { 0 };
	struct json j;
	size_t k;

	json_init(&j, &b);
	json_obj(&j);
	json_kstr(&j, "chosen", ps->chosen >= 0 ? ps->c[ps->chosen].path : NULL);
	if (ps->chosen >= 0) {
		pipcmd(&v, t, ps->c[ps->chosen].path);
		json_kstr(&j, "pip_command", v.s);
	} else {
		json_kstr(&j, "pip_command", NULL);
	}
	if (checked) {
		json_key(&j, "check");
		json_obj(&j);
		json_kbool(&j, "ok", !checkerr);
		json_kstr(&j, "error", checkerr);
		json_end(&j);
	}
	json_key(&j, "target");
	json_obj(&j);
	json_kstr(&j, "python", t->python);
	json_kstr(&j, "executable", t->executable);
	json_kstr(&j, "implementation", t->impl);
	bufreset(&v);
	bufprintf(&v, "%d.%d", t->major, t->minor);
	json_kstr(&j, "python_version", v.s);
	json_kstr(&j, "libc", t->libc);
	json_kbool(&j, "free_threaded", t->threaded);
	json_kstr(&j, "tag_order", t->order == ORDER_PIP ? "pip" : "packaging");
	json_kstrs(&j, "abis", t->abis.v, t->abis.n);
	json_kstrs(&j, "platforms", t->plats.v, t->plats.n);
	json_kint(&j, "tags", (int64_t)t->tags.n);
	json_end(&j);
	json_key(&j, "candidates");
	json_arr(&j);
	for (k = 0; k < ps->n; k++) {
		const struct cand *c = &ps->c[k];
		json_obj(&j);
		json_kstr(&j, "file", c->path);
		json_kstr(&j, "status", statename[c->state]);
		if (c->state != C_INVALID) {
			json_kstr(&j, "name", c->w.name);
			bufreset(&v);
			pep440_str(&v, &c->w.ver);
			json_kstr(&j, "version", v.s);
			bufreset(&v);
			if (c->w.hasbuild)
				bufprintf(&v, "%llu%s", (unsigned long long)c->w.buildnum, c->w.buildrest);
			json_kstr(&j, "build", c->w.hasbuild ? v.s : NULL);
			json_kstr(&j, "tags", c->w.tagstr);
			if (c->best) {
				bufreset(&v);
				bufprintf(&v, "%s-%s-%s", c->best->py, c->best->abi, c->best->plat);
				json_kstr(&j, "best_tag", v.s);
				json_kint(&j, "tag_rank", c->rank);
			} else {
				json_kstr(&j, "best_tag", NULL);
				json_key(&j, "tag_rank");
				json_null(&j);
			}
		}
		json_kstr(&j, "reason", c->reason);
		json_end(&j);
	}
	json_end(&j);
	json_kstrs(&j, "warnings", ps->warnings.v, ps->warnings.n);
	json_end(&j);
	bufputc(&b, '\n');
	fwrite(b.s, 1, b.len, stdout);
	buffree(&b);
	buffree(&v);
}

/* what the command line asks */
struct args {
	const char *python, *pyver, *abi, *name, *req, *local;
	struct strv plats, paths;
	int pre, pip, json, verbose, check, nocache, noreqpy, listtags;
	enum tagorder order;
};

/* a flag without a value; 0 when a is none of them */
static int
flag(struct args *a, const char *arg)
{
	static const struct { const char *name; size_t off; } flags[] = {
		{ "--pre", offsetof(struct args, pre) },
		{ "--pip", offsetof(struct args, pip) },
		{ "--json", offsetof(struct args, json) },
		{ "-v", offsetof(struct args, verbose) },
		{ "--verbose", offsetof(struct args, verbose) },
		{ "--check", offsetof(struct args, check) },
		{ "--tags", offsetof(struct args, listtags) },
		{ "--ignore-requires-python", offsetof(struct args, noreqpy) },
		{ "--no-cache", offsetof(struct args, nocache) },
	};
	size_t k;

	for (k = 0; k < sizeof flags / sizeof *flags; k++)
		if (!strcmp(arg, flags[k].name)) {
			*(int *)((char *)a + flags[k].off) = 1;
			return 1;
		}
	return 0;
}

/* an option with a value; 0 when argv[*i] is none of them */
static int
valopt(struct args *a, int argc, char **argv, int *i)
{
	const char *val;

	if ((val = opt_val(argc, argv, i, "--python", usage)))
		a->python = val;
	else if ((val = opt_val(argc, argv, i, "--python-version", usage)))
		a->pyver = val;
	else if ((val = opt_val(argc, argv, i, "--abi", usage)))
		a->abi = val;
	else if ((val = opt_val(argc, argv, i, "--platform", usage)))
		strv_add(&a->plats, val, 1);
	else if ((val = opt_val(argc, argv, i, "--tag-order", usage))) {
		if (!strcmp(val, "pip"))
			a->order = ORDER_PIP;
		else if (!strcmp(val, "packaging"))
			a->order = ORDER_PACKAGING;
		else
			usage("--tag-order must be pip or packaging");
	} else if ((val = opt_val(argc, argv, i, "--name", usage)))
		a->name = val;
	else if ((val = opt_val(argc, argv, i, "--require", usage)))
		a->req = val;
	else if ((val = opt_val(argc, argv, i, "--local", usage)))
		a->local = val;
	else
		return 0;
	return 1;
}

static void
parseargs(struct args *a, int argc, char **argv)
{
	int i, ended = 0;

	a->order = ORDER_PIP;
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (ended || arg[0] != '-' || !arg[1])
			strv_add(&a->paths, arg, 0);
		else if (!strcmp(arg, "--"))
			ended = 1;
		else if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
			usage(NULL);
		else if (opt_isversion(arg))
			opt_version();
		else if (!valopt(a, argc, argv, &i) && !flag(a, arg))
			usage(xasprintf("unknown option '%s'", arg));
	}
	if (!a->paths.n && !a->listtags)
		usage("name at least one folder or wheel file");
}

/* the filters: --name, --require, --pre, --local; o's strings are fresh or a's */
static void
setfilters(const struct args *a, struct pickopts *o, char **canon, char **reqname, char **spec)
{
	struct buf b = { 0 };
	const char *why;
	size_t at;

	if (a->name) {
		if (!name_valid(a->name))
			dien(EXIT_USAGE, "--name '%s' is not a valid project name", a->name);
		canonname(&b, a->name, strlen(a->name));
		*canon = bufdetach(&b);
	}
	if (a->req) {
		splitreq(a->req, reqname, spec);
		if (*reqname && *canon && strcmp(*reqname, *canon))
			dien(EXIT_USAGE, "--require names %s but --name names %s", *reqname, *canon);
		if (*reqname && !*canon)
			*canon = xstrdup(*reqname);
		if (pep440_specset_parse(&o->spec, *spec, &why, &at) < 0)
			dien(EXIT_USAGE, "--require '%s': %s (at '%s')", a->req, why, *spec + at);
	}
	o->name = *canon;
	o->spectext = a->req;
	o->pre = a->pre;
	if (a->local) {
		char *s = xasprintf("0+%s", startswith(a->local, "+") ? a->local + 1 : a->local);
		if (pep440_parses(&o->local, s) < 0 || !o->local.nloc)
			dien(EXIT_USAGE, "--local '%s' is not a valid local label (letters, digits, '.')",
			     a->local);
		free(s);
		o->localtext = a->local;
	}
}

/* --python-version X.Y (or XY): the version, and the ABI that follows it */
static void
setpyver(struct target *t, const char *pyver, const char *abi)
{
	int ma, mi, n = 0;

	if (sscanf(pyver, "%d.%d%n", &ma, &mi, &n) == 2 && !pyver[n] && ma > 0 && mi >= 0) {
		t->major = ma;
		t->minor = mi;
	} else if (sscanf(pyver, "%d%n", &ma, &n) == 1 && !pyver[n] && n >= 2) {
		t->major = pyver[0] - '0';
		t->minor = atoi(pyver + 1);
	} else {
		dien(EXIT_USAGE, "--python-version '%s': want MAJOR.MINOR, e.g. 3.13", pyver);
	}
	free(t->nodot);
	t->nodot = xasprintf("%d%d", t->major, t->minor);
	if (!abi && !strcmp(t->impl, "cp")) {
		/* as pip: the ABI follows the version given (cpXY, t when free-threaded) */
		char *d = xasprintf("cp%d%d%s", t->major, t->minor,
		                    t->threaded && (t->major > 3 || t->minor >= 13) ? "t" : "");
		target_setabis(t, d);
		free(d);
	}
}

/* --abi: the ABIs, and the version where no interpreter or version says it */
static void
setabi(struct target *t, const struct args *a)
{
	int ma, mi;

	target_setabis(t, a->abi);
	if (!t->abis.n)
		dien(EXIT_USAGE, "--abi '%s' names no ABI", a->abi);
	if (a->pyver || a->python)
		return;
	if (sscanf(t->abis.v[0], "cp%1d%d", &ma, &mi) != 2)
		dien(EXIT_USAGE, "--abi '%s': give --python-version too (the version is "
		     "not in the ABI name)", a->abi);
	t->major = ma;
	t->minor = mi;
	t->nodot = xasprintf("%d%d", ma, mi);
}

/* the target: an interpreter asked, or the version/ABI/platforms given */
static void
settarget(struct target *t, const struct args *a)
{
	char *err = NULL;
	size_t k;

	t->order = a->order;
	if (a->python || (!a->pyver && !a->abi)) {
		if (target_query(t, a->python ? a->python : "python3", a->nocache, &err) < 0)
			dien(EXIT_USAGE, "%s", err);
	} else {
		t->impl = xstrdup("cp");
		target_localplats(t);
	}
	if (a->pyver)
		setpyver(t, a->pyver, a->abi);
	if (a->abi)
		setabi(t, a);
	if (a->plats.n) {
		strv_free(&t->plats);
		for (k = 0; k < a->plats.n; k++)
			plats_expand(&t->plats, a->plats.v[k]);
	}
	target_tags(t);
}

/* what pip compares Requires-Python with: the interpreter's version, or the
   --python-version given */
static void
setreqpython(struct target *t, const struct args *a, struct pickopts *o, struct pep440 *pyv)
{
	char *pv = a->pyver || !t->full ? xasprintf("%d.%d", t->major, t->minor) : xstrdup(t->full);

	if (pep440_parses(pyv, pv) == 0)
		o->pyver = pyv;
	free(t->full);
	t->full = pv;
	o->pyvertext = t->full;
}

/* -v: every candidate and what became of it */
static void
listcands(const struct pickset *ps, const struct target *t)
{
	size_t k;

	for (k = 0; k < ps->n; k++) {
		const struct cand *c = &ps->c[k];
		if (c->state == C_CHOSEN)
			fprintf(stderr, "%s: chose %s: best tag %s-%s-%s (rank %ld of %zu)\n", argv0,
			        c->base, c->best->py, c->best->abi, c->best->plat, c->rank, t->tags.n);
		else
			fprintf(stderr, "%s: %s %s: %s\n", argv0, statename[c->state], c->base,
			        c->reason);
	}
}

/* no wheel fits: say so, with the ten nearest misses */
static void
saynone(const struct pickset *ps, const struct strv *paths, const char *who)
{
	const struct cand **m;
	size_t k;

	if (!ps->n) {
		fprintf(stderr, "%s: no wheel files (*.whl) in", argv0);
		for (k = 0; k < paths->n; k++)
			fprintf(stderr, " %s", paths->v[k]);
		fprintf(stderr, "\n");
		return;
	}
	m = xcalloc(ps->n, sizeof *m);
	for (k = 0; k < ps->n; k++)
		m[k] = &ps->c[k];
	qsort(m, ps->n, sizeof *m, bymiss);
	fprintf(stderr, "%s: no suitable wheel for %s among %zu file%s; near misses:\n",
	        argv0, who, ps->n, ps->n == 1 ? "" : "s");
	for (k = 0; k < ps->n && k < 10; k++)
		fprintf(stderr, "  %s: %s\n", m[k]->base, m[k]->reason);
	if (ps->n > 10)
		fprintf(stderr, "  ... and %zu more (-v lists them all)\n", ps->n - 10);
	free(m);
}

/* the chosen wheel: readable, checked with --check, printed (path, pip command or JSON);
   the exit status */
static int
saychosen(const struct pickset *ps, const struct target *t, const struct args *a)
{
	const struct cand *c = &ps->c[ps->chosen];
	char *checkerr = NULL;
	int checked = 0, rc = EXIT_OK;
	/* O_NONBLOCK inside: a FIFO named like a wheel cannot hang us */
	int fd = os_openreg(c->path, 0, NULL, NULL);
	struct buf b = { 0 };

	if (fd < 0 && errno != EINVAL && errno != EISDIR)
		dien(EXIT_USAGE, "%s: cannot read the chosen wheel: %s", c->path, strerror(errno));
	if (fd < 0)
		dien(EXIT_USAGE, "%s: the chosen wheel is not a regular file", c->path);
	close(fd);
	if (a->check) {
		int r = wheel_check(c->path, &c->w, &checkerr);
		checked = 1;
		if (r == 2)
			dien(EXIT_USAGE, "%s: %s", c->path, checkerr);
		if (r) {
			fprintf(stderr, "%s: %s: check failed: %s\n", argv0, c->path, checkerr);
			rc = EXIT_PROBLEM;
		}
	}
	if (a->json) {
		writejson(ps, t, checkerr, checked);
	} else if (rc == EXIT_OK) {
		if (a->pip)
			pipcmd(&b, t, c->path);
		else
			bufputs(&b, c->path);
		printf("%s\n", b.s);
	}
	buffree(&b);
	free(checkerr);
	return rc;
}

/* pick among the candidates and say what was chosen or why none was; the exit status */
static int
pick(const struct args *a, const struct target *t, const struct pickopts *o)
{
	struct pickset ps = { 0 };
	size_t k;
	int rc;

	for (k = 0; k < a->paths.n; k++)
		if (pick_add(&ps, a->paths.v[k]) < 0)
			dien(EXIT_USAGE, "%s:", a->paths.v[k]);
	if (pick_run(&ps, t, o) == 2)
		dien(EXIT_USAGE, "several projects in the input (%s): name one with --name", ps.names);
	for (k = 0; k < ps.warnings.n; k++)
		fprintf(stderr, "%s: warning: %s\n", argv0, ps.warnings.v[k]);
	if (a->verbose || a->json || ps.chosen < 0)
		pick_explain(&ps, t, o);
	if (a->verbose)
		listcands(&ps, t);
	if (ps.chosen >= 0) {
		rc = saychosen(&ps, t, a);
	} else {
		if (a->json)
			writejson(&ps, t, NULL, 0);
		saynone(&ps, &a->paths, o->who);
		rc = EXIT_PROBLEM;
	}
	pick_free(&ps);
	return rc;
}

int
main(int argc, char **argv)
{
	struct args a = { 0 };
	struct pep440 pyv = { 0 };
	struct target t = { 0 };
	struct pickopts o = { 0 };
	char *reqname = NULL, *canon = NULL, *who = NULL, *spec = NULL;
	size_t k;
	int rc = EXIT_OK;

	setprogname(argv[0]);
	parseargs(&a, argc, argv);
	setfilters(&a, &o, &canon, &reqname, &spec);
	settarget(&t, &a);
	if (a.listtags) {
		/* the supported tags, best first (what pip debug --verbose lists) */
		for (k = 0; k < t.tags.n; k++)
			printf("%s\n", t.tags.v[k]);
	} else {
		who = t.python ? xstrdup(t.python) :
		      xasprintf("the target %s (%s)", t.abis.n ? t.abis.v[0] : t.nodot,
		                t.plats.n ? t.plats.v[0] : "any");
		o.who = who;
		if (!a.noreqpy)
			setreqpython(&t, &a, &o, &pyv);
		rc = pick(&a, &t, &o);
	}
	if (fflush(stdout) == EOF || ferror(stdout))
		dien(EXIT_USAGE, "writing to stdout:");
	free(reqname);
	free(spec);
	free(canon);
	free(who);
	strv_free(&a.plats);
	strv_free(&a.paths);
	pep440_specset_free(&o.spec);
	pep440_free(&o.local);
	pep440_free(&pyv);
	target_free(&t);
	return rc;
}
