/* gpucheck cover: will the code in these files run on this GPU, and if not, the fix */
#include "gpucheck.h"
#include "cover.h"
#include "json.h"
#include "mapfile.h"
#include "strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
is_nvidia_target(const char *t)
{
	unsigned n;
	char suf;

	return nv_smnum(t, &n, &suf) == 0;
}

enum how
entry_covers(const struct offentry *e, const char *dev, int xnack)
{
	char dp[64], ep[64];
	const struct arch *ea, *da;
	int ef, df;
	enum nvrule r;

	if (is_nvidia_target(dev))
		return nv_entry(e, dev, &r);
	if (e->kind != OFF_AMDGCN && e->kind != OFF_AMDGCN_BC)
		return COV_NONE;
	off_processor(dev, dp, sizeof dp);
	off_processor(e->target, ep, sizeof ep);
	if (strcmp(dp, ep) == 0) {
		/* features: the code's setting must match the device's (unset = any) */
		ef = off_feature(e->target, "xnack");
		df = off_feature(dev, "xnack");
		if (!df)
			df = xnack ? '+' : '-';
		if (ef && ef != df)
			return COV_NONE;
		ef = off_feature(e->target, "sramecc");
		df = off_feature(dev, "sramecc");
		if (ef && df && ef != df)
			return COV_NONE;
		return COV_NATIVE;
	}
	/* a generic target runs on the processors of its family (code object v6 and up) */
	ea = arch_find(ep);
	da = arch_proc(dp);
	if (ea && ea->isgeneric && da && !strcmp(da->family, ea->family) && (e->cov == 0 || e->cov >= 6))
		return COV_GENERIC;
	return COV_NONE;
}

/* does this bundle carry code for the vendor of dev */
static int
relevant(const struct offlist *l, size_t b, int nv)
{
	size_t j;
	enum offkind k;

	for (j = l->b[b].first; j < l->b[b].first + l->b[b].n; j++) {
		k = l->e[j].kind;
		if (nv ? (k == OFF_NV_SASS || k == OFF_NV_PTX) : (k == OFF_AMDGCN || k == OFF_AMDGCN_BC))
			return 1;
	}
	return 0;
}

/* an NVIDIA module whose every entry is arch- or family-specific ('a'/'f'): built for
   one GPU (family) on purpose, never loaded elsewhere (lazy loading, CUDA 11.7+, the
   default since 12.2): not a gap */
static int
gated(const struct offlist *l, size_t b)
{
	size_t j;
	unsigned n;
	char suf;

	for (j = l->b[b].first; j < l->b[b].first + l->b[b].n; j++) {
		if (l->e[j].kind != OFF_NV_SASS && l->e[j].kind != OFF_NV_PTX)
			continue;
		if (nv_smnum(l->e[j].target, &n, &suf) < 0 || (suf != 'a' && suf != 'f'))
			return 0;
	}
	return 1;
}

/* the best entry of a bundle: how it serves the device, for NVIDIA the rule that decided
   it, and the target it runs through when not natively (left as it was otherwise) */
struct best {
	enum how how;
	enum nvrule rule;
	const char *via;
};

/* the best entry of bundle i for dev into b */
static void
bestentry(const struct offlist *l, size_t i, const char *dev, int xnack, struct best *b)
{
	size_t j;
	enum how h;
	enum nvrule r;
	int nv = is_nvidia_target(dev);

	b->how = COV_NONE;
	b->rule = NVR_NONE;
	for (j = l->b[i].first; j < l->b[i].first + l->b[i].n; j++) {
		h = nv ? nv_entry(&l->e[j], dev, &r) : entry_covers(&l->e[j], dev, xnack);
		if (h < b->how) {
			b->how = h;
			if (nv)
				b->rule = r;
			if (h != COV_NATIVE)
				b->via = l->e[j].target;
		}
	}
}

/* count bundle i's verdict h into v */
static void
tally(struct fileverdict *v, size_t i, enum how h)
{
	switch (h) {
	case COV_NATIVE: v->native++; break;
	case COV_GENERIC: v->generic++; break;
	case COV_PTX: v->ptx++; break;
	default:
		if (v->missing < sizeof v->bad / sizeof v->bad[0])
			v->bad[v->missing] = i;
		v->missing++;
	}
}

