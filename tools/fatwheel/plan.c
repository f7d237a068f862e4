/* planning: library names in the wheel, RPATHs and renames, the platform tag */
#include "state.h"
#include "hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* manylinux policies as auditwheel 6.7.0's manylinux-policy.json lists them (x86_64;
   aarch64 differs only in allowing GLIBCXX_3.4.24 at 2_26): the newest CXXABI_1.3.N and
   GLIBCXX_3.4.N each glibc minor's libstdc++ provides */
static const struct { int glibc, cxxabi, glibcxx; } cxxpolicy[] = {
	{5, 1, 8}, {12, 3, 13}, {17, 7, 19}, {24, 10, 22}, {26, 10, 22}, {27, 11, 24},
	{28, 11, 24}, {31, 12, 28}, {34, 13, 29}, {35, 13, 30}, {36, 13, 30}, {38, 13, 30},
	{39, 15, 33}, {40, 15, 33}, {41, 15, 33},
};

int
policy_cxx(const char *v)
{
	int abi, n = 0;
	size_t i;
	char c;

	if (strcmp(v, "GLIBCXX_3.4") == 0 || strcmp(v, "CXXABI_1.3") == 0)
		return cxxpolicy[0].glibc;
	if (sscanf(v, "GLIBCXX_3.4.%d%c", &n, &c) == 1)
		abi = 0;
	else if (sscanf(v, "CXXABI_1.3.%d%c", &n, &c) == 1)
		abi = 1;
	else
		return -1;
	for (i = 0; i < sizeof cxxpolicy / sizeof *cxxpolicy; i++)
		if ((abi ? cxxpolicy[i].cxxabi : cxxpolicy[i].glibcxx) >= n)
			return cxxpolicy[i].glibc;
	return 1000;
}

/* the legacy alias of manylinux_2_N, or NULL */
static const char *
plat_alias(int n)
{
	return n == 5 ? "manylinux1" : n == 12 ? "manylinux2010" : n == 17 ? "manylinux2014" : NULL;
}

/* N of manylinux_2_N_ARCH or of a legacy alias (manylinux2014_ARCH); -1 for other tags */
static int
plat_glibc(const char *tag)
{
	int n;
	char c;

	if (sscanf(tag, "manylinux_2_%d_%c", &n, &c) == 2)
		return n;
	if (startswith(tag, "manylinux1_"))
		return 5;
	if (startswith(tag, "manylinux2010_"))
		return 12;
	if (startswith(tag, "manylinux2014_"))
		return 17;
	return -1;
}

static int
cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the tag set for manylinux_2_N_arch with its alias, plus (unless --only-plat) the older
   policy 2_M the wheel also satisfies; sorted and dot-joined as auditwheel writes them */
static char *
plat_set(int n, int m, const char *arch)
{
	char *t[4];
	size_t k = 0, i;
	struct buf b = {0};

	t[k++] = xasprintf("manylinux_2_%d_%s", n, arch);
	if (plat_alias(n))
		t[k++] = xasprintf("%s_%s", plat_alias(n), arch);
	if (m >= 0 && m < n) {
		t[k++] = xasprintf("manylinux_2_%d_%s", m, arch);
		if (plat_alias(m))
			t[k++] = xasprintf("%s_%s", plat_alias(m), arch);
	}
	qsort(t, k, sizeof *t, cmpstr);
	for (i = 0; i < k; i++) {
		if (i)
			bufputc(&b, '.');
		bufputs(&b, t[i]);
		free(t[i]);
	}
	return bufdetach(&b);
}

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

/* the sha256 of libs[i]'s content, on the pfor threads */
static unsigned char (*libsha)[32];

static void
hashlib(void *ctx, size_t i)
{
	struct fw *fw = ctx;

	sha256_buf(fw->libs[i]->data.s, fw->libs[i]->data.len, libsha[i]);
}

