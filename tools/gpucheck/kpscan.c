/* kpack'd libraries: follow a library's .rocm_kpack_ref to the archives the loader would
   open, read their tables once per run, and judge a HIPK wrapper for a device the way
   the HIP runtime and ROCm's kpack loader do:
   - the HIP runtime (rocm-systems projects/clr/hipamd/src/hip_fatbin.cpp,
     FatBinaryInfo::ExtractKpackBinary) asks for the device's ISA name and then its
     generic target (TargetToGeneric: gfx1151 -> gfx11-generic, features kept), and
     passes as binary_path the name /proc/self/maps gives the library (links resolved:
     ROCm/clr rocclr/os/os_posix.cpp, Os::FindFileNameFromAddress);
   - the loader (rocm-systems shared/kpack/runtime/src/loader.cpp, kpack_load_code_object,
     at 1ddbe7e; ROCm/rocm-kpack runtime/src/loader.cpp at e348328 for the older one):
     a non-empty ROCM_KPACK_PATH replaces every other path, usable or not; else
     ROCM_KPACK_PATH_PREFIX, then the embedded paths resolved against binary_path's
     folder, @GFXARCH@ expanded per requested arch and every subset of its features; only
     those paths are opened, and one that is missing or fails kpack_open is skipped; per
     arch, most specific target first, the newer loader tries every archive listing it
     until one holds the kernel, the older one fetches from the first and stops there. */
#include "gpucheck.h"
#include "cover.h"
#include "kpack.h"
#include "mapfile.h"
#include "os.h"
#include "strv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define GFXARCH "@GFXARCH@"

/* the run's archive of canonical path c, or -1 */
static int
cached(const struct scanset *s, const char *c)
{
	size_t i;

	for (i = 0; i < s->nar; i++)
		if (strcmp(s->ar[i].canon, c) == 0)
			return (int)i;
	return -1;
}

/* a bad archive: printed and counted, or (cover) kept with its reason for the verdict */
static void
badarchive(struct scanset *s, struct kparchive *a, const char *err)
{
	a->bad = 1;
	if (s->kplazy) {
		a->why = xstrdup(err);
		return;
	}
	warn("%s", err);
	s->errors++;
}

/* the index of the archive at path in the run's cache, reading it the first time (its
   table only, kept mapped for fetching entries later); -1 if there is no regular file
   there; -2 if it is bad */
static int
archive(struct scanset *s, const char *path)
{
	struct kparchive *a;
	char *err = NULL, *m, *canon;
	int fd, i;

	if (!os_isfile(path))
		return -1;
	canon = realpath(path, NULL);
	if (!canon)
		canon = xstrdup(path);
	if ((i = cached(s, canon)) >= 0) {
		free(canon);
		return s->ar[i].bad ? -2 : i;
	}
	s->ar = xgrow(s->ar, &s->capar, s->nar + 1, sizeof *s->ar);
	a = &s->ar[s->nar++];
	memset(a, 0, sizeof *a);
	a->path = xstrdup(path);
	a->canon = canon;
	if ((fd = os_openreg(path, 0, NULL, &err)) < 0 || map_fd(&a->m, fd) < 0) {
		if (fd >= 0) {
			err = xasprintf("%s: cannot map it", path);
			close(fd);
		}
		badarchive(s, a, err);
		free(err);
		return -2;
	}
	close(fd);
	if (a->m.p)
		madvise((void *)a->m.p, a->m.n, MADV_RANDOM);
	if (kpack_read(a->m.p ? a->m.p : (const unsigned char *)"", a->m.n, s->maxraw ? s->maxraw : OFF_MAXRAW,
	               &a->k, &err) < 0) {
		m = xasprintf("%s: %s", path, err);
		badarchive(s, a, m);
		free(m);
		free(err);
	}
	return a->bad ? -2 : (int)(s->nar - 1);
}

