/* asking the target interpreter what it is, once, with the answer cached by its file;
   and this machine's platforms when no interpreter is named (see target.h) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "atomic.h"
#include "elffile.h"
#include "hash.h"
#include "mapfile.h"
#include "os.h"
#include "proc.h"
#include "pycache.h"
#include "target.h"

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

/* the interpreter named by prog: a path as given (made absolute, lexically), else the
   first absolute PATH entry holding it (PATH unset: /usr/bin:/bin); NULL if none */
static char *
pathfind(const char *prog)
{
	char *c;

	if (strchr(prog, '/'))
		return os_abspath(prog, NULL);
	c = os_findprog(prog, getenv("PATH") ? NULL : "/usr/bin:/bin", NULL);
	if (c && c[0] != '/') {
		free(c);
		return NULL;
	}
	return c;
}

/* the musl version of the ELF executable's interpreter ("1.2.4"), or NULL */
static char *
muslof(const char *exe)
{
	struct mapfile m = { 0 };
	struct elf e;
	char *interp = NULL, *ver = NULL;
	size_t k;

	if (map_open(&m, exe) < 0 || !m.p)
		return NULL;
	if (elf_open(&e, m.p, m.n, NULL) == 0) {
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

/* the interpreter PYTHON names: found on PATH, a venv's bin/python, a regular file; malloc'd,
   NULL with *err set */
static char *
pyresolve(const char *python, char **err)
{
	char *abs = pathfind(python);
	struct stat st;

	if (!abs) {
		*err = xasprintf("%s: not found on PATH", python);
		return NULL;
	}
	if (stat(abs, &st) == 0 && S_ISDIR(st.st_mode)) {
		/* a virtual environment: its interpreter */
		char *p = xasprintf("%s%sbin/python", abs, endswith(abs, "/") ? "" : "/");
		free(abs);
		abs = p;
	}
	/* a FIFO or device is named, never opened (its open would wait for a writer) */
	if (stat(abs, &st) == 0 && !S_ISREG(st.st_mode)) {
		*err = xasprintf("%s: is %s, not a Python interpreter", abs, os_ftype(st.st_mode));
		free(abs);
		return NULL;
	}
	return abs;
}

/* the interpreter ABS's answer to the query into OUT: the cached one unless NOCACHE, else
   run (and cached); -1 with *err set */
static int
pyask(const char *abs, int nocache, struct buf *out, char **err)
{
	struct pycache cache = {0};
	struct buf eo = { 0 };
	struct procres r;
	char v[4096], *argv[] = { (char *)abs, "-I", "-S", "-c", (char *)query, NULL };
	int rc = 0;

	if (!nocache && pycache_open(&cache, abs, query) == 0 && pycache_read(&cache, out) == 0 &&
	    getval(out->s, "executable", v, sizeof v)) {
		pycache_free(&cache);
		return 0; /* a cached answer */
	}
	bufreset(out);
	if (proc_capture(argv, NULL, out, &eo, 1 << 16, 60000, &r) < 0 || r.notfound) {
		*err = xasprintf("%s: cannot run: %s", abs, strerror(r.notfound ? r.err : errno));
		rc = -1;
	} else if (r.status != 0 || !out->s || !getval(out->s, "major", v, sizeof v)) {
		char *nl = eo.s ? strrchr(eo.s, '\n') : NULL;
		if (nl && !nl[1] && nl > eo.s)
			*nl = 0;
		nl = eo.s ? strrchr(eo.s, '\n') : NULL;
		*err = xasprintf("%s: does not answer as a Python interpreter (exit %d%s%s)", abs,
		                 r.status, eo.s ? ": " : "", eo.s ? (nl ? nl + 1 : eo.s) : "");
		rc = -1;
	} else if (cache.file) {
		pycache_write(&cache, abs, out);
	}
	buffree(&eo);
	pycache_free(&cache);
	return rc;
}

/* the interpreter's tag abbreviation (packaging's INTERPRETER_SHORT_NAMES) */
static char *
implshort(const char *impl)
{
	static const char *const names[][2] = {
		{ "cpython", "cp" }, { "pypy", "pp" }, { "ironpython", "ip" }, { "jython", "jy" },
	};
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(impl, names[i][0]))
			return xstrdup(names[i][1]);
	return xstrdup(impl);
}

/* the ABI tag of a non-CPython interpreter: packaging's _generic_abi, the SOABI part of
   EXT_SUFFIX (".pypy310-pp73-x86_64-linux-gnu.so" -> "pypy310_pp73"); NULL if none */
static char *
genericabi(const char *ext)
{
	char *soabi = xstrdup(ext + 1), *dot = strchr(soabi, '.'), *abi = NULL;
	int keep = startswith(soabi, "pypy") ? 2 : startswith(soabi, "graalpy") ? 3 : 0;

	if (dot) {
		*dot = 0;
		if (keep) {
			/* pypy keeps two '-' fields, graalpy three */
			char *d = soabi;
			int i;
			for (i = 0; i < keep && d; i++)
				d = strchr(d + (i > 0), '-');
			if (d)
				*d = 0;
			abi = normplat(soabi);
		} else if (*soabi) {
			abi = normplat(soabi);
		}
	}
	free(soabi);
	return abi;
}

/* t->abis and t->threaded from the answer OUT */
static void
setabis(struct target *t, const char *out)
{
	char v[4096], v2[256];
	const char *ext;
	int dbg, gil, pym;

	dbg = truthy(getval(out, "py_debug", v2, sizeof v2));
	if (dbg < 0)
		dbg = truthy(getval(out, "refcount", v2, sizeof v2)) > 0;
	gil = t->major == 3 && t->minor >= 13 && truthy(getval(out, "gil_disabled", v2, sizeof v2)) > 0;
	pym = truthy(getval(out, "pymalloc", v2, sizeof v2));
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
	} else if ((ext = getval(out, "ext_suffix", v, sizeof v)) && ext[0] == '.') {
		char *abi = genericabi(ext);
		if (abi)
			strv_add(&t->abis, abi, 1);
		free(abi);
	}
}