void
cover_file(const struct offlist *l, const char *dev, int xnack, struct fileverdict *v)
{
	size_t i;
	enum how best;
	enum nvrule rule;
	enum nvmod m;
	struct best bb;
	int nv = is_nvidia_target(dev);

	memset(v, 0, sizeof *v);
	if (nv && l->nb)
		v->mrule = xcalloc(l->nb, 1);
	for (i = 0; i < l->nb; i++) {
		if (!relevant(l, i, nv))
			continue;
		m = nv ? nv_module(l, i) : NVM_MODULE;
		if (m == NVM_STUB || m == NVM_RELOC) {
			v->mrule[i] = m == NVM_STUB ? NVR_STUB : NVR_RELOC;
			v->stubs++;
			continue;
		}
		v->bundles++;
		bb.via = v->via;
		bestentry(l, i, dev, xnack, &bb);
		best = bb.how;
		rule = bb.rule;
		v->via = bb.via;
		if (best == COV_NONE && m == NVM_LINKED && (best = nv_relink(l, dev)) != COV_NONE) {
			rule = NVR_RELINK;
			v->via = "the objects' PTX, JIT-linked";
		}
		if (nv)
			v->mrule[i] = rule;
		if (best == COV_NONE && nv && gated(l, i)) {
			v->mrule[i] = NVR_GATED;
			v->gated++;
			continue;
		}
		tally(v, i, best);
	}
}

int
cover_override(const struct scanset *s, const char *dev, char *proc, size_t len)
{
	char dp[64];
	const struct arch *a, *m;
	const char *cand;
	size_t k;
	struct fileverdict v;
	int ok, any;

	off_processor(dev, dp, sizeof dp);
	a = arch_proc(dp);
	if (!a)
		return -1;
	/* members in order: the family's first (its base ISA) is preferred */
	for (m = arch_member(a->family, NULL); m; m = arch_member(a->family, m)) {
		cand = m->name;
		if (m == a)
			continue;
		ok = 1;
		any = 0;
		for (k = 0; k < s->n && ok; k++) {
			cover_file(&s->f[k].l, cand, 0, &v);
			if (!v.bundles)
				continue;
			any = 1;
			/* only native code counts: an override does not make generic code better */
			if (v.missing || v.generic || v.ptx)
				ok = 0;
		}
		if (ok && any) {
			snprintf(proc, len, "%s", cand);
			return 0;
		}
	}
	return -1;
}

/* the targets a bundle carries, as "gfx803, gfx1100" */
static void
bundletargets(const struct offlist *l, size_t b, struct buf *out)
{
	size_t j;

	bufreset(out);
	for (j = l->b[b].first; j < l->b[b].first + l->b[b].n; j++) {
		if (l->e[j].kind == OFF_HOST)
			continue;
		bufprintf(out, "%s%s", out->len ? ", " : "", l->e[j].target);
	}
	if (!out->len)
		bufputs(out, "nothing");
}

/* NVIDIA's redistributable libraries (pip's nvidia-* wheels install them under
   site-packages/nvidia/; torch wheels of old bundled them in torch/lib) */
static int
nvvendor(const char *path)
{
	static const char *const libs[] = {"libcublas", "libcudnn", "libcufft", "libcusparse",
		"libcusolver", "libcurand", "libnccl", "libnvrtc", "libnvJitLink", "libcupti",
		"libnvshmem", "libcufile", "libcudart", "libnvToolsExt", "libnvperf", "libnvblas",
		"libnpp", "libnvjpeg", "libcudss", "libcutensor", "libnvpl", "libcuda.so"};
	const char *b = strrchr(path, '/');
	size_t i;

	if (strstr(path, "/nvidia/") || strstr(path, "!nvidia/"))
		return 1;
	b = b ? b + 1 : path;
	for (i = 0; i < sizeof libs / sizeof libs[0]; i++)
		if (startswith(b, libs[i]))
			return 1;
	return 0;
}

/* true if the library at path names NVIDIA's JIT linker or runtime compiler in its
   read-only data, for dlopen: cuFFT 12 (CUDA 13) loads libnvJitLink.so.13 so, its
   building blocks in .ldata (checked on the H100 machine: the name is in .lrodata).
   Only .rodata and .lrodata of at most 16 MiB are searched; a wheel member is not. */
static int
dlopensjit(const char *path)
{
	static const char *const secs[] = {".rodata", ".lrodata"};
	struct mapfile m;
	struct elf e;
	const struct elfsec *sec;
	const unsigned char *d;
	size_t i;
	int r = 0;

	if (strchr(path, '!') || map_open(&m, path) < 0)
		return 0;
	if (m.p && elf_open(&e, m.p, m.n, NULL) == 0) {
		for (i = 0; i < sizeof secs / sizeof secs[0] && !r; i++) {
			if (!(sec = elf_section(&e, secs[i])) || sec->size > (16 << 20) || !(d = elf_secdata(&e, sec)))
				continue;
			r = memmem(d, (size_t)sec->size, "libnvJitLink.so", 15) != NULL ||
			    memmem(d, (size_t)sec->size, "libnvrtc.so", 11) != NULL;
		}
		elf_close(&e);
	}
	map_close(&m);
	return r;
}

