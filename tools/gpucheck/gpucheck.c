/* gpucheck: which GPU is here, which GPU code a binary carries, will it run, and the fix */
#include "gpucheck.h"
#include "json.h"
#include "strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
humansize(char *buf, size_t len, uint64_t n)
{
	if (n >= (uint64_t)1 << 30)
		snprintf(buf, len, "%.1f GiB", (double)n / (double)((uint64_t)1 << 30));
	else
		snprintf(buf, len, "%.0f MiB", (double)n / (double)(1 << 20));
}

/* --arch: the targets the runtime will look for, each once, ';'-separated */
static void
detect_arch(const struct gpulist *l)
{
	struct buf b = {0};
	size_t k, j;

	for (k = 0; k < l->n; k++) {
		if (!l->g[k].target[0])
			continue;
		for (j = 0; j < k; j++)
			if (strcmp(l->g[j].target, l->g[k].target) == 0)
				break;
		if (j < k)
			continue;
		bufprintf(&b, "%s%s", b.len ? ";" : "", l->g[k].target);
	}
	if (b.len)
		printf("%s\n", b.s);
	buffree(&b);
}

static void
gpujson(struct json *js, const struct gpu *g)
{
	json_obj(js);
	json_kint(js, "index", g->index);
	json_kstr(js, "vendor", g->vendor);
	json_kint(js, "node", g->node);
	json_kstr(js, "target", g->target[0] ? g->target : NULL);
	json_kstr(js, "real_target", g->real[0] ? g->real : NULL);
	json_kstr(js, "name", g->name[0] ? g->name : NULL);
	json_kint(js, "compute_units", g->cus);
	json_key(js, "vram_bytes");
	json_uint(js, g->vram);
	json_kstr(js, "driver", g->driver[0] ? g->driver : NULL);
	json_kint(js, "device_id", g->devid);
	json_kint(js, "wavefront_size", g->wave);
	json_kstr(js, "pci_bus", g->bus[0] ? g->bus : NULL);
	json_key(js, "override");
	if (g->ovvar[0]) {
		json_obj(js);
		json_kstr(js, "variable", g->ovvar);
		json_kstr(js, "value", g->ovval);
		json_kbool(js, "valid", !g->ovbad);
		json_end(js);
	} else {
		json_null(js);
	}
	json_end(js);
}

static void
detect_json(const struct gpulist *l)
{
	struct buf b = {0};
	struct json js;
	size_t k;

	json_init(&js, &b);
	json_obj(&js);
	json_key(&js, "gpus");
	json_arr(&js);
	for (k = 0; k < l->n; k++)
		gpujson(&js, &l->g[k]);
	json_end(&js);
	json_end(&js);
	printf("%s\n", b.s);
	buffree(&b);
}

/* one GPU as a line, and its override's line */
static void
gpuline(const struct gpu *g)
{
	char sz[32];

	printf("%d  %-6s  %-8s", g->index, g->vendor, g->real[0] ? g->real : "unknown");
	if (g->name[0])
		printf("  %s", g->name);
	if (g->cus)
		printf(", %u %s", g->cus, strcmp(g->vendor, "amd") == 0 ? "CUs" : "SMs");
	if (g->vram) {
		humansize(sz, sizeof sz, g->vram);
		printf(", %s", sz);
	}
	if (g->driver[0])
		printf(", driver %s", g->driver);
	if (!g->real[0] && g->devid)
		printf(" (device id 0x%04x is not in gpucheck's table and the kernel gives no gfx_target_version)", g->devid);
	printf("\n");
	if (g->ovvar[0] && g->ovbad)
		printf("   override: %s='%s' is malformed (want MAJOR.MINOR.STEPPING, e.g. 11.0.0); the runtime does not apply it\n",
		       g->ovvar, g->ovval);
	else if (g->ovvar[0])
		printf("   override: %s=%s: the runtime loads %s code (the hardware is %s)\n",
		       g->ovvar, g->ovval, g->target, g->real[0] ? g->real : "unknown");
}

