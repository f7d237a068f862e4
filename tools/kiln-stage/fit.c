/* do the pins fit together: the torch a vision, audio or vLLM pin was made for, from the
   release matrix (env/matrix.env), a wheel's METADATA or the installed distribution;
   C_REF=@torch for them is the matrix row's release */
#include "graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv.h"
#include "os.h"
#include "zip.h"

/* the version a pin stands for, when it can be known without fetching: a release tag
   (v2.8.0), a wheel's file name, or the installed distribution; NULL otherwise */
static char *
pinversion(const struct component *c, int dist)
{
	const char *k = pin(c, "KIND"), *r;
	const char *w, *b;
	size_t n;

	if (!strcmp(k, "system"))
		return dist >= 0 && *py.dists[dist][0] ? xstrdup(py.dists[dist][0]) : NULL;
	if (!strcmp(k, "wheel")) {
		w = pin(c, "WHEEL");
		b = strrchr(w, '/') ? strrchr(w, '/') + 1 : w;
		if (!(b = strchr(b, '-')))
			return NULL;
		b++;
		n = strcspn(b, "-");
		return xstrndup(b, n);
	}
	r = pin(c, "REF");
	if (r[0] == 'v' && isdig((unsigned char)r[1]) && strspn(r + 1, "0123456789.") == strlen(r + 1))
		return xstrdup(r + 1);
	return NULL;
}

/* major.minor of a version; "" when it has none */
static char *
majmin(const char *v)
{
	size_t n = strspn(v, "0123456789");

	if (!v[n] || v[n] != '.')
		return xstrdup("");
	n++;
	n += strspn(v + n, "0123456789");
	return xstrndup(v, n);
}

/* the release matrix, env/matrix.env: torch_MAJOR_MINOR="vision=V audio=V ..." */
static struct kvfile mx;
static char *mxpath;

static void
loadmatrix(void)
{
	char *err = NULL;

	if (mxpath)
		return;
	mxpath = xasprintf("%s/env/matrix.env", cf.srcdir);
	if (!os_isfile(mxpath)) {
		memset(&mx, 0, sizeof mx);
		return;
	}
	if (kv_load(&mx, mxpath, &err) < 0)
		fail("%s (the release matrix)", err);
	addregen(mxpath);
}

/* the release of comp that the matrix row of torch tm (major.minor) names; fresh or NULL */
static char *
matrixget(const char *tm, const char *comp)
{
	struct buf k = {0};
	const char *row, *p, *e;
	size_t n = strlen(comp);
	char *r = NULL;

	loadmatrix();
	bufprintf(&k, "torch_%s", tm);
	for (char *q = k.s; *q; q++)
		if (*q == '.')
			*q = '_';
	row = mx.n ? kv_get(&mx, k.s) : NULL;
	buffree(&k);
	for (p = row; p && *p; p = e) {
		p += strspn(p, " ");
		e = p + strcspn(p, " ");
		if ((size_t)(e - p) > n + 1 && !strncmp(p, comp, n) && p[n] == '=')
			r = xstrndup(p + n + 1, (size_t)(e - p) - n - 1);
	}
	return r;
}

/* the torch releases (major.minor, space-separated) whose row names comp at cm; fresh */
static char *
matrixtorch(const char *comp, const char *cm)
{
	struct buf b = {0};
	char *v, *vm, *t;
	size_t i;

	loadmatrix();
	for (i = 0; i < mx.n; i++) {
		if (!startswith(mx.v[i].key, "torch_"))
			continue;
		t = xstrdup(mx.v[i].key + 6);
		for (char *q = t; *q; q++)
			if (*q == '_')
				*q = '.';
		if ((v = matrixget(t, comp))) {
			vm = majmin(v);
			if (!strcmp(vm, cm))
				bufprintf(&b, "%s%s", b.len ? ", " : "", t);
			free(vm);
			free(v);
		}
		free(t);
	}
	return b.s ? bufdetach(&b) : xstrdup("");
}

/* C_REF=@torch for a component whose releases are made for torch's (vision, audio,
   vllm): the release the matrix row of the torch pin names, as its tag vV */
static void
matrixref(const struct component *c, const char *tv)
{
	char *tm, *v, *tag;

	if (!tv)
		fail("%s: %s_REF=@torch takes %s's release from the release matrix for torch's, but "
		     "torch's pin (%s) is not a release; pin %s_REF yourself", pins.file, c->name,
		     c->name, pin(comp_find("torch"), "REF"), c->name);
	tm = majmin(tv);
	if (!(v = matrixget(tm, c->name)))
		fail("%s: %s_REF=@torch: the release matrix %s has no %s release for torch %s; pin "
		     "%s_REF yourself", pins.file, c->name, mxpath, c->name, tm, c->name);
	tag = xasprintf("v%s", v);
	pins_set(&pins, c, "REF", tag);
	printf("torch %s: %s %s (%s_REF=@torch, from %s)\n", tv, c->name, v, c->name, mxpath);
	free(tag);
	free(v);
	free(tm);
}

