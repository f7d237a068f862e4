/* kiln-stage graph: configure's generator. From configure's decisions (its options)
   and the schema (schema.c) it writes build.ninja (the tools through emit.c, the stack
   through graph.c) and config.mk, each only if its content changed. This file: the
   options, the checks on them, build.ninja's head and regeneration edge, config.mk. */
#include "graph.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "emit.h"
#include "strv.h"
#include "kv.h"
#include "os.h"
#include "sign.h"
#include "wheelpath.h"

struct config cf;

static char **regen;                    /* files and folders whose change reruns configure */
static size_t nregen, capregen;

/* one more input of configure (each listed once) */
void
addregen(const char *path)
{
	size_t i;

	for (i = 0; i < nregen; i++)
		if (!strcmp(regen[i], path))
			return;
	regen = xgrow(regen, &capregen, nregen + 1, sizeof *regen);
	regen[nregen++] = xstrdup(path);
}

void
fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	fflush(NULL);
	_exit(EXIT_USAGE);
}

/* --- options -------------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr, "usage: kiln-stage graph --srcdir=DIR --builddir=DIR [--arch=LIST] [--python=PATH]\n"
	                "         [--venv=DIR] [--rocm-path=DIR] [--pins=FILE] [--pin=NAME=REF]... [--with=LIST]\n"
	                "         [--without=LIST] [--cache=KIND] [--stage-cache=DIR] [--mirror=DIR] [--jobs=N]\n"
	                "         [--kiln-bin=DIR] [--prefix=DIR] [--cc=CC] [--cflags=F] [--ldflags=F]\n"
	                "         [--pkg-config=P] [--fuzzcc=CC] [--ninja=N] [--prog=NAME]\n"
	                "         [--image=NAME[:TAG]] [--image-base=REF]\n"
	                "         [--git-cache=DIR] [--cache-remote=URL] [--distribute=distcc|icecream]\n"
	                "         [--distribute-hosts=HOSTS] [--work-dir=DIR]\n"
	                "         [--index-url=URL | --wheelhouse=DIR] [--allow-mismatch=yes|no]\n"
	                "         [--allow-network=yes|no]\n"
	                "         -- CONFIGURE [ARG]...\n");
	exit(EXIT_USAGE);
}

static const char *
optval(const char *a, const char *name)
{
	size_t n = strlen(name);

	return strncmp(a, name, n) == 0 && a[n] == '=' ? a + n + 1 : NULL;
}

static const char *allowmm;             /* --allow-mismatch=yes|no */
static const char *allownet;            /* --allow-network=yes|no */

/* the argument a with the user information of every URL in it (user:password@ between
   "://" and the host) as "***" and control bytes escaped: fresh; NULL when it holds none */
static char *
credsarg(const char *a)
{
	const char *p = a, *h, *end, *at, *q;
	struct buf b = {0}, e = {0};
	int found = 0;

	while ((h = strstr(p, "://"))) {
		h += 3;
		end = h + strcspn(h, "/?#");
		for (at = NULL, q = h; q < end; q++)
			if (*q == '@')
				at = q;
		bufadd(&b, p, (size_t)(h - p));
		if (at)
			bufputs(&b, "***");
		found |= at != NULL;
		p = at ? at : h;
	}
	bufputs(&b, p);
	if (found)
		wheelpath_escape(&e, b.s);
	buffree(&b);
	return found ? bufdetach(&e) : NULL;
}

/* no argument may carry a URL's credentials: they would land in build.ninja, the keys,
   stack.env and the logs, and a message that refused them later would repeat them; so
   they are refused first, shown as "***" */
static void
nocreds(int argc, char **argv)
{
	char *m;
	int i;

	for (i = 1; i < argc; i++)
		if ((m = credsarg(argv[i])))
			fail("%s: credentials in a URL would land in build.ninja, the key files and the logs; "
			     "put them in ~/.netrc (or $NETRC), KILN_CACHE_TOKEN or KILN_FETCH_TOKEN", m);
}