/* the folder that stands for a kernel library's code objects: the nearest ancestor
   named "library" (rocBLAS's and hipBLASLt's), else the file's own folder; into buf */
static void
cogroup(const char *path, char *buf, size_t len)
{
	const char *lib = NULL, *c, *slash = strrchr(path, '/');

	for (c = strstr(path, "/library/"); c; c = strstr(c + 1, "/library/"))
		lib = c;
	if (lib)
		snprintf(buf, len, "%.*s", (int)(lib - path + 8), path);
	else if (slash)
		snprintf(buf, len, "%.*s", (int)(slash - path), path);
	else
		snprintf(buf, len, ".");
}

/* the entry of a file that holds one processor's kernels, the way a kernel library ships
   them (one file per arch, loaded by the GPU's name): a code object (.hsaco), or a bundle
   file (plain or compressed; not a section of a library) with one device entry beside its
   host entry, as Tensile writes rocBLAS's and hipBLASLt's .co files (Debian
   experimental's rocBLAS 7.2.4: library/TensileLibrary_..._gfx1151.co, a CCOB v3);
   -1 for any other file */
static long
coentry(const struct offlist *l)
{
	long dev = -1;
	size_t i;

	if (l->nb != 1)
		return -1;
	if (l->b[0].fmt == OFFB_CODEOBJ)
		return (long)l->b[0].first;
	if ((l->b[0].fmt != OFFB_CLANG && l->b[0].fmt != OFFB_CCOB) || strcmp(l->b[0].section, "bundle") != 0)
		return -1;
	for (i = l->b[0].first; i < l->b[0].first + l->b[0].n; i++) {
		if (l->e[i].kind == OFF_HOST)
			continue;
		if (dev >= 0)
			return -1;
		dev = (long)i;
	}
	return dev;
}

/* true if the file is one of a kernel library's per-arch files (coentry) */
static int
iscodeobj(const struct offlist *l)
{
	return coentry(l) >= 0;
}

/* the target of such a file's one entry */
static const char *
cotarget(const struct offlist *l)
{
	return l->e[coentry(l)].target;
}

/* does any code object of file k's library run on dev? gok[group] memoizes it per device
   (-1 not yet known) */
static int
groupok(const struct scanset *s, size_t k, const char *dev, int xnack, signed char *gok)
{
	int g = s->f[k].cog;
	size_t j;

	if (g < 0)
		return 0;
	if (gok[g] >= 0)
		return gok[g];
	gok[g] = 0;
	for (j = 0; j < s->n && !gok[g]; j++)
		if (s->f[j].cog == g && entry_covers(&s->f[j].l.e[coentry(&s->f[j].l)], dev, xnack) <= COV_GENERIC)
			gok[g] = 1;
	return gok[g];
}

/* qsort order of (group name, file index) pairs */
struct cogkey {
	char *name;
	size_t k;
};
static int
cogcmp(const void *a, const void *b)
{
	const struct cogkey *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->k < y->k ? -1 : x->k > y->k;
}

void
cover_groups(struct scanset *s)
{
	struct cogkey *key = xcalloc(s->n ? s->n : 1, sizeof *key);
	size_t k, n = 0, i;
	char g[4096];

	for (k = 0; k < s->n; k++) {
		s->f[k].cog = -1;
		if (!iscodeobj(&s->f[k].l))
			continue;
		cogroup(s->f[k].path, g, sizeof g);
		key[n].name = xstrdup(g);
		key[n++].k = k;
	}
	if (n)
		qsort(key, n, sizeof *key, cogcmp);
	for (i = 0; i < n; i++) {
		if (i == 0 || strcmp(key[i].name, s->cogname[s->ncog - 1]) != 0) {
			s->cogname = xrealloc(s->cogname, (s->ncog + 1) * sizeof *s->cogname);
			s->cogname[s->ncog++] = key[i].name;
		} else {
			free(key[i].name);
		}
		s->f[key[i].k].cog = (int)s->ncog - 1;
	}
	free(key);
}