/* the hashed file name libfoo-HASH8.so.N of a library whose content hashes to h */
static char *
hashedname(const char *name, const unsigned char h[32])
{
	struct buf hx = {0};
	const char *so = strstr(name, ".so");
	char *r;

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
reaches(struct fw *fw, const struct elfinfo *ei, const char *dir, struct buf *keep)
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
			if (strcmp(n, fw->libdir) == 0)
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

/* decide the renames and the RPATH of one object into ed; returns 1 if it needs an edit */
static int
planedit(struct fw *fw, const struct elfinfo *ei, const char *member, int bundled, struct edplan *ed)
{
	size_t i;
	struct lib *l;
	int uses = 0;
	char *dir = memberdir(member), *want;
	struct buf keep = {0};
	char **rpath = &ed->rpath, ***oldn = &ed->oldn, ***newn = &ed->newn;
	size_t *nren = &ed->nren;

	*rpath = NULL;
	*nren = 0;
	*oldn = xcalloc(ei->nneeded + 1, sizeof **oldn);
	*newn = xcalloc(ei->nneeded + 1, sizeof **newn);
	for (i = 0; i < ei->nneeded; i++) {
		if (!(l = findlib(fw, ei->needed[i])))
			continue;
		uses = 1;
		/* the hashed soname, or the name an alias's library is bundled under */
		if (strcmp(l->soname ? l->soname : l->needed, ei->needed[i]) != 0) {
			(*oldn)[*nren] = ei->needed[i];
			(*newn)[(*nren)++] = l->soname ? l->soname : l->needed;
		}
	}
	if (uses && bundled) {
		/* a library brought in: exactly its way to the library folder; its old
		   RPATH/RUNPATH named folders of the build machine */
		want = originpath(dir, fw->libdir);
		if (!ei->rpath || ei->runpath || strcmp(ei->rpath, want) != 0)
			*rpath = want;
		else
			free(want);
	} else if (uses && !reaches(fw, ei, dir, NULL)) {
		/* a wheel member: keep its own $ORIGIN entries, add the library folder */
		reaches(fw, ei, dir, &keep);
		want = originpath(dir, fw->libdir);
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

/* the folder the libraries go in, checked */
static void
setlibdir(struct fw *fw)
{
	if (fw->opt.libsdir)
		fw->libdir = xasprintf("%s%s", fw->wn.name, fw->opt.libsdir);
	else
		fw->libdir = strcmp(fw->opt.layout, "libs") == 0 ? xasprintf("%s.libs", fw->wn.name) : xstrdup(fw->opt.layout + 4);
	if (!zip_safename(fw->libdir) || endswith(fw->libdir, "/"))
		dien(EXIT_USAGE, "%s: the library folder '%s' is not a safe relative path", fw->opt.in, fw->libdir);
}

/* what every member and every library found needs, until nothing new is found */
static void
resolveall(struct fw *fw)
{
	size_t i;
	struct lib *l;
	const char *base;

	for (i = 0; i < fw->nmem; i++) {
		if (!fw->mem[i].iself)
			continue;
		fw->mem[i].origin = memberdir(fw->mem[i].e->name);
		fw->mem[i].ld = (struct loader){&fw->mem[i].ei, fw->mem[i].origin, 1, NULL};
		resolveobj(fw, &fw->mem[i].ld, fw->mem[i].e->name);
	}
	for (i = 0; i < fw->opt.ninclude; i++) {
		base = strrchr(fw->opt.include[i], '/');
		base = base && base[1] ? base + 1 : fw->opt.include[i];
		addinclude(fw, fw->opt.include[i], base);
	}
	/* breadth first: each round reads what it found in a tarball in one pass */
	for (i = 0; i < fw->nlibs; i++) {
		if (fw->libs[i]->pending)
			loadpending(fw);
		if (fw->libs[i]->unread)
			loadunread(fw);
		l = fw->libs[i];
		if (!l->iself)
			continue;
		l->origin = startswith(l->from, "tar:") ? NULL : diskorigin(l->from);
		l->ld = (struct loader){&l->ei, l->origin, 0, l->up};
		resolveobj(fw, &l->ld, l->from);
	}
	if (fw->errors.len) {
		fputs(fw->errors.s, stderr);
		exit(EXIT_PROBLEM);
	}
}

/* one library's file name in the wheel */
static char *
libfile(struct fw *fw, struct lib *l, const unsigned char sha[32])
{
	char *file;

	if (fw->opt.sonamehash && !l->include && l->iself && l->sysby) {
		/* renamed, it would be a second copy beside the one the system library
		   loads under the old name: ld.so loads one per soname, so keep it */
		if (!fw->opt.quiet)
			warn("%s: %s keeps its soname: the system's %s loads it too, and a renamed copy would be a second one in the process",
			     fw->opt.in, l->needed, l->sysby);
		return xstrdup(l->needed);
	}
	if (fw->opt.sonamehash && !l->include && l->iself) {
		file = hashedname(l->needed, sha);
		l->soname = xstrdup(file);
		return file;
	}
	return xstrdup(l->needed);
}

/* the libraries' members in the wheel */
static void
namelibs(struct fw *fw)
{
	size_t i;
	struct lib *l;
	char *file;

	libsha = xcalloc(fw->nlibs + 1, sizeof *libsha);
	if (fw->opt.sonamehash)
		pfor(fw->nlibs, fw->opt.jobs, hashlib, fw);
	for (i = 0; i < fw->nlibs; i++) {
		l = fw->libs[i];
		file = libfile(fw, l, libsha[i]);
		l->member = xasprintf("%s/%s", fw->libdir, file);
		free(file);
		if (findmember(fw, l->member))
			die("%s: bundling %s would overwrite the wheel's own %s", fw->opt.in, l->from, l->member);
	}
	free(libsha);
}

/* the edits of the wheel's own objects and of the libraries brought in */
static void
planedits(struct fw *fw)
{
	size_t i;

	for (i = 0; i < fw->nmem; i++)
		if (fw->mem[i].iself)
			fw->mem[i].edit = planedit(fw, &fw->mem[i].ei, fw->mem[i].e->name, 0, &fw->mem[i].ed);
	for (i = 0; i < fw->nlibs; i++)
		if (fw->libs[i]->iself)
			planedit(fw, &fw->libs[i]->ei, fw->libs[i]->member, 1, &fw->libs[i]->ed);
}

static void
needs1(struct fw *fw, const struct elfinfo *ei)
{
	if (ei->glibc > fw->glibcmax)
		fw->glibcmax = ei->glibc;
	if (ei->cxx > fw->cxxmax)
		fw->cxxmax = ei->cxx;
}

/* the platform: GLIBC_2.N as it is, GLIBCXX/CXXABI through the policy table */
static void
needs(struct fw *fw)
{
	size_t i;

	for (i = 0; i < fw->nmem; i++)
		if (fw->mem[i].iself)
			needs1(fw, &fw->mem[i].ei);
	for (i = 0; i < fw->nlibs; i++)
		if (fw->libs[i]->iself)
			needs1(fw, &fw->libs[i]->ei);
}

/* the tag --plat asks for (manylinux_2_N_ARCH or auto), checked against what it needs */
static char *
repairtag(struct fw *fw, const char *arch)
{
	int floor, need = fw->glibcmax > fw->cxxmax ? fw->glibcmax : fw->cxxmax, want = plat_glibc(fw->opt.plat);

	if (!arch)
		die("%s: --plat=%s: cannot tell the architecture of platform tag '%s'", fw->opt.in, fw->opt.plat, fw->wn.plat);
	if (fw->cxxmax >= 1000)
		dien(EXIT_PROBLEM, "%s: a GLIBCXX_ or CXXABI_ version it needs is newer than every manylinux policy",
		     fw->opt.in);
	floor = strcmp(arch, "x86_64") == 0 || strcmp(arch, "i686") == 0 ? 5 : 17;
	if (need < floor)
		need = floor;
	if (strcmp(fw->opt.plat, "auto") == 0)
		return plat_set(need, -1, arch);
	if (!endswith(fw->opt.plat, arch) || fw->opt.plat[strlen(fw->opt.plat) - strlen(arch) - 1] != '_')
		die("%s: --plat=%s: the wheel is for %s", fw->opt.in, fw->opt.plat, arch);
	if (need > want)
		dien(EXIT_PROBLEM, "%s: cannot repair to %s: it needs manylinux_2_%d (GLIBC 2.%d%s)", fw->opt.in,
		     fw->opt.plat, need, fw->glibcmax, fw->cxxmax > fw->glibcmax ? ", and GLIBCXX/CXXABI versions" : "");
	return plat_set(want, fw->opt.onlyplat ? -1 : need, arch);
}

/* the output's platform tag, name and path */
static void
choosetag(struct fw *fw)
{
	char *first = xstrndup(fw->wn.plat, strcspn(fw->wn.plat, "."));
	const char *arch = plat_arch(first);

	free(first);
	if (strcmp(fw->opt.plat, "keep") == 0 || fw->opt.noupdate)
		fw->newplat = xstrdup(fw->wn.plat);
	else if (strcmp(fw->opt.plat, "auto") == 0 || plat_glibc(fw->opt.plat) >= 0)
		fw->newplat = repairtag(fw, arch);
	else
		fw->newplat = xstrdup(fw->opt.plat);
	fw->outname = whl_fmt(&fw->wn, fw->newplat);
	fw->outpath = fw->opt.outdir ? xasprintf("%s/%s", fw->opt.outdir, fw->outname) : xstrdup(fw->outname);
}

void
plan(struct fw *fw)
{
	size_t i;

	setlibdir(fw);
	resolveall(fw);
	dedupe(fw);
	if (fw->opt.sonamehash)
		sysshared(fw);
	for (i = 0; i < fw->opt.nexclude; i++)
		if (!fw->opt.exused[i] && !fw->opt.quiet)
			warn("%s: --exclude '%s' matched no library (sonames look like libfoo.so.N)", fw->opt.in,
			     fw->opt.exclude[i]);
	namelibs(fw);
	planedits(fw);
	needs(fw);
	choosetag(fw);
}