/* configure's defaults for what it may leave out */
static void
confdefaults(void)
{
	cf.prefix = "/usr/local";
	cf.rocm = "/opt/rocm";
	cf.cache = "none";
	cf.cc = "cc";
	cf.cflags = cf.ldflags = cf.fuzzcc = cf.with = cf.without = cf.archarg = "";
	cf.pkgconfig = "pkg-config";
	cf.ninja = "ninja";
	cf.jobs = "2";
	cf.gitcache = cf.cacheremote = cf.distribute = cf.disthosts = cf.workdir = "";
}

/* kiln-stage graph's own options, up to "--"; after it, configure's command line
   (cf.replay) */
static void
graphargs(int argc, char **argv)
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
		{"--image", &cf.image}, {"--image-base", &cf.imagebase},
		{"--git-cache", &cf.gitcache}, {"--cache-remote", &cf.cacheremote},
		{"--distribute", &cf.distribute}, {"--distribute-hosts", &cf.disthosts},
		{"--work-dir", &cf.workdir},
		{"--index-url", &cf.indexurl}, {"--wheelhouse", &cf.wheelhouse},
		{"--allow-mismatch", &allowmm}, {"--allow-network", &allownet},
	};
	size_t k;
	const char *v;
	int i;

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
}

/* what only configure's own arguments say: the pins (--pin=NAME=REF or --pin NAME=REF)
   and the keys of signed stage-cache manifests */
static void
replayargs(void)
{
	size_t k, cap = 0;
	const char *v;
	char wd[4096];
	char *why;

	for (k = 1; k < cf.nreplay; k++) {
		if ((v = optval(cf.replay[k], "--cache-trusted-keys"))) {
			if ((why = sign_checklist(v)))
				dien(EXIT_USAGE, "--cache-trusted-keys: %s", why);
			cf.trustedkeys = v;
			continue;
		}
		if ((v = optval(cf.replay[k], "--cache-sign-key"))) {
			if (!*v || !getcwd(wd, sizeof wd) || access(v, R_OK) < 0)
				dien(EXIT_USAGE, "--cache-sign-key=%s: no secret key file there (kiln-stage keygen "
				     "makes one)", v);
			cf.signkey = os_abspath(v, wd);
			continue;
		}
		if ((v = optval(cf.replay[k], "--pin")))
			;
		else if (!strcmp(cf.replay[k], "--pin") && k + 1 < cf.nreplay)
			v = cf.replay[++k];
		else
			continue;
		cf.pinover = xgrow(cf.pinover, &cap, cf.npinover + 1, sizeof *cf.pinover);
		cf.pinover[cf.npinover++] = (char *)v;
	}
}

/* an empty optional path is none: NULL */
static void
emptynone(const char **p)
{
	if (*p && !**p)
		*p = NULL;
}

/* configure's decisions (cf) from kiln-stage graph's arguments; bad ones stop it */
static void
parseopts(int argc, char **argv)
{
	const char *v;
	int i;

	confdefaults();
	/* before any message could repeat an argument: the name messages go by, then no
	   credentials anywhere */
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if ((v = optval(argv[i], "--prog")))
			argv0 = v;
	nocreds(argc, argv);
	graphargs(argc, argv);
	if (cf.prog)
		argv0 = cf.prog;
	replayargs();
	if (!cf.srcdir || !cf.builddir || !cf.replay)
		usage();
	emptynone(&cf.stagecache);
	emptynone(&cf.mirror);
	emptynone(&cf.kilnbin);
	emptynone(&cf.venv);
	emptynone(&cf.pinsfile);
	emptynone(&cf.image);
	emptynone(&cf.imagebase);
	emptynone(&cf.indexurl);
	emptynone(&cf.wheelhouse);
	cf.allowmismatch = allowmm && !strcmp(allowmm, "yes");
	cf.allownetwork = allownet && !strcmp(allownet, "yes");
}