int
cmd_detect(int argc, char **argv)
{
	int i, arch = 0, json = 0;
	size_t k;
	struct gpulist l = {0};

	for (i = 1; i < argc; i++) {
		if (gc_commonopt(argv[i]))
			continue;
		else if (strcmp(argv[i], "--arch") == 0)
			arch = 1;
		else if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else
			gc_usage("unknown option or verb '%s'", argv[i]);
	}
	detect_or_die(&l);
	if (arch)
		detect_arch(&l);
	else if (json)
		detect_json(&l);
	else {
		for (k = 0; k < l.n; k++)
			gpuline(&l.g[k]);
		if (l.n == 0)
			fprintf(stderr, "%s: no GPU found (no KFD GPU node under %s/class/kfd, no NVIDIA driver in %s/driver/nvidia)\n",
			        argv0, opt_sysfs, opt_procfs);
	}
	k = l.n;
	gpulist_free(&l);
	return k ? EXIT_OK : EXIT_PROBLEM;
}

/* --- targets --------------------------------------------------------------------------- */

static const char *
fmtname(enum offfmt f)
{
	switch (f) {
	case OFFB_CLANG: return "clang";
	case OFFB_CCOB: return "ccob";
	case OFFB_RDC: return "rdc";
	default: return "nvfatbin";
	}
}

/* one line of a file's summary: a target of one kind and code object version */
struct tsum {
	const char *target;
	enum offkind kind;
	int cov;
	size_t bundles;
};

static int
tsumcmp(const void *a, const void *b)
{
	const struct tsum *x = a, *y = b;
	int c = strcmp(x->target, y->target);

	if (c)
		return c;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return x->cov - y->cov;
}

/* the distinct device targets of a file, with the number of bundles carrying each */
static struct tsum *
summarize(const struct offlist *l, size_t *n)
{
	struct tsum *t = NULL;
	size_t cap = 0, i, j, k, m;
	const struct offentry *e;

	*n = 0;
	for (i = 0; i < l->nb; i++) {
		for (j = l->b[i].first; j < l->b[i].first + l->b[i].n; j++) {
			e = &l->e[j];
			if (e->kind == OFF_HOST)
				continue;
			for (k = 0; k < *n; k++)
				if (strcmp(t[k].target, e->target) == 0 && t[k].kind == e->kind && t[k].cov == e->cov)
					break;
			if (k == *n) {
				t = xgrow(t, &cap, *n + 1, sizeof *t);
				t[k].target = e->target;
				t[k].kind = e->kind;
				t[k].cov = e->cov;
				t[k].bundles = 0;
				(*n)++;
			}
			/* count each bundle once per target */
			for (m = l->b[i].first; m < j; m++)
				if (strcmp(l->e[m].target, e->target) == 0 && l->e[m].kind == e->kind &&
				    l->e[m].cov == e->cov)
					break;
			if (m == j)
				t[k].bundles++;
		}
	}
	if (*n)
		qsort(t, *n, sizeof *t, tsumcmp);
	return t;
}

static size_t
nentries(const struct offlist *l)
{
	size_t i, n = 0;

	for (i = 0; i < l->ne; i++)
		n += l->e[i].kind != OFF_HOST;
	return n;
}

/* a kpack'd library: its archives, and per arch how many co_index entries it has and
   which it lacks (text, or a "kpack" object in --json) */
