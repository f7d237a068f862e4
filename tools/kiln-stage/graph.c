/* kiln-stage graph: configure's generator. From configure's decisions (options) and
   the schema (schema.c), write build.ninja, config.mk and, with --arch, the stack:
   one record per stage, from which its ninja edge, its parents, the tools its step
   runs and its key file are all derived. Every file is written only if it changed. */
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "emit.h"
#include "hash.h"
#include "kv.h"
#include "proc.h"
#include "stage.h"
#include "zip.h"

/* the tools a step runs, as bits */
enum {
	T_STAGE = 1, T_SRCPIN = 2, T_ENVCLEAN = 4, T_WHEELPICK = 8, T_HIPIFY = 16,
	T_GPUCHECK = 32, T_FATWHEEL = 64,
};
static const char *const toolname[] = {
	"kiln-stage", "srcpin", "envclean", "wheelpick", "hipify-wrap", "gpucheck", "fatwheel",
};

/* each step of ninja/stack-steps.sh and the kiln tools it runs */
static const struct {
	const char *step;
	unsigned tools;
	int rocm;   /* cannot run for an AMD arch without ROCm */
} steps[] = {
	{"src", T_SRCPIN, 0},
	{"patch", T_SRCPIN, 0},
	{"hipify", T_HIPIFY | T_ENVCLEAN | T_SRCPIN, 1},
	{"wheel", T_ENVCLEAN, 1},
	{"pick", T_WHEELPICK, 0},
	{"install", T_SRCPIN, 0},
	{"system", T_SRCPIN, 0},
	{"fat", T_FATWHEEL, 0},
	{"smoke", T_GPUCHECK, 0},
	{"venv", 0, 0},
};

/* one stage: everything its ninja edge and key file are made from */
struct srec {
	char *name;          /* vision.wheel */
	const char *step;    /* wheel */
	const char *comp;    /* vision, or stack */
	char *parent[16];    /* stage names */
	size_t np;
	struct buf key;      /* the key file's text */
	char *out;           /* --out folder (absolute), or NULL */
	int idfile;          /* the step writes $B/src/COMP.id */
	const char *idkeys;  /* --id-keys */
};

static struct config cf;
static struct pins pins;
static struct srec *stages;
static size_t nstages, capstages;
static const struct component *on[16];  /* the components built, in table order */
static size_t non;
static char **regen;                    /* files and folders whose change reruns configure */
static size_t nregen, capregen;
static char *absb;                      /* the build folder, absolute */
static char *stepsfile;                 /* ninja/stack-steps.sh's text */
static char *rulefile;                  /* ninja/stack.ninja's text */

/* one more input of configure (each listed once) */
static void
addregen(const char *path)
{
	size_t i;

	for (i = 0; i < nregen; i++)
		if (!strcmp(regen[i], path))
			return;
	regen = xgrow(regen, &capregen, nregen + 1, sizeof *regen);
	regen[nregen++] = xstrdup(path);
}

/* configure's one error line, then exit 2 at once: the generator is a one-shot
   process, and what it had allocated is the operating system's to reclaim */
static void fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void
fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	fflush(NULL);
	_exit(EXIT_USAGE);
}

static void shword(struct buf *b, const char *s);

/* --- options -------------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr, "usage: kiln-stage graph --srcdir=DIR --builddir=DIR [--arch=LIST] [--python=PATH]\n"
	                "         [--venv=DIR] [--rocm-path=DIR] [--pins=FILE] [--pin=NAME=REF]... [--with=LIST]\n"
	                "         [--without=LIST] [--cache=KIND] [--stage-cache=DIR] [--mirror=DIR] [--jobs=N]\n"
	                "         [--kiln-bin=DIR] [--prefix=DIR] [--cc=CC] [--cflags=F] [--ldflags=F]\n"
	                "         [--pkg-config=P] [--fuzzcc=CC] [--ninja=N] [--prog=NAME]\n"
	                "         -- CONFIGURE [ARG]...\n");
	exit(EXIT_USAGE);
}

static const char *
optval(const char *a, const char *name)
{
	size_t n = strlen(name);

	return strncmp(a, name, n) == 0 && a[n] == '=' ? a + n + 1 : NULL;
}

static void
parseopts(int argc, char **argv)
{
	static const struct { const char *name; const char **dst; } o[] = {
		{"--prog", &cf.prog}, {"--srcdir", &cf.srcdir}, {"--builddir", &cf.builddir},
		{"--prefix", &cf.prefix}, {"--python", &cf.python}, {"--venv", &cf.venv},
		{"--rocm-path", &cf.rocm}, {"--pins", &cf.pinsfile}, {"--cache", &cf.cache},
		{"--stage-cache", &cf.stagecache}, {"--mirror", &cf.mirror}, {"--kiln-bin", &cf.kilnbin},
		{"--cc", &cf.cc}, {"--cflags", &cf.cflags}, {"--ldflags", &cf.ldflags},
		{"--pkg-config", &cf.pkgconfig}, {"--fuzzcc", &cf.fuzzcc}, {"--ninja", &cf.ninja},
		{"--jobs", &cf.jobs}, {"--with", &cf.with}, {"--without", &cf.without},
		{"--arch", &cf.archarg},
	};
	size_t k, cap = 0;
	const char *v;
	int i;

	cf.prefix = "/usr/local";
	cf.rocm = "/opt/rocm";
	cf.cache = "none";
	cf.cc = "cc";
	cf.cflags = cf.ldflags = cf.fuzzcc = cf.with = cf.without = cf.archarg = "";
	cf.pkgconfig = "pkg-config";
	cf.ninja = "ninja";
	cf.jobs = "2";
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			cf.replay = argv + i + 1;
			cf.nreplay = (size_t)(argc - i - 1);
			break;
		}
		for (k = 0; k < sizeof o / sizeof o[0]; k++)
			if ((v = optval(argv[i], o[k].name))) {
				*o[k].dst = v;
				break;
			}
		if (k == sizeof o / sizeof o[0]) {
			if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
				usage();
			warn("graph: unknown option '%s'", argv[i]);
			usage();
		}
	}
	if (cf.prog)
		argv0 = cf.prog;
	/* the pins are configure's own arguments: --pin=NAME=REF or --pin NAME=REF */
	for (k = 1; k < cf.nreplay; k++) {
		if ((v = optval(cf.replay[k], "--pin")))
			;
		else if (!strcmp(cf.replay[k], "--pin") && k + 1 < cf.nreplay)
			v = cf.replay[++k];
		else
			continue;
		cf.pinover = xgrow(cf.pinover, &cap, cf.npinover + 1, sizeof *cf.pinover);
		cf.pinover[cf.npinover++] = (char *)v;
	}
	if (!cf.srcdir || !cf.builddir || !cf.replay)
		usage();
	if (cf.stagecache && !*cf.stagecache)
		cf.stagecache = NULL;
	if (cf.mirror && !*cf.mirror)
		cf.mirror = NULL;
	if (cf.kilnbin && !*cf.kilnbin)
		cf.kilnbin = NULL;
	if (cf.venv && !*cf.venv)
		cf.venv = NULL;
	if (cf.pinsfile && !*cf.pinsfile)
		cf.pinsfile = NULL;
}

/* a path option: any byte but newline; one that becomes a ninja path also no '|' */
static void
checkpath(const char *opt, const char *v, int ninjapath)
{
	if (!v)
		return;
	if (strpbrk(v, "\n\r"))
		fail("%s: a newline in a path is not supported", opt);
	if (ninjapath && strchr(v, '|'))
		fail("%s=%s: ninja cannot name a file with '|' in its path; choose another folder", opt, v);
}

/* an interpreter's folder: Python's packaging expands $NAME and ${NAME} in install
   paths (distutils' subst_vars) and venv refuses ':'; say so now, not hours later */