/* remember that search path pi (or an environment list, KP_ENV*) reaches archive ai,
   standing for target t ("" for a direct path) */
static void
found(struct kplib *kp, int ai, size_t pi, const char *t)
{
	struct kpfound *f;

	if (ai < 0)
		return;
	kp->found = xgrow(kp->found, &kp->capfound, kp->nfound + 1, sizeof *kp->found);
	f = &kp->found[kp->nfound++];
	f->ar = ai;
	f->path = pi;
	snprintf(f->target, sizeof f->target, "%.*s", (int)sizeof f->target - 1, t);
}

/* every file the pattern dir/pre@GFXARCH@suf names, in name order */
static void
expand(struct scanset *s, struct kplib *kp, size_t pi, const char *full)
{
	const char *at = strstr(full, GFXARCH), *slash;
	struct strv names = {0};
	char *dir, *pre, *p;
	const char *suf = at + strlen(GFXARCH);
	size_t i, pl, sl = strlen(suf), nl;

	for (slash = at; slash > full && slash[-1] != '/'; slash--)
		;
	if (strchr(suf, '/'))
		return; /* the placeholder names a folder: the loader never lists those */
	dir = slash > full ? xstrndup(full, (size_t)(slash - full - 1)) : xstrdup(".");
	pre = xstrndup(slash, (size_t)(at - slash));
	pl = strlen(pre);
	if (os_listdir(*dir ? dir : "/", &names) == 0) {
		for (i = 0; i < names.n; i++) {
			nl = strlen(names.v[i]);
			if (nl <= pl + sl || strncmp(names.v[i], pre, pl) != 0 || strcmp(names.v[i] + nl - sl, suf) != 0)
				continue;
			p = xasprintf("%s/%s", dir, names.v[i]);
			names.v[i][nl - sl] = 0;
			found(kp, archive(s, p), pi, names.v[i] + pl);
			free(p);
		}
	}
	strv_free(&names);
	free(pre);
	free(dir);
}

/* the archives an environment list (colon-separated .kpack paths) names */
static void
envlist(struct scanset *s, struct kplib *kp, const char *var, size_t pi)
{
	const char *v = getenv(var), *c;
	char *p;
	size_t k;

	for (c = v; c && *c; c += k + (c[k] == ':')) {
		k = strcspn(c, ":");
		if (!k)
			continue;
		p = xstrndup(c, k);
		found(kp, archive(s, p), pi, "");
		free(p);
	}
}

/* a new bundle for HIPK wrapper w (its .hipFatBinSegment record, 24 bytes each), its
   entries to follow */
static struct offbundle *
wrapper(struct scanned *f, size_t w)
{
	struct offbundle *b;

	f->l.b = xgrow(f->l.b, &f->l.capb, f->l.nb + 1, sizeof *f->l.b);
	b = &f->l.b[f->l.nb++];
	memset(b, 0, sizeof *b);
	b->fmt = OFFB_KPACK;
	snprintf(b->section, sizeof b->section, ".hipFatBinSegment");
	b->off = w * 24;
	b->coindex = f->l.hipk[w];
	b->first = f->l.ne;
	return b;
}

/* the bundles of the HIPK wrappers: per co_index, every (archive, arch) holding it */
static void
kpbundles(struct scanset *s, struct scanned *f)
{
	struct kplib *kp = f->kp;
	struct offbundle *b;
	struct offentry *e;
	const struct kpack *k;
	char key[PATH_MAX];
	size_t w, j, a;

	for (w = 0; w < f->l.nhipk; w++) {
		b = wrapper(f, w);
		snprintf(key, sizeof key, "%s#%u", kp->ref.kernel, b->coindex);
		for (j = 0; j < kp->nfound; j++) {
			k = &s->ar[kp->found[j].ar].k;
			for (a = 0; a < k->narch; a++) {
				if (!kpack_find(k, key, k->arch[a]))
					continue;
				f->l.e = xgrow(f->l.e, &f->l.cape, f->l.ne + 1, sizeof *f->l.e);
				e = &f->l.e[f->l.ne++];
				memset(e, 0, sizeof *e);
				e->kind = OFF_AMDGCN;
				e->archive = kp->found[j].ar;
				snprintf(e->target, sizeof e->target, "%.*s", (int)sizeof e->target - 1, k->arch[a]);
				snprintf(e->id, sizeof e->id, "%.80s: %.70s", strrchr(s->ar[e->archive].path, '/') ?
				         strrchr(s->ar[e->archive].path, '/') + 1 : s->ar[e->archive].path, k->arch[a]);
				f->l.b[f->l.nb - 1].n++;
			}
		}
	}
}

