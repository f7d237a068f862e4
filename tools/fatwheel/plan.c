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
	(void)ctx;
	sha256_buf(libs[i]->data.s, libs[i]->data.len, libsha[i]);
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
planedit(const struct elfinfo *ei, const char *member, int bundled, char **rpath, char ***oldn,
         char ***newn, size_t *nren)
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
		/* the hashed soname, or the name an alias's library is bundled under */
		if (strcmp(l->soname ? l->soname : l->needed, ei->needed[i]) != 0) {
			(*oldn)[*nren] = ei->needed[i];
			(*newn)[(*nren)++] = l->soname ? l->soname : l->needed;
		}
	}
	if (uses && bundled) {
		/* a library brought in: exactly its way to the library folder; its old
		   RPATH/RUNPATH named folders of the build machine */
		want = originpath(dir, libdir);
		if (!ei->rpath || ei->runpath || strcmp(ei->rpath, want) != 0)
			*rpath = want;
		else
			free(want);
	} else if (uses && !reaches(ei, dir, NULL)) {
		/* a wheel member: keep its own $ORIGIN entries, add the library folder */
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

/* the folder the libraries go in, checked */
static void
setlibdir(void)
{
	if (opt.libsdir)
		libdir = xasprintf("%s%s", wn.name, opt.libsdir);
	else
		libdir = strcmp(opt.layout, "libs") == 0 ? xasprintf("%s.libs", wn.name) : xstrdup(opt.layout + 4);
	if (!zip_safename(libdir) || endswith(libdir, "/"))
		dien(EXIT_USAGE, "%s: the library folder '%s' is not a safe relative path", opt.in, libdir);
}

/* what every member and every library found needs, until nothing new is found */
static void
resolveall(void)
{
	size_t i;
	struct lib *l;
	const char *base;

	for (i = 0; i < nmem; i++) {
		if (!mem[i].iself)
			continue;
		mem[i].origin = memberdir(mem[i].e->name);
		mem[i].ld = (struct loader){&mem[i].ei, mem[i].origin, 1, NULL};
		resolveobj(&mem[i].ld, mem[i].e->name);
	}
	for (i = 0; i < opt.ninclude; i++) {
		base = strrchr(opt.include[i], '/');
		base = base && base[1] ? base + 1 : opt.include[i];
		addinclude(opt.include[i], base);
	}
	/* breadth first: each round reads what it found in a tarball in one pass */
	for (i = 0; i < nlibs; i++) {
		if (libs[i]->pending)
			loadpending();
		if (libs[i]->unread)
			loadunread();
		l = libs[i];
		if (!l->iself)
			continue;
		l->origin = startswith(l->from, "tar:") ? NULL : diskorigin(l->from);
		l->ld = (struct loader){&l->ei, l->origin, 0, l->up};
		resolveobj(&l->ld, l->from);
	}
	if (errors.len) {
		fputs(errors.s, stderr);
		exit(EXIT_PROBLEM);
	}
}

/* one library's file name in the wheel */
static char *
libfile(struct lib *l, const unsigned char sha[32])
{
	char *file;

	if (opt.sonamehash && !l->include && l->iself && l->sysby) {
		/* renamed, it would be a second copy beside the one the system library
		   loads under the old name: ld.so loads one per soname, so keep it */
		if (!opt.quiet)
			warn("%s: %s keeps its soname: the system's %s loads it too, and a renamed copy would be a second one in the process",
			     opt.in, l->needed, l->sysby);
		return xstrdup(l->needed);
	}
	if (opt.sonamehash && !l->include && l->iself) {
		file = hashedname(l->needed, sha);
		l->soname = xstrdup(file);
		return file;
	}
	return xstrdup(l->needed);
}

/* the libraries' members in the wheel */
static void
namelibs(void)
{
	size_t i;
	struct lib *l;
	char *file;

	libsha = xcalloc(nlibs + 1, sizeof *libsha);
	if (opt.sonamehash)
		pfor(nlibs, opt.jobs, hashlib, NULL);
	for (i = 0; i < nlibs; i++) {
		l = libs[i];
		file = libfile(l, libsha[i]);
		l->member = xasprintf("%s/%s", libdir, file);
		free(file);
		if (findmember(l->member))
			die("%s: bundling %s would overwrite the wheel's own %s", opt.in, l->from, l->member);
	}
	free(libsha);
}

/* the edits of the wheel's own objects and of the libraries brought in */
static void
planedits(void)
{
	size_t i;

	for (i = 0; i < nmem; i++)
		if (mem[i].iself)
			mem[i].edit = planedit(&mem[i].ei, mem[i].e->name, 0, &mem[i].rpath, &mem[i].oldn,
			                       &mem[i].newn, &mem[i].nren);
	for (i = 0; i < nlibs; i++)
		if (libs[i]->iself)
			planedit(&libs[i]->ei, libs[i]->member, 1, &libs[i]->rpath, &libs[i]->oldn, &libs[i]->newn,
			         &libs[i]->nren);
}

static void
needs1(const struct elfinfo *ei)
{
	if (ei->glibc > glibcmax)
		glibcmax = ei->glibc;
	if (ei->cxx > cxxmax)
		cxxmax = ei->cxx;
}

/* the platform: GLIBC_2.N as it is, GLIBCXX/CXXABI through the policy table */
static void
needs(void)
{
	size_t i;

	for (i = 0; i < nmem; i++)
		if (mem[i].iself)
			needs1(&mem[i].ei);
	for (i = 0; i < nlibs; i++)
		if (libs[i]->iself)
			needs1(&libs[i]->ei);
}

/* the tag --plat asks for (manylinux_2_N_ARCH or auto), checked against what it needs */
static char *
repairtag(const char *arch)
{
	int floor, need = glibcmax > cxxmax ? glibcmax : cxxmax, want = plat_glibc(opt.plat);

	if (!arch)
		die("%s: --plat=%s: cannot tell the architecture of platform tag '%s'", opt.in, opt.plat, wn.plat);
	if (cxxmax >= 1000)
		dien(EXIT_PROBLEM, "%s: a GLIBCXX_ or CXXABI_ version it needs is newer than every manylinux policy",
		     opt.in);
	floor = strcmp(arch, "x86_64") == 0 || strcmp(arch, "i686") == 0 ? 5 : 17;
	if (need < floor)
		need = floor;
	if (strcmp(opt.plat, "auto") == 0)
		return plat_set(need, -1, arch);
	if (!endswith(opt.plat, arch) || opt.plat[strlen(opt.plat) - strlen(arch) - 1] != '_')
		die("%s: --plat=%s: the wheel is for %s", opt.in, opt.plat, arch);
	if (need > want)
		dien(EXIT_PROBLEM, "%s: cannot repair to %s: it needs manylinux_2_%d (GLIBC 2.%d%s)", opt.in,
		     opt.plat, need, glibcmax, cxxmax > glibcmax ? ", and GLIBCXX/CXXABI versions" : "");
	return plat_set(want, opt.onlyplat ? -1 : need, arch);
}

/* the output's platform tag, name and path */
static void
choosetag(void)
{
	char *first = xstrndup(wn.plat, strcspn(wn.plat, "."));
	const char *arch = plat_arch(first);

	free(first);
	if (strcmp(opt.plat, "keep") == 0 || opt.noupdate)
		newplat = xstrdup(wn.plat);
	else if (strcmp(opt.plat, "auto") == 0 || plat_glibc(opt.plat) >= 0)
		newplat = repairtag(arch);
	else
		newplat = xstrdup(opt.plat);
	outname = whl_fmt(&wn, newplat);
	outpath = opt.outdir ? xasprintf("%s/%s", opt.outdir, outname) : xstrdup(outname);
}

void
plan(void)
{
	size_t i;

	setlibdir();
	resolveall();
	dedupe();
	if (opt.sonamehash)
		sysshared();
	for (i = 0; i < opt.nexclude; i++)
		if (!opt.exused[i] && !opt.quiet)
			warn("%s: --exclude '%s' matched no library (sonames look like libfoo.so.N)", opt.in,
			     opt.exclude[i]);
	namelibs();
	planedits();
	needs();
	choosetag();
}