/* a path option: any byte but newline; one that becomes a ninja path also no '|' */
void
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
		if (arch_table[i].build)
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
			if (arch_find(w))
				fail("arch '%s' is an AMD target the stack does not build for%s%s%s", w,
				     s ? "; did you mean " : "", s ? s : "", s ? "?" : "");
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

/* the --arch targets joined by sep, fresh */
char *
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

/* the --arch list as it crosses the seam: gfx1100 gfx1151 (HACKING.md, "One spelling of
   an arch list"), fresh */
char *
archwords(void)
{
	return archlist(" ");
}

/* the --arch list as TORCH_CUDA_ARCH_LIST spells it: sm_90 -> 9.0, sm_90a -> 9.0a,
   sm_120 -> 12.0, ";"-separated; "" for a backend other than CUDA. Fresh. */
char *
archcuda(void)
{
	struct buf b = {0};
	const char *a, *d;
	size_t i, n;

	for (i = 0; cf.backend == BACKEND_CUDA && i < cf.narch; i++) {
		a = cf.arch[i] + 3;   /* arch_backend: every CUDA target is sm_NN[a|f] */
		for (d = a; *d >= '0' && *d <= '9'; d++)
			;
		n = (size_t)(d - a);
		bufprintf(&b, "%s%.*s.%.*s%s", i ? ";" : "", (int)n - 1, a, 1, a + n - 1, d);
	}
	return bufdetach(&b);
}

int wanted[16];

/* the components of a LIST option (comma or space separated) through fn */
void
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
		/* dropping torch: graph.c's torchless checks that only CMake components remain */
		/* a pin file's lists (2: WITH, -2: WITHOUT) yield to the command line's */
		if (value == -2) {
			if (wanted[c - comp_table] <= 0)
				wanted[c - comp_table] = -1;
		} else if (value != 2 || wanted[c - comp_table] >= 0)
			wanted[c - comp_table] = value == 2 ? 1 : value;
		free(w);
	}
}

/* --- writing ----------------------------------------------------------------------- */

/* write path only if its content changed; says so on stdout when loud */
void
commit(const char *path, const struct buf *b, int loud)
{
	int r = writefile_ifchanged(path, b->s ? b->s : "", b->len, 0644);

	if (r < 0)
		fail("cannot write %s:", path);
	if (loud)
		printf(r ? "wrote %s\n" : "%s is unchanged\n", path);
}

/* a word for a shell command line: as it is when that is safe, else quoted */
void
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
long long
mtimens(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;
	return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

/* --image=NAME[:TAG] and --image-base=REF: names podman takes, no option look-alikes */
static void
checkimage(void)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz0123456789._-/:@";
	const char *v = cf.image;

	if (cf.imagebase && !cf.image)
		fail("--image-base=%s needs --image=NAME[:TAG] (the image it is the base of)", cf.imagebase);
	if (v && (strspn(v, ok) != strlen(v) || !isalnumc((unsigned char)*v)))
		fail("--image=%s: not an image name (lowercase letters, digits, '.', '_', '-', '/', "
		     "then an optional :TAG)", v);
	v = cf.imagebase;
	if (v && strcmp(v, "scratch") && (strspn(v, ok) != strlen(v) || !isalnumc((unsigned char)*v)))
		fail("--image-base=%s: not an image reference (NAME[:TAG], NAME@sha256:..., or scratch)", v);
}

/* a URL as a message may show it: everything between "://" and its last '@' (a user
   and password, even one holding '/' or '@') as "***", control bytes escaped; fresh */
static char *
showurl(const char *u)
{
	const char *a = strstr(u, "://"), *at = strrchr(u, '@');
	struct buf b = {0};
	char *m;

	a = a ? a + 3 : u;
	if (at && at >= a)
		m = xasprintf("%.*s***%s", (int)(a - u), u, at);
	else
		m = xstrdup(u);
	wheelpath_escape(&b, m);
	free(m);
	return bufdetach(&b);
}