/* the wrappers' bundles, without entries: cover finds their archives per device */
static void
wrappers(struct scanned *f)
{
	size_t w;

	for (w = 0; w < f->l.nhipk; w++)
		wrapper(f, w);
}

/* the folder of the library's real path, links resolved, or NULL */
static char *
realdir(const char *path)
{
	char *r = realpath(path, NULL), *slash;

	if (r && (slash = strrchr(r, '/')))
		*(slash == r ? slash + 1 : slash) = 0;
	return r;
}

int
kp_library(struct scanset *s, struct scanned *f, const unsigned char *p, size_t n)
{
	struct kplib *kp;
	char *err = NULL, *full;
	const char *slash = strrchr(f->path, '/');
	size_t i;

	if (!f->l.refsize || f->l.refoff > n || f->l.refsize > n - f->l.refoff) {
		warn("%s: %zu HIPK wrappers but no .rocm_kpack_ref section to say where their code is",
		     f->path, f->l.nhipk);
		s->errors++;
		return -1;
	}
	kp = f->kp = xcalloc(1, sizeof *kp);
	if (kpack_ref(p + f->l.refoff, (size_t)f->l.refsize, &kp->ref, &err) < 0) {
		warn("%s: %s (section offset %llu)", f->path, err, (unsigned long long)f->l.refoff);
		free(err);
		s->errors++;
		return -1;
	}
	kp->dir = slash ? xstrndup(f->path, (size_t)(slash - f->path)) : xstrdup(".");
	if (strchr(f->path, '!')) {
		/* a wheel member: its archives are other members, read in the same pass over
		   the wheel; kp_wheeldone resolves the references once it is read */
		kp->inwheel = 1;
		return 0;
	}
	kp->realdir = realdir(f->path);
	if (s->kplazy) {
		wrappers(f);
		return 0;
	}
	envlist(s, kp, "ROCM_KPACK_PATH", KP_ENVOVERRIDE);
	envlist(s, kp, "ROCM_KPACK_PATH_PREFIX", KP_ENVPREFIX);
	for (i = 0; i < kp->ref.npath; i++) {
		full = xasprintf("%s/%s", kp->dir, kp->ref.path[i]);
		if (strstr(full, GFXARCH))
			expand(s, kp, i, full);
		else
			found(kp, archive(s, full), i, "");
		free(full);
	}
	kpbundles(s, f);
	return 0;
}

void
kp_free(struct kplib *kp)
{
	if (!kp)
		return;
	kpack_reffree(&kp->ref);
	free(kp->dir);
	free(kp->realdir);
	free(kp->found);
	free(kp);
}

/* The agent ISA the HIP runtime names for dev, without "amdgcn-amd-amdhsa--": dev's
   features, plus sramecc+ for a bare gfx942 (MI300 parts run with SRAM ECC on, and ROCr
   names the agent's ISA from the KFD's SRAM-ECC capability: gfx942:sramecc+:xnack-),
   and xnack from HSA_XNACK for processors that have the feature (rocm-systems'
   isa_target_match.h and ROCr's isa.cpp registry) */
