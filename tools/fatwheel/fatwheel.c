/* fatwheel: bundle a wheel's shared-library closure into it, with $ORIGIN RPATHs, an
   optional soname hash, a platform retag and a rewritten RECORD; members it does not
   change are copied as compressed bytes */
#include "state.h"
#include "json.h"
#include "opt.h"
#include "os.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *usagetext =
	"usage: fatwheel [repair] [-n|--dry-run] [--json] [-q] [--lib-path DIR]...\n"
	"                [--rocm=DIR|TARBALL] [--no-ld-library-path] [--ldpaths DIRS]\n"
	"                [--ld-so-cache FILE] [--exclude GLOB]... [--include FILE]...\n"
	"                [--arch=LIST] [--layout=libs|pkg:DIR | -L SUFFIX] [--soname-hash]\n"
	"                [--plat=keep|auto|TAG] [--only-plat] [--no-update-tags]\n"
	"                [--level=N | -z N] [--jobs=N] IN.whl -w OUTDIR\n"
	"       fatwheel --ldd [--json] [search options] FILE\n"
	"       fatwheel --edit-elf [--set-soname NAME] [--replace-needed OLD NEW]...\n"
	"                [--set-rpath PATH | --set-runpath PATH] IN OUT\n";


/* the run, kept where the exit and signal handlers find it */
static struct fw run;

static void
cleanup(void)
{
	struct fw *fw = &run;

	if (fw->outopen)
		atomic_abort(&fw->out);
	fw->outopen = 0;
}

/* on a signal: no partial output left (only async-signal-safe calls), then die of it */
static void
onsignal(int sig)
{
	struct fw *fw = &run;

	if (fw->outopen && fw->out.tmp)
		unlink(fw->out.tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "fatwheel: %s\n", msg);
	fputs(usagetext, stderr);
	exit(EXIT_USAGE);
}

/* opt_val for this tool: the value lives in argv, which the options keep pointing into */
static char *
optv(int argc, char **argv, int *i, const char *name)
{
	return (char *)opt_val(argc, argv, i, name, usage);
}

static void
help(void)
{
	fputs(usagetext, stdout);
	fputs("\nBundle the shared libraries a wheel needs into it and print the new wheel's path.\n"
	      "  repair                 (first) auditwheel's defaults: --plat=auto, --soname-hash,\n"
	      "                         -w wheelhouse\n"
	      "  -w, --wheel-dir DIR    folder for the output wheel, created if missing (required\n"
	      "                         unless after repair)\n"
	      "  -n, --dry-run          print the plan, write nothing\n"
	      "  --json                 the plan or result as JSON on stdout\n"
	      "Libraries are found as ld.so finds them: DT_RPATH (of the object and those that\n"
	      "loaded it), --lib-path and --rocm, LD_LIBRARY_PATH, DT_RUNPATH, ld.so.cache, the\n"
	      "system folders; fatwheel(1) gives the details.\n"
	      "  --lib-path DIR         search DIR for libraries (repeatable, before LD_LIBRARY_PATH)\n"
	      "  --rocm=DIR|TARBALL     search a ROCm root (lib, lib64) or a release tarball\n"
	      "  --no-ld-library-path   do not search LD_LIBRARY_PATH (searched by default)\n"
	      "  --ld-so-cache FILE     read FILE instead of /etc/ld.so.cache\n"
	      "  --ldd FILE             print where each library FILE loads is found, and exit\n"
	      "  --exclude GLOB         never bundle libraries whose soname or path matches\n"
	      "  --include FILE         add a file or folder to the library folder\n"
	      "  --arch=LIST            keep only included files for these GPU targets\n"
	      "  --layout=libs|pkg:DIR  NAME.libs/ (default) or a package folder such as torch/lib\n"
	      "  --soname-hash          rename bundled libraries libfoo-HASH8.so.N\n"
	      "  --plat=keep|auto|TAG   keep the platform tag (default), compute manylinux_2_N, or set\n"
	      "  --level=N              deflate level for new members (1-12, default 5)\n"
	      "  --jobs=N               threads for hashing and deflating (default: CPUs)\n"
	      "auditwheel repair's options, same meaning: --plat, --only-plat, --no-update-tags,\n"
	      "  -L/--lib-sdir SUFFIX (NAME+SUFFIX/ folder), --exclude, -w, --ldpaths DIRS (instead\n"
	      "  of the system folders), -z/--zip-compression-level 1-9, --disable-isa-ext-check and\n"
	      "  --allow-pure-python-wheel (fatwheel does neither check); --strip is refused.\n"
	      "  --edit-elf             edit one ELF file (the editor fatwheel uses) and exit\n"
	      "  -q                     no warnings about unmatched --exclude patterns\n"
	      "  --version              print the version and exit\n"
	      "Exit status: 0 written, 1 a library is missing or the output failed, 2 usage or bad input.\n",
	      stdout);
	exit(0);
}

