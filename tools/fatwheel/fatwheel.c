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


static void
cleanup(void)
{
	if (outopen)
		atomic_abort(&out);
	outopen = 0;
}

/* on a signal: no partial output left (only async-signal-safe calls), then die of it */
static void
onsignal(int sig)
{
	if (outopen && out.tmp)
		unlink(out.tmp);
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
flagopt(const char *a)
{
	if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
		help();
	else if (opt_isversion(a))
		opt_version();
	else if (strcmp(a, "-n") == 0 || strcmp(a, "--dry-run") == 0)
		opt.dryrun = 1;
	else if (strcmp(a, "--json") == 0)
		opt.json = 1;
	else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
		opt.quiet = 1;
	else if (strcmp(a, "--use-ld-library-path") == 0)
		opt.sp.useenv = 1; /* the default now; kept for old command lines */
	else if (strcmp(a, "--no-ld-library-path") == 0)
		opt.sp.useenv = 0;
	else if (strcmp(a, "--ldd") == 0)
		opt.ldd = 1;
	else if (strcmp(a, "--soname-hash") == 0)
		opt.sonamehash = 1;
	else if (strcmp(a, "--only-plat") == 0)
		opt.onlyplat = 1;
	else if (strcmp(a, "--no-update-tags") == 0)
		opt.noupdate = 1;
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

/* the value of the short option SHORT ("-w DIR") or the long one LONG ("--wheel-dir DIR",
   "--wheel-dir=DIR") at argv[*i]; NULL when it is neither; NEED is the usage line when the
   short one is last */
static char *
shortlong(int argc, char **argv, int *i, const char *shrt, const char *lng, const char *need)
{
	if (strcmp(argv[*i], shrt) == 0) {
		if (++*i >= argc)
			usage(need);
		return argv[*i];
	}
	return optv(argc, argv, i, lng);
}

/* -z / --zip-compression-level V: auditwheel's 1 to 9 (-1 for zlib's default) */
static void
ziplevel(const char *v)
{
	int k = atoi(v);

	if (strcmp(v, "-1") == 0)
		k = FW_LEVEL; /* zlib's default: fatwheel's is as small */
	else if (k < 1 || k > 9 || strspn(v, "0123456789") != strlen(v))
		usage(xasprintf("-z %s: fatwheel deflates at 1 to 9 (0, stored, is not supported)", v));
	opt.level = k;
}

/* --rocm=DIR|TARBALL: a ROCm root's lib and lib64, or a release tarball, searched */
static void
rocmopt(const char *v)
{
	struct stat st;
	char *err = NULL, *d;

	if (stat(v, &st) < 0)
		die("%s:", v);
	if (S_ISDIR(st.st_mode)) {
		d = xasprintf("%s/lib", v);
		search_add(&opt.sp.dirs, &opt.sp.n, &opt.sp.cap, d);
		free(d);
		d = xasprintf("%s/lib64", v);
		search_add(&opt.sp.dirs, &opt.sp.n, &opt.sp.cap, d);
		free(d);
		return;
	}
	if (opt.sp.tar)
		usage("--rocm=TARBALL given twice");
	opt.sp.tar = rocmtar_open(v, &err);
	if (!opt.sp.tar)
		die("%s: not a readable tarball: %s", v, err);
	search_add(&opt.sp.dirs, &opt.sp.n, &opt.sp.cap, "\001rocmtar");
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
valopt(int argc, char **argv, int *i, int *layoutset)
{
	char *v;

	if ((v = shortlong(argc, argv, i, "-w", "--wheel-dir", "-w needs a folder"))) {
		opt.outdir = v;
	} else if ((v = shortlong(argc, argv, i, "-L", "--lib-sdir", "-L needs a folder suffix"))) {
		if (!*v || strchr(v, '/'))
			usage(xasprintf("-L %s: a suffix for the NAME%s folder, without '/'", v, v));
		opt.libsdir = v;
	} else if ((v = shortlong(argc, argv, i, "-z", "--zip-compression-level", "-z needs a level"))) {
		ziplevel(v);
	} else if ((v = optv(argc, argv, i, "--ldpaths"))) {
		search_addlist(&opt.sp.ldpaths, &opt.sp.nldpaths, &opt.sp.ldcap, v);
	} else if ((v = optv(argc, argv, i, "--ld-so-cache"))) {
		opt.sp.cache = v;
	} else if ((v = optv(argc, argv, i, "--lib-path"))) {
		search_add(&opt.sp.dirs, &opt.sp.n, &opt.sp.cap, v);
	} else if ((v = optv(argc, argv, i, "--rocm"))) {
		rocmopt(v);
	} else if ((v = optv(argc, argv, i, "--exclude"))) {
		opt.exclude = xgrow(opt.exclude, &opt.xcap, opt.nexclude + 1, sizeof *opt.exclude);
		opt.exclude[opt.nexclude++] = v;
	} else if ((v = optv(argc, argv, i, "--include"))) {
		opt.include = xgrow(opt.include, &opt.icap, opt.ninclude + 1, sizeof *opt.include);
		opt.include[opt.ninclude++] = v;
	} else if ((v = optv(argc, argv, i, "--arch"))) {
		opt.arch = v;
	} else if ((v = optv(argc, argv, i, "--layout"))) {
		if (strcmp(v, "libs") != 0 && !(startswith(v, "pkg:") && zip_safename(v + 4) && !endswith(v, "/")))
			usage(xasprintf("--layout=%s: use libs or pkg:DIR (a relative folder in the wheel)", v));
		opt.layout = v;
		*layoutset = 1;
	} else if ((v = optv(argc, argv, i, "--plat"))) {
		opt.plat = v;
	} else if ((v = optv(argc, argv, i, "--level"))) {
		opt.level = numopt(v, 1, 12, "--level must be 1 to 12");
	} else if ((v = optv(argc, argv, i, "--jobs"))) {
		opt.jobs = numopt(v, 1, 64, "--jobs must be 1 to 64");
	} else {
		return 0;
	}
	return 1;
}

/* what the options say together (LAYOUTSET: --layout was given) */
static void
checkopts(int layoutset)
{
	if (!opt.in)
		usage(opt.ldd ? "--ldd needs a file" : "no input wheel");
	if (opt.ldd)
		return;
	if (!opt.outdir && opt.repair)
		opt.outdir = "wheelhouse";
	if (!opt.outdir && !opt.dryrun)
		usage("no output folder (-w OUTDIR)");
	if (layoutset && opt.libsdir)
		usage("--layout and -L/--lib-sdir both name the library folder: give one");
	if (opt.noupdate && strcmp(opt.plat, "keep") != 0 && strcmp(opt.plat, "auto") != 0)
		usage("--no-update-tags keeps the platform tag: drop --plat");
	if (strcmp(opt.plat, "keep") != 0 && strcmp(opt.plat, "auto") != 0 &&
	    (strchr(opt.plat, '-') || strchr(opt.plat, '/') || !*opt.plat))
		usage(xasprintf("--plat=%s is not a platform tag", opt.plat));
}

static void
parseargs(int argc, char **argv)
{
	int i, k, layoutset = 0, first = 1;

	opt.level = FW_LEVEL;
	opt.sp.useenv = 1;
	opt.layout = "libs";
	opt.plat = "keep";
	k = (int)sysconf(_SC_NPROCESSORS_ONLN);
	opt.jobs = k > 0 ? k : 1;
	if (argc > 1 && strcmp(argv[1], "repair") == 0) {
		/* `auditwheel repair` swapped for `fatwheel repair`: its defaults */
		opt.repair = 1;
		opt.plat = "auto";
		opt.sonamehash = 1;
		first = 2;
	}
	for (i = first; i < argc; i++) {
		char *a = argv[i];
		if (flagopt(a) || valopt(argc, argv, &i, &layoutset))
			continue;
		if (strcmp(a, "--") == 0) {
			if (i + 1 < argc && !opt.in)
				opt.in = argv[++i];
		} else if (a[0] == '-' && a[1])
			usage(xasprintf("unknown option '%s'", a));
		else if (opt.in)
			usage(xasprintf("more than one input wheel ('%s' and '%s'); fatwheel repairs one at a time", opt.in, a));
		else
			opt.in = a;
	}
	checkopts(layoutset);
	opt.exused = xcalloc(opt.nexclude + 1, sizeof *opt.exused);
	opt.tty = isatty(2) && !opt.quiet;
}

/* reporting -------------------------------------------------------------------------- */

static void
report(void)
{
	struct buf b = {0};
	struct json j;
	size_t i;
	char *abs = NULL;

	if (!opt.dryrun)
		abs = realpath(outpath, NULL);
	if (!opt.json) {
		if (opt.dryrun) {
			printf("output   %s\n", outpath);
			printf("platform %s%s", newplat, strcmp(newplat, wn.plat) ? " (retagged)" : " (kept)");
			if (glibcmax >= 0)
				printf(", needs GLIBC 2.%d", glibcmax);
			if (cxxmax >= 0)
				printf(", GLIBCXX/CXXABI need manylinux_2_%d", cxxmax);
			printf("\nlibdir   %s/\n", libdir);
			for (i = 0; i < nlibs; i++)
				printf("bundle   %s <- %s (%zu bytes, %s), needed by %s\n", libs[i]->member,
				       libs[i]->from, libs[i]->data.len, libs[i]->via ? libs[i]->via : "--include",
				       libs[i]->by);
			for (i = 0; i < nmem; i++) {
				if (!mem[i].edit)
					continue;
				printf("edit     %s:", mem[i].e->name);
				if (mem[i].rpath)
					printf(" RPATH=%s", mem[i].rpath);
				for (size_t k = 0; k < mem[i].nren; k++)
					printf(" %s->%s", mem[i].oldn[k], mem[i].newn[k]);
				printf("\n");
			}
		} else {
			printf("%s\n", abs ? abs : outpath);
		}
		free(abs);
		return;
	}
	json_init(&j, &b);
	json_obj(&j);
	json_kstr(&j, "input", opt.in);
	json_kstr(&j, "output", abs ? abs : outpath);
	json_kbool(&j, "dry_run", opt.dryrun);
	json_kstr(&j, "platform", newplat);
	json_kstr(&j, "platform_before", wn.plat);
	if (glibcmax >= 0) {
		char *g = xasprintf("2.%d", glibcmax);
		json_kstr(&j, "glibc", g);
		free(g);
	} else {
		json_key(&j, "glibc");
		json_null(&j);
	}
	if (cxxmax >= 0) {
		char *g = xasprintf("manylinux_2_%d", cxxmax);
		json_kstr(&j, "cxx_policy", g);
		free(g);
	} else {
		json_key(&j, "cxx_policy");
		json_null(&j);
	}
	json_kstr(&j, "libdir", libdir);
	json_key(&j, "bundled");
	json_arr(&j);
	for (i = 0; i < nlibs; i++) {
		json_obj(&j);
		json_kstr(&j, "member", libs[i]->member);
		json_kstr(&j, "needed", libs[i]->include ? NULL : libs[i]->needed);
		json_kstr(&j, "from", libs[i]->from);
		json_kstr(&j, "needed_by", libs[i]->by);
		json_kstr(&j, "found_via", libs[i]->via);
		json_kint(&j, "size", (int64_t)libs[i]->data.len);
		json_kstr(&j, "soname", libs[i]->soname ? libs[i]->soname : libs[i]->ei.soname);
		json_kstr(&j, "rpath", libs[i]->rpath);
		json_end(&j);
	}
	json_end(&j);
	json_key(&j, "edited");
	json_arr(&j);
	for (i = 0; i < nmem; i++) {
		if (!mem[i].edit)
			continue;
		json_obj(&j);
		json_kstr(&j, "member", mem[i].e->name);
		json_kstr(&j, "rpath", mem[i].rpath);
		json_key(&j, "renamed");
		json_obj(&j);
		for (size_t k = 0; k < mem[i].nren; k++)
			json_kstr(&j, mem[i].oldn[k], mem[i].newn[k]);
		json_end(&j);
		json_end(&j);
	}
	json_end(&j);
	if (!opt.dryrun) {
		struct stat st;
		json_kint(&j, "members", (int64_t)nout);
		json_kint(&j, "bytes", stat(outpath, &st) == 0 ? (int64_t)st.st_size : -1);
	}
	json_end(&j);
	printf("%s\n", b.s);
	buffree(&b);
	free(abs);
}

static void
freeall(void)
{
	size_t i;

	for (i = 0; i < nmem; i++) {
		elfinfo_free(&mem[i].ei);
		free(mem[i].err);
		free(mem[i].rpath);
		free(mem[i].origin);
		free(mem[i].oldn);
		free(mem[i].newn);
		buffree(&mem[i].data);
	}
	free(mem);
	for (i = 0; i < nlibs; i++) {
		struct lib *l = libs[i];
		free(l->needed);
		free(l->from);
		free(l->origin);
		free(l->by);
		free(l->member);
		free(l->soname);
		free(l->rpath);
		free(l->oldn);
		free(l->newn);
		elfinfo_free(&l->ei);
		buffree(&l->data);
		free(l);
	}
	free(libs);
	closure_free();
	execute_free();
	record_free(rec, nrec);
	zip_close(&zin);
	search_free(&opt.sp);
	ldso_free();
	ldcache_free();
	whl_free(&wn);
	free(distinfo);
	free(libdir);
	free(newplat);
	free(outname);
	free(outpath);
	free(opt.exclude);
	free(opt.include);
	free(opt.exused);
	buffree(&errors);
	buffree(&search_skipped);
}


int
main(int argc, char **argv)
{
	char *ldlp;
	const char *why;

	setprogname(argv[0]);
	if (argc > 1 && strcmp(argv[1], "--edit-elf") == 0)
		return editelf_main(argc, argv);
	atexit(cleanup);
	signal(SIGINT, onsignal);
	signal(SIGTERM, onsignal);
	signal(SIGHUP, onsignal);
	parseargs(argc, argv);
	/* ld.so reads LD_LIBRARY_PATH split at ':' and ';' (an empty entry: the current
	   folder); auditwheel follows it too */
	if ((ldlp = getenv("LD_LIBRARY_PATH")) != NULL && *ldlp) {
		ldlp = xstrdup(ldlp);
		for (char *c = ldlp; *c; c++)
			if (*c == ';')
				*c = ':';
		search_addlist(&opt.sp.env, &opt.sp.nenv, &opt.sp.envcap, ldlp);
		free(ldlp);
	}
	if (opt.ldd) {
		int rc = ldd_main(&opt.sp, opt.in, opt.json);
		search_free(&opt.sp);
		ldso_free();
		ldcache_free();
		free(opt.exused);
		return rc;
	}
	if (whl_parse(&wn, opt.in, &why) < 0)
		die("%s: not a wheel file name: %s", opt.in, why);
	if (opt.outdir && !opt.dryrun) {
		struct stat st;
		/* created with its parents, as auditwheel does */
		if (stat(opt.outdir, &st) < 0 && (errno != ENOENT || os_mkdirs(opt.outdir, 0777) < 0 || stat(opt.outdir, &st) < 0))
			dien(EXIT_PROBLEM, "%s: cannot create the output folder:", opt.outdir);
		if (!S_ISDIR(st.st_mode))
			die("%s: not a folder", opt.outdir);
	}
	readinput();
	plan();
	if (!opt.dryrun)
		execute();
	report();
	freeall();
	return 0;
}