/* the kpack wrappers of a library, judged by the loader's rules */
static void
kpfile(struct scanset *s, size_t k, const char *dev, int xnack, struct fileverdict *v)
{
	const struct offlist *l = &s->f[k].l;
	size_t i;
	enum how h;
	char first[4096] = "";
	struct buf miss = {0}, why = {0};
	struct kpplan pl;

	kp_plan(s, &s->f[k], dev, xnack, &pl);
	for (i = 0; i < l->nb; i++) {
		if (l->b[i].fmt != OFFB_KPACK)
			continue;
		h = kp_cover(s, &s->f[k], &pl, &l->b[i], &why);
		if (h == COV_NATIVE) {
			v->native++;
			v->via = "kpack";
		} else {
			if (v->missing < sizeof v->bad / sizeof v->bad[0])
				v->bad[v->missing] = i;
			v->missing++;
			if (!first[0])
				snprintf(first, sizeof first, "%s", why.s);
			if (v->missing <= 16)
				bufprintf(&miss, "%s%u", miss.len ? ", " : "", l->b[i].coindex);
		}
	}
	if (first[0])
		v->why = xasprintf("co_index %s%s; %s", miss.s, v->missing > 16 ? ", ..." : "", first);
	else
		v->why = xstrdup(why.s ? why.s : "");
	buffree(&miss);
	buffree(&why);
	kp_planfree(&pl);
}

/* the HIPK wrappers of a kpack'd library: AMD code whether or not an archive holds it */
static size_t
kpwrappers(const struct offlist *l)
{
	size_t i, n = 0;

	for (i = 0; i < l->nb; i++)
		n += l->b[i].fmt == OFFB_KPACK;
	return n;
}

void
cover_free(struct fileverdict *v)
{
	free(v->why);
	v->why = NULL;
	free(v->mrule);
	v->mrule = NULL;
}

void
cover_judge(struct scanset *s, size_t k, struct judging *j, struct fileverdict *v)
{
	const struct offlist *l = &s->f[k].l;
	const char *dev = j->dev;
	int xnack = j->xnack, nv = is_nvidia_target(dev);
	signed char *gok = j->gok;
	size_t nat;

	cover_free(v);
	cover_file(l, dev, xnack, v);
	if (!nv && s->f[k].kp && !v->bundles)
		v->bundles = kpwrappers(l);  /* HIPK wrappers whose archives are all missing */
	v->covered = v->bundles > 0 && v->missing == 0;
	if (!v->bundles)
		return;
	if (!nv && s->f[k].kp) {
		/* HIPK wrappers: the loader's choice of archive decides, per co_index */
		size_t b = v->bundles;

		memset(v, 0, sizeof *v);
		v->bundles = b;
		kpfile(s, k, dev, xnack, v);
		v->covered = v->missing == 0;
		v->rule = s->kpfirst ? "kpack (--kpack-loader=first): the first archive listing the target holds each co_index"
		                     : "kpack: an archive the loader tries holds each co_index, its frame intact";
	} else if (!nv && iscodeobj(l)) {
		/* a kernel library loads the code object of its GPU's arch: one per group */
		v->covered = groupok(s, k, dev, xnack, gok);
		v->missing = 0;
		v->rule = "code objects: some code object of the library's folder runs";
	} else if (!nv) {
		v->rule = "every bundle has code for the GPU";
	} else if (nvvendor(s->f[k].path)) {
		/* modules load lazily: one the GPU never touches is never loaded */
		nat = v->native + v->ptx;
		v->vendor = 1;
		if (nat) {
			v->covered = 1;
			v->rule = "NVIDIA library: at least one module runs (the rest load lazily, never on this GPU)";
		} else if (l->jitlink || dlopensjit(s->f[k].path)) {
			v->covered = 1;
			v->rule = "NVIDIA library: links its code at run time (nvJitLink/NVRTC)";
		} else {
			v->covered = 0;
			v->warning = 1;
			v->rule = "NVIDIA library: no module runs here (a warning: it may never be called)";
		}
		v->missing = v->covered || v->warning ? 0 : v->missing;
	} else {
		v->covered = v->native + v->ptx > 0 && v->missing == 0;
		v->rule = v->native + v->ptx == 0 && v->gated && !v->missing
		          ? "own code: only arch-specific modules of other GPUs ('a'/'f'), none runs here"
		          : "own code: a runnable module, and every module not arch-gated runs";
		if (!v->covered && !v->missing)
			v->missing = v->gated; /* all gated: nothing would run */
	}
}

/* a device to judge */
struct dev {
	char target[96];
	const struct gpu *g;  /* NULL when named by --target */
};

/* what one device gets from all files */
struct devsum {
	size_t nat, gen, ptx, miss, tot, gated, files, warns;
	const char *via;
	int haveov;
	char ovproc[64], ovver[32];
};

