/* fatwheel: bundle a wheel's shared-library closure into it, with $ORIGIN RPATHs, an
   optional soname hash, a platform retag and a rewritten RECORD; members it does not
   change are copied as compressed bytes */
#include "fw.h"
#include "atomic.h"
#include "hash.h"
#include "elffile.h"
#include "json.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

static const char *usagetext =
	"usage: fatwheel [-n|--dry-run] [--json] [-q] [--lib-path DIR]... [--rocm=DIR|TARBALL]\n"
	"                [--use-ld-library-path] [--exclude GLOB]... [--include FILE]...\n"
	"                [--arch=LIST] [--layout=libs|pkg:DIR] [--soname-hash]\n"
	"                [--plat=keep|auto|TAG] [--level=N] [--jobs=N] [--patchelf=PATH]\n"
	"                IN.whl -w OUTDIR\n";

/* a member of the input wheel */
struct member {
	struct zipent *e;
	int dist, skip, drop;       /* in .dist-info; not hashed (RECORD, folder); left out */
	unsigned char sha[32];
	int iself;
	struct elfinfo ei;
	char err[512];
	int bad;
	/* the edit, if any */
	int edit;
	char *rpath;
	char **oldn, **newn;
	size_t nren;
	struct buf data;            /* new content (edited or rewritten) */
	int changed;
};

/* a library or file being added */
struct lib {
	char *needed;               /* the name it is needed by (file name for includes) */
	char *from;                 /* path on disk, or tar:MEMBER */
	char *by;                   /* first user */
	char *member;               /* path inside the output wheel */
	char *soname;               /* new SONAME (soname hash), or NULL */
	int include, iself;
	struct elfinfo ei;
	char *rpath;
	char **oldn, **newn;
	size_t nren;
	struct buf data;
};

/* what goes into the output, in order */
struct outm {
	const char *name;
	struct member *m;           /* raw copy of m unless data is set */
	struct buf *data;           /* new content */
	unsigned extattr;
	struct buf z;               /* deflated */
	uint32_t crc;
	unsigned char sha[32];
};

static struct {
	int dryrun, json, quiet, useldlp, sonamehash, level, jobs, tty;
	char *outdir, *in, *layout, *plat, *arch, *patchelf;
	char **exclude, **include;
	size_t nexclude, ninclude, xcap, icap;
	int *exused;
	struct searchpath sp;
} opt;

static struct zipin zin;
static struct member *mem;
static size_t nmem;
static struct lib **libs;
static size_t nlibs, libcap;
static char *tmpdir;
static struct atomic out;
static int outopen;
static struct buf errors;       /* libraries not found */

static void
cleanup(void)
{
	char *cmd;

	if (outopen)
		atomic_abort(&out);
	outopen = 0;
	if (tmpdir) {
		cmd = tmpdir;
		tmpdir = NULL;
		/* files we made inside our own mkdtemp folder */
		struct buf b = {0};
		bufputs(&b, "rm -rf -- ");
		shquote(&b, cmd);
		if (system(b.s) != 0)
			warn("could not remove %s", cmd);
		buffree(&b);
		free(cmd);
	}
}

static void
usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "fatwheel: %s\n", msg);
	fputs(usagetext, stderr);
	exit(EXIT_USAGE);
}

static void
help(void)
{
	fputs(usagetext, stdout);
	fputs("\nBundle the shared libraries a wheel needs into it and print the new wheel's path.\n"
	      "  -w, --wheel-dir DIR    folder for the output wheel (required)\n"
	      "  -n, --dry-run          print the plan, write nothing\n"
	      "  --json                 the plan or result as JSON on stdout\n"
	      "  --lib-path DIR         search DIR for libraries (repeatable, before the system)\n"
	      "  --rocm=DIR|TARBALL     search a ROCm root (lib, lib64) or a release tarball\n"
	      "  --use-ld-library-path  also search LD_LIBRARY_PATH\n"
	      "  --exclude GLOB         never bundle libraries whose soname or path matches\n"
	      "  --include FILE         add a file or folder to the library folder\n"
	      "  --arch=LIST            keep only included files for these GPU targets\n"
	      "  --layout=libs|pkg:DIR  NAME.libs/ (default) or a package folder such as torch/lib\n"
	      "  --soname-hash          rename bundled libraries libfoo-HASH8.so.N\n"
	      "  --plat=keep|auto|TAG   keep the platform tag (default), compute manylinux_2_N, or set\n"
	      "  --level=N              deflate level for new members (1-12, default 6)\n"
	      "  --jobs=N               threads for hashing and deflating (default: CPUs)\n"
	      "  --patchelf=PATH        the patchelf to run (default: patchelf on PATH)\n"
	      "  -q                     no warnings about unmatched --exclude patterns\n"
	      "Exit status: 0 written, 1 a library is missing or the output failed, 2 usage or bad input.\n",
	      stdout);
	exit(0);
}

/* --opt=VAL or --opt VAL; returns VAL or NULL if arg is not opt */
static char *
optval(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n])
		return NULL;
	if (*i + 1 >= argc)
		usage(xasprintf("%s needs a value", name));
	return argv[++*i];
}