static void
agentisa(const char *dev, int xnack, char *isa, size_t len)
{
	static const char *const xn[] = {"gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909",
		"gfx90a", "gfx90c", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1010", "gfx1011",
		"gfx1012", "gfx1013"};
	char proc[64];
	size_t i;

	off_processor(dev, proc, sizeof proc);
	snprintf(isa, len, "%s", proc);
	if (off_feature(dev, "sramecc"))
		snprintf(isa + strlen(isa), len - strlen(isa), ":sramecc%c", off_feature(dev, "sramecc"));
	else if (strcmp(proc, "gfx942") == 0)
		snprintf(isa + strlen(isa), len - strlen(isa), ":sramecc+");
	if (off_feature(dev, "xnack")) {
		snprintf(isa + strlen(isa), len - strlen(isa), ":xnack%c", off_feature(dev, "xnack"));
		return;
	}
	for (i = 0; i < sizeof xn / sizeof xn[0]; i++)
		if (strcmp(proc, xn[i]) == 0)
			snprintf(isa + strlen(isa), len - strlen(isa), ":xnack%c", xnack ? '+' : '-');
}

/* The generic target the HIP runtime asks for after the ISA, features kept in its order
   (sramecc, then xnack): hip_fatbin.cpp's TargetGenericMap and TargetToGeneric. 0 if the
   processor has none there (gfx908, gfx90a ...). */
static int
hipgeneric(const char *isa, char *out, size_t len)
{
	static const struct { const char *proc, *gen; } map[] = {
		{"gfx900", "gfx9-generic"}, {"gfx902", "gfx9-generic"}, {"gfx904", "gfx9-generic"},
		{"gfx906", "gfx9-generic"}, {"gfx909", "gfx9-generic"}, {"gfx90c", "gfx9-generic"},
		{"gfx942", "gfx9-4-generic"}, {"gfx950", "gfx9-4-generic"},
		{"gfx1010", "gfx10-1-generic"}, {"gfx1011", "gfx10-1-generic"}, {"gfx1012", "gfx10-1-generic"},
		{"gfx1013", "gfx10-1-generic"}, {"gfx1030", "gfx10-3-generic"}, {"gfx1031", "gfx10-3-generic"},
		{"gfx1032", "gfx10-3-generic"}, {"gfx1033", "gfx10-3-generic"}, {"gfx1034", "gfx10-3-generic"},
		{"gfx1035", "gfx10-3-generic"}, {"gfx1036", "gfx10-3-generic"}, {"gfx1100", "gfx11-generic"},
		{"gfx1101", "gfx11-generic"}, {"gfx1102", "gfx11-generic"}, {"gfx1103", "gfx11-generic"},
		{"gfx1150", "gfx11-generic"}, {"gfx1151", "gfx11-generic"}, {"gfx1152", "gfx11-generic"},
		{"gfx1153", "gfx11-generic"}, {"gfx1200", "gfx12-generic"}, {"gfx1201", "gfx12-generic"}};
	char proc[64];
	size_t i;

	off_processor(isa, proc, sizeof proc);
	for (i = 0; i < sizeof map / sizeof map[0]; i++) {
		if (strcmp(proc, map[i].proc) != 0)
			continue;
		snprintf(out, len, "%s", map[i].gen);
		if (off_feature(isa, "sramecc"))
			snprintf(out + strlen(out), len - strlen(out), ":sramecc%c", off_feature(isa, "sramecc"));
		if (off_feature(isa, "xnack"))
			snprintf(out + strlen(out), len - strlen(out), ":xnack%c", off_feature(isa, "xnack"));
		return 1;
	}
	return 0;
}

static char *memberpath(const char *p);

/* the archive a candidate path names: opened (a file) or found among the wheel's members;
   the first bad one met is remembered in pl->skipped */
