/* gpucheck cover: will the code in these files run on this GPU, and if not, the fix */
#include "gpucheck.h"
#include "cover.h"
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "sm_86" / "compute_90" / "sm_90a": the number and suffix; returns 0 or -1 */
static int
smnum(const char *t, unsigned *num, char *suffix)
{
	const char *p;
	char *end;

	if (startswith(t, "sm_"))
		p = t + 3;
	else if (startswith(t, "compute_"))
		p = t + 8;
	else
		return -1;
	*num = (unsigned)strtoul(p, &end, 10);
	if (end == p)
		return -1;
	*suffix = *end;
	return 0;
}

int
is_nvidia_target(const char *t)
{
	unsigned n;
	char suf;

	return smnum(t, &n, &suf) == 0;
}

enum how
entry_covers(const struct offentry *e, const char *dev, int xnack)
{
	char dp[64], ep[64];
	const struct arch *ea, *da;
	int ef, df;
	unsigned dn, en;
	char ds, es;

	if (is_nvidia_target(dev)) {
		if (smnum(dev, &dn, &ds) < 0 || smnum(e->target, &en, &es) < 0)
			return COV_NONE;
		if (e->kind == OFF_NV_SASS) {
			/* a cubin runs on its major with an equal or newer minor; arch-specific
			   ("sm_90a") cubins only on exactly that compute capability */
			if (es == 'a')
				return en == dn ? COV_NATIVE : COV_NONE;
			return en / 10 == dn / 10 && en <= dn ? COV_NATIVE : COV_NONE;
		}
		if (e->kind == OFF_NV_PTX)
			return en <= dn ? COV_PTX : COV_NONE;
		return COV_NONE;
	}
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

void
cover_file(const struct offlist *l, const char *dev, int xnack, struct fileverdict *v)
{
	size_t i, j;
	enum how best, h;
	int nv = is_nvidia_target(dev);

	memset(v, 0, sizeof *v);
	for (i = 0; i < l->nb; i++) {
		if (!relevant(l, i, nv))
			continue;
		v->bundles++;
		best = COV_NONE;
		for (j = l->b[i].first; j < l->b[i].first + l->b[i].n; j++) {
			h = entry_covers(&l->e[j], dev, xnack);
			if (h < best) {
				best = h;
				if (h != COV_NATIVE)
					v->via = l->e[j].target;
			}
		}
		switch (best) {
		case COV_NATIVE: v->native++; break;
		case COV_GENERIC: v->generic++; break;
		case COV_PTX: v->ptx++; break;
		default:
			if (v->missing < sizeof v->bad / sizeof v->bad[0])
				v->bad[v->missing] = i;
			v->missing++;
		}
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

/* a device to judge */
struct dev {
	char target[96];
	const struct gpu *g;  /* NULL when named by --target */
};

int
cmd_cover(int argc, char **argv)
{
	int i, json = 0, xnack, allok = 1;
	const char *tsel = "auto";
	struct scanset s = {0};
	struct gpulist gl = {0};
	struct dev *devs = NULL;
	size_t nd = 0, capd = 0, d, k, j, nfiles;
	struct fileverdict v;
	struct buf b = {0}, tb = {0};
	struct json js;
	char ovproc[64], ovver[32];
	const char *xe = getenv("HSA_XNACK");

	for (i = 1; i < argc; i++) {
		if (gc_commonopt(argv[i]))
			continue;
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (startswith(argv[i], "--target="))
			tsel = argv[i] + 9;
		else if (gc_maxinflate(argv[i], &s.maxraw))
			;
		else if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (argv[i][0] == '-' && argv[i][1])
			gc_usage("cover: unknown option '%s'", argv[i]);
		else
			break;
	}
	if (i >= argc)
		gc_usage("cover: name at least one FILE, WHEEL or DIR");
	xnack = xe && strcmp(xe, "1") == 0;
	if (strcmp(tsel, "auto") == 0) {
		detect_or_die(&gl);
		if (gl.n == 0)
			die("cover: no GPU found here; name one with --target=gfx1151 (or sm_90)");
		for (k = 0; k < gl.n; k++) {
			if (!gl.g[k].target[0]) {
				warn("cover: GPU %d: its target is unknown; skipped", gl.g[k].index);
				continue;
			}
			devs = xgrow(devs, &capd, nd + 1, sizeof *devs);
			snprintf(devs[nd].target, sizeof devs[nd].target, "%.*s", (int)sizeof devs[nd].target - 1, gl.g[k].target);
			devs[nd++].g = &gl.g[k];
		}
	} else {
		const char *p = tsel;
		size_t n;

		while (*p) {
			n = strcspn(p, ",;");
			if (n == 0 || n >= sizeof devs->target)
				gc_usage("cover: bad --target list '%s'", tsel);
			devs = xgrow(devs, &capd, nd + 1, sizeof *devs);
			snprintf(devs[nd].target, sizeof devs[nd].target, "%.*s", (int)n, p);
			if (!is_nvidia_target(devs[nd].target) && !startswith(devs[nd].target, "gfx"))
				gc_usage("cover: '%s' is not a GPU target (gfx1151, gfx90a:xnack-, sm_90)",
				         devs[nd].target);
			devs[nd++].g = NULL;
			p += n;
			if (*p)
				p++;
		}
	}
	for (; i < argc; i++)
		scan_arg(&s, argv[i]);
	if (s.errors) {
		free(devs);
		gpulist_free(&gl);
		scanset_free(&s);
		return EXIT_USAGE;
	}
	if (json) {
		json_init(&js, &b);
		json_obj(&js);
		json_key(&js, "devices");
		json_arr(&js);
	}
	for (d = 0; d < nd; d++) {
		const char *dev = devs[d].target, *via = NULL;
		size_t nat = 0, gen = 0, ptx = 0, miss = 0, tot = 0;
		int haveov;

		nfiles = 0;
		for (k = 0; k < s.n; k++) {
			cover_file(&s.f[k].l, dev, xnack, &v);
			if (!v.bundles)
				continue;
			nfiles++;
			nat += v.native, gen += v.generic, ptx += v.ptx, miss += v.missing, tot += v.bundles;
			if (v.via && !via)
				via = v.via;
		}
		haveov = !is_nvidia_target(dev) && miss && cover_override(&s, dev, ovproc, sizeof ovproc) == 0 &&
		         gfxversion(ovproc, ovver, sizeof ovver) == 0;
		if (miss || tot == 0)
			allok = 0;
		if (json) {
			json_obj(&js);
			json_kstr(&js, "target", dev);
			if (devs[d].g) {
				json_kint(&js, "index", devs[d].g->index);
				json_kstr(&js, "real_target", devs[d].g->real);
			}
			json_kbool(&js, "covered", miss == 0 && tot > 0);
			json_kint(&js, "bundles", (int64_t)tot);
			json_kint(&js, "native", (int64_t)nat);
			json_kint(&js, "generic", (int64_t)gen);
			json_kint(&js, "ptx", (int64_t)ptx);
			json_kint(&js, "missing", (int64_t)miss);
			json_key(&js, "files");
			json_arr(&js);
			for (k = 0; k < s.n; k++) {
				cover_file(&s.f[k].l, dev, xnack, &v);
				if (!v.bundles)
					continue;
				json_obj(&js);
				json_kstr(&js, "path", s.f[k].path);
				json_kint(&js, "bundles", (int64_t)v.bundles);
				json_kint(&js, "missing", (int64_t)v.missing);
				json_key(&js, "first_missing");
				json_arr(&js);
				for (j = 0; j < v.missing && j < sizeof v.bad / sizeof v.bad[0]; j++) {
					json_obj(&js);
					json_key(&js, "offset");
					json_uint(&js, s.f[k].l.b[v.bad[j]].off);
					json_kstr(&js, "section", s.f[k].l.b[v.bad[j]].section);
					bundletargets(&s.f[k].l, v.bad[j], &tb);
					json_kstr(&js, "targets", tb.s);
					json_end(&js);
				}
				json_end(&js);
				json_end(&js);
			}
			json_end(&js);
			json_key(&js, "fix");
			if (miss || tot == 0) {
				json_obj(&js);
				char fx[160];

				if (haveov) {
					snprintf(fx, sizeof fx, "HSA_OVERRIDE_GFX_VERSION=%s", ovver);
					json_kstr(&js, "override", fx);
				}
				if (is_nvidia_target(dev))
					snprintf(fx, sizeof fx, "TORCH_CUDA_ARCH_LIST=%s", dev);
				else
					snprintf(fx, sizeof fx, "PYTORCH_ROCM_ARCH=%.*s", (int)strcspn(dev, ":"), dev);
				json_kstr(&js, "rebuild", fx);
				json_end(&js);
			} else {
				json_null(&js);
			}
			json_end(&js);
			continue;
		}
		if (devs[d].g)
			printf("gpu %d %s", devs[d].g->index, dev);
		else
			printf("%s", dev);
		if (devs[d].g && strcmp(devs[d].g->real, dev) != 0)
			printf(" (the hardware is %s; %s=%s)", devs[d].g->real, devs[d].g->ovvar, devs[d].g->ovval);
		if (tot == 0) {
			printf(": NOT covered: the inputs carry no %s GPU code\n",
			       is_nvidia_target(dev) ? "NVIDIA" : "AMD");
		} else if (miss == 0 && gen == 0 && ptx == 0) {
			printf(": covered natively (%zu bundle%s in %zu file%s)\n", tot, tot == 1 ? "" : "s",
			       nfiles, nfiles == 1 ? "" : "s");
		} else if (miss == 0) {
			printf(": covered (%zu of %zu bundles natively", nat, tot);
			if (gen)
				printf(", %zu through %s: needs code object v6 and a runtime that loads generic targets", gen, via);
			if (ptx)
				printf(", %zu only as PTX (%s) the driver compiles at first load", ptx, via);
			printf(")\n");
		} else {
			printf(": NOT covered: %zu of %zu bundles have no code for it\n", miss, tot);
			for (k = 0; k < s.n; k++) {
				cover_file(&s.f[k].l, dev, xnack, &v);
				if (!v.missing)
					continue;
				printf("  %s: %zu of %zu bundles lack it", s.f[k].path, v.missing, v.bundles);
				for (j = 0; j < v.missing && j < sizeof v.bad / sizeof v.bad[0]; j++) {
					bundletargets(&s.f[k].l, v.bad[j], &tb);
					printf("%s bundle at offset %llu (%s) has %s", j ? ";" : ":",
					       (unsigned long long)s.f[k].l.b[v.bad[j]].off,
					       s.f[k].l.b[v.bad[j]].section, tb.s);
				}
				printf("%s\n", v.missing > j ? "; ..." : "");
			}
		}
		if (miss || tot == 0) {
			if (haveov)
				printf("  fix: HSA_OVERRIDE_GFX_VERSION=%s runs the %s code (same %s ISA family and wave size; works for most kernels, not validated by AMD)\n",
				       ovver, ovproc, arch_proc(ovproc)->family);
			if (is_nvidia_target(dev))
				printf("  fix: rebuild with TORCH_CUDA_ARCH_LIST=%s (or include PTX for an older sm)\n", dev);
			else
				printf("  fix: %srebuild with PYTORCH_ROCM_ARCH=%.*s\n", haveov ? "or " : "",
				       (int)strcspn(dev, ":"), dev);
		}
	}
	if (json) {
		json_end(&js);
		json_end(&js);
		printf("%s\n", b.s);
	}
	buffree(&b);
	buffree(&tb);
	free(devs);
	gpulist_free(&gl);
	scanset_free(&s);
	return allok ? EXIT_OK : EXIT_PROBLEM;
}