static void
parseargs(int argc, char **argv)
{
	char *v;
	int i, k;

	opt.level = 6;
	opt.layout = "libs";
	opt.plat = "keep";
	opt.patchelf = "patchelf";
	k = (int)sysconf(_SC_NPROCESSORS_ONLN);
	opt.jobs = k > 0 ? k : 1;
	for (i = 1; i < argc; i++) {
		char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			help();
		else if (strcmp(a, "-n") == 0 || strcmp(a, "--dry-run") == 0)
			opt.dryrun = 1;
		else if (strcmp(a, "--json") == 0)
			opt.json = 1;
		else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
			opt.quiet = 1;
		else if (strcmp(a, "--use-ld-library-path") == 0)
			opt.useldlp = 1;
		else if (strcmp(a, "--soname-hash") == 0)
			opt.sonamehash = 1;
		else if (strcmp(a, "-w") == 0 || strcmp(a, "--wheel-dir") == 0 || startswith(a, "--wheel-dir=")) {
			if (a[1] == 'w' && !a[2]) {
				if (++i >= argc)
					usage("-w needs a folder");
				opt.outdir = argv[i];
			} else {
				opt.outdir = optval(argc, argv, &i, "--wheel-dir");
			}
		} else if ((v = optval(argc, argv, &i, "--lib-path")))
			search_add(&opt.sp, v);
		else if ((v = optval(argc, argv, &i, "--rocm"))) {
			struct stat st;
			char err[512];
			if (stat(v, &st) < 0)
				die("%s:", v);
			if (S_ISDIR(st.st_mode)) {
				char *d = xasprintf("%s/lib", v);
				search_add(&opt.sp, d);
				free(d);
				d = xasprintf("%s/lib64", v);
				search_add(&opt.sp, d);
				free(d);
			} else {
				if (opt.sp.tar)
					usage("--rocm=TARBALL given twice");
				opt.sp.tar = rocmtar_open(v, err, sizeof err);
				if (!opt.sp.tar)
					die("%s: not a readable tarball: %s", v, err);
				search_add(&opt.sp, "\001rocmtar");
			}
		} else if ((v = optval(argc, argv, &i, "--exclude"))) {
			opt.exclude = xgrow(opt.exclude, &opt.xcap, opt.nexclude + 1, sizeof *opt.exclude);
			opt.exclude[opt.nexclude++] = v;
		} else if ((v = optval(argc, argv, &i, "--include"))) {
			opt.include = xgrow(opt.include, &opt.icap, opt.ninclude + 1, sizeof *opt.include);
			opt.include[opt.ninclude++] = v;
		} else if ((v = optval(argc, argv, &i, "--arch")))
			opt.arch = v;
		else if ((v = optval(argc, argv, &i, "--layout"))) {
			if (strcmp(v, "libs") != 0 && !(startswith(v, "pkg:") && zip_safename(v + 4) && !endswith(v, "/")))
				usage(xasprintf("--layout=%s: use libs or pkg:DIR (a relative folder in the wheel)", v));
			opt.layout = v;
		} else if ((v = optval(argc, argv, &i, "--plat")))
			opt.plat = v;
		else if ((v = optval(argc, argv, &i, "--level"))) {
			opt.level = atoi(v);
			if (opt.level < 1 || opt.level > 12)
				usage("--level must be 1 to 12");
		} else if ((v = optval(argc, argv, &i, "--jobs"))) {
			opt.jobs = atoi(v);
			if (opt.jobs < 1 || opt.jobs > 64)
				usage("--jobs must be 1 to 64");
		} else if ((v = optval(argc, argv, &i, "--patchelf")))
			opt.patchelf = v;
		else if (strcmp(a, "--") == 0) {
			if (i + 1 < argc && !opt.in)
				opt.in = argv[++i];
		} else if (a[0] == '-' && a[1])
			usage(xasprintf("unknown option '%s'", a));
		else if (opt.in)
			usage(xasprintf("more than one input wheel ('%s' and '%s')", opt.in, a));
		else
			opt.in = a;
	}
	if (!opt.in)
		usage("no input wheel");
	if (!opt.outdir && !opt.dryrun)
		usage("no output folder (-w OUTDIR)");
	if (strcmp(opt.plat, "keep") != 0 && strcmp(opt.plat, "auto") != 0 &&
	    (strchr(opt.plat, '-') || strchr(opt.plat, '/') || !*opt.plat))
		usage(xasprintf("--plat=%s is not a platform tag", opt.plat));
	opt.exused = xcalloc(opt.nexclude + 1, sizeof *opt.exused);
	opt.tty = isatty(2) && !opt.quiet;
}

/* progress ------------------------------------------------------------------------- */

static void
progress(const char *what, size_t done, size_t total, uint64_t bytes)
{
	static time_t last;
	time_t now = time(NULL);

	if (!opt.tty || (now == last && done != total))
		return;
	last = now;
	fprintf(stderr, "\rfatwheel: %s %zu/%zu members, %llu MiB   ", what, done, total,
	        (unsigned long long)(bytes >> 20));
	if (done == total)
		fputc('\n', stderr);
}

/* reading and checking the input ----------------------------------------------------- */

static struct recline *rec;
static size_t nrec;
static char *distinfo;          /* "name-ver.dist-info/" */
static struct member *wheelm, *recordm;
static pthread_mutex_t progmu = PTHREAD_MUTEX_INITIALIZER;
static size_t vdone;
static uint64_t vbytes;

struct hashctx {
	struct sha256 h;
	struct buf *keep;           /* content kept when it is ELF */
	int first;
	unsigned char head[4];
	size_t nhead;
	int iself;
};

static int
hashchunk(void *ctx, const void *p, size_t n)
{
	struct hashctx *c = ctx;
	size_t take;

	sha256_update(&c->h, p, n);
	if (c->nhead < 4) {
		take = n < 4 - c->nhead ? n : 4 - c->nhead;
		memcpy(c->head + c->nhead, p, take);
		c->nhead += take;
		if (c->nhead == 4)
			c->iself = memcmp(c->head, "\177ELF", 4) == 0;
	}
	/* keep the bytes while undecided and for ELF files */
	if (c->iself || c->nhead < 4)
		bufadd(c->keep, p, n);
	else if (c->keep->len)
		buffree(c->keep);
	return 0;
}

