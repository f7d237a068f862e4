/* wheel tags a target accepts, in priority order (see target.h); the orders follow
   pypa/packaging's tags.py (cpython_tags, compatible_tags, generic_tags, manylinux) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"

static void
addtag(struct strv *out, const char *py, const char *abi, const char *plat)
{
	char *s = xasprintf("%s-%s-%s", py, abi, plat);
	out->v = xgrow(out->v, &out->cap, out->n + 1, sizeof *out->v);
	out->v[out->n++] = s;
}

void
tags_cpython(struct strv *out, int major, int minor, const struct strv *abis,
             const struct strv *plats)
{
	char interp[32], old[32];
	size_t a, p;
	int threaded = 0, abi3, abi3t, m;

	if (minor >= 0)
		snprintf(interp, sizeof interp, "cp%d%d", major, minor);
	else
		snprintf(interp, sizeof interp, "cp%d", major);
	/* free-threaded when the first ABI is cpNN with a 't' in its flags */
	if (abis->n && startswith(abis->v[0], "cp")) {
		const char *f = abis->v[0] + 2;
		if (*f >= '0' && *f <= '9') {
			while (*f >= '0' && *f <= '9')
				f++;
			threaded = strchr(f, 't') != NULL;
		}
	}
	for (a = 0; a < abis->n; a++) {
		const char *abi = abis->v[a];
		if (!strcmp(abi, "abi3") || !strcmp(abi, "none") ||
		    (threaded && !strcmp(abi, "abi3t")))
			continue;
		for (p = 0; p < plats->n; p++)
			addtag(out, interp, abi, plats->v[p]);
	}
	abi3 = minor >= 0 && (major > 3 || (major == 3 && minor >= 2)) && !threaded;
	abi3t = minor >= 0 && (major > 3 || (major == 3 && minor >= 2)) && threaded;
	if (abi3)
		for (p = 0; p < plats->n; p++)
			addtag(out, interp, "abi3", plats->v[p]);
	if (abi3t)
		for (p = 0; p < plats->n; p++)
			addtag(out, interp, "abi3t", plats->v[p]);
	for (p = 0; p < plats->n; p++)
		addtag(out, interp, "none", plats->v[p]);
	if (abi3 || abi3t)
		for (m = minor - 1; m > 1; m--)
			for (p = 0; p < plats->n; p++) {
				snprintf(old, sizeof old, "cp%d%d", major, m);
				if (abi3)
					addtag(out, old, "abi3", plats->v[p]);
				if (abi3t)
					addtag(out, old, "abi3t", plats->v[p]);
			}
}

/* packaging's _py_interpreter_range: pyXY, pyX, then pyX(Y-1) .. pyX0 */
static void
pyrange(struct strv *out, int major, int minor)
{
	char s[32];
	int m;

	if (minor >= 0) {
		snprintf(s, sizeof s, "py%d%d", major, minor);
		strv_add(out, s, 0);
	}
	snprintf(s, sizeof s, "py%d", major);
	strv_add(out, s, 0);
	for (m = minor - 1; m >= 0; m--) {
		snprintf(s, sizeof s, "py%d%d", major, m);
		strv_add(out, s, 0);
	}
}

void
tags_compatible(struct strv *out, int major, int minor, const char *interp,
                const struct strv *plats)
{
	struct strv r = { 0 };
	size_t k, p;

	pyrange(&r, major, minor);
	for (k = 0; k < r.n; k++)
		for (p = 0; p < plats->n; p++)
			addtag(out, r.v[k], "none", plats->v[p]);
	if (interp)
		addtag(out, interp, "none", "any");
	for (k = 0; k < r.n; k++)
		addtag(out, r.v[k], "none", "any");
	strv_free(&r);
}

void
tags_generic(struct strv *out, const char *interp, const struct strv *abis,
             const struct strv *plats)
{
	size_t a, p;

	for (a = 0; a < abis->n; a++)
		for (p = 0; p < plats->n; p++)
			addtag(out, interp, abis->v[a], plats->v[p]);
	if (!strv_has(abis, "none"))
		for (p = 0; p < plats->n; p++)
			addtag(out, interp, "none", plats->v[p]);
}