static void
kpsummary(const struct scanset *s, const struct scanned *f, struct json *js)
{
	struct strv arch = {0}, seen = {0};
	struct buf miss = {0};
	size_t i, j, b, have;
	char *key;

	for (i = 0; i < f->l.ne; i++)
		strv_add(&arch, f->l.e[i].target, 1);
	for (i = 0; i < f->kp->nfound; i++)
		strv_add(&seen, s->ar[f->kp->found[i].ar].path, 1);
	if (js) {
		json_key(js, "kpack");
		json_obj(js);
		json_kstr(js, "kernel_name", f->kp->ref.kernel);
		json_key(js, "archives");
		json_arr(js);
		for (i = 0; i < seen.n; i++)
			json_str(js, seen.v[i]);
		json_end(js);
		json_key(js, "arches");
		json_arr(js);
	} else {
		printf("  kpack: %s#N in %zu archive%s:", f->kp->ref.kernel, seen.n, seen.n == 1 ? "" : "s");
		for (i = 0; i < seen.n; i++)
			printf(" %s", seen.v[i]);
		printf("\n");
	}
	for (i = 0; i < arch.n; i++) {
		bufreset(&miss);
		for (b = 0, have = 0; b < f->l.nb; b++) {
			if (f->l.b[b].fmt != OFFB_KPACK)
				continue;
			for (j = f->l.b[b].first; j < f->l.b[b].first + f->l.b[b].n; j++)
				if (strcmp(f->l.e[j].target, arch.v[i]) == 0)
					break;
			if (j < f->l.b[b].first + f->l.b[b].n)
				have++;
			else
				bufprintf(&miss, "%s%u", miss.len ? ", " : "", f->l.b[b].coindex);
		}
		if (js) {
			json_obj(js);
			json_kstr(js, "arch", arch.v[i]);
			json_kint(js, "co_indexes", (int64_t)have);
			json_kstr(js, "lacks", miss.len ? miss.s : "");
			json_end(js);
		} else {
			key = xasprintf("%zu of %zu co_index%s", have, f->l.nhipk, miss.len ? "; lacks " : "");
			printf("  kpack %-18s %s%s\n", arch.v[i], key, miss.len ? miss.s : "");
			free(key);
		}
	}
	if (js) {
		json_end(js);
		json_end(js);
	}
	buffree(&miss);
	strv_free(&arch);
	strv_free(&seen);
}

/* targets' options into JSON and VERBOSE and s->maxraw; the index of the first FILE */
static int
targets_opts(int argc, char **argv, struct scanset *s, int *json, int *verbose)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (gc_commonopt(argv[i]))
			continue;
		if (strcmp(argv[i], "--json") == 0)
			*json = 1;
		else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0)
			*verbose = 1;
		else if (gc_maxinflate(argv[i], &s->maxraw))
			;
		else if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (argv[i][0] == '-' && argv[i][1])
			gc_usage("targets: unknown option '%s'", argv[i]);
		else
			break;
	}
	if (i >= argc)
		gc_usage("targets: name at least one FILE, WHEEL or DIR");
	return i;
}

/* -v --json: the file's bundles, each with its entries, as "bundle_list" */
static void
targets_json_bundles(struct json *js, const struct scanned *f)
{
	const struct offbundle *bd;
	const struct offentry *e;
	size_t j, m;

	json_key(js, "bundle_list");
	json_arr(js);
	for (j = 0; j < f->l.nb; j++) {
		bd = &f->l.b[j];
		json_obj(js);
		json_key(js, "offset");
		json_uint(js, bd->off);
		json_key(js, "size");
		json_uint(js, bd->size);
		json_kstr(js, "format", fmtname(bd->fmt));
		json_kstr(js, "section", bd->section);
		if (bd->fmt == OFFB_CCOB) {
			json_kint(js, "ccob_version", bd->ccobver);
			json_kstr(js, "method", bd->method ? "zstd" : "zlib");
			json_key(js, "raw_size");
			json_uint(js, bd->rawsize);
		}
		json_key(js, "entries");
		json_arr(js);
		for (m = bd->first; m < bd->first + bd->n; m++) {
			e = &f->l.e[m];
			json_obj(js);
			json_kstr(js, "id", e->id);
			json_kstr(js, "target", e->target);
			json_kstr(js, "kind", off_kindname(e->kind));
			json_kint(js, "code_object_version", e->cov);
			json_key(js, "size");
			json_uint(js, e->size);
			json_end(js);
		}
		json_end(js);
		json_end(js);
	}
	json_end(js);
}

/* one file and the lines of its summary */
struct ftargets {
	const struct scanned *f;
	const struct tsum *t;
	size_t nt;
};