/* the pairs of the stack as configure prints them, and the @torch refs resolved */
static void
matrixpairs(const char *tv)
{
	const struct component *c;
	char *cv;
	size_t i;

	for (i = 1; i < non; i++) {
		c = on[i];
		if (strcmp(c->against, "torch") || strcmp(pin(c, "KIND"), "build"))
			continue;
		if (!strcmp(pin(c, "REF"), "@torch")) {
			matrixref(c, tv);
		} else if (tv && (cv = pinversion(c, -1))) {
			printf("torch %s: %s %s (%s_REF)\n", tv, c->name, cv, c->name);
			free(cv);
		}
	}
}

/* one line for a pair that does not go together: refused, or with --allow-mismatch a
   warning */
static void
mismatch(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
mismatch(const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;

	va_start(ap, fmt);
	bufvprintf(&b, fmt, ap);
	va_end(ap);
	if (cf.allowmismatch)
		warn("warning: %s (--allow-mismatch)", b.s);
	else
		fail("%s; or pass --allow-mismatch to build it anyway", b.s);
	buffree(&b);
}

static int
addbuf(void *ctx, const void *q, size_t n)
{
	bufadd(ctx, q, n);
	return 0;
}

/* the torch requirement of a wheel: its METADATA's "Requires-Dist: torch==X" */
static char *
wheeltorch(const char *path)
{
	struct zipin z;
	struct buf m = {0};
	char *r = NULL, *p, *e;
	size_t i;

	if (zip_open(&z, path, NULL) < 0)
		return NULL;
	for (i = 0; i < z.n; i++)
		if (endswith(z.e[i].name, ".dist-info/METADATA") && !strchr(strchr(z.e[i].name, '/') + 1, '/'))
			break;
	if (i < z.n && z.e[i].usize < (1 << 20) && zip_read(&z, &z.e[i], addbuf, &m, NULL) == 0) {
		bufputc(&m, 0);
		for (p = m.s; p && *p; p = e ? e + 1 : NULL) {
			e = strchr(p, '\n');
			if (startswith(p, "Requires-Dist: torch") && !isalnumc((unsigned char)p[20]) &&
			    p[20] != '-' && p[20] != '_') {
				struct buf v = {0};
				const char *q;
				for (q = p + 20; *q && *q != '\n' && *q != ';'; q++)
					if (*q != ' ' && *q != '(' && *q != ')')
						bufputc(&v, *q);
				r = bufdetach(&v);
				break;
			}
		}
	}
	buffree(&m);
	zip_close(&z);
	return r;
}

/* one warning line per vision/audio pin made for another torch than the torch pin */
void
pinfit(void)
{
	const struct component *t = &comp_table[0], *c;
	char *tv = pinversion(t, 0), *tm, *want = NULL, *cv, *cm;
	size_t i, k;

	matrixpairs(tv);
	if (!tv)
		return;
	tm = majmin(tv);
	for (i = 1; i < non; i++) {
		c = on[i];
		if (strcmp(c->against, "torch"))
			continue;
		want = NULL;
		cv = NULL;
		if (!strcmp(pin(c, "KIND"), "wheel")) {
			want = wheeltorch(pin(c, "WHEEL"));
		} else if (!strcmp(pin(c, "KIND"), "system")) {
			k = !strcmp(c->name, "vision") ? 1 : 2;
			if (*py.dists[k][1])
				want = xstrdup(py.dists[k][1]);
		} else if ((cv = pinversion(c, -1))) {
			char *fit = matrixget(tm, c->name), *fm = fit ? majmin(fit) : NULL;
			cm = majmin(cv);
			/* a release the matrix does not know (a toy's v1, a newer one) is not judged */
			if (fm && *cm && strcmp(fm, cm)) {
				char *ts = matrixtorch(c->name, cm);
				if (*ts)
					mismatch("%s %s is made for torch %s, but the torch pin is %s; %s %s goes "
					         "with it (%s): pin %s=v%s", c->name, pin(c, "REF"), ts, tv, c->name,
					         fit, mxpath, c->name, fit);
				free(ts);
			}
			free(cm);
			free(fm);
			free(fit);
		}
		if (want) {
			/* ==2.8.0, >=2.8, ==2.8.0+rocm6.4: compare the first version's major.minor */
			const char *v = want + strspn(want, "torch=<>!~ ");
			char *wm = majmin(v);
			const char *w = pin(c, "WHEEL");
			if (*wm && strcmp(wm, tm))
				mismatch("%s %s requires torch%s, but the torch pin is %s", c->name,
				     pin(c, "KIND")[0] == 's' ? "(installed)" : strrchr(w, '/') ?
				     strrchr(w, '/') + 1 : w, want, tv);
			free(wm);
			free(want);
		}
		free(cv);
	}
	free(tm);
	free(tv);
}

/* the release a component's pin stands for (a tag like v2.15.0, a wheel's version, the
   installed one), fresh, or NULL when a pin is a branch or commit */
char *
pin_release(const struct component *c)
{
	return pinversion(c, -1);
}

/* major.minor as two numbers; 0, or -1 when s is not N or N.N */
static int
mmparse(const char *s, size_t n, int v[2])
{
	size_t a = 0;

	v[0] = v[1] = 0;
	while (a < n && isdig((unsigned char)s[a]) && v[0] < 10000)
		v[0] = v[0] * 10 + (s[a++] - '0');
	if (a == 0)
		return -1;
	if (a == n)
		return 0;
	if (s[a++] != '.' || a == n)
		return -1;
	while (a < n && isdig((unsigned char)s[a]) && v[1] < 10000)
		v[1] = v[1] * 10 + (s[a++] - '0');
	return a == n ? 0 : -1;
}

static int
mmcmp(const int a[2], const int b[2])
{
	return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] != b[1] ? (a[1] < b[1] ? -1 : 1) : 0;
}