static void
pyprefix(const char *opt, const char *v)
{
	const char *d;

	if (!v)
		return;
	for (d = strchr(v, '$'); d; d = strchr(d + 1, '$'))
		if (d[1] == '{' || d[1] == '_' || isalnumc((unsigned char)d[1]))
			fail("%s=%s: setuptools expands '$NAME' in an interpreter's paths, so no build "
			     "can use one there; choose a folder without '$' followed by a name", opt, v);
	if (!strcmp(opt, "--venv") && strchr(v, ':'))
		fail("--venv=%s: Python's venv refuses a folder with ':' (the PATH separator)", v);
}

/* --- arch and components ----------------------------------------------------------- */

static void
parsearch(void)
{
	const char *names[64], *s, *p, *e;
	size_t i, n = 0, cap = 0;
	enum backend b;
	char *w;

	if (!*cf.archarg)
		return;
	for (i = 0; i < arch_count && n < 60; i++)
		names[n++] = arch_table[i].name;
	names[n++] = "cpu";
	names[n++] = "native";
	for (p = cf.archarg;; p = e + 1) {
		e = p + strcspn(p, ",");
		w = xstrndup(p, (size_t)(e - p));
		if (!*w)
			fail("empty name in --arch=%s", cf.archarg);
		b = arch_backend(w);
		if (b == BACKEND_NONE && startswith(w, "sm_"))
			fail("unknown arch '%s'; CUDA targets look like sm_90, sm_90a or sm_120", w);
		if (b == BACKEND_NONE) {
			s = closest(w, names, n, 3);
			fail("unknown arch '%s'%s%s%s", w, s ? "; did you mean " : "", s ? s : "", s ? "?" : "");
		}
		if (cf.backend != BACKEND_NONE && cf.backend != b)
			fail("--arch=%s mixes %s and %s targets; build one backend per build dir",
			     cf.archarg, backend_name(cf.backend), backend_name(b));
		cf.backend = b;
		for (i = 0; i < cf.narch && strcmp(cf.arch[i], w); i++)
			;
		if (i < cf.narch) {
			free(w);
		} else {
			cf.arch = xgrow(cf.arch, &cap, cf.narch + 1, sizeof *cf.arch);
			cf.arch[cf.narch++] = w;
		}
		if (!*e)
			break;
	}
}

/* the arch list as the builds want it: gfx1100;gfx1151 (the one spelling) */
static char *
archlist(const char *sep)
{
	struct buf b = {0};
	size_t i;

	for (i = 0; i < cf.narch; i++) {
		if (i)
			bufputs(&b, sep);
		bufputs(&b, cf.arch[i]);
	}
	return bufdetach(&b);
}

static int wanted[16];

/* the components of a LIST option (comma or space separated) through fn */
static void
complist(const char *list, const char *what, int value)
{
	const char *names[16], *s, *p, *e;
	const struct component *c;
	size_t i;
	char *w;

	for (i = 0; i < comp_count; i++)
		names[i] = comp_table[i].name;
	for (p = list; *p; p = e) {
		p += strspn(p, ", ");
		e = p + strcspn(p, ", ");
		if (p == e)
			break;
		w = xstrndup(p, (size_t)(e - p));
		if (!(c = comp_find(w))) {
			s = closest(w, names, comp_count, 3);
			fail("unknown component '%s' in %s%s%s%s", w, what, s ? "; did you mean " : "",
			     s ? s : "", s ? "?" : "");
		}
		if (value < 0 && c == &comp_table[0])
			fail("--without=torch: torch is what the stack is built on; pin a prebuilt one "
			     "with --pin torch=wheel:/path.whl or --pin torch=system");
		if (value != 2 || wanted[c - comp_table] >= 0)
			wanted[c - comp_table] = value == 2 ? 1 : value;
		free(w);
	}
}

/* --- facts that go into keys --------------------------------------------------------- */

/* run argv, its stdout (trailing newlines removed) in *out; 0 if it exited 0 */
static int
capture(char *const *argv, char **out)
{
	struct buf o = {0};
	struct procres res;

	if (proc_capture(argv, NULL, &o, NULL, 0, 120000, &res) < 0 || res.status != 0) {
		buffree(&o);
		*out = xstrdup("");
		return -1;
	}
	while (o.len && o.s[o.len - 1] == '\n')
		o.s[--o.len] = 0;
	*out = bufdetach(&o);
	return 0;
}

/* line n (from 0) of text, fresh */
static char *
line(const char *text, int n)
{
	const char *e;

	while (n-- > 0 && text)
		if ((text = strchr(text, '\n')))
			text++;
	if (!text)
		return xstrdup("");
	e = strchr(text, '\n');
	return e ? xstrndup(text, (size_t)(e - text)) : xstrdup(text);
}

static char *
sha256hex(const char *path)
{
	unsigned char d[32];
	struct buf h = {0};

	if (sha256_file(path, d, NULL) < 0)
		return xstrdup("");
	hexenc(&h, d, 32);
	return bufdetach(&h);
}

static char *
sha256text(const char *s)
{
	unsigned char d[32];
	struct buf h = {0};

	sha256_buf(s, strlen(s), d);
	hexenc(&h, d, 32);
	return bufdetach(&h);
}

/* what the target Python says about itself (see pyscript) */
static struct {
	char *abi;        /* cpython-311 linux-x86_64 3.11.2 */
	char *torchdir;   /* the folder of an importable torch, or "" */
	int managed;      /* PEP 668: its stdlib has EXTERNALLY-MANAGED, outside a venv */
	char *version;    /* sys.version, for the venv key */
	char *dists[3][2];/* torch, torchvision, torchaudio: version and its torch requirement */
} py;

static const char pyscript[] =
	"import sys, os, sysconfig, importlib.util as u\n"
	"print(sys.implementation.cache_tag, sysconfig.get_platform(), sys.version.split()[0])\n"
	"s = u.find_spec('torch')\n"
	"print(os.path.dirname(s.origin) if s and s.origin else '')\n"
	"m = os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')\n"
	"print('managed' if sys.prefix == sys.base_prefix and os.path.isfile(m) else '')\n"
	"print(' '.join(sys.version.split()))\n"
	"try:\n"
	"    import importlib.metadata as md\n"
	"except ImportError:\n"
	"    md = None\n"
	"for d in ('torch', 'torchvision', 'torchaudio'):\n"
	"    try:\n"
	"        r = [x.split(';')[0] for x in (md.requires(d) or []) if x.split(';')[0].replace(' ', '').startswith('torch') and not x.startswith(('torchvision', 'torchaudio'))]\n"
	"        print(md.version(d), ''.join(r[:1]).replace(' ', ''))\n"
	"    except Exception:\n"
	"        print('')\n";

static void
askpython(void)
{
	char *argv[4], *out;
	const char *interp = cf.venv ? cf.basepy : cf.python;
	int i;

	argv[0] = (char *)interp;
	argv[1] = "-c";
	argv[2] = (char *)pyscript;
	argv[3] = NULL;
	if (capture(argv, &out) < 0)
		fail("--python=%s does not run Python", interp);
	py.abi = line(out, 0);
	py.torchdir = line(out, 1);
	{
		char *m = line(out, 2);
		py.managed = !strcmp(m, "managed");
		free(m);
	}
	py.version = line(out, 3);
	for (i = 0; i < 3; i++) {
		char *l = line(out, 4 + i), *sp = strchr(l, ' ');
		py.dists[i][0] = sp ? xstrndup(l, (size_t)(sp - l)) : xstrdup(l);
		py.dists[i][1] = xstrdup(sp ? sp + 1 : "");
		free(l);
	}
	free(out);
}

/* --- stages ------------------------------------------------------------------------ */