static int
candidate(struct scanset *s, const struct kplib *kp, const char *path, struct kpplan *pl)
{
	char *m;
	size_t j;
	int ai = -1;

	if (kp->inwheel && strchr(path, '!')) {
		m = memberpath(path);
		for (j = 0; j < s->nar && ai < 0; j++)
			if (strcmp(s->ar[j].path, m) == 0)
				ai = s->ar[j].bad ? -2 - (int)j : (int)j;
		free(m);
		if (ai <= -2) {
			j = (size_t)(-2 - ai);
			ai = -2;
		}
	} else {
		ai = archive(s, path);
		j = s->nar ? s->nar - 1 : 0;
		if (ai == -2) {
			char *c = realpath(path, NULL);

			j = (size_t)cached(s, c ? c : path);
			free(c);
		}
	}
	if (ai == -2 && !pl->skipped)
		pl->skipped = xasprintf("%s", s->ar[j].why ? s->ar[j].why : s->ar[j].path);
	return ai;
}

/* add archive ai to the plan once */
static void
addplan(struct kpplan *pl, int ai)
{
	size_t i;

	if (ai < 0)
		return;
	for (i = 0; i < pl->nar; i++)
		if (pl->ar[i] == ai)
			return;
	pl->ar = xrealloc(pl->ar, (pl->nar + 1) * sizeof *pl->ar);
	pl->ar[pl->nar++] = ai;
}

/* the archives a colon list names, in order; returns how many names it has */
static size_t
envpaths(struct scanset *s, const struct kplib *kp, const char *v, struct kpplan *pl)
{
	const char *c;
	char *p;
	size_t k, n = 0;

	for (c = v; c && *c; c += k + (c[k] == ':')) {
		k = strcspn(c, ":");
		if (!k)
			continue;
		p = xstrndup(c, k);
		addplan(pl, candidate(s, kp, p, pl));
		free(p);
		n++;
	}
	return n;
}

/* one embedded search path, @GFXARCH@ expanded per requested arch and target */
static void
embedded(struct scanset *s, const struct kplib *kp, const char *rel, struct kpplan *pl)
{
	char t[KP_MAXTARGETS][96], *full, *p;
	const char *at;
	size_t a, i, nt;

	full = xasprintf("%s/%s", kp->inwheel || !kp->realdir ? kp->dir : kp->realdir, rel);
	if (!(at = strstr(full, GFXARCH))) {
		addplan(pl, candidate(s, kp, full, pl));
		free(full);
		return;
	}
	for (a = 0; a < pl->narch; a++) {
		nt = kpack_targets(pl->arch[a], t, KP_MAXTARGETS);
		for (i = 0; i < nt; i++) {
			p = xasprintf("%.*s%s%s", (int)(at - full), full, t[i], at + strlen(GFXARCH));
			addplan(pl, candidate(s, kp, p, pl));
			free(p);
		}
	}
	free(full);
}

void
kp_plan(struct scanset *s, const struct scanned *f, const char *dev, int xnack, struct kpplan *pl)
{
	const struct kplib *kp = f->kp;
	const char *d = getenv("ROCM_KPACK_DISABLE");
	size_t i;

	memset(pl, 0, sizeof *pl);
	if (d && *d && *d != '0') {
		pl->disabled = 1;
		return;
	}
	agentisa(dev, xnack, pl->arch[0], sizeof pl->arch[0]);
	pl->narch = 1 + (size_t)hipgeneric(pl->arch[0], pl->arch[1], sizeof pl->arch[1]);
	if (envpaths(s, kp, getenv("ROCM_KPACK_PATH"), pl)) {
		pl->override = 1;
		return;
	}
	envpaths(s, kp, getenv("ROCM_KPACK_PATH_PREFIX"), pl);
	for (i = 0; i < kp->ref.npath; i++)
		embedded(s, kp, kp->ref.path[i], pl);
}

void
kp_planfree(struct kpplan *pl)
{
	free(pl->ar);
	free(pl->skipped);
	memset(pl, 0, sizeof *pl);
}