/* members up to this size are inflated whole with libdeflate, larger ones streamed */
#define FAST_MAX ((uint64_t)1 << 30)

/* inflate one member: check it against RECORD, read its ELF facts */
static void
verify1(void *ctx, size_t i)
{
	struct member *m = &mem[((size_t *)ctx)[i]];
	struct hashctx c;
	struct buf keep = {0};
	struct recline *r;
	struct buf want = {0};

	memset(&c, 0, sizeof c);
	c.keep = &keep;
	if (m->e->usize <= FAST_MAX) {
		/* whole member at once: libdeflate, then hash */
		if (fast_inflate(&zin, m->e, &keep, m->err, sizeof m->err) < 0) {
			m->bad = 1;
			buffree(&keep);
			return;
		}
		sha256_buf(keep.s, keep.len, m->sha);
		c.iself = elf_is(keep.s, keep.len);
	} else {
		sha256_init(&c.h);
		if (zip_read(&zin, m->e, hashchunk, &c, m->err, sizeof m->err) < 0) {
			sha256_final(&c.h, m->sha);
			m->bad = 1;
			buffree(&keep);
			return;
		}
		sha256_final(&c.h, m->sha);
	}
	r = record_find(rec, nrec, m->e->name);
	if (r) {
		r->seen = 1;
		bufputs(&want, "sha256=");
		b64url(&want, m->sha, 32);
		if (!startswith(r->hash, "sha256="))
			m->bad = snprintf(m->err, sizeof m->err, "RECORD gives '%s' no sha256 hash ('%s')",
			                  m->e->name, r->hash) > 0;
		else if (strcmp(r->hash, want.s) != 0)
			m->bad = snprintf(m->err, sizeof m->err, "RECORD lies about '%s': it says %s, the content is %s",
			                  m->e->name, r->hash, want.s) > 0;
		else if (*r->size && strtoull(r->size, NULL, 10) != m->e->usize)
			m->bad = snprintf(m->err, sizeof m->err, "RECORD gives '%s' size %s, the content has %llu bytes",
			                  m->e->name, r->size, (unsigned long long)m->e->usize) > 0;
	} else {
		m->bad = snprintf(m->err, sizeof m->err, "member '%s' is not listed in RECORD", m->e->name) > 0;
	}
	buffree(&want);
	if (!m->bad && c.iself && keep.len >= 16) {
		char e2[256];
		if (elfinfo_read(&m->ei, keep.s, keep.len, e2, sizeof e2) == 0)
			m->iself = m->ei.dynamic;
		else
			elfinfo_free(&m->ei);
	}
	buffree(&keep);
	pthread_mutex_lock(&progmu);
	vdone++;
	vbytes += m->e->usize;
	progress("checking", vdone, nmem, vbytes);
	pthread_mutex_unlock(&progmu);
}

static int
cmpbysize(const void *a, const void *b)
{
	uint64_t x = mem[*(const size_t *)a].e->csize, y = mem[*(const size_t *)b].e->csize;

	return x < y ? 1 : x > y ? -1 : 0;
}

static void
readinput(void)
{
	char err[512];
	size_t i, nd = 0, *order, nord = 0;
	struct buf rb = {0};
	const char *slash;

	if (zip_open(&zin, opt.in, err, sizeof err) < 0)
		die("%s: %s", opt.in, err);
	nmem = zin.n;
	mem = xcalloc(nmem ? nmem : 1, sizeof *mem);
	/* the one top-level NAME.dist-info folder with WHEEL and RECORD */
	for (i = 0; i < nmem; i++) {
		mem[i].e = &zin.e[i];
		slash = strchr(zin.e[i].name, '/');
		if (slash && slash - zin.e[i].name > 10 && strncmp(slash - 10, ".dist-info", 10) == 0 &&
		    strcmp(slash + 1, "RECORD") == 0) {
			nd++;
			free(distinfo);
			distinfo = xstrndup(zin.e[i].name, (size_t)(slash - zin.e[i].name + 1));
			recordm = &mem[i];
		}
	}
	if (nd != 1)
		die("%s: not a wheel: %s", opt.in, nd ? "more than one .dist-info/RECORD" : "no NAME.dist-info/RECORD");
	for (i = 0; i < nmem; i++) {
		const char *n = mem[i].e->name;
		mem[i].dist = startswith(n, distinfo);
		if (mem[i].dist && strcmp(n + strlen(distinfo), "WHEEL") == 0)
			wheelm = &mem[i];
		if (endswith(n, "/") || &mem[i] == recordm)
			mem[i].skip = 1;
		if (mem[i].dist && (strcmp(n + strlen(distinfo), "RECORD.jws") == 0 ||
		                    strcmp(n + strlen(distinfo), "RECORD.p7s") == 0)) {
			mem[i].skip = mem[i].drop = 1;
			if (!opt.quiet)
				warn("%s: dropping the signature %s (the rewritten RECORD invalidates it)", opt.in, n);
		}
	}
	if (!wheelm)
		die("%s: not a wheel: no %sWHEEL", opt.in, distinfo);
	/* RECORD: read it first, the other members are checked against it */
	if (recordm->e->usize > (64u << 20))
		die("%s: %s is %llu bytes; not a RECORD", opt.in, recordm->e->name,
		    (unsigned long long)recordm->e->usize);
	{
		struct hashctx c;
		memset(&c, 0, sizeof c);
		c.keep = &rb;
		c.iself = 1;
		c.nhead = 4;
		memcpy(c.head, "\177ELF", 4);
		sha256_init(&c.h);
		if (zip_read(&zin, recordm->e, hashchunk, &c, err, sizeof err) < 0)
			die("%s: %s", opt.in, err);
		sha256_final(&c.h, recordm->sha);
	}
	if (record_parse(rb.s ? rb.s : "", rb.len, &rec, &nrec, err, sizeof err) < 0)
		die("%s: %s", opt.in, err);
	buffree(&rb);
	order = xmalloc((nmem ? nmem : 1) * sizeof *order);
	for (i = 0; i < nmem; i++)
		if (!mem[i].skip)
			order[nord++] = i;
	qsort(order, nord, sizeof *order, cmpbysize);
	{
		size_t saved = nmem;
		nmem = nord;  /* progress total */
		pfor(nord, opt.jobs, verify1, order);
		nmem = saved;
	}
	free(order);
	for (i = 0; i < nmem; i++)
		if (mem[i].bad)
			die("%s: %s", opt.in, mem[i].err);
	for (i = 0; i < nrec; i++) {
		struct zipent *e = NULL;
		size_t j;
		if (rec[i].seen || strcmp(rec[i].path, recordm->e->name) == 0)
			continue;
		for (j = 0; j < nmem; j++)
			if (strcmp(mem[j].e->name, rec[i].path) == 0)
				e = mem[j].e;
		if (!e)
			die("%s: RECORD lists '%s', which is not in the wheel", opt.in, rec[i].path);
	}
}

