/* the target interpreter and its supported tags (see target.h); the tag orders follow
   pypa/packaging's tags.py (cpython_tags, compatible_tags, generic_tags, manylinux) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "atomic.h"
#include "elffile.h"
#include "hash.h"
#include "mapfile.h"
#include "proc.h"
#include "target.h"

static void
addtag(struct strv *out, const char *py, const char *abi, const char *plat)
{
	char *s = xasprintf("%s-%s-%s", py, abi, plat);
	out->v = xgrow(out->v, &out->cap, out->n + 1, sizeof *out->v);
	out->v[out->n++] = s;
}

static int
inlist(const struct strv *l, const char *s)
{
	size_t k;

	for (k = 0; k < l->n; k++)
		if (!strcmp(l->v[k], s))
			return 1;
	return 0;
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
	if (!inlist(abis, "none"))
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
plats_linux(struct strv *out, const char *sysplat, int bits, int gmaj, int gmin, int mmaj,
            int mmin, enum tagorder order)
{
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

/* ---- asking the interpreter ---------------------------------------------------------- */

/* what the interpreter prints: one KEY=VALUE per line (Python 3.6+) */
static const char query[] =
	"import os, struct, sys, sysconfig\n"
	"g = sysconfig.get_config_var\n"
	"def p(k, v):\n"
	"    sys.stdout.write('%s=%s\\n' % (k, '' if v is None else v))\n"
	"p('impl', sys.implementation.name)\n"
	"p('major', sys.version_info[0])\n"
	"p('minor', sys.version_info[1])\n"
	"p('full', '%d.%d.%d' % tuple(sys.version_info[:3]))\n"
	"p('nodot', g('py_version_nodot'))\n"
	"p('ext_suffix', g('EXT_SUFFIX'))\n"
	"p('py_debug', g('Py_DEBUG'))\n"
	"p('gil_disabled', g('Py_GIL_DISABLED'))\n"
	"p('pymalloc', g('WITH_PYMALLOC'))\n"
	"p('refcount', int(hasattr(sys, 'gettotalrefcount')))\n"
	"p('platform', sysconfig.get_platform())\n"
	"p('bits', struct.calcsize('P') * 8)\n"
	"try:\n"
	"    l = os.confstr('CS_GNU_LIBC_VERSION')\n"
	"except (AttributeError, OSError, ValueError):\n"
	"    l = None\n"
	"p('libc', l)\n"
	"p('executable', sys.executable)\n";

/* the value of key in the KEY=VALUE text, or NULL (a pointer into a static copy) */
static const char *
getval(const char *text, const char *key, char *out, size_t outn)
{
	size_t kl = strlen(key);
	const char *p = text;

	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t ll = e ? (size_t)(e - p) : strlen(p);
		if (ll > kl && !strncmp(p, key, kl) && p[kl] == '=') {
			size_t vl = ll - kl - 1;
			if (vl >= outn)
				vl = outn - 1;
			memcpy(out, p + kl + 1, vl);
			out[vl] = 0;
			return out;
		}
		p = e ? e + 1 : NULL;
	}
	return NULL;
}

/* a truthy sysconfig value ("1", "True"); -1 when it is unset */
static int
truthy(const char *v)
{
	if (!v || !*v)
		return -1;
	return strcmp(v, "0") && strcmp(v, "False");
}

/* full path of prog found on PATH (or prog made absolute when it has a '/'), or NULL */
static char *
pathfind(const char *prog)
{
	const char *path = getenv("PATH"), *p, *e;
	char cwd[PATH_MAX];

	if (strchr(prog, '/')) {
		if (prog[0] == '/')
			return xstrdup(prog);
		if (!getcwd(cwd, sizeof cwd))
			return xstrdup(prog);
		return xasprintf("%s/%s", cwd, startswith(prog, "./") ? prog + 2 : prog);
	}
	for (p = path ? path : "/usr/bin:/bin"; p; p = e ? e + 1 : NULL) {
		char *c;
		e = strchr(p, ':');
		c = xasprintf("%.*s/%s", e ? (int)(e - p) : (int)strlen(p), p, prog);
		if (c[0] == '/' && access(c, X_OK) == 0)
			return c;
		free(c);
	}
	return NULL;
}