/* a flag without a value: 1 when A was one (and is set), else 0 */
static int
flagopt(struct fw *fw, const char *a)
{
	if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
		help();
	else if (opt_isversion(a))
		opt_version();
	else if (strcmp(a, "-n") == 0 || strcmp(a, "--dry-run") == 0)
		fw->opt.dryrun = 1;
	else if (strcmp(a, "--json") == 0)
		fw->opt.json = 1;
	else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
		fw->opt.quiet = 1;
	else if (strcmp(a, "--use-ld-library-path") == 0)
		fw->opt.sp.useenv = 1; /* the default now; kept for old command lines */
	else if (strcmp(a, "--no-ld-library-path") == 0)
		fw->opt.sp.useenv = 0;
	else if (strcmp(a, "--ldd") == 0)
		fw->opt.ldd = 1;
	else if (strcmp(a, "--soname-hash") == 0)
		fw->opt.sonamehash = 1;
	else if (strcmp(a, "--only-plat") == 0)
		fw->opt.onlyplat = 1;
	else if (strcmp(a, "--no-update-tags") == 0)
		fw->opt.noupdate = 1;
	else if (strcmp(a, "--disable-isa-ext-check") == 0 || strcmp(a, "--allow-pure-python-wheel") == 0)
		; /* fatwheel checks no ISA level and repairs pure wheels: already so */
	else if (strcmp(a, "--strip") == 0)
		usage("--strip (auditwheel's) is not supported: strip the libraries before packing the wheel");
	else if (startswith(a, "--patchelf"))
		usage("--patchelf is gone: fatwheel edits ELF files itself and runs no patchelf");
	else
		return 0;
	return 1;
}

/* an option with a short and a long name: "-w DIR", "--wheel-dir DIR", "--wheel-dir=DIR";
   need is the usage line when the short one is last */
struct optname {
	const char *shrt, *lng, *need;
};

/* the value of the option o at argv[*i]; NULL when it is neither of its names */
static char *
shortlong(int argc, char **argv, int *i, const struct optname *o)
{
	if (strcmp(argv[*i], o->shrt) == 0) {
		if (++*i >= argc)
			usage(o->need);
		return argv[*i];
	}
	return optv(argc, argv, i, o->lng);
}

static const struct optname wheeldir = {"-w", "--wheel-dir", "-w needs a folder"};
static const struct optname libsdir = {"-L", "--lib-sdir", "-L needs a folder suffix"};
static const struct optname ziplevelopt = {"-z", "--zip-compression-level", "-z needs a level"};

/* -z / --zip-compression-level V: auditwheel's 1 to 9 (-1 for zlib's default) */
static void
ziplevel(struct fw *fw, const char *v)
{
	int k = atoi(v);

	if (strcmp(v, "-1") == 0)
		k = FW_LEVEL; /* zlib's default: fatwheel's is as small */
	else if (k < 1 || k > 9 || strspn(v, "0123456789") != strlen(v))
		usage(xasprintf("-z %s: fatwheel deflates at 1 to 9 (0, stored, is not supported)", v));
	fw->opt.level = k;
}