/* --json: one file's object in "files": its targets, with -v its bundles */
static void
targets_json_file(const struct scanset *s, struct json *js, const struct ftargets *ft, int verbose)
{
	const struct scanned *f = ft->f;
	const struct tsum *t = ft->t;
	size_t j, nt = ft->nt;

	json_obj(js);
	json_kstr(js, "path", f->path);
	json_kint(js, "bundles", (int64_t)f->l.nb);
	json_kint(js, "entries", (int64_t)nentries(&f->l));
	json_key(js, "targets");
	json_arr(js);
	for (j = 0; j < nt; j++) {
		json_obj(js);
		json_kstr(js, "target", t[j].target);
		json_kstr(js, "kind", off_kindname(t[j].kind));
		json_kint(js, "code_object_version", t[j].cov);
		json_kint(js, "bundles", (int64_t)t[j].bundles);
		json_end(js);
	}
	json_end(js);
	if (verbose)
		targets_json_bundles(js, f);
	if (f->kp)
		kpsummary(s, f, js);
	json_end(js);
}

/* text: one file's line and a line per target, with -v its bundles and entries; a lone
   file with no GPU code says so (ALONE) */
static void
targets_text_file(const struct scanset *s, const struct ftargets *ft, int verbose, int alone)
{
	const struct scanned *f = ft->f;
	const struct tsum *t = ft->t;
	const struct offbundle *bd;
	char kv[32];
	size_t j, m, nt = ft->nt;

	if (f->l.nb == 0) {
		if (alone)
			printf("%s: no GPU code\n", f->path);
		return;
	}
	printf("%s: %zu bundle%s, %zu entr%s\n", f->path, f->l.nb, f->l.nb == 1 ? "" : "s",
	       nentries(&f->l), nentries(&f->l) == 1 ? "y" : "ies");
	for (j = 0; j < nt; j++) {
		if (t[j].cov)
			snprintf(kv, sizeof kv, "%s v%d", off_kindname(t[j].kind), t[j].cov);
		else
			snprintf(kv, sizeof kv, "%s", off_kindname(t[j].kind));
		printf("  %-24s %-16s %zu bundle%s\n", t[j].target, kv, t[j].bundles,
		       t[j].bundles == 1 ? "" : "s");
	}
	if (f->kp)
		kpsummary(s, f, NULL);
	for (j = 0; verbose && j < f->l.nb; j++) {
		bd = &f->l.b[j];
		printf("  bundle %zu: offset %llu in %s, %s", j, (unsigned long long)bd->off,
		       bd->section, fmtname(bd->fmt));
		if (bd->fmt == OFFB_CCOB)
			printf(" v%d %s, %llu bytes raw", bd->ccobver, bd->method ? "zstd" : "zlib",
			       (unsigned long long)bd->rawsize);
		printf("\n");
		for (m = bd->first; m < bd->first + bd->n; m++)
			printf("    %s\n", f->l.e[m].id);
	}
}

int
cmd_targets(int argc, char **argv)
{
	int i, json = 0, verbose = 0, nfiles = 0;
	struct scanset s = {0};
	struct buf b = {0};
	struct json js;
	struct tsum *t;
	struct ftargets ft;
	size_t nt, k;

	for (i = targets_opts(argc, argv, &s, &json, &verbose); i < argc; i++, nfiles++)
		scan_arg(&s, argv[i]);
	if (json) {
		json_init(&js, &b);
		json_obj(&js);
		json_key(&js, "files");
		json_arr(&js);
	}
	for (k = 0; k < s.n; k++) {
		t = summarize(&s.f[k].l, &nt);
		ft = (struct ftargets){&s.f[k], t, nt};
		if (json)
			targets_json_file(&s, &js, &ft, verbose);
		else
			targets_text_file(&s, &ft, verbose, nfiles == 1 && s.n == 1);
		free(t);
	}
	if (json) {
		json_end(&js);
		json_end(&js);
		printf("%s\n", b.s);
	}
	buffree(&b);
	k = (size_t)s.errors;
	scanset_free(&s);
	return k ? EXIT_USAGE : EXIT_OK;
}

int
main(int argc, char **argv)
{
	setprogname(argv[0]);
	if (argc > 1) {
		if (strcmp(argv[1], "targets") == 0)
			return cmd_targets(argc - 1, argv + 1);
		if (strcmp(argv[1], "cover") == 0)
			return cmd_cover(argc - 1, argv + 1);
		if (strcmp(argv[1], "env") == 0)
			return cmd_env(argc - 1, argv + 1);
		if (strcmp(argv[1], "smoke") == 0)
			return cmd_smoke(argc - 1, argv + 1);
	}
	return cmd_detect(argc, argv);
}