/* t->sysplat, t->libc and t->plats from the answer OUT */
static void
setplats(struct target *t, const char *out)
{
	char v[4096], v2[256], *musl = NULL;
	int gmaj = 0, gmin = 0, mmaj = 0, mmin = 0, bits;

	t->sysplat = normplat(getval(out, "platform", v, sizeof v) ? v : "linux-x86_64");
	bits = atoi(getval(out, "bits", v2, sizeof v2) ? v2 : "64");
	if (getval(out, "libc", v, sizeof v) && startswith(v, "glibc ") &&
	    sscanf(v + 6, "%d.%d", &gmaj, &gmin) == 2) {
		t->libc = xstrdup(v);
	} else if ((musl = muslof(t->executable)) && sscanf(musl, "%d.%d", &mmaj, &mmin) == 2) {
		t->libc = xasprintf("musl %s", musl);
	}
	free(musl);
	strv_free(&t->plats);
	plats_linux(&t->plats, t->sysplat, bits, &(struct libcver){gmaj, gmin, mmaj, mmin},
	            t->order);
}

int
target_query(struct target *t, const char *python, int nocache, char **err)
{
	struct buf out = { 0 };
	char v[4096], *abs = pyresolve(python, err);

	if (!abs)
		return -1;
	t->python = abs;
	if (pyask(abs, nocache, &out, err) < 0) {
		buffree(&out);
		return -1;
	}
	t->impl = implshort(getval(out.s, "impl", v, sizeof v) ? v : "cpython");
	t->full = getval(out.s, "full", v, sizeof v) ? xstrdup(v) : NULL;
	t->major = atoi(getval(out.s, "major", v, sizeof v) ? v : "3");
	t->minor = atoi(getval(out.s, "minor", v, sizeof v) ? v : "0");
	if (getval(out.s, "nodot", v, sizeof v) && *v)
		t->nodot = xstrdup(v);
	else
		t->nodot = xasprintf("%d%d", t->major, t->minor);
	t->executable = xstrdup(getval(out.s, "executable", v, sizeof v) ? v : abs);
	setabis(t, out.s);
	setplats(t, out.s);
	buffree(&out);
	return 0;
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
	plats_linux(&t->plats, t->sysplat, (int)sizeof(void *) * 8,
	            &(struct libcver){gmaj, gmin, mmaj, mmin}, t->order);
}