/* resolving the closure --------------------------------------------------------------- */

static int
excluded(const char *s)
{
	size_t i;
	const char *b;
	int hit = 0;

	for (i = 0; i < opt.nexclude; i++) {
		b = strrchr(s, '/');
		if (fnmatch(opt.exclude[i], s, 0) == 0 || (b && fnmatch(opt.exclude[i], b + 1, 0) == 0)) {
			opt.exused[i] = 1;
			hit = 1;
		}
	}
	return hit;
}

static struct lib *
findlib(const char *needed)
{
	size_t i;

	for (i = 0; i < nlibs; i++)
		if (!libs[i]->include && strcmp(libs[i]->needed, needed) == 0)
			return libs[i];
	return NULL;
}

static struct member *
findmember(const char *name)
{
	size_t i;

	for (i = 0; i < nmem; i++)
		if (strcmp(mem[i].e->name, name) == 0)
			return &mem[i];
	return NULL;
}

/* normalize a relative path ("a/b/../c" -> "a/c"); NULL if it climbs above the root */
static char *
normrel(const char *p)
{
	struct buf b = {0};
	const char *s = p, *c;
	size_t len;

	bufputs(&b, "");
	while (*s) {
		c = strchr(s, '/');
		len = c ? (size_t)(c - s) : strlen(s);
		if (len == 0 || (len == 1 && s[0] == '.')) {
		} else if (len == 2 && s[0] == '.' && s[1] == '.') {
			char *l;
			if (!b.len) {
				buffree(&b);
				return NULL;
			}
			l = strrchr(b.s, '/');
			b.len = l ? (size_t)(l - b.s) : 0;
			b.s[b.len] = 0;
		} else {
			if (b.len)
				bufputc(&b, '/');
			bufadd(&b, s, len);
		}
		s += len;
		if (*s == '/')
			s++;
	}
	return bufdetach(&b);
}

/* expand $ORIGIN / ${ORIGIN} in one search-path entry */
static char *
expand_origin(const char *ent, const char *origin)
{
	struct buf b = {0};
	const char *s = ent;

	bufputs(&b, "");
	while (*s) {
		if (startswith(s, "$ORIGIN")) {
			bufputs(&b, origin);
			s += 7;
		} else if (startswith(s, "${ORIGIN}")) {
			bufputs(&b, origin);
			s += 9;
		} else {
			bufputc(&b, *s++);
		}
	}
	return bufdetach(&b);
}

/* dirname of a member path ("" at the top) */
static char *
memberdir(const char *name)
{
	const char *s = strrchr(name, '/');

	return s ? xstrndup(name, (size_t)(s - name)) : xstrdup("");
}

/* Look for needed in the object's own RPATH/RUNPATH. For a wheel member, $ORIGIN is its
   folder in the wheel: returns 1 if a wheel member provides needed. For a file on disk,
   $ORIGIN is its folder; a hit is returned in *path. */
static int
ownpath(const struct elfinfo *ei, const char *wheelname, const char *diskpath, const char *needed,
        char **path)
{
	const char *list = ei->runpath ? ei->runpath : ei->rpath;
	char *copy, *tok, *save = NULL, *dir, *origin, *full, *n;
	int found = 0;

	*path = NULL;
	if (!list)
		return 0;
	origin = wheelname ? memberdir(wheelname) : memberdir(diskpath);
	copy = xstrdup(list);
	for (tok = strtok_r(copy, ":", &save); tok && !found && !*path; tok = strtok_r(NULL, ":", &save)) {
		dir = expand_origin(tok, origin);
		if (wheelname && strstr(tok, "ORIGIN") && dir[0] != '/') {
			full = xasprintf("%s/%s", dir, needed);
			n = normrel(full);
			if (n && findmember(n))
				found = 1;
			free(n);
			free(full);
		} else if (dir[0] == '/' && !(wheelname && strstr(tok, "ORIGIN"))) {
			*path = search_in(dir, needed, ei);
		}
		free(dir);
	}
	free(copy);
	free(origin);
	return found;
}