void
plats_manylinux(struct strv *out, const char *arch, int major, int minor)
{
	char s[128];
	int toomaj = 2, toomin = 16, m, ma;

	if (!strcmp(arch, "x86_64") || !strcmp(arch, "i686"))
		toomin = 4;
	/* glibc 2.x is the only major there is; later majors count down from x.50 */
	for (ma = major; ma >= toomaj; ma--) {
		int top = ma == major ? minor : 50, low = ma == toomaj ? toomin : -1;
		for (m = top; m > low; m--) {
			snprintf(s, sizeof s, "manylinux_%d_%d_%s", ma, m, arch);
			strv_add(out, s, 1);
			if (ma == 2 && (m == 17 || m == 12 || m == 5)) {
				snprintf(s, sizeof s, "manylinux%s_%s",
				         m == 17 ? "2014" : m == 12 ? "2010" : "1", arch);
				strv_add(out, s, 1);
			}
		}
	}
}

void
plats_musllinux(struct strv *out, const char *arch, int major, int minor)
{
	char s[128];
	int m;

	for (m = minor; m >= 0; m--) {
		snprintf(s, sizeof s, "musllinux_%d_%d_%s", major, m, arch);
		strv_add(out, s, 1);
	}
}

/* architectures packaging allows manylinux wheels for */
static int
manylinuxarch(const char *a)
{
	static const char *const ok[] = { "x86_64", "aarch64", "ppc64", "ppc64le", "s390x",
	                                  "loongarch64", "riscv64", "i686", "armv7l", NULL };
	const char *const *p;

	for (p = ok; *p; p++)
		if (!strcmp(*p, a))
			return 1;
	return 0;
}

void
plats_linux(struct strv *out, const char *sysplat, int bits, const struct libcver *lv,
            enum tagorder order)
{
	int gmaj = lv->gmaj, gmin = lv->gmin, mmaj = lv->mmaj, mmin = lv->mmin;
	const char *archs[2];
	char arch[96], s[128];
	size_t na = 1, k;
	int many;

	if (!startswith(sysplat, "linux_")) {
		strv_add(out, sysplat, 1);
		return;
	}
	snprintf(arch, sizeof arch, "%s", sysplat + 6);
	if (bits == 32 && !strcmp(arch, "x86_64"))
		snprintf(arch, sizeof arch, "i686");
	else if (bits == 32 && !strcmp(arch, "aarch64"))
		snprintf(arch, sizeof arch, "armv8l");
	archs[0] = arch;
	if (!strcmp(arch, "armv8l")) {
		archs[1] = "armv7l";
		na = 2;
	}
	if (order == ORDER_PACKAGING)
		for (k = 0; k < na; k++) {
			snprintf(s, sizeof s, "linux_%s", archs[k]);
			strv_add(out, s, 1);
		}
	many = 0;
	for (k = 0; k < na; k++)
		many |= manylinuxarch(archs[k]);
	if (!strcmp(archs[0], "armv8l"))
		many = 1;
	if (gmaj > 0 && many)
		for (k = 0; k < na; k++)
			plats_manylinux(out, archs[k], gmaj, gmin);
	if (mmaj > 0)
		for (k = 0; k < na; k++)
			plats_musllinux(out, archs[k], mmaj, mmin);
	if (order == ORDER_PIP)
		for (k = 0; k < na; k++) {
			snprintf(s, sizeof s, "linux_%s", archs[k]);
			strv_add(out, s, 1);
		}
}

void
plats_expand(struct strv *out, const char *p)
{
	int ma, mi, n = 0;

	if (sscanf(p, "manylinux_%d_%d_%n", &ma, &mi, &n) == 2 && n > 0 && p[n])
		plats_manylinux(out, p + n, ma, mi);
	else if (startswith(p, "manylinux2014_"))
		plats_manylinux(out, p + 14, 2, 17);
	else if (startswith(p, "manylinux2010_"))
		plats_manylinux(out, p + 14, 2, 12);
	else if (startswith(p, "manylinux1_"))
		plats_manylinux(out, p + 11, 2, 5);
	else if (n = 0, sscanf(p, "musllinux_%d_%d_%n", &ma, &mi, &n) == 2 && n > 0 && p[n])
		plats_musllinux(out, p + n, ma, mi);
	else
		strv_add(out, p, 1);
}