/* --rocm=DIR|TARBALL: a ROCm root's lib and lib64, or a release tarball, searched */
static void
rocmopt(struct fw *fw, const char *v)
{
	struct stat st;
	char *err = NULL, *d;

	if (stat(v, &st) < 0)
		die("%s:", v);
	if (S_ISDIR(st.st_mode)) {
		d = xasprintf("%s/lib", v);
		search_add(&fw->opt.sp.dirs, &fw->opt.sp.n, &fw->opt.sp.cap, d);
		free(d);
		d = xasprintf("%s/lib64", v);
		search_add(&fw->opt.sp.dirs, &fw->opt.sp.n, &fw->opt.sp.cap, d);
		free(d);
		return;
	}
	if (fw->opt.sp.tar)
		usage("--rocm=TARBALL given twice");
	fw->opt.sp.tar = rocmtar_open(v, &err);
	if (!fw->opt.sp.tar)
		die("%s: not a readable tarball: %s", v, err);
	search_add(&fw->opt.sp.dirs, &fw->opt.sp.n, &fw->opt.sp.cap, "\001rocmtar");
}

/* a number option V between LO and HI, else the usage line WHAT */
static int
numopt(const char *v, int lo, int hi, const char *what)
{
	int n = atoi(v);

	if (n < lo || n > hi)
		usage(what);
	return n;
}

/* the options that take a value: 1 when argv[*i] was one (and is set), else 0 */
static int
valopt(struct fw *fw, int argc, char **argv, int *i, int *layoutset)
{
	char *v;

	if ((v = shortlong(argc, argv, i, &wheeldir))) {
		fw->opt.outdir = v;
	} else if ((v = shortlong(argc, argv, i, &libsdir))) {
		if (!*v || strchr(v, '/'))
			usage(xasprintf("-L %s: a suffix for the NAME%s folder, without '/'", v, v));
		fw->opt.libsdir = v;
	} else if ((v = shortlong(argc, argv, i, &ziplevelopt))) {
		ziplevel(fw, v);
	} else if ((v = optv(argc, argv, i, "--ldpaths"))) {
		search_addlist(&fw->opt.sp.ldpaths, &fw->opt.sp.nldpaths, &fw->opt.sp.ldcap, v);
	} else if ((v = optv(argc, argv, i, "--ld-so-cache"))) {
		fw->opt.sp.cache = v;
	} else if ((v = optv(argc, argv, i, "--lib-path"))) {
		search_add(&fw->opt.sp.dirs, &fw->opt.sp.n, &fw->opt.sp.cap, v);
	} else if ((v = optv(argc, argv, i, "--rocm"))) {
		rocmopt(fw, v);
	} else if ((v = optv(argc, argv, i, "--exclude"))) {
		fw->opt.exclude = xgrow(fw->opt.exclude, &fw->opt.xcap, fw->opt.nexclude + 1, sizeof *fw->opt.exclude);
		fw->opt.exclude[fw->opt.nexclude++] = v;
	} else if ((v = optv(argc, argv, i, "--include"))) {
		fw->opt.include = xgrow(fw->opt.include, &fw->opt.icap, fw->opt.ninclude + 1, sizeof *fw->opt.include);
		fw->opt.include[fw->opt.ninclude++] = v;
	} else if ((v = optv(argc, argv, i, "--arch"))) {
		fw->opt.arch = v;
	} else if ((v = optv(argc, argv, i, "--layout"))) {
		if (strcmp(v, "libs") != 0 && !(startswith(v, "pkg:") && zip_safename(v + 4) && !endswith(v, "/")))
			usage(xasprintf("--layout=%s: use libs or pkg:DIR (a relative folder in the wheel)", v));
		fw->opt.layout = v;
		*layoutset = 1;
	} else if ((v = optv(argc, argv, i, "--plat"))) {
		fw->opt.plat = v;
	} else if ((v = optv(argc, argv, i, "--level"))) {
		fw->opt.level = numopt(v, 1, 12, "--level must be 1 to 12");
	} else if ((v = optv(argc, argv, i, "--jobs"))) {
		fw->opt.jobs = numopt(v, 1, 64, "--jobs must be 1 to 64");
	} else {
		return 0;
	}
	return 1;
}

