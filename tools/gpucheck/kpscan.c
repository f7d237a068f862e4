/* kpack'd libraries: follow a library's .rocm_kpack_ref to the archives the loader would
   open, read their tables once per run, and judge a HIPK wrapper for a device the way
   ROCm's kpack loader does (rocm-systems shared/kpack/runtime/src/loader.cpp,
   kpack_load_code_object) */
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

/* the index of the archive at path in the run's cache, reading it the first time;
   -1 if there is no regular file there; -2 if it is bad (printed and counted) */
static int
archive(struct scanset *s, const char *path)
{
	struct mapfile m;
	struct kparchive *a;
	char err[PATH_MAX + 256];
	size_t i;
	int fd;

	for (i = 0; i < s->nar; i++)
		if (strcmp(s->ar[i].path, path) == 0)
			return s->ar[i].bad ? -2 : (int)i;
	if (!os_isfile(path))
		return -1;
	s->ar = xgrow(s->ar, &s->capar, s->nar + 1, sizeof *s->ar);
	a = &s->ar[s->nar];
	memset(a, 0, sizeof *a);
	a->path = xstrdup(path);
	s->nar++;
	if ((fd = os_openreg(path, 0, NULL, err, sizeof err)) < 0 || map_fd(&m, fd) < 0) {
		if (fd >= 0) {
			snprintf(err, sizeof err, "%s: cannot map it", path);
			close(fd);
		}
		warn("%s", err);
		a->bad = 1;
		s->errors++;
		return -2;
	}
	close(fd);
	if (m.p)
		madvise((void *)m.p, m.n, MADV_RANDOM);
	if (kpack_read(m.p ? m.p : (const unsigned char *)"", m.n, s->maxraw ? s->maxraw : OFF_MAXRAW,
	               &a->k, err, sizeof err) < 0) {
		warn("%s: %s", path, err);
		a->bad = 1;
		s->errors++;
	}
	map_close(&m);
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
		f->l.b = xgrow(f->l.b, &f->l.capb, f->l.nb + 1, sizeof *f->l.b);
		b = &f->l.b[f->l.nb++];
		memset(b, 0, sizeof *b);
		b->fmt = OFFB_KPACK;
		snprintf(b->section, sizeof b->section, ".hipFatBinSegment");
		b->off = w * 24;
		b->coindex = f->l.hipk[w];
		b->first = f->l.ne;
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

int
kp_library(struct scanset *s, struct scanned *f, const unsigned char *p, size_t n)
{
	struct kplib *kp;
	char err[512], *full;
	const char *slash = strrchr(f->path, '/');
	size_t i;

	if (!f->l.refsize || f->l.refoff > n || f->l.refsize > n - f->l.refoff) {
		warn("%s: %zu HIPK wrappers but no .rocm_kpack_ref section to say where their code is",
		     f->path, f->l.nhipk);
		s->errors++;
		return -1;
	}
	kp = f->kp = xcalloc(1, sizeof *kp);
	if (kpack_ref(p + f->l.refoff, (size_t)f->l.refsize, &kp->ref, err, sizeof err) < 0) {
		warn("%s: %s (section offset %llu)", f->path, err, (unsigned long long)f->l.refoff);
		s->errors++;
		return -1;
	}
	kp->dir = slash ? xstrndup(f->path, (size_t)(slash - f->path)) : xstrdup(".");
	if (strchr(f->path, '!')) {
		/* a wheel member: its archives are other members, read in the same pass over
		   the wheel; kp_wheeldone resolves the references once it is read */
		kp->inwheel = 1;
		return 0;
	} else {
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
	free(kp->found);
	free(kp);
}

/* the short name of an archive: its path as found */
static const char *
arname(const struct scanset *s, int ai)
{
	return s->ar[ai].path;
}

/* the agent ISA the loader is given for dev: its features, plus xnack from HSA_XNACK
   for processors that have the feature (rocm-systems' isa_target_match.h) */
static void
agentisa(const char *dev, int xnack, char *isa, size_t len)
{
	static const char *const xn[] = {"gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909",
		"gfx90a", "gfx90c", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1010", "gfx1011",
		"gfx1012", "gfx1013"};
	char proc[64];
	size_t i;

	off_processor(dev, proc, sizeof proc);
	snprintf(isa, len, "%s", dev);
	if (off_feature(dev, "xnack"))
		return;
	for (i = 0; i < sizeof xn / sizeof xn[0]; i++)
		if (strcmp(proc, xn[i]) == 0)
			snprintf(isa + strlen(isa), len - strlen(isa), ":xnack%c", xnack ? '+' : '-');
}

/* the archives in the order the loader opens them for targets t[0..nt) */
static size_t
loadorder(const struct kplib *kp, char t[][96], size_t nt, int *ord, size_t max)
{
	size_t n = 0, i, j, k, m;
	int over = 0;

	for (i = 0; i < kp->nfound; i++)
		over |= kp->found[i].path == KP_ENVOVERRIDE;
	for (m = 0; m < 3; m++) {
		/* m = 0: ROCM_KPACK_PATH alone, or ROCM_KPACK_PATH_PREFIX; 1..2: the
		   embedded paths, a pattern expanded per target, most specific first */
		for (i = 0; i < (m ? kp->ref.npath : 1); i++) {
			for (k = 0; k < (m == 2 ? nt : 1); k++) {
				for (j = 0; j < kp->nfound; j++) {
					const struct kpfound *f = &kp->found[j];
					size_t q;

					if (m == 0 ? f->path != (over ? KP_ENVOVERRIDE : KP_ENVPREFIX)
					           : f->path != i || (m == 1) != (f->target[0] == 0) ||
					             (m == 2 && strcmp(f->target, t[k]) != 0))
						continue;
					for (q = 0; q < n && ord[q] != f->ar; q++)
						;
					if (q == n && n < max)
						ord[n++] = f->ar;
				}
			}
		}
		if (over)
			break;
	}
	return n;
}

static char *memberpath(const char *p);

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

enum how
kp_cover(const struct scanset *s, const struct scanned *f, const struct offbundle *b, const char *dev,
         int xnack, char *why, size_t len)
{
	const struct kplib *kp = f->kp;
	char t[KP_MAXTARGETS][96], isa[128], key[PATH_MAX];
	int ord[256], pick = -1, has = -1;
	size_t nt, no, i, j;
	const char *pickt = NULL, *hast = NULL, *d = getenv("ROCM_KPACK_DISABLE");

	*why = 0;
	if (d && *d && *d != '0') {
		snprintf(why, len, "ROCM_KPACK_DISABLE is set: the runtime loads no kpack code");
		return COV_NONE;
	}
	agentisa(dev, xnack, isa, sizeof isa);
	nt = kpack_targets(isa, t, KP_MAXTARGETS);
	no = loadorder(kp, t, nt, ord, sizeof ord / sizeof ord[0]);
	snprintf(key, sizeof key, "%s#%u", kp->ref.kernel, b->coindex);
	/* arch first, then archive: the first archive listing a compatible target is the
	   one the loader of TheRock issue 7081 took; later loaders try the next on a miss */
	for (i = 0; i < nt; i++) {
		for (j = 0; j < no; j++) {
			const struct kpack *k = &s->ar[ord[j]].k;

			if (!kpack_hasarch(k, t[i]))
				continue;
			if (pick < 0)
				pick = ord[j], pickt = t[i];
			if (has < 0 && kpack_find(k, key, t[i]))
				has = ord[j], hast = t[i];
		}
	}
	if (pick < 0) {
		char *w = nt ? kpwant(kp, t[nt - 1]) : NULL;

		snprintf(why, len, "no archive its kpack_search_paths reach lists %s or a subset of its "
		         "features%s%s%s", isa, w ? " (no " : "", w ? w : "", w ? ")" : "");
		free(w);
		return COV_NONE;
	}
	if (has == pick && hast == pickt) {
		snprintf(why, len, "%s (%s)", arname(s, pick), pickt);
		return COV_NATIVE;
	}
	if (has < 0)
		snprintf(why, len, "%s#%u is in no archive for %s; the loader opens %s (%s)", kp->ref.kernel,
		         b->coindex, isa, arname(s, pick), pickt);
	else
		snprintf(why, len, "the loader picks %s (%s), which lacks %s#%u; %s (%s) has it, but the "
		         "kpack loader of TheRock issue 7081 stops at the first archive", arname(s, pick),
		         pickt, kp->ref.kernel, b->coindex, arname(s, has), hast);
	return COV_NONE;
}

int
kp_archivefile(struct scanset *s, struct scanned *f, const unsigned char *p, size_t n)
{
	struct kpack k;
	struct offbundle *b;
	struct offentry *e;
	char err[512];
	size_t i;

	if (kpack_read(p, n, s->maxraw ? s->maxraw : OFF_MAXRAW, &k, err, sizeof err) < 0) {
		warn("%s: %s", f->path, err);
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
	char err[512];

	s->ar = xgrow(s->ar, &s->capar, s->nar + 1, sizeof *s->ar);
	a = &s->ar[s->nar++];
	memset(a, 0, sizeof *a);
	a->path = xstrdup(path);
	if (kpack_read(p, n, s->maxraw ? s->maxraw : OFF_MAXRAW, &a->k, err, sizeof err) < 0) {
		warn("%s: %s", path, err);
		a->bad = 1;
		s->errors++;
		return -1;
	}
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
		for (i = 0; i < kp->ref.npath; i++) {
			full = xasprintf("%s/%s", kp->dir, kp->ref.path[i]);
			wheelpath(s, kp, i, full);
			free(full);
		}
		kpbundles(s, &s->f[k]);
	}
}