/* The archive a device's kernel pack would be, for the one-line reason of a miss: the
   first search path with @GFXARCH@ standing for proc (the bare processor, the name a
   device wheel's or tarball's pack carries), "." and ".." resolved where the path allows
   it (absolute, or inside a wheel). NULL when ROCM_KPACK_PATH replaces the search paths
   or the first one names no @GFXARCH@. */
static char *
kpwant(const struct kplib *kp, const char *proc)
{
	const char *e = getenv("ROCM_KPACK_PATH"), *at;
	char *full, *out;

	if ((e && *e) || !kp->ref.npath || !(at = strstr(kp->ref.path[0], GFXARCH)))
		return NULL;
	full = xasprintf("%s/%.*s%s%s", kp->dir, (int)(at - kp->ref.path[0]), kp->ref.path[0], proc,
	                 at + strlen(GFXARCH));
	if (kp->inwheel)
		out = memberpath(full);
	else if (full[0] == '/')
		out = os_abspath(full, "/");
	else
		return full;
	free(full);
	return out;
}

/* fetch key for target t from archive ai as kpack_get_kernel would; 0, or -1 with why
   added to tried ("; " after what it holds) */
static int
fetch(struct scanset *s, int ai, const char *key, const char *t, struct buf *tried)
{
	struct kparchive *a = &s->ar[ai];
	const struct kpentry *e = kpack_find(&a->k, key, t);
	const char *sep = tried->len ? "; " : "";
	char *err = NULL;

	if (!e) {
		bufprintf(tried, "%s%.400s (%.95s) lacks %.400s", sep, a->path, t, key);
		return -1;
	}
	if (kpack_check(&a->k, a->m.p, a->m.n, e, &err) < 0) {
		bufprintf(tried, "%s%.400s (%.95s): %.500s", sep, a->path, t, err);
		free(err);
		return -1;
	}
	return 0;
}

/* why no archive served: nothing listed the targets (naming the pack a device would
   carry), or what the loader found wrong */
static enum how
kpmiss(const struct kplib *kp, const struct kpplan *pl, const char *tried, struct buf *why)
{
	char t[KP_MAXTARGETS][96], *w = NULL;
	size_t nt = kpack_targets(pl->arch[0], t, KP_MAXTARGETS);

	if (tried[0]) {
		bufprintf(why, "%.2047s", tried);
	} else if (pl->override && !pl->nar) {
		bufputs(why, "ROCM_KPACK_PATH replaces the search paths and names no usable archive");
	} else {
		w = nt && !pl->skipped ? kpwant(kp, t[nt - 1]) : NULL;
		bufprintf(why, "no %sarchive %s lists %s%s%s or a subset of %s features%s%s%s",
		          pl->skipped ? "usable " : "",
		          pl->override ? "ROCM_KPACK_PATH names" : "its kpack_search_paths reach", pl->arch[0], pl->narch > 1 ? " or " : "", pl->narch > 1 ? pl->arch[1] : "",
		          pl->narch > 1 ? "their" : "its", w ? " (no " : "", w ? w : "", w ? ")" : "");
	}
	if (pl->skipped)
		bufprintf(why, "; the loader skipped %s", pl->skipped);
	free(w);
	return COV_NONE;
}

/* after the older loader stopped at a miss: another archive of arch's targets holding key,
   for the reason ("; A (t) has it"), added to why */
static void
hasit(const struct scanset *s, const struct kpplan *pl, const char *arch, const char *key, struct buf *why)
{
	char t[KP_MAXTARGETS][96];
	size_t i, j, nt = kpack_targets(arch, t, KP_MAXTARGETS);

	for (i = 0; i < nt; i++)
		for (j = 0; j < pl->nar; j++)
			if (kpack_find(&s->ar[pl->ar[j]].k, key, t[i])) {
				bufprintf(why, "; %.400s (%.95s) has it", s->ar[pl->ar[j]].path, t[i]);
				return;
			}
}