static void loadlib(struct lib *l);

/* add the libraries an object needs; by names the object in messages */
static void
resolveobj(const struct elfinfo *ei, const char *wheelname, const char *diskpath, const char *by)
{
	size_t i;
	char *path;
	struct lib *l;
	const char *n;

	for (i = 0; i < ei->nneeded; i++) {
		n = ei->needed[i];
		if (policy_system(n) || excluded(n) || findlib(n))
			continue;
		bufreset(&search_skipped);
		if (ownpath(ei, wheelname, diskpath, n, &path))
			continue;
		if (!path)
			path = search_find(&opt.sp, n, ei);
		if (!path) {
			bufprintf(&errors, "fatwheel: %s: %s needed by %s not found (add --lib-path DIR or --exclude '%s')%s\n",
			          opt.in, n, by, n, search_skipped.len ? search_skipped.s : "");
			continue;
		}
		if (excluded(path)) {
			free(path);
			continue;
		}
		libs = xgrow(libs, &libcap, nlibs + 1, sizeof *libs);
		l = libs[nlibs++] = xcalloc(1, sizeof *l);
		l->needed = xstrdup(n);
		l->from = path;
		l->by = xstrdup(by);
		loadlib(l);
	}
}

static void
loadlib(struct lib *l)
{
	char err[512];
	const char *from = l->from;

	if (startswith(from, "tar:")) {
		if (rocmtar_read(opt.sp.tar, from + 4, &l->data, err, sizeof err) < 0)
			die("%s: %s: %s", opt.in, from, err);
	} else if (readfile(from, &l->data, 0) < 0) {
		die("%s:", from);
	}
	if (elfinfo_read(&l->ei, l->data.s, l->data.len, err, sizeof err) == 0) {
		l->iself = 1;
	} else {
		elfinfo_free(&l->ei);
		if (!l->include)
			dien(EXIT_USAGE, "%s: %s: needed by %s as %s, but %s", opt.in, from, l->by, l->needed, err);
	}
}

/* true if a file name names a GPU target not in --arch */
static int
archskip(const char *name)
{
	const char *p = name, *q;
	char tok[32];
	size_t k;
	int named = 0;

	if (!opt.arch)
		return 0;
	while ((p = strstr(p, "gfx")) != NULL) {
		q = p + 3;
		while ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f'))
			q++;
		k = (size_t)(q - p);
		if (k > 3 && k < sizeof tok) {
			memcpy(tok, p, k);
			tok[k] = 0;
			named = 1;
			/* whole entries of the comma list */
			const char *a = opt.arch;
			while (a && *a) {
				const char *c = strchr(a, ',');
				size_t al = c ? (size_t)(c - a) : strlen(a);
				if (al == k && strncmp(a, tok, k) == 0)
					return 0;
				a = c ? c + 1 : NULL;
			}
		}
		p = q;
	}
	return named;
}

static void
addinclude(const char *path, const char *rel)
{
	struct stat st;
	struct lib *l;

	if (stat(path, &st) < 0)
		die("--include %s:", path);
	if (S_ISDIR(st.st_mode)) {
		struct dirent **ents;
		int k, cnt = scandir(path, &ents, NULL, alphasort);
		if (cnt < 0)
			die("--include %s:", path);
		for (k = 0; k < cnt; k++) {
			if (strcmp(ents[k]->d_name, ".") != 0 && strcmp(ents[k]->d_name, "..") != 0) {
				char *p = xasprintf("%s/%s", path, ents[k]->d_name);
				char *r = xasprintf("%s/%s", rel, ents[k]->d_name);
				addinclude(p, r);
				free(p);
				free(r);
			}
			free(ents[k]);
		}
		free(ents);
		return;
	}
	if (!S_ISREG(st.st_mode) || archskip(rel))
		return;
	libs = xgrow(libs, &libcap, nlibs + 1, sizeof *libs);
	l = libs[nlibs++] = xcalloc(1, sizeof *l);
	l->needed = xstrdup(rel);
	l->from = xstrdup(path);
	l->by = xstrdup("--include");
	l->include = 1;
	loadlib(l);
}

/* planning ---------------------------------------------------------------------------- */

static struct whlname wn;
static char *libdir, *newplat, *outname, *outpath;
static int glibcmax = -1;

/* "$ORIGIN/REL" reaching folder to from folder from (both relative to the wheel root) */
static char *
originpath(const char *from, const char *to)
{
	struct buf b = {0};
	size_t i = 0, common = 0;
	const char *f;

	/* the longest common prefix made of whole components */
	while (from[i] && to[i] && from[i] == to[i]) {
		i++;
		if ((from[i] == '/' || !from[i]) && (to[i] == '/' || !to[i]))
			common = i;
	}
	if (!from[0] || !to[0])
		common = 0;
	bufputs(&b, "$ORIGIN");
	for (f = from + common; *f;) {
		if (*f == '/')
			f++;
		if (!*f)
			break;
		bufputs(&b, "/..");
		while (*f && *f != '/')
			f++;
	}
	f = to + common;
	if (*f == '/')
		f++;
	if (*f) {
		bufputc(&b, '/');
		bufputs(&b, f);
	}
	return bufdetach(&b);
}