/* what the options say together (LAYOUTSET: --layout was given) */
static void
checkopts(struct fw *fw, int layoutset)
{
	if (!fw->opt.in)
		usage(fw->opt.ldd ? "--ldd needs a file" : "no input wheel");
	if (fw->opt.ldd)
		return;
	if (!fw->opt.outdir && fw->opt.repair)
		fw->opt.outdir = "wheelhouse";
	if (!fw->opt.outdir && !fw->opt.dryrun)
		usage("no output folder (-w OUTDIR)");
	if (layoutset && fw->opt.libsdir)
		usage("--layout and -L/--lib-sdir both name the library folder: give one");
	if (fw->opt.noupdate && strcmp(fw->opt.plat, "keep") != 0 && strcmp(fw->opt.plat, "auto") != 0)
		usage("--no-update-tags keeps the platform tag: drop --plat");
	if (strcmp(fw->opt.plat, "keep") != 0 && strcmp(fw->opt.plat, "auto") != 0 &&
	    (strchr(fw->opt.plat, '-') || strchr(fw->opt.plat, '/') || !*fw->opt.plat))
		usage(xasprintf("--plat=%s is not a platform tag", fw->opt.plat));
}

static void
parseargs(struct fw *fw, int argc, char **argv)
{
	int i, k, layoutset = 0, first = 1;

	fw->opt.level = FW_LEVEL;
	fw->opt.sp.useenv = 1;
	fw->opt.layout = "libs";
	fw->opt.plat = "keep";
	k = (int)sysconf(_SC_NPROCESSORS_ONLN);
	fw->opt.jobs = k > 0 ? k : 1;
	if (argc > 1 && strcmp(argv[1], "repair") == 0) {
		/* `auditwheel repair` swapped for `fatwheel repair`: its defaults */
		fw->opt.repair = 1;
		fw->opt.plat = "auto";
		fw->opt.sonamehash = 1;
		first = 2;
	}
	for (i = first; i < argc; i++) {
		char *a = argv[i];
		if (flagopt(fw, a) || valopt(fw, argc, argv, &i, &layoutset))
			continue;
		if (strcmp(a, "--") == 0) {
			if (i + 1 < argc && !fw->opt.in)
				fw->opt.in = argv[++i];
		} else if (a[0] == '-' && a[1])
			usage(xasprintf("unknown option '%s'", a));
		else if (fw->opt.in)
			usage(xasprintf("more than one input wheel ('%s' and '%s'); fatwheel repairs one at a time", fw->opt.in, a));
		else
			fw->opt.in = a;
	}
	checkopts(fw, layoutset);
	fw->opt.exused = xcalloc(fw->opt.nexclude + 1, sizeof *fw->opt.exused);
	fw->opt.tty = isatty(2) && !fw->opt.quiet;
}

/* reporting -------------------------------------------------------------------------- */