/* the targets of --target=LIST */
static struct dev *
parsetargets(const char *tsel, size_t *nd)
{
	struct dev *devs = NULL;
	size_t capd = 0, n;
	const char *p = tsel;

	*nd = 0;
	while (*p) {
		n = strcspn(p, ",;");
		if (n == 0 || n >= sizeof devs->target)
			gc_usage("cover: bad --target list '%s'", tsel);
		devs = xgrow(devs, &capd, *nd + 1, sizeof *devs);
		snprintf(devs[*nd].target, sizeof devs[*nd].target, "%.*s", (int)n, p);
		if (!is_nvidia_target(devs[*nd].target) && !startswith(devs[*nd].target, "gfx"))
			gc_usage("cover: '%s' is not a GPU target (gfx1151, gfx90a:xnack-, sm_90)",
			         devs[*nd].target);
		devs[(*nd)++].g = NULL;
		p += n;
		if (*p)
			p++;
	}
	return devs;
}

/* the GPUs found here, as devices */
static struct dev *
autotargets(struct gpulist *gl, size_t *nd)
{
	struct dev *devs = NULL;
	size_t capd = 0, k;

	*nd = 0;
	detect_or_die(gl);
	if (gl->n == 0)
		die("cover: no GPU found here; name one with --target=gfx1151 (or sm_90)");
	for (k = 0; k < gl->n; k++) {
		if (!gl->g[k].target[0]) {
			warn("cover: GPU %d: its target is unknown; skipped", gl->g[k].index);
			continue;
		}
		devs = xgrow(devs, &capd, *nd + 1, sizeof *devs);
		snprintf(devs[*nd].target, sizeof devs[*nd].target, "%.*s", (int)sizeof devs[*nd].target - 1,
		         gl->g[k].target);
		devs[(*nd)++].g = &gl->g[k];
	}
	return devs;
}

/* judge every file for dev into v[] (one per file) and the sums */
static void
judgeall(struct scanset *s, const char *dev, int xnack, struct fileverdict *v, struct devsum *d)
{
	size_t k;
	signed char *gok = xmalloc(s->ncog + 1);
	unsigned char *counted = xcalloc(s->ncog + 1, 1);
	struct judging j = {dev, xnack, gok};

	memset(d, 0, sizeof *d);
	memset(gok, -1, s->ncog + 1);
	for (k = 0; k < s->n; k++) {
		cover_judge(s, k, &j, &v[k]);
		if (!v[k].bundles)
			continue;
		d->files++;
		d->nat += v[k].native, d->gen += v[k].generic, d->ptx += v[k].ptx, d->tot += v[k].bundles;
		d->gated += v[k].gated;
		d->warns += v[k].warning;
		/* a library of code objects that has none for dev is one gap, not one per file */
		if (!v[k].covered && s->f[k].cog >= 0) {
			if (!counted[s->f[k].cog])
				d->miss++;
			counted[s->f[k].cog] = 1;
		} else if (!v[k].covered && !v[k].warning)
			d->miss += v[k].missing ? v[k].missing : 1;
		if (v[k].via && !d->via && strcmp(v[k].via, "kpack") != 0)
			d->via = v[k].via;
	}
	free(gok);
	free(counted);
	d->haveov = !is_nvidia_target(dev) && d->miss && cover_override(s, dev, d->ovproc, sizeof d->ovproc) == 0 &&
	            gfxversion(d->ovproc, d->ovver, sizeof d->ovver) == 0;
}

/* the arches of a code-object library, with counts, as "gfx803 (45), gfx900 (40)" */
static void
grouparches(const struct scanset *s, size_t k, struct buf *out)
{
	struct strv seen = {0};
	size_t j, i, c;
	int g = s->f[k].cog;

	bufreset(out);
	for (j = 0; j < s->n; j++)
		if (s->f[j].cog == g)
			strv_add(&seen, cotarget(&s->f[j].l), 1);
	for (i = 0; i < seen.n; i++) {
		for (c = 0, j = 0; j < s->n; j++)
			c += s->f[j].cog == g && strcmp(cotarget(&s->f[j].l), seen.v[i]) == 0;
		bufprintf(out, "%s%s (%zu)", out->len ? ", " : "", seen.v[i], c);
	}
	strv_free(&seen);
}