/* the hashed file name libfoo-HASH8.so.N of a library */
static char *
hashedname(const char *name, const struct buf *data)
{
	unsigned char h[32];
	struct buf hx = {0};
	const char *so = strstr(name, ".so");
	char *r;

	sha256_buf(data->s, data->len, h);
	hexenc(&hx, h, 4);
	if (so)
		r = xasprintf("%.*s-%s%s", (int)(so - name), name, hx.s, so);
	else
		r = xasprintf("%s-%s", name, hx.s);
	buffree(&hx);
	return r;
}

/* does the object already search libdir through an $ORIGIN entry? */
static int
reaches(const struct elfinfo *ei, const char *dir, struct buf *keep)
{
	const char *list = ei->runpath ? ei->runpath : ei->rpath;
	char *copy, *tok, *save = NULL, *e, *n, *p;
	int hit = 0;

	if (!list)
		return 0;
	copy = xstrdup(list);
	for (tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		if (!strstr(tok, "ORIGIN"))
			continue;
		e = expand_origin(tok, dir);
		p = xasprintf("%s/", e);
		n = normrel(p);
		if (n) {
			if (strcmp(n, libdir) == 0)
				hit = 1;
			/* $ORIGIN entries that stay inside the wheel are kept */
			if (keep) {
				if (keep->len)
					bufputc(keep, ':');
				bufputs(keep, tok);
			}
		}
		free(n);
		free(p);
		free(e);
	}
	free(copy);
	return hit;
}

/* decide the renames and the RPATH of one object; returns 1 if it needs an edit */
static int
planedit(const struct elfinfo *ei, const char *member, char **rpath, char ***oldn, char ***newn,
         size_t *nren)
{
	size_t i;
	struct lib *l;
	int uses = 0;
	char *dir = memberdir(member), *want;
	struct buf keep = {0};

	*rpath = NULL;
	*nren = 0;
	*oldn = xcalloc(ei->nneeded + 1, sizeof **oldn);
	*newn = xcalloc(ei->nneeded + 1, sizeof **newn);
	for (i = 0; i < ei->nneeded; i++) {
		if (!(l = findlib(ei->needed[i])))
			continue;
		uses = 1;
		if (l->soname) {
			(*oldn)[*nren] = ei->needed[i];
			(*newn)[(*nren)++] = l->soname;
		}
	}
	if (uses && !reaches(ei, dir, NULL)) {
		reaches(ei, dir, &keep);
		want = originpath(dir, libdir);
		if (keep.len)
			bufputc(&keep, ':');
		bufputs(&keep, want);
		free(want);
		*rpath = bufdetach(&keep);
	}
	buffree(&keep);
	free(dir);
	return *rpath || *nren;
}

static void
plan(void)
{
	size_t i;
	struct lib *l;
	const char *arch, *base;
	int floor;

	if (whl_parse(&wn, opt.in) < 0)
		die("%s: not a wheel file name (NAME-VERSION-PY-ABI-PLAT.whl)", opt.in);
	libdir = strcmp(opt.layout, "libs") == 0 ? xasprintf("%s.libs", wn.name) : xstrdup(opt.layout + 4);
	for (i = 0; i < nmem; i++)
		if (mem[i].iself)
			resolveobj(&mem[i].ei, mem[i].e->name, NULL, mem[i].e->name);
	for (i = 0; i < opt.ninclude; i++) {
		base = strrchr(opt.include[i], '/');
		base = base && base[1] ? base + 1 : opt.include[i];
		addinclude(opt.include[i], base);
	}
	for (i = 0; i < nlibs; i++) {
		l = libs[i];
		if (l->iself)
			resolveobj(&l->ei, NULL, startswith(l->from, "tar:") ? NULL : l->from, l->from);
	}
	if (errors.len) {
		fputs(errors.s, stderr);
		exit(EXIT_PROBLEM);
	}
	for (i = 0; i < opt.nexclude; i++)
		if (!opt.exused[i] && !opt.quiet)
			warn("%s: --exclude '%s' matched no library (sonames look like libfoo.so.N)", opt.in,
			     opt.exclude[i]);
	/* names in the wheel */
	for (i = 0; i < nlibs; i++) {
		char *file;
		l = libs[i];
		if (opt.sonamehash && !l->include && l->iself) {
			file = hashedname(l->needed, &l->data);
			l->soname = xstrdup(file);
		} else {
			file = xstrdup(l->needed);
		}
		l->member = xasprintf("%s/%s", libdir, file);
		free(file);
		if (findmember(l->member))
			die("%s: bundling %s would overwrite the wheel's own %s", opt.in, l->from, l->member);
	}
	for (i = 0; i < nmem; i++)
		if (mem[i].iself)
			mem[i].edit = planedit(&mem[i].ei, mem[i].e->name, &mem[i].rpath, &mem[i].oldn,
			                       &mem[i].newn, &mem[i].nren);
	for (i = 0; i < nlibs; i++)
		if (libs[i]->iself)
			planedit(&libs[i]->ei, libs[i]->member, &libs[i]->rpath, &libs[i]->oldn, &libs[i]->newn,
			         &libs[i]->nren);
	/* the platform */
	for (i = 0; i < nmem; i++)
		if (mem[i].iself && mem[i].ei.glibc > glibcmax)
			glibcmax = mem[i].ei.glibc;
	for (i = 0; i < nlibs; i++)
		if (libs[i]->iself && libs[i]->ei.glibc > glibcmax)
			glibcmax = libs[i]->ei.glibc;
	if (strcmp(opt.plat, "keep") == 0) {
		newplat = xstrdup(wn.plat);
	} else if (strcmp(opt.plat, "auto") == 0) {
		char *first = xstrndup(wn.plat, strcspn(wn.plat, "."));
		arch = plat_arch(first);
		free(first);
		if (!arch)
			die("%s: --plat=auto: cannot tell the architecture of platform tag '%s'", opt.in, wn.plat);
		floor = strcmp(arch, "x86_64") == 0 || strcmp(arch, "i686") == 0 ? 5 : 17;
		newplat = xasprintf("manylinux_2_%d_%s", glibcmax > floor ? glibcmax : floor, arch);
	} else {
		newplat = xstrdup(opt.plat);
	}
	outname = whl_fmt(&wn, newplat);
	outpath = opt.outdir ? xasprintf("%s/%s", opt.outdir, outname) : xstrdup(outname);
}