static struct srec *
stage(const char *comp, const char *step)
{
	struct srec *s;
	char *src, *a, *b;
	size_t n;

	stages = xgrow(stages, &capstages, nstages + 1, sizeof *stages);
	s = &stages[nstages++];
	memset(s, 0, sizeof *s);
	s->name = xasprintf("%s.%s", comp, step);
	s->comp = comp;
	s->step = step;
	kv_put(&s->key, "STAGE", s->name);
	/* RULE: the text of this step's function and of the stage rule, so that editing
	   one step reruns only its stages */
	src = xasprintf("\nstep_%s ()", step);
	a = strstr(stepsfile, src);
	free(src);
	if (!a)
		fail("%s/ninja/stack-steps.sh has no step_%s ()", cf.srcdir, step);
	a++;
	b = strstr(a, "\n}\n");
	n = b ? (size_t)(b - a) + 3 : strlen(a);
	src = xasprintf("%.*s%s", (int)n, a, rulefile);
	a = sha256text(src);
	kv_put(&s->key, "RULE", a);
	free(a);
	free(src);
	return s;
}

static void
key(struct srec *s, const char *k, const char *v)
{
	kv_put(&s->key, k, v);
}

static void
parent(struct srec *s, const char *name)
{
	if (s->np >= sizeof s->parent / sizeof s->parent[0])
		fail("internal: too many parents for %s", s->name);
	s->parent[s->np++] = xstrdup(name);
}



/* the patch folder of a component: C_PATCHES (relative to the pin file), or patches/C */
static char *
patchdir(const struct component *c)
{
	const char *p = pins_get(&pins, c, "PATCHES");
	char *dir, *slash, *r;

	if (!*p)
		return xasprintf("%s/patches/%s", cf.srcdir, c->name);
	if (*p == '/')
		return xstrdup(p);
	dir = realpath(pins.file, NULL);
	if (!dir)
		dir = xstrdup(pins.file);
	if ((slash = strrchr(dir, '/')))
		*slash = 0;
	r = xasprintf("%s/%s", slash ? dir : ".", p);
	free(dir);
	return r;
}

static const char *
pin(const struct component *c, const char *k)
{
	return pins_get(&pins, c, k);
}

static const char *
pinsha(const struct component *c)
{
	return *pin(c, "SHA") ? pin(c, "SHA") : pin(c, "COMMIT");
}

/* the version a pin stands for, when it can be known without fetching: a release tag
   (v2.8.0), a wheel's file name, or the installed distribution; NULL otherwise */
static char *
pinversion(const struct component *c, int dist)
{
	const char *k = pin(c, "KIND"), *r;
	const char *w, *b;
	size_t n;

	if (!strcmp(k, "system"))
		return dist >= 0 && *py.dists[dist][0] ? xstrdup(py.dists[dist][0]) : NULL;
	if (!strcmp(k, "wheel")) {
		w = pin(c, "WHEEL");
		b = strrchr(w, '/') ? strrchr(w, '/') + 1 : w;
		if (!(b = strchr(b, '-')))
			return NULL;
		b++;
		n = strcspn(b, "-");
		return xstrndup(b, n);
	}
	r = pin(c, "REF");
	if (r[0] == 'v' && isdig((unsigned char)r[1]) && strspn(r + 1, "0123456789.") == strlen(r + 1))
		return xstrdup(r + 1);
	return NULL;
}

/* major.minor of a version; "" when it has none */
static char *
majmin(const char *v)
{
	size_t n = strspn(v, "0123456789");

	if (!v[n] || v[n] != '.')
		return xstrdup("");
	n++;
	n += strspn(v + n, "0123456789");
	return xstrndup(v, n);
}

/* torchvision and torchaudio releases and the torch release each was made for */
static const struct { const char *comp, *minor, *torch; } against[] = {
	{"vision", "0.14", "1.13"}, {"vision", "0.15", "2.0"}, {"vision", "0.16", "2.1"},
	{"vision", "0.17", "2.2"}, {"vision", "0.18", "2.3"}, {"vision", "0.19", "2.4"},
	{"vision", "0.20", "2.5"}, {"vision", "0.21", "2.6"}, {"vision", "0.22", "2.7"},
	{"vision", "0.23", "2.8"}, {"vision", "0.24", "2.9"},
	{"audio", "0.13", "1.13"}, {"audio", "2.0", "2.0"}, {"audio", "2.1", "2.1"},
	{"audio", "2.2", "2.2"}, {"audio", "2.3", "2.3"}, {"audio", "2.4", "2.4"},
	{"audio", "2.5", "2.5"}, {"audio", "2.6", "2.6"}, {"audio", "2.7", "2.7"},
	{"audio", "2.8", "2.8"}, {"audio", "2.9", "2.9"},
};

static int
addbuf(void *ctx, const void *q, size_t n)
{
	bufadd(ctx, q, n);
	return 0;
}

/* the torch requirement of a wheel: its METADATA's "Requires-Dist: torch==X" */
static char *
wheeltorch(const char *path)
{
	struct zipin z;
	struct buf m = {0};
	char err[256], *r = NULL, *p, *e;
	size_t i;

	if (zip_open(&z, path, err, sizeof err) < 0)
		return NULL;
	for (i = 0; i < z.n; i++)
		if (endswith(z.e[i].name, ".dist-info/METADATA") && !strchr(strchr(z.e[i].name, '/') + 1, '/'))
			break;
	if (i < z.n && z.e[i].usize < (1 << 20) && zip_read(&z, &z.e[i], addbuf, &m, err, sizeof err) == 0) {
		bufputc(&m, 0);
		for (p = m.s; p && *p; p = e ? e + 1 : NULL) {
			e = strchr(p, '\n');
			if (startswith(p, "Requires-Dist: torch") && !isalnumc((unsigned char)p[20]) &&
			    p[20] != '-' && p[20] != '_') {
				struct buf v = {0};
				const char *q;
				for (q = p + 20; *q && *q != '\n' && *q != ';'; q++)
					if (*q != ' ' && *q != '(' && *q != ')')
						bufputc(&v, *q);
				r = bufdetach(&v);
				break;
			}
		}
	}
	buffree(&m);
	zip_close(&z);
	return r;
}

/* one warning line per vision/audio pin made for another torch than the torch pin */
static void
pinfit(void)
{
	const struct component *t = &comp_table[0], *c;
	char *tv = pinversion(t, 0), *tm, *want = NULL, *cv, *cm;
	const char *req;
	size_t i, k;

	if (!tv)
		return;
	tm = majmin(tv);
	for (i = 1; i < non; i++) {
		c = on[i];
		if (strcmp(c->against, "torch"))
			continue;
		want = NULL;
		req = NULL;
		cv = NULL;
		if (!strcmp(pin(c, "KIND"), "wheel")) {
			want = wheeltorch(pin(c, "WHEEL"));
		} else if (!strcmp(pin(c, "KIND"), "system")) {
			k = !strcmp(c->name, "vision") ? 1 : 2;
			if (*py.dists[k][1])
				want = xstrdup(py.dists[k][1]);
		} else if ((cv = pinversion(c, -1))) {
			cm = majmin(cv);
			for (k = 0; k < sizeof against / sizeof against[0]; k++)
				if (!strcmp(against[k].comp, c->name) && !strcmp(against[k].minor, cm))
					req = against[k].torch;
			free(cm);
		}
		if (want) {
			/* ==2.8.0, >=2.8, ==2.8.0+rocm6.4: compare the first version's major.minor */
			const char *v = want + strspn(want, "torch=<>!~ ");
			char *wm = majmin(v);
			const char *w = pin(c, "WHEEL");
			if (*wm && strcmp(wm, tm))
				warn("warning: %s %s requires torch%s, but the torch pin is %s", c->name,
				     pin(c, "KIND")[0] == 's' ? "(installed)" : strrchr(w, '/') ?
				     strrchr(w, '/') + 1 : w, want, tv);
			free(wm);
			free(want);
		} else if (req && strcmp(req, tm)) {
			warn("warning: %s %s is made for torch %s, but the torch pin is %s", c->name,
			     pin(c, "REF"), req, tv);
		}
		free(cv);
	}
	free(tm);
	free(tv);
}