/* the text lines of one file that is not covered (or only warned about) */
static void
textfile(const struct scanset *s, size_t k, const struct fileverdict *v, const char *dev, struct buf *tb)
{
	const struct offlist *l = &s->f[k].l;
	size_t j;

	if (s->f[k].cog >= 0) {
		grouparches(s, k, tb);
		printf("  %s/: no code object for %s among the library's (%s) [%s]\n", s->cogname[s->f[k].cog],
		       dev, tb->s, v->rule);
		return;
	}
	if (v->warning) {
		printf("  warning: %s: none of its %zu modules runs on %s [%s]\n", s->f[k].path, v->bundles, dev, v->rule);
		return;
	}
	if (s->f[k].kp) {
		printf("  %s: %zu of %zu kpack code objects lack it: %s\n", s->f[k].path, v->missing, v->bundles, v->why);
		return;
	}
	if (!v->missing || (v->gated == v->missing && v->native + v->ptx + v->generic == 0)) {
		printf("  %s: %zu modules, all arch-specific for other GPUs [%s]\n", s->f[k].path, v->gated, v->rule);
		return;
	}
	printf("  %s: %zu of %zu bundles lack it", s->f[k].path, v->missing, v->bundles);
	for (j = 0; j < v->missing && j < sizeof v->bad / sizeof v->bad[0]; j++) {
		bundletargets(l, v->bad[j], tb);
		printf("%s bundle at offset %llu (%s) has %s", j ? ";" : ":",
		       (unsigned long long)l->b[v->bad[j]].off, l->b[v->bad[j]].section, tb->s);
	}
	printf("%s\n", v->missing > j ? "; ..." : "");
}

/* -v: each NVIDIA module of file k and the rule that judged it */
static void
textmodules(const struct scanset *s, size_t k, const struct fileverdict *v, struct buf *tb)
{
	const struct offlist *l = &s->f[k].l;
	size_t i;

	if (!v->mrule)
		return;
	for (i = 0; i < l->nb; i++) {
		if (!relevant(l, i, 1))
			continue;
		bundletargets(l, i, tb);
		printf("    module at offset %llu (%s): %s: %s\n", (unsigned long long)l->b[i].off,
		       l->b[i].section, tb->s, nv_rulename((enum nvrule)v->mrule[i]));
	}
}

/* the summary line of a covered device */
static void
textcovered(const struct devsum *d)
{
	if (d->gen == 0 && d->ptx == 0) {
		printf(": covered natively (%zu bundle%s in %zu file%s", d->nat, d->nat == 1 ? "" : "s",
		       d->files, d->files == 1 ? "" : "s");
	} else {
		printf(": covered (%zu of %zu bundles natively", d->nat, d->tot);
		if (d->gen)
			printf(", %zu through %s: needs code object v6 and a runtime that loads generic targets",
			       d->gen, d->via);
		if (d->ptx)
			printf(", %zu only as PTX (%s) the driver compiles at first load", d->ptx, d->via ? d->via : "PTX");
	}
	if (d->gated)
		printf("; %zu arch-specific modules of other GPUs skipped", d->gated);
	if (d->warns)
		printf("; %zu NVIDIA librar%s with no module for it, warned below", d->warns, d->warns == 1 ? "y" : "ies");
	printf(")\n");
}

/* one device judged: the device, each file's verdict (one per file of the scan), the sums */
struct judged {
	const struct dev *dv;
	const struct fileverdict *v;
	const struct devsum *d;
};

/* the text report of one device */
static void
textdev(const struct scanset *s, const struct judged *jd, int verbose, struct buf *tb)
{
	const struct dev *dv = jd->dv;
	const struct fileverdict *v = jd->v;
	const struct devsum *d = jd->d;
	const char *dev = dv->target;
	size_t k;
	int ok = d->miss == 0 && d->tot > 0;
	unsigned char *said = xcalloc(s->ncog + 1, 1);

	if (dv->g)
		printf("gpu %d %s", dv->g->index, dev);
	else
		printf("%s", dev);
	if (dv->g && strcmp(dv->g->real, dev) != 0)
		printf(" (the hardware is %s; %s=%s)", dv->g->real, dv->g->ovvar, dv->g->ovval);
	if (d->tot == 0)
		printf(": NOT covered: the inputs carry no %s GPU code\n", is_nvidia_target(dev) ? "NVIDIA" : "AMD");
	else if (ok)
		textcovered(d);
	else
		printf(": NOT covered: %zu of %zu bundles have no code for it\n", d->miss, d->tot);
	for (k = 0; k < s->n; k++) {
		if (!v[k].bundles)
			continue;
		if (s->f[k].cog >= 0) {
			/* a code-object library is reported once, at its first file */
			if (said[s->f[k].cog])
				continue;
			said[s->f[k].cog] = 1;
		}
		if (!v[k].covered)
			textfile(s, k, &v[k], dev, tb);
		else if (verbose)
			printf("  %s: covered [%s]%s%s\n", s->f[k].path, v[k].rule, s->f[k].kp ? ": " : "",
			       s->f[k].kp ? v[k].why : "");
		if (verbose)
			textmodules(s, k, &v[k], tb);
	}
	free(said);
	if (ok)
		return;
	if (d->haveov)
		printf("  fix: HSA_OVERRIDE_GFX_VERSION=%s runs the %s code (same %s ISA family and wave size; works for most kernels, not validated by AMD)\n",
		       d->ovver, d->ovproc, arch_proc(d->ovproc)->family);
	if (is_nvidia_target(dev))
		printf("  fix: rebuild with TORCH_CUDA_ARCH_LIST=%s (or include PTX for an older sm)\n", dev);
	else
		printf("  fix: %srebuild with PYTORCH_ROCM_ARCH=%.*s\n", d->haveov ? "or " : "", (int)strcspn(dev, ":"), dev);
}