/* carrying it out -------------------------------------------------------------------- */

static int
collect(void *ctx, const void *p, size_t n)
{
	bufadd(ctx, p, n);
	return 0;
}

static int batch;               /* patchelf does several edits per call correctly */

struct editjob {
	struct member *m;
	struct lib *l;
	char err[1024];
	int bad;
};

/* a scratch copy for patchelf: no fsync, it is removed again */
static int
writetmp(const char *path, const struct buf *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700), e;

	if (fd < 0)
		return -1;
	if (writeall(fd, data->s, data->len) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

static void
edit1(void *ctx, size_t i)
{
	struct editjob *j = &((struct editjob *)ctx)[i];
	struct buf *data = j->m ? &j->m->data : &j->l->data;
	char *path = xasprintf("%s/%zu", tmpdir, i);
	const char *what = j->m ? j->m->e->name : j->l->member;

	if (j->m && fast_inflate(&zin, j->m->e, data, j->err, sizeof j->err) < 0) {
		j->bad = 1;
	} else if (writetmp(path, data) < 0) {
		j->bad = snprintf(j->err, sizeof j->err, "%s: %s", path, strerror(errno)) > 0;
	} else if (j->m ? elf_edit(opt.patchelf, batch, path, NULL, j->m->oldn, j->m->newn, j->m->nren,
	                           j->m->rpath, j->err, sizeof j->err) < 0
	                : elf_edit(opt.patchelf, batch, path, j->l->soname, j->l->oldn, j->l->newn, j->l->nren,
	                           j->l->rpath, j->err, sizeof j->err) < 0) {
		char *e = xasprintf("%s: %s", what, j->err);
		snprintf(j->err, sizeof j->err, "%s", e);
		free(e);
		j->bad = 1;
	} else if (bufreset(data), readfile(path, data, 0) < 0) {
		j->bad = snprintf(j->err, sizeof j->err, "%s: %s", path, strerror(errno)) > 0;
	}
	if (j->m)
		j->m->changed = !j->bad;
	unlink(path);
	free(path);
}

static void
deflate1(void *ctx, size_t i)
{
	struct outm *o = &((struct outm *)ctx)[i];

	if (!o->data)
		return;
	fast_deflate(o->data->s, o->data->len, opt.level, &o->z, &o->crc);
	sha256_buf(o->data->s, o->data->len, o->sha);
}

static struct outm *outv;
static size_t nout, outcap;

static struct outm *
addout(const char *name)
{
	struct outm *o;

	outv = xgrow(outv, &outcap, nout + 1, sizeof *outv);
	o = &outv[nout++];
	memset(o, 0, sizeof *o);
	o->name = name;
	return o;
}

static void
execute(void)
{
	struct editjob *jobs;
	size_t nj = 0, i;
	char tmpl[PATH_MAX];
	const char *td = getenv("TMPDIR");
	struct buf recbuf = {0}, wheeltext = {0};
	struct zipout zw;
	struct zipcd cd;
	struct outm *o;
	char err[512];
	uint64_t done = 0, scratch = 0;
	struct stat sin, sout;

	if (stat(opt.in, &sin) == 0 && stat(outpath, &sout) == 0 && sin.st_dev == sout.st_dev &&
	    sin.st_ino == sout.st_ino)
		die("%s: the output would replace the input; choose another -w folder", outpath);
	/* ELF edits, checked by reading back; patchelf runs in parallel */
	jobs = xcalloc(nmem + nlibs + 1, sizeof *jobs);
	for (i = 0; i < nmem; i++) {
		if (mem[i].edit) {
			jobs[nj++].m = &mem[i];
			scratch += 2 * mem[i].e->usize;
		}
	}
	for (i = 0; i < nlibs; i++) {
		if (libs[i]->rpath || libs[i]->soname || libs[i]->nren) {
			jobs[nj++].l = libs[i];
			scratch += 2 * libs[i]->data.len;
		}
	}
	if (nj && (batch = patchelf_batches(opt.patchelf)) < 0)
		dien(EXIT_PROBLEM, "%s: cannot run '%s --version'; install patchelf or pass --patchelf=PATH",
		     opt.in, opt.patchelf);
	/* scratch copies for patchelf: TMPDIR if set, else memory (/dev/shm) when it has room */
	if (!(td && *td)) {
		struct statvfs vf;
		td = statvfs("/dev/shm", &vf) == 0 && (uint64_t)vf.f_bavail * vf.f_frsize > scratch + (256u << 20)
		     ? "/dev/shm" : "/tmp";
	}
	snprintf(tmpl, sizeof tmpl, "%s/fatwheel.XXXXXX", td);
	if (!mkdtemp(tmpl))
		dien(EXIT_PROBLEM, "%s:", tmpl);
	tmpdir = xstrdup(tmpl);
	pfor(nj, opt.jobs, edit1, jobs);
	for (i = 0; i < nj; i++)
		if (jobs[i].bad)
			dien(EXIT_PROBLEM, "%s: %s", opt.in, jobs[i].err);
	free(jobs);
	if (strcmp(newplat, wn.plat) != 0) {
		char *t;
		if (zip_read(&zin, wheelm->e, collect, &wheeltext, err, sizeof err) < 0)
			die("%s: %s", opt.in, err);
		t = wheel_retag(wheeltext.s ? wheeltext.s : "", wheeltext.len, newplat);
		bufreset(&wheelm->data);
		bufputs(&wheelm->data, t);
		free(t);
		wheelm->changed = 1;
		buffree(&wheeltext);
	}
	/* the order: package members, the libraries, .dist-info, RECORD last */
	for (i = 0; i < nmem; i++) {
		if (mem[i].dist || mem[i].drop)
			continue;
		o = addout(mem[i].e->name);
		o->m = &mem[i];
		o->data = mem[i].changed ? &mem[i].data : NULL;
	}
	for (i = 0; i < nlibs; i++) {
		o = addout(libs[i]->member);
		o->data = &libs[i]->data;
		o->extattr = (0100755u << 16);
	}
	for (i = 0; i < nmem; i++) {
		if (!mem[i].dist || mem[i].drop || &mem[i] == recordm)
			continue;
		o = addout(mem[i].e->name);
		o->m = &mem[i];
		o->data = mem[i].changed ? &mem[i].data : NULL;
	}
	pfor(nout, opt.jobs, deflate1, outv);
	for (i = 0; i < nout; i++) {
		o = &outv[i];
		if (endswith(o->name, "/"))
			continue;
		if (o->data)
			record_line(&recbuf, o->name, o->sha, o->data->len);
		else
			record_line(&recbuf, o->name, o->m->sha, o->m->e->usize);
	}
	record_line(&recbuf, recordm->e->name, NULL, 0);
	o = addout(recordm->e->name);
	o->m = recordm;
	o->data = &recbuf;
	deflate1(outv, nout - 1);
	/* write */
	if (atomic_open(&out, outpath, 0644) < 0)
		dien(EXIT_PROBLEM, "%s: cannot create the output wheel:", opt.outdir);
	outopen = 1;
	zipw_init(&zw, out.fd);
	for (i = 0; i < nout; i++) {
		o = &outv[i];
		memset(&cd, 0, sizeof cd);
		cd.name = (char *)o->name;
		if (o->m) {
			cd.flags = o->m->e->flags;
			cd.mtime = o->m->e->mtime;
			cd.mdate = o->m->e->mdate;
			cd.madeby = o->m->e->madeby;
			cd.extattr = o->m->e->extattr;
		} else {
			cd.mtime = wheelm->e->mtime;
			cd.mdate = wheelm->e->mdate;
			cd.madeby = 3 << 8;
			cd.extattr = o->extattr;
		}
		if (o->data) {
			cd.flags &= (uint16_t)~6u; /* deflate speed bits describe the old stream */
			cd.method = 8;
			cd.crc = o->crc;
			cd.csize = o->z.len;
			cd.usize = o->data->len;
			if (zipw_add(&zw, &cd, o->z.s) < 0)
				break;
		} else {
			cd.method = o->m->e->method;
			cd.crc = o->m->e->crc;
			cd.csize = o->m->e->csize;
			cd.usize = o->m->e->usize;
			if (zipw_add(&zw, &cd, zin.m.p + o->m->e->dataoff) < 0)
				break;
		}
		done += cd.csize;
		progress("writing", i + 1, nout, done);
	}
	if (i < nout || zipw_finish(&zw) < 0) {
		int e = errno;
		zipw_free(&zw);
		errno = e;
		dien(EXIT_PROBLEM, "%s: writing the output failed (nothing was left behind):", outpath);
	}
	if (atomic_commit(&out) < 0) {
		outopen = 0;
		dien(EXIT_PROBLEM, "%s: writing the output failed (nothing was left behind):", outpath);
	}
	outopen = 0;
	buffree(&recbuf);
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
			printf("\nlibdir   %s/\n", libdir);
			for (i = 0; i < nlibs; i++)
				printf("bundle   %s <- %s (%zu bytes), needed by %s\n", libs[i]->member,
				       libs[i]->from, libs[i]->data.len, libs[i]->by);
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
	json_kstr(&j, "libdir", libdir);
	json_key(&j, "bundled");
	json_arr(&j);
	for (i = 0; i < nlibs; i++) {
		json_obj(&j);
		json_kstr(&j, "member", libs[i]->member);
		json_kstr(&j, "needed", libs[i]->include ? NULL : libs[i]->needed);
		json_kstr(&j, "from", libs[i]->from);
		json_kstr(&j, "needed_by", libs[i]->by);
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
		free(mem[i].rpath);
		free(mem[i].oldn);
		free(mem[i].newn);
		buffree(&mem[i].data);
	}
	free(mem);
	for (i = 0; i < nlibs; i++) {
		struct lib *l = libs[i];
		free(l->needed);
		free(l->from);
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
	for (i = 0; i < nout; i++)
		buffree(&outv[i].z);
	free(outv);
	record_free(rec, nrec);
	zip_close(&zin);
	search_free(&opt.sp);
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

	setprogname(argv[0]);
	atexit(cleanup);
	parseargs(argc, argv);
	if (opt.useldlp && (ldlp = getenv("LD_LIBRARY_PATH")) != NULL)
		search_addlist(&opt.sp, ldlp);
	search_addsystem(&opt.sp);
	if (opt.outdir && !opt.dryrun) {
		struct stat st;
		if (stat(opt.outdir, &st) < 0)
			die("%s:", opt.outdir);
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