/* the records of every stage */
static void
mkstages(char **proflist, size_t nprof)
{
	const struct component *c, *d;
	struct srec *s;
	char *archs = archlist(";"), *series, *pd, *ccv, *rocmv = NULL, **ins = NULL, *err = NULL;
	char *ccargv[8], *cccopy, *tok, *sp, *flash;
	struct buf mods = {0}, imports = {0}, comps = {0}, dep = {0};
	size_t i, j, nins = 0, ncc = 0;
	int fl = 1;
	const char *k, *pyk;

	/* facts */
	cccopy = xstrdup(cf.cc);
	for (tok = strtok_r(cccopy, " \t", &sp); tok && ncc < 6; tok = strtok_r(NULL, " \t", &sp))
		ccargv[ncc++] = tok;
	ccargv[ncc++] = "--version";
	ccargv[ncc] = NULL;
	capture(ccargv, &tok);
	ccv = line(tok, 0);
	free(tok);
	free(cccopy);
	if (cf.backend == BACKEND_GFX) {
		char *hip = xasprintf("%s/bin/hipcc", cf.rocm), *cl = xasprintf("%s/llvm/bin/clang", cf.rocm);
		char *vf = xasprintf("%s/.info/version", cf.rocm);
		struct buf v = {0};
		if (access(hip, X_OK) == 0 || access(cl, X_OK) == 0) {
			if (readfile(vf, &v, 4096) == 0 && v.len) {
				while (v.len && strchr("\n ", v.s[v.len - 1]))
					v.s[--v.len] = 0;
				rocmv = bufdetach(&v);
			} else {
				char *av[] = {cl, "--version", NULL};
				capture(av, &tok);
				rocmv = line(tok, 0);
				free(tok);
			}
		} else {
			rocmv = xstrdup("");
		}
		buffree(&v);
		free(hip);
		free(cl);
		free(vf);
	}
	for (i = 0; i < cf.narch; i++) {
		struct kvfile f;
		char *p = xasprintf("%s/env/arch/%s.env", cf.srcdir, cf.arch[i]);
		const char *v;
		if (kv_load(&f, p, &err) < 0) {
			fl = 0;
			free(err);
			err = NULL;
		} else if (!(v = kv_get(&f, "KILN_FLASH_ATTENTION")) || strcmp(v, "1")) {
			fl = 0;
		}
		kv_free(&f);
		free(p);
	}
	flash = xstrdup(fl ? "1" : "0");
	pyk = cf.python;

	if (cf.venv) {
		int syssite = 0;
		for (i = 0; i < non; i++)
			syssite |= !strcmp(pin(on[i], "KIND"), "system");
		s = stage("stack", "venv");
		key(s, "BASE", cf.basepy);
		key(s, "BASE_VERSION", py.version);
		key(s, "VENV", cf.venv);
		key(s, "SYSTEM_SITE", syssite ? "yes" : "no");
		s->idkeys = "BASE,BASE_VERSION,VENV,SYSTEM_SITE";
	}
	for (i = 0; i < non; i++) {
		const char *last;
		char *n;

		c = on[i];
		k = pin(c, "KIND");
		/* what C builds against: its deps' installs (a source-only dep: its patch) */
		bufreset(&dep);
		bufreset(&mods);
		for (j = 0; j < non; j++) {
			d = on[j];
			const char *ds = pin(c, "DEPS");
			size_t dl = strlen(d->name);
			const char *m = ds;
			int listed = 0;
			while ((m = strstr(m, d->name))) {
				if ((m == ds || strchr(" ,", m[-1])) && (!m[dl] || strchr(" ,", m[dl])))
					listed = 1;
				m += dl;
			}
			if (!listed)
				continue;
			bufprintf(&dep, "%s%s.%s", dep.len ? " " : "", d->name,
			          !strcmp(pin(d, "KIND"), "source") ? "patch" : "install");
			if (*pin(d, "IMPORT"))
				bufprintf(&mods, "%s%s", mods.len ? " " : "", pin(d, "IMPORT"));
		}
		if (!strcmp(k, "build") || !strcmp(k, "source")) {
			pd = patchdir(c);
			series = series_digest(pd, &ins, &nins, &err);
			if (!series)
				fail("%s", err);
			n = xasprintf("%s/series", pd);
			s = stage(c->name, "src");
			key(s, "COMPONENT", c->name);
			key(s, "URL", pin(c, "URL"));
			key(s, "REF", pin(c, "REF"));
			key(s, "SHA", pinsha(c));
			s->idfile = 1;
			s = stage(c->name, "patch");
			key(s, "COMPONENT", c->name);
			key(s, "SERIES", series);
			key(s, "SERIES_FILE", n);
			s->idfile = 1;
			parent(s, stages[nstages - 2].name);
			last = "patch";
			if (!strcmp(k, "build") && cf.backend == BACKEND_GFX && *pin(c, "HIPIFY")) {
				s = stage(c->name, "hipify");
				key(s, "PROJECT", pin(c, "HIPIFY"));
				key(s, "CMD", pin(c, "HIPIFY_CMD"));
				key(s, "SERIES", series);
				key(s, "SERIES_FILE", n);
				key(s, "SUBDIR", pin(c, "SUBDIR"));
				key(s, "ROCM", rocmv);
				key(s, "PY_ABI", py.abi);
				parent(s, stages[nstages - 2].name);
				last = "hipify";
			}
			free(n);
			free(series);
			free(pd);
			if (!strcmp(k, "source"))
				continue;
			s = stage(c->name, "wheel");
			key(s, "COMPONENT", c->name);
			key(s, "SUBDIR", pin(c, "SUBDIR"));
			key(s, "BUILD", pin(c, "BUILD"));
			key(s, "BACKEND", backend_name(cf.backend));
			key(s, "ARCH", archs);
			key(s, "PY_ABI", py.abi);
			key(s, "CC", ccv);
			if (cf.backend == BACKEND_GFX)
				key(s, "ROCM", rocmv);
			key(s, "FLASH", flash);
			key(s, "ENV", pin(c, "ENV"));
			key(s, "MODULES", mods.s ? mods.s : "");
			for (j = 0; j < nprof; j++) {
				char *b = strrchr(proflist[j], '/') + 1, *kn, *q, *h;
				kn = xasprintf("PROFILE_%.*s", (int)(strlen(b) - 4), b);
				for (q = kn + 8; *q; q++)
					if (!isalnumc((unsigned char)*q) && *q != '_')
						*q = '_';
				h = sha256hex(proflist[j]);
				key(s, kn, h);
				free(h);
				free(kn);
			}
			n = xasprintf("%s.%s", c->name, last);
			parent(s, n);
			free(n);
			for (tok = dep.s; tok && *tok; tok = sp) {
				sp = strchr(tok, ' ');
				n = sp ? xstrndup(tok, (size_t)(sp - tok)) : xstrdup(tok);
				parent(s, n);
				free(n);
				if (sp)
					sp++;
			}
			s->out = xasprintf("%s/wheels/%s", absb, c->name);
			s = stage(c->name, "pick");
			key(s, "DIST", pin(c, "DIST"));
			key(s, "PY_ABI", py.abi);
			parent(s, stages[nstages - 2].name);
		} else if (!strcmp(k, "wheel")) {
			struct stat st;
			char *ws;
			s = stage(c->name, "pick");
			key(s, "DIST", pin(c, "DIST"));
			key(s, "PY_ABI", py.abi);
			key(s, "WHEEL", pin(c, "WHEEL"));
			if (stat(pin(c, "WHEEL"), &st) < 0)
				fail("%s: wheel pin %s: no such file", c->name, pin(c, "WHEEL"));
			ws = xasprintf("%lld %lld", (long long)st.st_size, (long long)st.st_mtime);
			key(s, "WHEEL_STAT", ws);
			free(ws);
		}
		s = stage(c->name, "install");
		key(s, "DIST", pin(c, "DIST"));
		key(s, "PY", pyk);
		key(s, "PY_ABI", py.abi);
		key(s, "ARCH", archs);
		key(s, "REF", pin(c, "REF"));
		if (!strcmp(k, "system")) {
			char *h = NULL, *vp;
			s->step = "system";
			if (*py.torchdir && c == &comp_table[0]) {
				vp = xasprintf("%s/version.py", py.torchdir);
				h = sha256hex(vp);
				free(vp);
			}
			key(s, "SYSTEM", h ? h : "");
			free(h);
			key(s, "IMPORT", pin(c, "IMPORT"));
			s->idkeys = "PY_ABI,SYSTEM,IMPORT";
		} else {
			s->idkeys = "PY_ABI,DIST";
			n = xasprintf("%s.pick", c->name);
			parent(s, n);
			free(n);
		}
		if (*pin(c, "IMPORT"))
			bufprintf(&imports, "%s%s", imports.len ? " " : "", pin(c, "IMPORT"));
		if (c->fat && strcmp(k, "system"))
			bufprintf(&comps, "%s%s", comps.len ? " " : "", c->name);
	}
	s = stage("stack", "smoke");
	key(s, "IMPORTS", imports.s ? imports.s : "");
	key(s, "BACKEND", backend_name(cf.backend));
	key(s, "ARCH", archs);
	key(s, "PY", pyk);
	key(s, "COVER", pins_stack(&pins, "COVER"));
	for (i = 0; i < nstages; i++)
		if (!strcmp(stages[i].step, "install") || !strcmp(stages[i].step, "system"))
			parent(&stages[nstages - 1], stages[i].name);
	if (!strcmp(pins_stack(&pins, "FAT"), "yes") && comps.len) {
		s = stage("stack", "fat");
		key(s, "COMPONENTS", comps.s);
		key(s, "BACKEND", backend_name(cf.backend));
		key(s, "ARCH", archs);
		parent(s, "torch.pick");
		s->out = xasprintf("%s/wheels/fat", absb);
	}
	/* with --venv every stage that runs the target Python comes after stack.venv */
	if (cf.venv)
		for (i = 1; i < nstages; i++)
			if (strcmp(stages[i].step, "src") && strcmp(stages[i].step, "patch") &&
			    strcmp(stages[i].step, "fat"))
				parent(&stages[i], "stack.venv");
	for (i = 0; i < nins; i++)
		addregen(ins[i]);
	strvfree(ins, nins);
	free(archs);
	free(ccv);
	free(rocmv);
	free(flash);
	buffree(&mods);
	buffree(&imports);
	buffree(&comps);
	buffree(&dep);
}