/* a release folder's name as a range: "2.8" (that release), "2.0-2.8" (both ends
   included), "2.14+" (that and later); 0 with lo/hi, -1 when it is not one */
static int
rangeparse(const char *name, int lo[2], int hi[2], int *open)
{
	const char *d = strchr(name, '-');
	size_t n = strlen(name);

	*open = 0;
	if (n && name[n - 1] == '+') {
		*open = 1;
		return mmparse(name, n - 1, lo);
	}
	if (!d) {
		if (mmparse(name, n, lo) < 0)
			return -1;
		hi[0] = lo[0];
		hi[1] = lo[1];
		return 0;
	}
	return mmparse(name, (size_t)(d - name), lo) < 0 || mmparse(d + 1, strlen(d + 1), hi) < 0 ? -1 : 0;
}

/* The patch folder for the pinned release: base itself when it holds a series (for every
   release), else the one subfolder whose range holds the release (patches/torch/0-2.8).
   *range is the folder's name ("" for base). Says on stdout which was taken. Returns the
   folder (fresh), or base's missing series ("none" digest) when no range holds it. */
char *
release_patches(const struct component *c, const char *base, char **range)
{
	struct strv names = {0};
	char *s = xasprintf("%s/series", base), *rel, *pick = NULL, *p;
	int lo[2], hi[2], r[2], open, ok;
	size_t i;

	*range = xstrdup("");
	if (os_isfile(s) || !os_isdir(base) || os_listdir(base, &names) < 0) {
		free(s);
		return xstrdup(base);
	}
	free(s);
	rel = pin_release(c);
	p = rel ? majmin(rel) : NULL;
	ok = p && *p && mmparse(p, strlen(p), r) == 0;
	free(p);
	for (i = 0; i < names.n; i++) {
		p = xasprintf("%s/%s/series", base, names.v[i]);
		if (!os_isfile(p)) {
			free(p);
			continue;
		}
		free(p);
		if (rangeparse(names.v[i], lo, hi, &open) < 0)
			fail("%s/%s: not a release range (2.8, 2.0-2.8 or 2.14+)", base, names.v[i]);
		if (!open && mmcmp(lo, hi) > 0)
			fail("%s/%s: no release matches this range (%d.%d is after %d.%d)", base, names.v[i],
			     lo[0], lo[1], hi[0], hi[1]);
		if (!ok || mmcmp(r, lo) < 0 || (!open && mmcmp(r, hi) > 0))
			continue;
		if (pick)
			fail("%s: %s and %s both hold release %s; keep one series per release", base, pick,
			     names.v[i], rel);
		pick = xstrdup(names.v[i]);
	}
	if (pick) {
		printf("%s %s: patches from %s/%s (made for %s)\n", c->name, rel, base, pick, pick);
		free(*range);
		*range = pick;
		s = xasprintf("%s/%s", base, pick);
	} else {
		if (names.n)
			printf("%s %s: no patch series in %s is made for it\n", c->name,
			       rel ? rel : pin(c, "REF"), base);
		s = xstrdup(base);
	}
	free(rel);
	strv_free(&names);
	return s;
}