/* --json: each NVIDIA module of a file, its rule, and whether it runs */
static void
jsonmodules(struct json *js, const struct offlist *l, const struct fileverdict *v, struct buf *tb)
{
	size_t i;
	enum nvrule r;

	json_key(js, "modules");
	json_arr(js);
	for (i = 0; i < l->nb; i++) {
		if (!relevant(l, i, 1))
			continue;
		r = (enum nvrule)v->mrule[i];
		json_obj(js);
		json_key(js, "offset");
		json_uint(js, l->b[i].off);
		json_kstr(js, "section", l->b[i].section);
		bundletargets(l, i, tb);
		json_kstr(js, "targets", tb->s);
		json_kstr(js, "rule", nv_rulename(r));
		json_kbool(js, "runs", r != NVR_NONE && r != NVR_GATED && r != NVR_STUB && r != NVR_RELOC);
		json_kbool(js, "needed", r != NVR_STUB && r != NVR_RELOC && r != NVR_GATED);
		json_end(js);
	}
	json_end(js);
}

/* one file of a device in --json */
static void
jsonfile(struct json *js, const struct scanset *s, size_t k, const struct fileverdict *v, struct buf *tb)
{
	size_t j;

	json_obj(js);
	json_kstr(js, "path", s->f[k].path);
	json_kint(js, "bundles", (int64_t)v->bundles);
	json_kint(js, "missing", (int64_t)v->missing);
	json_kint(js, "gated", (int64_t)v->gated);
	json_kbool(js, "covered", v->covered);
	json_kbool(js, "warning", v->warning);
	json_kbool(js, "nvidia_library", v->vendor);
	json_kstr(js, "rule", v->rule);
	if (s->f[k].kp)
		json_kstr(js, "kpack", v->why);
	if (s->f[k].cog >= 0)
		json_kstr(js, "code_object_group", s->cogname[s->f[k].cog]);
	json_key(js, "first_missing");
	json_arr(js);
	for (j = 0; j < v->missing && j < sizeof v->bad / sizeof v->bad[0]; j++) {
		if (iscodeobj(&s->f[k].l))
			break;
		json_obj(js);
		json_key(js, "offset");
		json_uint(js, s->f[k].l.b[v->bad[j]].off);
		json_kstr(js, "section", s->f[k].l.b[v->bad[j]].section);
		bundletargets(&s->f[k].l, v->bad[j], tb);
		json_kstr(js, "targets", tb->s);
		json_end(js);
	}
	json_end(js);
	if (v->mrule)
		jsonmodules(js, &s->f[k].l, v, tb);
	json_end(js);
}