/* --- writing ----------------------------------------------------------------------- */

/* write path only if its content changed; says so on stdout when loud */
static void
commit(const char *path, const struct buf *b, int loud)
{
	int r = writefile_ifchanged(path, b->s ? b->s : "", b->len, 0644);

	if (r < 0)
		fail("cannot write %s:", path);
	if (loud)
		printf(r ? "wrote %s\n" : "%s is unchanged\n", path);
}

/* the tools each stage's step runs, as ninja paths (none with KILN_BIN) */
static void
tooldeps(struct buf *b, const char *step, char *const *tools, size_t ntools)
{
	size_t i, j;
	unsigned want = T_STAGE;

	if (cf.kilnbin)
		return;
	for (i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (!strcmp(steps[i].step, step))
			want |= steps[i].tools;
	for (i = 0; i < sizeof toolname / sizeof toolname[0]; i++) {
		if (!(want & (1u << i)))
			continue;
		for (j = 0; j < ntools && strcmp(tools[j], toolname[i]); j++)
			;
		if (j < ntools)
			bufprintf(b, " $bdir/bin/%s", toolname[i]);
	}
}

static int
needsrocm(const char *step)
{
	size_t i;

	for (i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (!strcmp(steps[i].step, step))
			return steps[i].rocm;
	return 0;
}

static void
writestack(char *const *tools, size_t ntools, const char *profs)
{
	struct buf b = {0}, env = {0}, t = {0};
	char *kbin, *p, *archs = archlist(";");
	size_t i, j;
	int rocmmissing = 0;

	if (cf.kilnbin) {
		if (!(kbin = realpath(cf.kilnbin, NULL)))
			fail("KILN_BIN=%s: no such folder", cf.kilnbin);
	} else {
		kbin = xasprintf("%s/bin", absb);
	}
	/* the settings stages read that are not part of any key */
	bufputs(&env, "# stack settings for ninja/stack-steps.sh, read by kiln-stage env; written by configure\n");
	kv_put(&env, "KILN_SRC", cf.srcdir);
	kv_put(&env, "B", absb);
	kv_put(&env, "KBIN", kbin);
	kv_put(&env, "PY", cf.python);
	kv_put(&env, "MIRROR", cf.mirror ? cf.mirror : "");
	kv_put(&env, "CACHE", cf.cache);
	kv_put(&env, "JOBS", cf.jobs);
	kv_put(&env, "ROCM_PATH", cf.rocm);
	kv_put(&env, "ARCH_LIST", archs);
	kv_put(&env, "BACKEND", backend_name(cf.backend));
	kv_put(&env, "PROFILES", profs);
	kv_put(&env, "PINS", pins.file);
	p = xasprintf("%s/stack.env", absb);
	commit(p, &env, 0);
	free(p);

	bufputs(&b, "# Generated by configure (kiln-stage graph, tools/kiln-stage/graph.c): the stages of\n"
	            "# the stack. Each stage's inputs are in $bdir/keys/STAGE; its stamp in\n"
	            "# $bdir/stamp/STAGE; its log in $bdir/logs/STAGE.log.\n");
	bufputs(&b, "kstage = ");
	p = xasprintf("%s/kiln-stage", kbin);
	ninja_shq(&b, p);
	free(p);
	bufputs(&b, "\nstackenv = ");
	p = xasprintf("%s/stack.env", absb);
	ninja_shq(&b, p);
	free(p);
	bufputs(&b, "\nqkeys = ");
	p = xasprintf("%s/keys", absb);
	ninja_shq(&b, p);
	free(p);
	bufputs(&b, "\nqlogs = ");
	p = xasprintf("%s/logs", absb);
	ninja_shq(&b, p);
	free(p);
	bufputs(&b, "\nstagecache =");
	if (cf.stagecache) {
		bufputc(&b, ' ');
		p = xasprintf("--stage-cache=%s", cf.stagecache);
		ninja_shq(&b, p);
		free(p);
	}
	bufputs(&b, "\ninclude $srcdir/ninja/stack.ninja\n\n");
	if (cf.backend == BACKEND_GFX) {
		char *hip = xasprintf("%s/bin/hipcc", cf.rocm), *cl = xasprintf("%s/llvm/bin/clang", cf.rocm);
		if (access(hip, X_OK) < 0 && access(cl, X_OK) < 0) {
			char *al = archlist(",");
			rocmmissing = 1;
			bufputs(&b, "# ROCm is missing: the stages that need it stop here with the reason\n"
			            "build $bdir/stamp/rocm.missing: missing\n  what = ");
			p = xasprintf("ROCm was not found at %s (no bin/hipcc, no llvm/bin/clang), and "
			              "--arch=%s builds for AMD GPUs. Install ROCm (https://rocm.docs.amd.com), "
			              "or rerun configure with --rocm-path=DIR, or --arch=cpu for a CPU-only stack.",
			              cf.rocm, al);
			ninja_shq(&b, p);
			free(p);
			bufputs(&b, "\n\n");
			free(al);
		}
		free(hip);
		free(cl);
	}
	for (i = 0; i < nstages; i++) {
		struct srec *s = &stages[i];

		/* the key file */
		p = xasprintf("%s/keys/%s", absb, s->name);
		commit(p, &s->key, 0);
		free(p);
		/* the edge: parents as inputs (kiln-stage reads them from $in), the key file and
		   the tools the step runs */
		bufprintf(&b, "build $bdir/stamp/%s: stage", s->name);
		for (j = 0; j < s->np; j++)
			bufprintf(&b, " $bdir/stamp/%s", s->parent[j]);
		bufprintf(&b, " | $bdir/keys/%s", s->name);
		bufreset(&t);
		tooldeps(&t, s->step, tools, ntools);
		if (rocmmissing && needsrocm(s->step))
			bufputs(&t, " $bdir/stamp/rocm.missing");
		if (t.len)
			bufprintf(&b, " ||%s", t.s);
		bufprintf(&b, "\n  stage = %s\n  step = %s\n  comp = %s\n", s->name, s->step, s->comp);
		if (s->out || s->idfile || s->idkeys) {
			bufputs(&b, "  opts =");
			if (s->out) {
				bufputc(&b, ' ');
				p = xasprintf("--out=%s", s->out);
				ninja_shq(&b, p);
				free(p);
			}
			if (s->idfile) {
				bufputc(&b, ' ');
				p = xasprintf("--id-file=%s/src/%s.id", absb, s->comp);
				ninja_shq(&b, p);
				free(p);
			}
			if (s->idkeys)
				bufprintf(&b, " --id-keys=%s", s->idkeys);
			bufputc(&b, '\n');
		}
		/* the name people type; ninja -t query NAME lists the tools it runs too */
		bufprintf(&b, "build %s: phony $bdir/stamp/%s", s->name, s->name);
		bufreset(&t);
		tooldeps(&t, s->step, tools, ntools);
		if (t.len)
			bufprintf(&b, " ||%s", t.s);
		bufputs(&b, "\n\n");
	}
	bufputs(&b, "build stack: phony");
	for (i = 0; i < nstages; i++)
		if (!strcmp(stages[i].name, "stack.smoke") || !strcmp(stages[i].name, "stack.fat") ||
		    (!strcmp(stages[i].step, "patch") &&
		     !strcmp(pin(comp_find(stages[i].comp), "KIND"), "source")))
			bufprintf(&b, " $bdir/stamp/%s", stages[i].name);
	bufputc(&b, '\n');
	p = xasprintf("%s/stack.ninja", cf.builddir);
	commit(p, &b, 1);
	free(p);
	free(kbin);
	free(archs);
	buffree(&b);
	buffree(&env);
	buffree(&t);
}

/* the stack: pins, components, profiles, facts, then the stage records */
static char *
planstack(char ***proflist, size_t *nprof)
{
	char *pf, *err = NULL, *p;
	struct buf profs = {0};
	size_t i;
	struct stat st;

	pf = cf.pinsfile ? xstrdup(cf.pinsfile) : xasprintf("%s/env/versions.env", cf.srcdir);
	if (pins_load(&pins, pf, &err) < 0)
		fail("%s", err);
	addregen(pf);
	free(pf);
	for (i = 0; i < cf.npinover; i++)
		if (pins_override(&pins, cf.pinover[i], &err) < 0)
			fail("%s", err);
	complist(pins_stack(&pins, "WITH"), pins.file, 2);
	for (i = 0; i < comp_count; i++)
		if (wanted[i] > 0 || (wanted[i] == 0 && comp_table[i].isdefault))
			on[non++] = &comp_table[i];
	for (i = 0; i < non; i++) {
		const struct component *c = on[i];
		const char *k = pin(c, "KIND");
		if (!strcmp(k, "build") || !strcmp(k, "source")) {
			if (!*pin(c, "URL"))
				fail("%s: no %s_URL for component %s (add %s_URL=https://... or pin a prebuilt "
				     "wheel: --pin %s=wheel:/path.whl)", pins.file, c->name, c->name, c->name, c->name);
			if (!*pin(c, "REF"))
				fail("%s: no %s_REF for component %s (a tag, branch or commit)", pins.file,
				     c->name, c->name);
		}
		if (!strcmp(k, "wheel")) {
			if (!*pin(c, "WHEEL"))
				fail("%s: %s is a prebuilt wheel here (%s_KIND=wheel): name it with --pin "
				     "%s=wheel:/path/to/%s-VERSION-TAGS.whl", pins.file, c->name, c->name,
				     c->name, pin(c, "DIST"));
			if (stat(pin(c, "WHEEL"), &st) < 0)
				fail("%s: wheel pin %s: no such file", c->name, pin(c, "WHEEL"));
			checkpath(c->name, pin(c, "WHEEL"), 0);
		}
		if (*pin(c, "DIST") && !isdistname(pin(c, "DIST")))
			fail("%s: %s_DIST=%s is not a distribution name", pins.file, c->name, pin(c, "DIST"));
	}
	/* the profiles: env/arch/BACKEND.env, then env/arch/ARCH.env for each target */
	*proflist = NULL;
	*nprof = 0;
	for (i = 0; i <= cf.narch; i++) {
		const char *n = i == 0 ? backend_name(cf.backend) : cf.arch[i - 1];
		struct kvfile f;
		if (i > 0 && !strcmp(n, backend_name(cf.backend)))
			continue;
		p = xasprintf("%s/env/arch/%s.env", cf.srcdir, n);
		if (stat(p, &st) < 0) {
			free(p);
			continue;
		}
		if (kv_load(&f, p, &err) < 0)
			fail("%s (a profile envclean applies to the builds)", err);
		kv_free(&f);
		*proflist = xrealloc(*proflist, (*nprof + 1) * sizeof **proflist);
		(*proflist)[(*nprof)++] = p;
		bufprintf(&profs, "%s%s", profs.len ? " " : "", p);
	}
	/* configure's stack inputs: the profiles, the pins, every patch folder */
	{
		size_t n;
		char **envs, *d = xasprintf("%s/env/arch", cf.srcdir);
		envs = lsdir(d, ".env", 0, &n);
		for (i = 0; i < n; i++) {
			p = xasprintf("%s/%s", d, envs[i]);
			addregen(p);
			free(p);
		}
		strvfree(envs, n);
		free(d);
		p = xasprintf("%s/env/versions.env", cf.srcdir);
		if (stat(p, &st) == 0)
			addregen(p);
		free(p);
		p = xasprintf("%s/patches", cf.srcdir);
		if (stat(p, &st) == 0)
			addregen(p);
		free(p);
		for (i = 0; i < comp_count; i++) {
			p = patchdir(&comp_table[i]);
			if (stat(p, &st) == 0)
				addregen(p);
			free(p);
		}
	}
	return bufdetach(&profs);
}

/* a word for a shell command line: as it is when that is safe, else quoted */
static void
shword(struct buf *b, const char *s)
{
	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,+-") == strlen(s))
		bufputs(b, s);
	else
		shquote(b, s);
}

/* "# Generated ..." and the command line as typed (./configure ARG...), two lines */
static void
generated(struct buf *b)
{
	struct buf c = {0};
	size_t i;
	char *p;

	bufputs(&c, "./configure");
	for (i = 1; i < cf.nreplay; i++) {
		bufputc(&c, ' ');
		shword(&c, cf.replay[i]);
	}
	for (p = c.s; *p; p++)
		if (*p == '\n')
			*p = ' ';
	bufprintf(b, "# Generated by kiln's configure; edits are lost. To change it, rerun:\n#   %s\n", c.s);
	buffree(&c);
}

/* the top of build.ninja: configure's variables, each escaped for ninja */
static void
header(struct buf *b)
{
	struct buf r = {0};
	size_t i;

	generated(b);
	bufputs(b, "ninja_required_version = 1.10\n");
#define VAR(n, v) do { bufputs(b, n " = "); ninja_esc(b, v); bufputc(b, '\n'); } while (0)
#define QVAR(n, v) do { bufputs(b, n " = "); ninja_shq(b, v); bufputc(b, '\n'); } while (0)
	VAR("srcdir", cf.srcdir);
	VAR("bdir", cf.builddir);
	QVAR("qsrcdir", cf.srcdir);
	QVAR("qbdir", cf.builddir);
	VAR("cc", cf.cc);
	bufputs(b, "cflags = -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes "
	           "-Wstrict-prototypes -Wno-unused-parameter ");
	ninja_esc(b, cf.cflags);
	bufputc(b, '\n');
	VAR("ldflags", cf.ldflags);
	bufputs(b, "sanflags = -fsanitize=address,undefined -fno-sanitize-recover=all "
	           "-fno-omit-frame-pointer -g -O1\n");
	QVAR("qprefix", cf.prefix);
	VAR("fuzzcc", *cf.fuzzcc ? cf.fuzzcc : "clang");
	bufputs(b, "fuzzflags = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -g -O1\n");
	/* the command that regenerates: every argument shell-quoted, then ninja-escaped */
	for (i = 0; i < cf.nreplay; i++) {
		if (i > 0 && !strcmp(cf.replay[i], "--install-deps"))
			continue;
		if (i)
			bufputc(&r, ' ');
		shword(&r, cf.replay[i]);
	}
	bufputs(b, "configure_cmd = ");
	ninja_esc(b, r.s ? r.s : "");
	bufputs(b, "\ninclude $srcdir/ninja/tools.ninja\n\n");
	buffree(&r);
#undef VAR
#undef QVAR
}

/* config.mk's value: make reads '$' and '#' itself */
static void
mkval(struct buf *b, const char *name, const char *v)
{
	bufprintf(b, "%s = ", name);
	for (; *v; v++) {
		if (*v == '$')
			bufputc(b, '$');
		else if (*v == '#')
			bufputc(b, '\\');
		bufputc(b, *v == '\n' ? ' ' : *v);
	}
	bufputc(b, '\n');
}

/* mtime of path in ns, 0 if missing */
static long long
mtimens(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;
	return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

/* the options that must hold before anything is written */
static void
checkopts(void)
{
	struct pins tp = {0};
	char *err = NULL;
	size_t i;

	checkpath("--builddir", cf.builddir, 1);
	checkpath("the source folder", cf.srcdir, 1);
	checkpath("--pins", cf.pinsfile, 1);
	checkpath("--python", cf.python, 0);
	checkpath("--venv", cf.venv, 0);
	checkpath("--rocm-path", cf.rocm, 0);
	checkpath("--stage-cache", cf.stagecache, 0);
	checkpath("--mirror", cf.mirror, 0);
	checkpath("--prefix", cf.prefix, 0);
	checkpath("KILN_BIN", cf.kilnbin, 0);
	if (!*cf.builddir)
		fail("--builddir: must not be empty");
	pyprefix("--python", cf.python);
	pyprefix("--venv", cf.venv);
	if (strpbrk(cf.srcdir, " \t"))
		fail("the source folder '%s' has a space in its path; the stack's profile list cannot "
		     "hold it (move or link the checkout to a path without spaces)", cf.srcdir);
	parsearch();
	complist(cf.with, "--with", 1);
	complist(cf.without, "--without", -1);
	/* the --pin arguments make sense (with or without a stack to apply them to) */
	tp.v = xcalloc(comp_count * pinkey_count, sizeof *tp.v);
	tp.stackv = xcalloc(pinkey_count, sizeof *tp.stackv);
	for (i = 0; i < cf.npinover; i++) {
		checkpath("--pin", cf.pinover[i], 0);
		if (pins_override(&tp, cf.pinover[i], &err) < 0)
			fail("%s", err);
	}
	pins_free(&tp);
}

/* tools/lib's sources and pkg-config flags (libcrypto and its build.conf's PKGS) */
static void
libflags(struct emitcfg *ec)
{
	struct kvfile f;
	struct buf l = {0};
	const char *v;
	char *dir = xasprintf("%s/tools/lib", cf.srcdir), *bc = xasprintf("%s/build.conf", dir);
	char *pkgs = xstrdup("libcrypto"), *av[16], *cp, *sp, *w, *out, *err = NULL;
	size_t n = 0;
	struct stat st;

	if (stat(bc, &st) == 0) {
		if (kv_load(&f, bc, &err) < 0)
			fail("%s", err);
		if ((v = kv_get(&f, "PKGS"))) {
			free(pkgs);
			pkgs = xasprintf("libcrypto %s", v);
		}
		kv_free(&f);
	}
	ec->srcdir = cf.srcdir;
	ec->pkgconfig = cf.pkgconfig;
	ec->fuzzcc = cf.fuzzcc;
	ec->lib = lsdir(dir, ".c", 0, &ec->nlib);
	cp = xstrdup(pkgs);
	av[n++] = (char *)cf.pkgconfig;
	av[n++] = "--cflags";
	for (w = strtok_r(cp, " ", &sp); w && n < 14; w = strtok_r(NULL, " ", &sp))
		av[n++] = w;
	av[n] = NULL;
	if (capture(av, &out) < 0)
		fail("pkg-config cannot find %s", pkgs);
	ec->libcflags = out;
	av[1] = "--libs";
	if (capture(av, &out) < 0)
		fail("pkg-config cannot find %s", pkgs);
	bufprintf(&l, "-Wl,--as-needed %s", out);
	ec->libcryptolibs = bufdetach(&l);
	free(out);
	free(cp);
	free(pkgs);
	free(bc);
	free(dir);
}

/* the target Python: it runs, pip may install into it (PEP 668), --venv is ours to make */
static void
checkpython(void)
{
	struct stat st;
	struct buf c = {0};
	char *v, *p, **e;
	size_t n;

	if (!cf.python || !*cf.python)
		fail("no target Python: give --python=PATH (or --venv=DIR)");
	if (cf.venv) {
		cf.basepy = cf.python;
		cf.python = xasprintf("%s/bin/python", cf.venv);
	}
	askpython();
	if (py.managed && !cf.venv) {
		/* the command to run, each word quoted where the shell needs it */
		v = xasprintf("%s/kiln-venv", getenv("HOME") ? getenv("HOME") : "/tmp");
		shword(&c, cf.python);
		bufputs(&c, " -m venv ");
		shword(&c, v);
		free(v);
		fail("--python=%s is externally managed (PEP 668: pip refuses to install into it); "
		     "make a venv and pass its python: %s, then --python=%s/bin/python (with what "
		     "the builds need installed in it), or let kiln make one: --venv=DIR",
		     cf.python, c.s, strrchr(c.s, ' ') + 1);
	}
	if (cf.venv && stat(cf.venv, &st) == 0) {
		p = xasprintf("%s/pyvenv.cfg", cf.venv);
		if (access(p, F_OK) < 0) {
			e = lsdir(cf.venv, NULL, 0, &n);
			strvfree(e, n);
			if (!n) {
				e = lsdir(cf.venv, NULL, 1, &n);
				strvfree(e, n);
			}
			if (n)
				fail("--venv=%s: the folder exists and is not a venv; kiln makes and owns the "
				     "venv there, so give a new or empty folder", cf.venv);
		}
		free(p);
	}
}

/* the stack: checks, stage records, keys, stack.env and stack.ninja; the include of
   stack.ninja and the default targets go to b */
static void
stack(struct buf *b, char *const *tools, size_t ntools)
{
	struct buf fb = {0};
	struct stat st;
	char *p, *k, *profs, **proflist;
	size_t nprof;

	if (!(absb = realpath(cf.builddir, NULL)) &&
	    (mkdirs(cf.builddir) < 0 || !(absb = realpath(cf.builddir, NULL))))
		fail("cannot create %s:", cf.builddir);
	p = xasprintf("%s/env/versions.env", cf.srcdir);
	if (!cf.pinsfile && stat(p, &st) < 0) {
		/* a source tree without env/versions.env (a partial copy): no stack to build */
		warn("warning: no pin file %s; the stack graph is empty", p);
		bufputs(&fb, "# no pin file: no stages\nbuild stack: phony\n");
		free(p);
		p = xasprintf("%s/stack.ninja", cf.builddir);
		commit(p, &fb, 1);
	} else {
		checkpython();
		profs = planstack(&proflist, &nprof);
		pinfit();
		free(p);
		p = xasprintf("%s/keys", absb);
		k = xasprintf("%s/stamp", absb);
		if (mkdirs(p) < 0 || mkdirs(k) < 0)
			fail("cannot create %s:", p);
		free(k);
		free(p);
		p = xasprintf("%s/ninja/stack-steps.sh", cf.srcdir);
		if (readfile(p, &fb, 0) < 0)
			fail("%s:", p);
		stepsfile = bufdetach(&fb);
		free(p);
		p = xasprintf("%s/ninja/stack.ninja", cf.srcdir);
		if (readfile(p, &fb, 0) < 0)
			fail("%s:", p);
		rulefile = bufdetach(&fb);
		mkstages(proflist, nprof);
		writestack(tools, ntools, profs);
		strvfree(proflist, nprof);
		free(profs);
	}
	free(p);
	buffree(&fb);
	bufputs(b, "\n# the stack: stages of each component (tools/kiln-stage/graph.c)\n"
	           "include $bdir/stack.ninja\n");
	bufputs(b, cf.kilnbin ? "default stack\n" : "default tools stack\n");
}

/* the regeneration edge: configure reruns when it, its data, the generator's schema and
   writers (not KILN_BIN's: that binary itself), or the stack's inputs change; each input
   is also a phony target (a deleted one regenerates instead of stopping ninja). Returns
   the newest input's mtime. */
static long long
regenedge(struct buf *b)
{
	static const char *const files[][2] = {
		{"", "configure"}, {"env/deps", ".txt"}, {"ninja", ".ninja"}, {"ninja", ".sh"},
		{"tools/kiln-stage", "graph.c"}, {"tools/kiln-stage", "emit.c"},
		{"tools/kiln-stage", "pins.c"}, {"tools/kiln-stage", "schema.c"},
		{"tools/kiln-stage", "schema.h"}, {"tools/lib", "arch.c"}, {"tools/lib", "kv.c"},
	};
	long long newest = 0, t;
	size_t d, n, i;
	char **v, *p;

	for (d = 0; d < sizeof files / sizeof files[0]; d++) {
		p = xasprintf("%s/%s", cf.srcdir, files[d][0]);
		v = lsdir(p, files[d][1], 0, &n);
		free(p);
		for (i = 0; i < n; i++) {
			p = xasprintf("%s%s%s/%s", cf.srcdir, *files[d][0] ? "/" : "", files[d][0], v[i]);
			addregen(p);
			free(p);
		}
		strvfree(v, n);
	}
	if (cf.kilnbin) {
		p = xasprintf("%s/kiln-stage", cf.kilnbin);
		addregen(p);
		free(p);
	}
	bufputs(b, "\nbuild build.ninja config.mk: configure |");
	for (i = 0; i < nregen; i++) {
		bufputc(b, ' ');
		ninja_esc(b, regen[i]);
		if ((t = mtimens(regen[i])) > newest)
			newest = t;
	}
	bufputs(b, "\n# configure's inputs: a deleted one regenerates instead of stopping ninja\n");
	for (i = 0; i < nregen; i++) {
		bufputs(b, "build ");
		ninja_esc(b, regen[i]);
		bufputs(b, ": phony\n");
	}
	return newest;
}

/* a space-separated list of n strings, fresh */
static char *
joined(char *const *v, size_t n)
{
	struct buf o = {0};
	size_t i;

	for (i = 0; i < n; i++)
		bufprintf(&o, "%s%s", i ? " " : "", v[i]);
	return bufdetach(&o);
}

/* config.mk: the same decisions, for make */
static void
configmk(struct buf *mk, char *const *tools, size_t ntools)
{
	const char *names[16];
	char *p;
	size_t i;

	generated(mk);
	mkval(mk, "KILN_SRCDIR", cf.srcdir);
	mkval(mk, "KILN_BUILDDIR", cf.builddir);
	p = archlist(",");
	mkval(mk, "KILN_ARCH", p);
	free(p);
	mkval(mk, "KILN_BACKEND", backend_name(cf.backend));
	mkval(mk, "KILN_PYTHON", cf.python ? cf.python : "");
	mkval(mk, "KILN_VENV", cf.venv ? cf.venv : "");
	mkval(mk, "KILN_ROCM_PATH", cf.rocm);
	mkval(mk, "KILN_PREFIX", cf.prefix);
	mkval(mk, "KILN_PINS", cf.pinsfile ? cf.pinsfile : "");
	p = joined(cf.pinover, cf.npinover);
	mkval(mk, "KILN_PIN_OVERRIDES", p);
	free(p);
	for (i = 0; i < non; i++)
		names[i] = on[i]->name;
	p = joined((char *const *)names, non);
	mkval(mk, "KILN_COMPONENTS", p);
	free(p);
	mkval(mk, "KILN_CACHE", cf.cache);
	mkval(mk, "KILN_STAGE_CACHE", cf.stagecache ? cf.stagecache : "");
	mkval(mk, "KILN_MIRROR", cf.mirror ? cf.mirror : "");
	mkval(mk, "KILN_JOBS", cf.jobs);
	p = joined(tools, ntools);
	mkval(mk, "KILN_TOOLS", p);
	free(p);
	mkval(mk, "NINJA", cf.ninja);
}

int
graph_main(int argc, char **argv)
{
	struct buf b = {0}, mk = {0};
	struct emitcfg ec = {0};
	char **tools = NULL, *err = NULL;
	size_t ntools = 0;
	long long newest;

	parseopts(argc, argv);
	checkopts();
	libflags(&ec);
	header(&b);
	if (emit_tools(&b, &ec, addregen, &tools, &ntools, &err) < 0)
		fail("%s", err);
	if (cf.narch)
		stack(&b, tools, ntools);
	else
		bufputs(&b, "default tools\n");
	newest = regenedge(&b);
	configmk(&mk, tools, ntools);
	commit("build.ninja", &b, 1);
	commit("config.mk", &mk, 1);
	/* an unchanged output older than an input it was just made from: ninja would run
	   configure again for nothing; make its time say it is current */
	if (mtimens("build.ninja") < newest)
		utimensat(AT_FDCWD, "build.ninja", NULL, 0);
	if (mtimens("config.mk") < newest)
		utimensat(AT_FDCWD, "config.mk", NULL, 0);
	buffree(&b);
	buffree(&mk);
	strvfree(tools, ntools);
	strvfree(ec.lib, ec.nlib);
	free((char *)ec.libcflags);
	free((char *)ec.libcryptolibs);
	pins_free(&pins);
	return EXIT_OK;
}
