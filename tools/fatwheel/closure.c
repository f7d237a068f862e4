/* resolving the DT_NEEDED closure the way ld.so does, and --include */
#include "state.h"
#include "mapfile.h"
#include "proc.h"
#include "wheelpath.h"
#include "os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


int
excluded(struct fw *fw, const char *s)
{
	size_t i;
	const char *b;
	int hit = 0;

	for (i = 0; i < fw->opt.nexclude; i++) {
		b = strrchr(s, '/');
		if (fnmatch(fw->opt.exclude[i], s, 0) == 0 || (b && fnmatch(fw->opt.exclude[i], b + 1, 0) == 0)) {
			fw->opt.exused[i] = 1;
			hit = 1;
		}
	}
	return hit;
}

/* DT_NEEDED names that name a library bundled under another name */
static struct alias {
	char *needed;
	struct lib *to;
} *aliases;
static size_t naliases, aliascap;

struct lib *
findlib(struct fw *fw, const char *needed)
{
	size_t i;

	for (i = 0; i < fw->nlibs; i++)
		if (!fw->libs[i]->include && strcmp(fw->libs[i]->needed, needed) == 0)
			return fw->libs[i];
	for (i = 0; i < naliases; i++)
		if (strcmp(aliases[i].needed, needed) == 0)
			return aliases[i].to;
	return NULL;
}

/* the name ld.so knows a bundled library by once it is loaded */
static const char *
libkey(const struct lib *l)
{
	return l->ei.soname ? l->ei.soname : l->needed;
}

static void
freelib(struct lib *l)
{
	free(l->origin);
	free(l->from);
	free(l->by);
	elfinfo_free(&l->ei);
	buffree(&l->data);
	free(l);
}

void
dedupe(struct fw *fw)
{
	size_t i, j, k;
	struct lib *a, *b;

	for (j = 0; j < fw->nlibs; j++) {
		b = fw->libs[j];
		if (b->include || !b->iself)
			continue;
		for (i = 0; i < j; i++) {
			a = fw->libs[i];
			if (a->include || !a->iself || strcmp(libkey(a), libkey(b)) != 0)
				continue;
			if (a->data.len != b->data.len || memcmp(a->data.s, b->data.s, a->data.len) != 0)
				dien(EXIT_PROBLEM, "%s: two different libraries have the soname %s: %s (needed as %s by %s) and %s (needed as %s by %s); ld.so loads one of them for both: --exclude one or fix the search path",
				     fw->opt.in, libkey(a), a->from, a->needed, a->by, b->from, b->needed, b->by);
			break;
		}
		if (i == j)
			continue;
		/* the same library under a second name: one copy, the name an alias */
		aliases = xgrow(aliases, &aliascap, naliases + 1, sizeof *aliases);
		aliases[naliases].needed = b->needed;
		aliases[naliases++].to = fw->libs[i];
		/* what b loaded was loaded by the one copy */
		for (k = 0; k < fw->nlibs; k++)
			if (fw->libs[k]->up == &b->ld)
				fw->libs[k]->up = &fw->libs[i]->ld;
		freelib(b);
		for (k = j; k + 1 < fw->nlibs; k++)
			fw->libs[k] = fw->libs[k + 1];
		fw->nlibs--;
		j--;
	}
}

/* the system libraries' own closure: names and which system library brought each in */
static struct sysname {
	char *name;
	const char *by;
} *sysn;
static size_t nsysn, syscap;

static int
sysseen(const char *name)
{
	size_t i;

	for (i = 0; i < nsysn; i++)
		if (strcmp(sysn[i].name, name) == 0)
			return 1;
	return 0;
}

/* add what the system library name (needed by the object up) loads, recursively */
static void
sysadd(struct fw *fw, const char *name, const char *by, const struct loader *up)
{
	struct mapfile mf;
	struct elfinfo ei;
	struct loader ld;
	char *path;
	size_t i, at;
	int inwheel;

	if (sysseen(name))
		return;
	sysn = xgrow(sysn, &syscap, nsysn + 1, sizeof *sysn);
	at = nsysn++;
	sysn[at].name = xstrdup(name);
	sysn[at].by = by ? by : sysn[at].name;
	path = ldso_find(&fw->opt.sp, up, name, &inwheel);
	bufreset(&fw->opt.sp.skipped);
	if (!path || startswith(path, "tar:") || map_open(&mf, path) < 0) {
		free(path);
		return;
	}
	if (elfinfo_read(&ei, mf.p, mf.n, NULL) == 0) {
		ld.ei = &ei;
		ld.inwheel = 0;
		ld.up = up;
		ld.origin = diskorigin(path);
		for (i = 0; i < ei.nneeded; i++)
			sysadd(fw, ei.needed[i], sysn[at].by, &ld);
		free((char *)ld.origin);
	}
	elfinfo_free(&ei);
	map_close(&mf);
	free(path);
}