enum how
kp_cover(struct scanset *s, const struct scanned *f, const struct kpplan *pl, const struct offbundle *b,
         struct buf *why)
{
	char t[KP_MAXTARGETS][96], key[PATH_MAX];
	struct buf tried = {0};
	size_t a, i, j, nt;
	enum how h;
	int picked;

	bufreset(why);
	bufputs(why, "");
	if (pl->disabled) {
		bufputs(why, "ROCM_KPACK_DISABLE is set: the runtime loads no kpack code");
		return COV_NONE;
	}
	snprintf(key, sizeof key, "%s#%u", f->kp->ref.kernel, b->coindex);
	for (a = 0; a < pl->narch; a++) {
		nt = kpack_targets(pl->arch[a], t, KP_MAXTARGETS);
		picked = 0;
		for (i = 0; i < nt && !(picked && s->kpfirst); i++) {
			for (j = 0; j < pl->nar && !(picked && s->kpfirst); j++) {
				if (!kpack_hasarch(&s->ar[pl->ar[j]].k, t[i]))
					continue;
				picked = 1;
				if (fetch(s, pl->ar[j], key, t[i], &tried) == 0) {
					bufprintf(why, "%s (%s)", s->ar[pl->ar[j]].path, t[i]);
					buffree(&tried);
					return COV_NATIVE;
				}
			}
		}
		if (picked && s->kpfirst) {
			bufprintf(why, "the loader picks %.2047s", tried.s ? tried.s : "");
			hasit(s, pl, pl->arch[a], key, why);
			bufputs(why, ", but the kpack loader of rocm-kpack e348328 (--kpack-loader=first; "
			        "TheRock issue 7081) stops at the first archive listing the target");
			buffree(&tried);
			return COV_NONE;
		}
	}
	h = kpmiss(f->kp, pl, tried.s ? tried.s : "", why);
	buffree(&tried);
	return h;
}

int
kp_archivefile(struct scanset *s, struct scanned *f, const unsigned char *p, size_t n)
{
	struct kpack k;
	struct offbundle *b;
	struct offentry *e;
	char *err = NULL;
	size_t i;

	if (kpack_read(p, n, s->maxraw ? s->maxraw : OFF_MAXRAW, &k, &err) < 0 ||
	    kpack_checkall(&k, p, n, &err) < 0) {
		warn("%s: %s", f->path, err);
		free(err);
		kpack_free(&k);
		s->errors++;
		return -1;
	}
	/* one bundle per key, one entry per arch (the table is sorted by key) */
	for (i = 0; i < k.ne; i++) {
		if (i == 0 || strcmp(k.e[i].key, k.e[i - 1].key) != 0) {
			f->l.b = xgrow(f->l.b, &f->l.capb, f->l.nb + 1, sizeof *f->l.b);
			b = &f->l.b[f->l.nb++];
			memset(b, 0, sizeof *b);
			b->fmt = OFFB_KPACK;
			snprintf(b->section, sizeof b->section, "%.*s", (int)sizeof b->section - 1, k.e[i].key);
			b->first = f->l.ne;
		}
		f->l.e = xgrow(f->l.e, &f->l.cape, f->l.ne + 1, sizeof *f->l.e);
		e = &f->l.e[f->l.ne++];
		memset(e, 0, sizeof *e);
		e->kind = OFF_AMDGCN;
		e->archive = -1;
		e->size = k.e[i].size;
		snprintf(e->target, sizeof e->target, "%.*s", (int)sizeof e->target - 1, k.e[i].arch);
		snprintf(e->id, sizeof e->id, "%.90s: %.60s", k.e[i].key, k.e[i].arch);
		f->l.b[f->l.nb - 1].n++;
	}
	kpack_free(&k);
	return 0;
}