/* the text report: the plan (-n), or the output's path (abs when known) */
static void
reporttext(struct fw *fw, const char *abs)
{
	size_t i;

	if (!fw->opt.dryrun) {
		printf("%s\n", abs ? abs : fw->outpath);
		return;
	}
	printf("output   %s\n", fw->outpath);
	printf("platform %s%s", fw->newplat, strcmp(fw->newplat, fw->wn.plat) ? " (retagged)" : " (kept)");
	if (fw->glibcmax >= 0)
		printf(", needs GLIBC 2.%d", fw->glibcmax);
	if (fw->cxxmax >= 0)
		printf(", GLIBCXX/CXXABI need manylinux_2_%d", fw->cxxmax);
	printf("\nlibdir   %s/\n", fw->libdir);
	for (i = 0; i < fw->nlibs; i++)
		printf("bundle   %s <- %s (%zu bytes, %s), needed by %s\n", fw->libs[i]->member,
		       fw->libs[i]->from, fw->libs[i]->data.len, fw->libs[i]->via ? fw->libs[i]->via : "--include",
		       fw->libs[i]->by);
	for (i = 0; i < fw->nmem; i++) {
		if (!fw->mem[i].edit)
			continue;
		printf("edit     %s:", fw->mem[i].e->name);
		if (fw->mem[i].ed.rpath)
			printf(" RPATH=%s", fw->mem[i].ed.rpath);
		for (size_t k = 0; k < fw->mem[i].ed.nren; k++)
			printf(" %s->%s", fw->mem[i].ed.oldn[k], fw->mem[i].ed.newn[k]);
		printf("\n");
	}
}

/* --json: "bundled" and "edited", into j */
static void
jsonplan(struct fw *fw, struct json *j)
{
	size_t i;

	json_key(j, "bundled");
	json_arr(j);
	for (i = 0; i < fw->nlibs; i++) {
		json_obj(j);
		json_kstr(j, "member", fw->libs[i]->member);
		json_kstr(j, "needed", fw->libs[i]->include ? NULL : fw->libs[i]->needed);
		json_kstr(j, "from", fw->libs[i]->from);
		json_kstr(j, "needed_by", fw->libs[i]->by);
		json_kstr(j, "found_via", fw->libs[i]->via);
		json_kint(j, "size", (int64_t)fw->libs[i]->data.len);
		json_kstr(j, "soname", fw->libs[i]->soname ? fw->libs[i]->soname : fw->libs[i]->ei.soname);
		json_kstr(j, "rpath", fw->libs[i]->ed.rpath);
		json_end(j);
	}
	json_end(j);
	json_key(j, "edited");
	json_arr(j);
	for (i = 0; i < fw->nmem; i++) {
		if (!fw->mem[i].edit)
			continue;
		json_obj(j);
		json_kstr(j, "member", fw->mem[i].e->name);
		json_kstr(j, "rpath", fw->mem[i].ed.rpath);
		json_key(j, "renamed");
		json_obj(j);
		for (size_t k = 0; k < fw->mem[i].ed.nren; k++)
			json_kstr(j, fw->mem[i].ed.oldn[k], fw->mem[i].ed.newn[k]);
		json_end(j);
		json_end(j);
	}
	json_end(j);
}

/* a JSON string, or null for a negative n */
static void
jsonver(struct json *j, const char *key, const char *fmt, int n)
{
	char *g;

	if (n < 0) {
		json_key(j, key);
		json_null(j);
		return;
	}
	g = xasprintf(fmt, n);
	json_kstr(j, key, g);
	free(g);
}

static void
report(struct fw *fw)
{
	struct buf b = {0};
	struct json j;
	char *abs = NULL;

	if (!fw->opt.dryrun)
		abs = realpath(fw->outpath, NULL);
	if (!fw->opt.json) {
		reporttext(fw, abs);
		free(abs);
		return;
	}
	json_init(&j, &b);
	json_obj(&j);
	json_kstr(&j, "input", fw->opt.in);
	json_kstr(&j, "output", abs ? abs : fw->outpath);
	json_kbool(&j, "dry_run", fw->opt.dryrun);
	json_kstr(&j, "platform", fw->newplat);
	json_kstr(&j, "platform_before", fw->wn.plat);
	jsonver(&j, "glibc", "2.%d", fw->glibcmax);
	jsonver(&j, "cxx_policy", "manylinux_2_%d", fw->cxxmax);
	json_kstr(&j, "libdir", fw->libdir);
	jsonplan(fw, &j);
	if (!fw->opt.dryrun) {
		struct stat st;
		json_kint(&j, "members", (int64_t)fw->nout);
		json_kint(&j, "bytes", stat(fw->outpath, &st) == 0 ? (int64_t)st.st_size : -1);
	}
	json_end(&j);
	printf("%s\n", b.s);
	buffree(&b);
	free(abs);
}

