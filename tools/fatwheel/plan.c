/* planning: library names in the wheel, RPATHs and renames, the platform tag */
#include "state.h"
#include "hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>



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
		if (l->soname) {
			(*oldn)[*nren] = ei->needed[i];
			(*newn)[(*nren)++] = l->soname;
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

void
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
	/* breadth first: each round reads what it found in a tarball in one pass */
	for (i = 0; i < nlibs; i++) {
		if (libs[i]->pending)
			loadpending();
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
			mem[i].edit = planedit(&mem[i].ei, mem[i].e->name, 0, &mem[i].rpath, &mem[i].oldn,
			                       &mem[i].newn, &mem[i].nren);
	for (i = 0; i < nlibs; i++)
		if (libs[i]->iself)
			planedit(&libs[i]->ei, libs[i]->member, 1, &libs[i]->rpath, &libs[i]->oldn, &libs[i]->newn,
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