/* one device in --json */
static void
jsondev(struct json *js, const struct scanset *s, const struct judged *jd, struct buf *tb)
{
	const struct dev *dv = jd->dv;
	const struct fileverdict *v = jd->v;
	const struct devsum *d = jd->d;
	const char *dev = dv->target;
	char fx[160];
	size_t k;

	json_obj(js);
	json_kstr(js, "target", dev);
	if (dv->g) {
		json_kint(js, "index", dv->g->index);
		json_kstr(js, "real_target", dv->g->real);
	}
	json_kbool(js, "covered", d->miss == 0 && d->tot > 0);
	json_kint(js, "bundles", (int64_t)d->tot);
	json_kint(js, "native", (int64_t)d->nat);
	json_kint(js, "generic", (int64_t)d->gen);
	json_kint(js, "ptx", (int64_t)d->ptx);
	json_kint(js, "missing", (int64_t)d->miss);
	json_kint(js, "gated", (int64_t)d->gated);
	json_kint(js, "warnings", (int64_t)d->warns);
	json_key(js, "files");
	json_arr(js);
	for (k = 0; k < s->n; k++)
		if (v[k].bundles)
			jsonfile(js, s, k, &v[k], tb);
	json_end(js);
	json_key(js, "fix");
	if (d->miss || d->tot == 0) {
		json_obj(js);
		if (d->haveov) {
			snprintf(fx, sizeof fx, "HSA_OVERRIDE_GFX_VERSION=%s", d->ovver);
			json_kstr(js, "override", fx);
		}
		if (is_nvidia_target(dev))
			snprintf(fx, sizeof fx, "TORCH_CUDA_ARCH_LIST=%s", dev);
		else
			snprintf(fx, sizeof fx, "PYTORCH_ROCM_ARCH=%.*s", (int)strcspn(dev, ":"), dev);
		json_kstr(js, "rebuild", fx);
		json_end(js);
	} else {
		json_null(js);
	}
	json_end(js);
}

/* what cover's options ask for besides the scan's settings: --json, -v, --target= */
struct coverflags {
	int json, verbose;
	const char *tsel;
};

/* cover's options into f and s: the index of the first input */
static int
coveropts(int argc, char **argv, struct coverflags *f, struct scanset *s)
{
	int i, *json = &f->json, *verbose = &f->verbose;
	const char **tsel = &f->tsel;

	for (i = 1; i < argc; i++) {
		if (gc_commonopt(argv[i]))
			continue;
		if (strcmp(argv[i], "--json") == 0)
			*json = 1;
		else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0)
			*verbose = 1;
		else if (startswith(argv[i], "--target="))
			*tsel = argv[i] + 9;
		else if (gc_maxinflate(argv[i], &s->maxraw))
			;
		else if (strcmp(argv[i], "--kpack-loader=first") == 0)
			s->kpfirst = 1;
		else if (strcmp(argv[i], "--kpack-loader=next") == 0)
			s->kpfirst = 0;
		else if (startswith(argv[i], "--kpack-loader="))
			gc_usage("cover: --kpack-loader is first or next, not '%s'", argv[i] + 15);
		else if (strcmp(argv[i], "--") == 0)
			return i + 1;
		else if (argv[i][0] == '-' && argv[i][1])
			gc_usage("cover: unknown option '%s'", argv[i]);
		else
			break;
	}
	return i;
}

int
cmd_cover(int argc, char **argv)
{
	int i, xnack, allok = 1;
	const char *xe = getenv("HSA_XNACK");
	struct coverflags f = {0, 0, "auto"};
	struct scanset s = {0};
	struct gpulist gl = {0};
	struct dev *devs;
	size_t nd, d;
	struct fileverdict *v;
	struct devsum sum;
	struct judged jd;
	struct buf b = {0}, tb = {0};
	struct json js;

	i = coveropts(argc, argv, &f, &s);
	s.kplazy = 1;
	if (i >= argc)
		gc_usage("cover: name at least one FILE, WHEEL or DIR");
	xnack = xe && strcmp(xe, "1") == 0;
	devs = strcmp(f.tsel, "auto") == 0 ? autotargets(&gl, &nd) : parsetargets(f.tsel, &nd);
	for (; i < argc; i++)
		scan_arg(&s, argv[i]);
	if (s.errors) {
		free(devs);
		gpulist_free(&gl);
		scanset_free(&s);
		return EXIT_USAGE;
	}
	cover_groups(&s);
	v = xcalloc(s.n ? s.n : 1, sizeof *v);
	if (f.json) {
		json_init(&js, &b);
		json_obj(&js);
		json_key(&js, "devices");
		json_arr(&js);
	}
	for (d = 0; d < nd; d++) {
		judgeall(&s, devs[d].target, xnack, v, &sum);
		if (sum.miss || sum.tot == 0)
			allok = 0;
		jd = (struct judged){&devs[d], v, &sum};
		if (f.json)
			jsondev(&js, &s, &jd, &tb);
		else
			textdev(&s, &jd, f.verbose, &tb);
	}
	if (f.json) {
		json_end(&js);
		json_end(&js);
		printf("%s\n", b.s);
	}
	for (d = 0; d < s.n; d++)
		cover_free(&v[d]);
	free(v);
	buffree(&b);
	buffree(&tb);
	free(devs);
	gpulist_free(&gl);
	scanset_free(&s);
	return allok ? EXIT_OK : EXIT_PROBLEM;
}