static void
freeall(struct fw *fw)
{
	size_t i;

	for (i = 0; i < fw->nmem; i++) {
		elfinfo_free(&fw->mem[i].ei);
		free(fw->mem[i].err);
		free(fw->mem[i].ed.rpath);
		free(fw->mem[i].origin);
		free(fw->mem[i].ed.oldn);
		free(fw->mem[i].ed.newn);
		buffree(&fw->mem[i].data);
	}
	free(fw->mem);
	for (i = 0; i < fw->nlibs; i++) {
		struct lib *l = fw->libs[i];
		free(l->needed);
		free(l->from);
		free(l->origin);
		free(l->by);
		free(l->member);
		free(l->soname);
		free(l->ed.rpath);
		free(l->ed.oldn);
		free(l->ed.newn);
		elfinfo_free(&l->ei);
		buffree(&l->data);
		free(l);
	}
	free(fw->libs);
	closure_free();
	execute_free(fw);
	record_free(fw->rec, fw->nrec);
	zip_close(&fw->zin);
	search_free(&fw->opt.sp);
	ldso_free();
	ldcache_free();
	whl_free(&fw->wn);
	free(fw->distinfo);
	free(fw->libdir);
	free(fw->newplat);
	free(fw->outname);
	free(fw->outpath);
	free(fw->opt.exclude);
	free(fw->opt.include);
	free(fw->opt.exused);
	buffree(&fw->errors);
}


int
main(int argc, char **argv)
{
	struct fw *fw = &run;
	char *ldlp;
	const char *why;

	fw_init(fw);
	setprogname(argv[0]);
	if (argc > 1 && strcmp(argv[1], "--edit-elf") == 0)
		return editelf_main(argc, argv);
	atexit(cleanup);
	signal(SIGINT, onsignal);
	signal(SIGTERM, onsignal);
	signal(SIGHUP, onsignal);
	parseargs(fw, argc, argv);
	/* ld.so reads LD_LIBRARY_PATH split at ':' and ';' (an empty entry: the current
	   folder); auditwheel follows it too */
	if ((ldlp = getenv("LD_LIBRARY_PATH")) != NULL && *ldlp) {
		ldlp = xstrdup(ldlp);
		for (char *c = ldlp; *c; c++)
			if (*c == ';')
				*c = ':';
		search_addlist(&fw->opt.sp.env, &fw->opt.sp.nenv, &fw->opt.sp.envcap, ldlp);
		free(ldlp);
	}
	if (fw->opt.ldd) {
		int rc = ldd_main(&fw->opt.sp, fw->opt.in, fw->opt.json);
		search_free(&fw->opt.sp);
		ldso_free();
		ldcache_free();
		free(fw->opt.exused);
		return rc;
	}
	if (whl_parse(&fw->wn, fw->opt.in, &why) < 0)
		die("%s: not a wheel file name: %s", fw->opt.in, why);
	if (fw->opt.outdir && !fw->opt.dryrun) {
		struct stat st;
		/* created with its parents, as auditwheel does */
		if (stat(fw->opt.outdir, &st) < 0 && (errno != ENOENT || os_mkdirs(fw->opt.outdir, 0777) < 0 || stat(fw->opt.outdir, &st) < 0))
			dien(EXIT_PROBLEM, "%s: cannot create the output folder:", fw->opt.outdir);
		if (!S_ISDIR(st.st_mode))
			die("%s: not a folder", fw->opt.outdir);
	}
	readinput(fw);
	plan(fw);
	if (!fw->opt.dryrun)
		execute(fw);
	report(fw);
	freeall(fw);
	return 0;
}