/* the musl version of the ELF executable's interpreter ("1.2.4"), or NULL */
static char *
muslof(const char *exe)
{
	struct mapfile m = { 0 };
	struct elf e;
	char err[128], *interp = NULL, *ver = NULL;
	size_t k;

	if (map_open(&m, exe) < 0 || !m.p)
		return NULL;
	if (elf_open(&e, m.p, m.n, err, sizeof err) == 0) {
		for (k = 0; k < e.nph; k++)
			if (e.ph[k].type == 3 && e.ph[k].off < m.n && e.ph[k].filesz <= m.n - e.ph[k].off)
				interp = xstrndup((const char *)m.p + e.ph[k].off, e.ph[k].filesz);
		elf_close(&e);
	}
	map_close(&m);
	if (interp && strstr(interp, "musl")) {
		char *argv[] = { interp, NULL };
		struct buf out = { 0 }, eo = { 0 };
		struct procres r;
		if (proc_capture(argv, NULL, &out, &eo, 1 << 16, 5000, &r) == 0 && eo.s) {
			const char *v = strstr(eo.s, "Version ");
			if (v) {
				v += 8;
				k = strspn(v, "0123456789.");
				if (k)
					ver = xstrndup(v, k);
			}
		}
		buffree(&out);
		buffree(&eo);
	}
	free(interp);
	return ver;
}

/* normalize a sysconfig platform: '-', '.', ' ' -> '_' */
static char *
normplat(const char *s)
{
	char *r = xstrdup(s), *p;

	for (p = r; *p; p++)
		if (*p == '-' || *p == '.' || *p == ' ')
			*p = '_';
	return r;
}

/* the glibc version of this process, "" if none */
static const char *
ownlibc(char *buf, size_t n)
{
	size_t r = confstr(_CS_GNU_LIBC_VERSION, buf, n);
	if (r == 0 || r > n)
		buf[0] = 0;
	return buf;
}

/* the cache file for an interpreter file, or NULL when it must not be cached (a script,
   such as a pyenv shim, may run a different Python in each folder) */