int
kp_wheelarchive(struct scanset *s, const char *path, const unsigned char *p, size_t n)
{
	struct kparchive *a;
	char *err = NULL, *m;
	uint64_t max = s->maxraw ? s->maxraw : OFF_MAXRAW;
	size_t i;

	s->ar = xgrow(s->ar, &s->capar, s->nar + 1, sizeof *s->ar);
	a = &s->ar[s->nar++];
	memset(a, 0, sizeof *a);
	a->path = xstrdup(path);
	a->canon = xstrdup(path);
	if (kpack_read(p, n, max, &a->k, &err) < 0) {
		m = xasprintf("%s: %s", path, err);
		badarchive(s, a, m);
		free(m);
		free(err);
		return -1;
	}
	/* the member's bytes go once it is read: check its frames now, each once, and let
	   cover find the results when an entry is fetched */
	if (!s->kplazy && kpack_checkall(&a->k, p, n, &err) < 0) {
		warn("%s: %s", path, err);
		free(err);
		a->bad = 1;
		s->errors++;
		return -1;
	}
	for (i = 0; s->kplazy && i < a->k.ne; i++)
		kpack_check(&a->k, p, n, &a->k.e[i], NULL);
	return 0;
}

/* "x.whl!a/b/../c" -> "x.whl!a/c": the member path with "." and ".." resolved (a ".."
   above the wheel's root stays at the root) */
static char *
memberpath(const char *p)
{
	const char *bang = strchr(p, '!'), *c;
	char *out = xmalloc(strlen(p) + 1), *root, *e;
	size_t k;

	memcpy(out, p, (size_t)(bang - p) + 1);
	root = e = out + (bang - p) + 1;
	*e = 0;
	for (c = bang + 1; *c; c += k + (c[k] == '/')) {
		k = strcspn(c, "/");
		if (k == 0 || (k == 1 && c[0] == '.'))
			continue;
		if (k == 2 && c[0] == '.' && c[1] == '.') {
			while (e > root && e[-1] != '/')
				e--;
			if (e > root)
				e--;
			*e = 0;
			continue;
		}
		if (e > root)
			*e++ = '/';
		memcpy(e, c, k);
		e += k;
		*e = 0;
	}
	return out;
}

/* the archives of the wheel that one search path names (a pattern: every match) */
static void
wheelpath(struct scanset *s, struct kplib *kp, size_t pi, const char *full)
{
	char *m = memberpath(full), *at = strstr(m, GFXARCH);
	size_t j, pl, sl, n;

	for (j = 0; j < s->nar; j++) {
		const char *ap = s->ar[j].path;

		if (s->ar[j].bad)
			continue;
		if (!at) {
			if (strcmp(ap, m) == 0)
				found(kp, (int)j, pi, "");
			continue;
		}
		pl = (size_t)(at - m);
		sl = strlen(at + strlen(GFXARCH));
		n = strlen(ap);
		if (n > pl + sl && strncmp(ap, m, pl) == 0 && strcmp(ap + n - sl, at + strlen(GFXARCH)) == 0 &&
		    !memchr(ap + pl, '/', n - pl - sl)) {
			char t[96];

			snprintf(t, sizeof t, "%.*s", (int)(n - pl - sl < sizeof t - 1 ? n - pl - sl : sizeof t - 1), ap + pl);
			found(kp, (int)j, pi, t);
		}
	}
	free(m);
}

void
kp_wheeldone(struct scanset *s, size_t from)
{
	struct kplib *kp;
	size_t k, i;
	char *full;

	for (k = from; k < s->n; k++) {
		if (!(kp = s->f[k].kp) || !kp->inwheel || kp->nfound)
			continue;
		if (s->kplazy) {
			wrappers(&s->f[k]);
			continue;
		}
		for (i = 0; i < kp->ref.npath; i++) {
			full = xasprintf("%s/%s", kp->dir, kp->ref.path[i]);
			wheelpath(s, kp, i, full);
			free(full);
		}
		kpbundles(s, &s->f[k]);
	}
}