void
sysshared(struct fw *fw)
{
	size_t i, k, j;
	const struct loader *ld;

	for (i = 0; i < fw->nmem + fw->nlibs; i++) {
		ld = i < fw->nmem ? &fw->mem[i].ld : &fw->libs[i - fw->nmem]->ld;
		if (i < fw->nmem ? !fw->mem[i].iself : !fw->libs[i - fw->nmem]->iself)
			continue;
		for (k = 0; k < ld->ei->nneeded; k++)
			if (policy_system(ld->ei->needed[k]) && !sysseen(ld->ei->needed[k]))
				sysadd(fw, ld->ei->needed[k], NULL, ld);
	}
	for (i = 0; i < fw->nlibs; i++) {
		if (fw->libs[i]->include || !fw->libs[i]->iself)
			continue;
		for (j = 0; j < nsysn && !fw->libs[i]->sysby; j++)
			if (strcmp(sysn[j].name, fw->libs[i]->needed) == 0 || strcmp(sysn[j].name, libkey(fw->libs[i])) == 0)
				fw->libs[i]->sysby = sysn[j].by;
	}
}

void
closure_free(void)
{
	size_t i;

	for (i = 0; i < naliases; i++)
		free(aliases[i].needed);
	free(aliases);
	for (i = 0; i < nsysn; i++)
		free(sysn[i].name);
	free(sysn);
}

struct member *
findmember(struct fw *fw, const char *name)
{
	size_t i;

	for (i = 0; i < fw->nmem; i++)
		if (strcmp(fw->mem[i].e->name, name) == 0)
			return &fw->mem[i];
	return NULL;
}

/* normalize a relative path ("a/b/../c" -> "a/c", leading '/' ignored, "." -> "");
   NULL if it climbs above the root */
char *
normrel(const char *p)
{
	struct buf b = {0};

	while (*p == '/')
		p++;
	if (wheelpath_norm(&b, p) < 0) {
		buffree(&b);
		return NULL;
	}
	if (strcmp(b.s, ".") == 0)
		bufreset(&b);
	return bufdetach(&b);
}

/* expand $ORIGIN / ${ORIGIN} in one search-path entry */
char *
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

/* the folder of a file on disk as ld.so's $ORIGIN has it: absolute */
char *
diskorigin(const char *path)
{
	char *d = memberdir(path), *cwd, *r;

	if (d[0] == '/')
		return d;
	if (!(cwd = getcwd(NULL, 0)))
		die("getcwd:");
	r = *d ? xasprintf("%s/%s", cwd, d) : xstrdup(cwd);
	free(cwd);
	free(d);
	return r;
}

/* dirname of a member path ("" at the top) */
char *
memberdir(const char *name)
{
	const char *s = strrchr(name, '/');

	return s ? xstrndup(name, (size_t)(s - name)) : xstrdup("");
}

static void loadlib(struct lib *l);

/* add the libraries an object needs; by names the object in messages */
void
resolveobj(struct fw *fw, const struct loader *ld, const char *by)
{
	const struct elfinfo *ei = ld->ei;
	size_t i;
	char *path;
	struct lib *l;
	const char *n;
	int inwheel;

	for (i = 0; i < ei->nneeded; i++) {
		n = ei->needed[i];
		if (policy_system(n) || excluded(fw, n) || findlib(fw, n))
			continue;
		/* the entry becomes a file name in the library folder and a name looked up in
		   folders: untrusted text. ld.so would read "../x/libz.so.1" relative to the
		   current folder; bundled, it would land outside NAME.libs. */
		if (!wheelpath_plainname(n)) {
			struct buf q = {0};
			wheelpath_escape(&q, n);
			die("%s: %s: DT_NEEDED entry '%s' is not a plain file name (empty, '.', '..', or holding '/', '\\' or a control character); refusing to look it up or bundle it",
			    fw->opt.in, by, q.s);
		}
		bufreset(&fw->opt.sp.skipped);
		path = ldso_find(&fw->opt.sp, ld, n, &inwheel);
		if (inwheel)
			continue;
		if (!path) {
			bufprintf(&fw->errors, "fatwheel: %s: %s needed by %s not found (add --lib-path DIR or --exclude '%s')%s\n",
			          fw->opt.in, n, by, n, fw->opt.sp.skipped.len ? fw->opt.sp.skipped.s : "");
			continue;
		}
		if (excluded(fw, path)) {
			free(path);
			continue;
		}
		fw->libs = xgrow(fw->libs, &fw->libcap, fw->nlibs + 1, sizeof *fw->libs);
		l = fw->libs[fw->nlibs++] = xcalloc(1, sizeof *l);
		l->needed = xstrdup(n);
		l->from = path;
		l->by = xstrdup(by);
		l->up = ld;
		l->via = fw->opt.sp.via;
		loadlib(l);
	}
}