static char *
cachefile(const char *abspath)
{
	char real[PATH_MAX], lc[64];
	unsigned char d[32], head[4];
	const char *base, *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	struct buf key = { 0 }, hex = { 0 };
	struct stat st;
	char *dir, *f;
	int fd;

	if (!realpath(abspath, real) || stat(real, &st) < 0)
		return NULL;
	if ((fd = open(real, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (read(fd, head, 4) != 4 || !elf_is(head, 4)) {
		close(fd);
		return NULL;
	}
	close(fd);
	if (xdg && xdg[0] == '/')
		base = xdg;
	else if (home && home[0] == '/')
		base = NULL;
	else
		return NULL;
	bufprintf(&key, "wheelpick-query-2\n%s\n%s\n%llu %llu %lld %lld.%09ld %lld.%09ld\n%s\n%s",
	          abspath, real, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
	          (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
	          (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec, ownlibc(lc, sizeof lc), query);
	sha256_buf(key.s, key.len, d);
	hexenc(&hex, d, 12);
	dir = base ? xasprintf("%s/kiln", base) : xasprintf("%s/.cache/kiln", home);
	f = xasprintf("%s/wheelpick-python-%s", dir, hex.s);
	free(dir);
	buffree(&key);
	buffree(&hex);
	return f;
}

/* mkdir -p of the folder holding file; errors are left to the write that follows */
static void
mkparents(const char *file)
{
	char *d = xstrdup(file), *p;

	for (p = d + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(d, 0755);
			*p = '/';
		}
	free(d);
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

int
target_query(struct target *t, const char *python, int nocache, char **err)
{
	char v[4096], v2[256], *cf = NULL, *abs = pathfind(python);
	struct buf out = { 0 }, eo = { 0 };
	struct procres r;
	const char *ext;
	int dbg, gil, pym, gmaj = 0, gmin = 0, mmaj = 0, mmin = 0, bits = 64;
	char *musl = NULL;

	struct stat st;

	if (!abs) {
		*err = xasprintf("%s: not found on PATH", python);
		return -1;
	}
	if (stat(abs, &st) == 0 && S_ISDIR(st.st_mode)) {
		/* a virtual environment: its interpreter */
		char *p = xasprintf("%s%sbin/python", abs, endswith(abs, "/") ? "" : "/");
		free(abs);
		abs = p;
	}
	t->python = abs;
	if (!nocache && (cf = cachefile(abs)) && readfile(cf, &out, 1 << 16) == 0 && out.s &&
	    getval(out.s, "executable", v, sizeof v)) {
		/* a cached answer */
	} else {
		char *argv[] = { abs, "-I", "-S", "-c", (char *)query, NULL };
		bufreset(&out);
		if (proc_capture(argv, NULL, &out, &eo, 1 << 16, 60000, &r) < 0 || r.notfound) {
			*err = xasprintf("%s: cannot run: %s", abs, strerror(r.notfound ? r.err : errno));
			goto fail;
		}
		if (r.status != 0 || !out.s || !getval(out.s, "major", v, sizeof v)) {
			char *nl = eo.s ? strrchr(eo.s, '\n') : NULL;
			if (nl && !nl[1] && nl > eo.s)
				*nl = 0;
			nl = eo.s ? strrchr(eo.s, '\n') : NULL;
			*err = xasprintf("%s: does not answer as a Python interpreter (exit %d%s%s)", abs,
			                 r.status, eo.s ? ": " : "", eo.s ? (nl ? nl + 1 : eo.s) : "");
			goto fail;
		}
		if (cf) {
			mkparents(cf);
			writefile_atomic(cf, out.s, out.len, 0644);
		}
	}
	t->impl = xstrdup(getval(out.s, "impl", v, sizeof v) ? v : "cpython");
	if (!strcmp(t->impl, "cpython")) {
		free(t->impl);
		t->impl = xstrdup("cp");
	} else if (!strcmp(t->impl, "pypy")) {
		free(t->impl);
		t->impl = xstrdup("pp");
	} else if (!strcmp(t->impl, "ironpython")) {
		free(t->impl);
		t->impl = xstrdup("ip");
	} else if (!strcmp(t->impl, "jython")) {
		free(t->impl);
		t->impl = xstrdup("jy");
	}
	t->full = getval(out.s, "full", v, sizeof v) ? xstrdup(v) : NULL;
	t->major = atoi(getval(out.s, "major", v, sizeof v) ? v : "3");
	t->minor = atoi(getval(out.s, "minor", v, sizeof v) ? v : "0");
	if (getval(out.s, "nodot", v, sizeof v) && *v)
		t->nodot = xstrdup(v);
	else
		t->nodot = xasprintf("%d%d", t->major, t->minor);
	t->executable = xstrdup(getval(out.s, "executable", v, sizeof v) ? v : abs);
	dbg = truthy(getval(out.s, "py_debug", v2, sizeof v2));
	if (dbg < 0)
		dbg = truthy(getval(out.s, "refcount", v2, sizeof v2)) > 0;
	gil = t->major == 3 && t->minor >= 13 && truthy(getval(out.s, "gil_disabled", v2, sizeof v2)) > 0;
	pym = truthy(getval(out.s, "pymalloc", v2, sizeof v2));
	strv_free(&t->abis);
	if (!strcmp(t->impl, "cp")) {
		/* packaging's _cpython_abis */
		char a[64];
		int old = t->major == 3 && t->minor < 8;
		snprintf(a, sizeof a, "cp%d%d%s%s%s", t->major, t->minor, gil ? "t" : "",
		         dbg ? "d" : "", old && pym != 0 ? "m" : "");
		strv_add(&t->abis, a, 1);
		if (!old && dbg) {
			snprintf(a, sizeof a, "cp%d%d%s", t->major, t->minor, gil ? "t" : "");
			strv_add(&t->abis, a, 1);
		}
		t->threaded = gil;
	} else if ((ext = getval(out.s, "ext_suffix", v, sizeof v)) && ext[0] == '.') {
		/* packaging's _generic_abi: the SOABI part of EXT_SUFFIX */
		char *soabi = xstrdup(ext + 1), *dot = strchr(soabi, '.'), *abi = NULL;
		if (dot) {
			*dot = 0;
			if (startswith(soabi, "pypy")) {
				char *d1 = strchr(soabi, '-'), *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
				if (d2)
					*d2 = 0;
				abi = normplat(soabi);
			} else if (startswith(soabi, "graalpy")) {
				char *d1 = strchr(soabi, '-'), *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
				char *d3 = d2 ? strchr(d2 + 1, '-') : NULL;
				if (d3)
					*d3 = 0;
				abi = normplat(soabi);
			} else if (*soabi) {
				abi = normplat(soabi);
			}
		}
		if (abi)
			strv_add(&t->abis, abi, 1);
		free(abi);
		free(soabi);
	}
	t->sysplat = normplat(getval(out.s, "platform", v, sizeof v) ? v : "linux-x86_64");
	bits = atoi(getval(out.s, "bits", v2, sizeof v2) ? v2 : "64");
	if (getval(out.s, "libc", v, sizeof v) && startswith(v, "glibc ") &&
	    sscanf(v + 6, "%d.%d", &gmaj, &gmin) == 2) {
		t->libc = xstrdup(v);
	} else if ((musl = muslof(t->executable)) && sscanf(musl, "%d.%d", &mmaj, &mmin) == 2) {
		t->libc = xasprintf("musl %s", musl);
	}
	free(musl);
	strv_free(&t->plats);
	plats_linux(&t->plats, t->sysplat, bits, gmaj, gmin, mmaj, mmin, t->order);
	buffree(&out);
	buffree(&eo);
	free(cf);
	return 0;
fail:
	buffree(&out);
	buffree(&eo);
	free(cf);
	return -1;
}

void
target_localplats(struct target *t)
{
	struct utsname u;
	char lc[64], *glob = NULL, *musl = NULL;
	int gmaj = 0, gmin = 0, mmaj = 0, mmin = 0;

	if (uname(&u) < 0)
		snprintf(u.machine, sizeof u.machine, "x86_64");
	free(t->sysplat);
	t->sysplat = xasprintf("linux_%s", u.machine);
	ownlibc(lc, sizeof lc);
	if (startswith(lc, "glibc ") && sscanf(lc + 6, "%d.%d", &gmaj, &gmin) == 2) {
		t->libc = xstrdup(lc);
	} else {
		glob = xasprintf("/lib/ld-musl-%s.so.1", u.machine);
		if (access(glob, X_OK) == 0) {
			char *argv[] = { glob, NULL };
			struct buf o = { 0 }, e = { 0 };
			struct procres r;
			if (proc_capture(argv, NULL, &o, &e, 1 << 16, 5000, &r) == 0 && e.s) {
				const char *v = strstr(e.s, "Version ");
				if (v && sscanf(v + 8, "%d.%d", &mmaj, &mmin) == 2)
					musl = xasprintf("musl %d.%d", mmaj, mmin);
			}
			buffree(&o);
			buffree(&e);
		}
		t->libc = musl;
		free(glob);
	}
	strv_free(&t->plats);
	plats_linux(&t->plats, t->sysplat, (int)sizeof(void *) * 8, gmaj, gmin, mmaj, mmin,
	            t->order);
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