/* --index-url=URL (http or https; no credentials: they would land in the keys and logs)
   or --wheelhouse=DIR (a folder of wheels), never both. A refused URL is never repeated
   with its credentials (showurl) */
static void
checkdeps(void)
{
	const char *u = cf.indexurl;

	if (u && cf.wheelhouse)
		fail("--index-url and --wheelhouse: give one (the build requirements come from one place)");
	if (u && strchr(u, '@'))
		fail("--index-url=%s: credentials in the URL would land in the keys and logs; put them in "
		     "~/.netrc (or $NETRC)", showurl(u));
	if (u && !startswith(u, "http://") && !startswith(u, "https://") && !startswith(u, "file://"))
		fail("--index-url=%s: not an http://, https:// or file:// URL", showurl(u));
	if (u && strpbrk(u, " \t\n\r\f\v"))
		fail("--index-url=%s: white space in the URL (pip would take it for two words)", showurl(u));
	for (; u && *u; u++)
		if ((unsigned char)*u < 0x20 || *u == 0x7f)
			fail("--index-url=%s: a control character in the URL", showurl(cf.indexurl));
	if (cf.wheelhouse && !os_isdir(cf.wheelhouse))
		fail("--wheelhouse=%s: no such folder", cf.wheelhouse);
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
	checkpath("--git-cache", cf.gitcache, 0);
	checkpath("--work-dir", cf.workdir, 0);
	checkpath("--cache-remote", cf.cacheremote, 0);
	checkpath("--distribute-hosts", cf.disthosts, 0);
	checkpath("--wheelhouse", cf.wheelhouse, 0);
	checkdeps();
	if (!*cf.builddir)
		fail("--builddir: must not be empty");
	pyprefix("--python", cf.python);
	pyprefix("--venv", cf.venv);
	if (strpbrk(cf.srcdir, "|\n"))
		fail("the source folder '%s' has a '|' or a newline in its path, which ninja and the "
		     "stack's profile list cannot hold (move or link the checkout elsewhere)", cf.srcdir);
	checkimage();
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
	ec->cc = cf.cc;
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

/* the regeneration edge: configure reruns when it, its data, the generator's schema and
   writers (not KILN_BIN's: that binary itself), or the stack's inputs change; each input
   is also a phony target (a deleted one regenerates instead of stopping ninja). Returns
   the newest input's mtime. */
static long long
regenedge(struct buf *b)
{
	static const char *const files[][2] = {
		{"", "configure"}, {"env/deps", ".txt"}, {"ninja", ".ninja"}, {"ninja", ".sh"},
		{"ninja/steps", ".sh"}, {"ninja/steps/lib", ".sh"},
		{"tools/kiln-stage", "graph.c"}, {"tools/kiln-stage", "emit.c"},
		{"tools/kiln-stage", "conf.c"}, {"tools/kiln-stage", "python.c"},
		{"tools/kiln-stage", "fit.c"}, {"tools/kiln-stage", "graph.h"},
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
		strs_free(v, n);
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
	mkval(mk, "KILN_GIT_CACHE", cf.gitcache);
	mkval(mk, "KILN_WORK_DIR", cf.workdir);
	mkval(mk, "KILN_CACHE_REMOTE", cf.cacheremote);
	mkval(mk, "KILN_DISTRIBUTE", cf.distribute);
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
	struct strv tools = {0};
	char *err = NULL;
	long long newest;

	parseopts(argc, argv);
	checkopts();
	prestack();
	libflags(&ec);
	header(&b);
	if (emit_tools(&b, &ec, addregen, &tools, &err) < 0)
		fail("%s", err);
	if (cf.narch)
		stack(&b, tools.v, tools.n);
	else
		bufputs(&b, "default tools\n");
	newest = regenedge(&b);
	configmk(&mk, tools.v, tools.n);
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
	strv_free(&tools);
	strs_free(ec.lib, ec.nlib);
	free((char *)ec.libcflags);
	free((char *)ec.libcryptolibs);
	pins_free(&pins);
	return EXIT_OK;
}