void
target_setabis(struct target *t, const char *list)
{
	const char *p = list, *e;

	strv_free(&t->abis);
	while (*p) {
		char *a;
		e = strchr(p, ',');
		a = xstrndup(p, e ? (size_t)(e - p) : strlen(p));
		if (*a)
			strv_add(&t->abis, a, 1);
		free(a);
		if (!e)
			break;
		p = e + 1;
	}
	t->threaded = 0;
	if (t->abis.n && startswith(t->abis.v[0], "cp")) {
		const char *f = t->abis.v[0] + 2;
		while (*f >= '0' && *f <= '9')
			f++;
		t->threaded = strchr(f, 't') != NULL;
	}
}

/* FNV-1a over the three parts joined by '-' */
static size_t
taghash(const char *py, const char *abi, const char *plat)
{
	const char *parts[3] = { py, abi, plat };
	uint64_t h = 1469598103934665603ULL;
	const char *p;
	int k;

	for (k = 0; k < 3; k++) {
		if (k) {
			h ^= '-';
			h *= 1099511628211ULL;
		}
		for (p = parts[k]; *p; p++) {
			h ^= (unsigned char)*p;
			h *= 1099511628211ULL;
		}
	}
	return (size_t)h;
}

/* does the tag string s equal py-abi-plat? */
static int
tageq(const char *s, const char *py, const char *abi, const char *plat)
{
	size_t l;

	l = strlen(py);
	if (strncmp(s, py, l) || s[l] != '-')
		return 0;
	s += l + 1;
	l = strlen(abi);
	if (strncmp(s, abi, l) || s[l] != '-')
		return 0;
	return !strcmp(s + l + 1, plat);
}

void
target_tags(struct target *t)
{
	struct strv raw = { 0 };
	size_t k;
	char interp[64];

	strv_free(&t->tags);
	if (!strcmp(t->impl, "cp")) {
		tags_cpython(&raw, t->major, t->minor, &t->abis, &t->plats);
		snprintf(interp, sizeof interp, "cp%s", t->nodot);
		tags_compatible(&raw, t->major, t->minor, interp, &t->plats);
	} else {
		snprintf(interp, sizeof interp, "%s%s", t->impl, t->nodot);
		tags_generic(&raw, interp, &t->abis, &t->plats);
		if (t->order == ORDER_PACKAGING && !strcmp(t->impl, "pp"))
			snprintf(interp, sizeof interp, "pp%d", t->major);
		tags_compatible(&raw, t->major, t->minor, interp, &t->plats);
	}
	/* index; a repeated tag keeps its first (best) rank */
	free(t->hidx);
	t->hcap = 64;
	while (t->hcap < raw.n * 2)
		t->hcap *= 2;
	t->hidx = xmalloc(t->hcap * sizeof *t->hidx);
	for (k = 0; k < t->hcap; k++)
		t->hidx[k] = (size_t)-1;
	for (k = 0; k < raw.n; k++) {
		char *s = raw.v[k], *d1 = strchr(s, '-'), *d2 = strchr(d1 + 1, '-');
		size_t h;
		*d1 = *d2 = 0;
		if (target_rank(t, s, d1 + 1, d2 + 1) >= 0) {
			free(s);
			continue;
		}
		h = taghash(s, d1 + 1, d2 + 1) & (t->hcap - 1);
		*d1 = *d2 = '-';
		while (t->hidx[h] != (size_t)-1)
			h = (h + 1) & (t->hcap - 1);
		t->hidx[h] = t->tags.n;
		t->tags.v = xgrow(t->tags.v, &t->tags.cap, t->tags.n + 1, sizeof *t->tags.v);
		t->tags.v[t->tags.n++] = s;
	}
	free(raw.v);
}

long
target_rank(const struct target *t, const char *py, const char *abi, const char *plat)
{
	size_t h;

	if (!t->hidx)
		return -1;
	h = taghash(py, abi, plat) & (t->hcap - 1);
	while (t->hidx[h] != (size_t)-1) {
		if (tageq(t->tags.v[t->hidx[h]], py, abi, plat))
			return (long)t->hidx[h];
		h = (h + 1) & (t->hcap - 1);
	}
	return -1;
}

void
target_free(struct target *t)
{
	free(t->python);
	free(t->executable);
	free(t->impl);
	free(t->nodot);
	free(t->full);
	strv_free(&t->abis);
	strv_free(&t->plats);
	free(t->sysplat);
	free(t->libc);
	strv_free(&t->tags);
	free(t->hidx);
	memset(t, 0, sizeof *t);
}