/* parse a library's bytes */
static void
parselib(struct fw *fw, struct lib *l)
{
	char *err = NULL;

	if (elfinfo_read(&l->ei, l->data.s, l->data.len, &err) == 0) {
		l->iself = 1;
	} else {
		elfinfo_free(&l->ei);
		if (!l->include)
			dien(EXIT_USAGE, "%s: %s: needed by %s as %s, but %s", fw->opt.in, l->from, l->by,
			     l->needed, err);
		free(err);
	}
}

/* read a library from disk and parse it. The file is opened without blocking and must
   be regular (a FIFO put in its place would hang). */
static void
readlib(struct fw *fw, struct lib *l)
{
	struct stat st;
	ssize_t k;
	int fd;

	l->unread = 0;
	if ((fd = open(l->from, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		die("%s:", l->from);
	if (fstat(fd, &st) < 0)
		die("%s:", l->from);
	if (!S_ISREG(st.st_mode))
		die("%s: is %s, not a library file", l->from, os_ftype(st.st_mode));
	bufreset(&l->data);
	/* the whole file in one allocation, with room for the edit to grow it */
	l->data.s = xgrow(l->data.s, &l->data.cap, (size_t)st.st_size + (size_t)st.st_size / 8 + 65536, 1);
	for (;;) {
		l->data.s = xgrow(l->data.s, &l->data.cap, l->data.len + 65536 + 1, 1);
		k = read(fd, l->data.s + l->data.len, l->data.cap - l->data.len - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			die("%s:", l->from);
		if (k == 0)
			break;
		l->data.len += (size_t)k;
	}
	l->data.s[l->data.len] = 0;
	close(fd);
	parselib(fw, l);
}

/* mark a library to read: one on disk waits for loadunread, one from a tarball for
   loadpending */
static void
loadlib(struct lib *l)
{
	if (startswith(l->from, "tar:"))
		l->pending = 1;
	else
		l->unread = 1;
}

/* the libraries to read, for readlib1 on the pfor threads */
struct readctx {
	struct fw *fw;
	struct lib **v;
};

static void
readlib1(void *ctx, size_t i)
{
	struct readctx *c = ctx;

	readlib(c->fw, c->v[i]);
}

void
loadunread(struct fw *fw)
{
	struct lib **v = xcalloc(fw->nlibs + 1, sizeof *v);
	struct readctx c = {fw, v};
	size_t i, n = 0;

	for (i = 0; i < fw->nlibs; i++)
		if (fw->libs[i]->unread)
			v[n++] = fw->libs[i];
	pfor(n, fw->opt.jobs, readlib1, &c);
	free(v);
}

void
loadpending(struct fw *fw)
{
	const char **names = xcalloc(fw->nlibs + 1, sizeof *names);
	struct buf **outs = xcalloc(fw->nlibs + 1, sizeof *outs);
	size_t i, n = 0;
	char *err = NULL;

	for (i = 0; i < fw->nlibs; i++) {
		if (fw->libs[i]->pending) {
			names[n] = fw->libs[i]->from + 4;
			outs[n++] = &fw->libs[i]->data;
		}
	}
	/* one pass over the tarball for all of them */
	if (n && rocmtar_readmany(fw->opt.sp.tar, names, outs, n, &err) < 0)
		die("%s: --rocm tarball: %s", fw->opt.in, err);
	for (i = 0; i < fw->nlibs; i++) {
		if (fw->libs[i]->pending) {
			fw->libs[i]->pending = 0;
			parselib(fw, fw->libs[i]);
		}
	}
	free(names);
	free(outs);
}

/* true if a file name names a GPU target not in --arch */
static int
archskip(struct fw *fw, const char *name)
{
	const char *p = name, *q;
	char tok[32];
	size_t k;
	int named = 0;

	if (!fw->opt.arch)
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
			const char *a = fw->opt.arch;
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

void
addinclude(struct fw *fw, const char *path, const char *rel)
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
				addinclude(fw, p, r);
				free(p);
				free(r);
			}
			free(ents[k]);
		}
		free(ents);
		return;
	}
	if (!S_ISREG(st.st_mode))
		die("--include %s: is %s, not a file or folder", path, os_ftype(st.st_mode));
	if (archskip(fw, rel))
		return;
	fw->libs = xgrow(fw->libs, &fw->libcap, fw->nlibs + 1, sizeof *fw->libs);
	l = fw->libs[fw->nlibs++] = xcalloc(1, sizeof *l);
	l->needed = xstrdup(rel);
	l->from = xstrdup(path);
	l->by = xstrdup("--include");
	l->include = 1;
	readlib(fw, l);
}
