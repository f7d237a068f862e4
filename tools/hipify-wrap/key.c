/* the key of a hipify run, srcpin's part of it, and the stamp */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "hash.h"
#include "hw.h"
#include "kv.h"
#include "os.h"
#include "proc.h"
#include "result.h"
#include "run.h"
#include "util.h"

/* feed "name=value\n" into the key and its readable copy */
static void
keyadd(struct sha256 *h, const char *name, const char *val)
{
	sha256_update(h, name, strlen(name));
	sha256_update(h, "=", 1);
	sha256_update(h, val, strlen(val));
	sha256_update(h, "\n", 1);
	bufprintf(&g.keytxt, "# %s=%s\n", name, val);
}

/* "HEX NAME" for a file's content ("missing NAME" when it cannot be read) */
static void
keyfile(struct sha256 *h, const char *what, const char *path, const char *name)
{
	unsigned char d[32];
	char hx[65], *v;

	if (sha256_file(path, d, NULL) < 0)
		strcpy(hx, "missing");
	else
		hex32(d, hx);
	v = xasprintf("%s %s", hx, name);
	keyadd(h, what, v);
	free(v);
}

/* the folder of torch's hipify for the interpreter (asks Python once; NULL if none) */
static char *
pyhipdir(void)
{
	char *argv[] = {g.python, "-I", "-c",
		"import importlib.util, os\n"
		"s = importlib.util.find_spec('torch')\n"
		"print(os.path.join(os.path.dirname(s.origin), 'utils', 'hipify') if s and s.origin else '')\n",
		NULL};
	struct buf out = {0};
	struct procres r;
	char *d = NULL;

	if (proc_capture(argv, NULL, &out, NULL, 0, 120000, &r) == 0 && r.status == 0) {
		bufrtrim(&out, "\n ");
		if (out.len)
			d = xstrdup(out.s);
	}
	buffree(&out);
	return d;
}

/* torch's hipify folder for --project=vision: the one the stamp names for the same
   interpreter while it still holds hipify (no Python on a no-op), else asked of Python */
static char *
visiondir(void)
{
	const char *od = g.havestamp ? kv_get(&g.stamp, "HIPIFY_DIR") : NULL;
	const char *op = g.havestamp ? kv_get(&g.stamp, "PYTHON") : NULL;
	const char *oi = g.havestamp ? kv_get(&g.stamp, "PYTHON_ID") : NULL;
	char *p, *d = NULL;

	if (od && op && oi && strcmp(op, g.python) == 0 && strcmp(oi, g.pyid) == 0) {
		p = xasprintf("%s/hipify_python.py", od);
		if (access(p, R_OK) == 0)
			d = xstrdup(od);
		free(p);
	}
	if (!d && !(d = pyhipdir()))
		dien(EXIT_USAGE, "%s: cannot find torch.utils.hipify (is torch installed for this Python?)", g.python);
	return d;
}

/* the key material besides the tree: project, command, scripts, torch's hipify, the
   interpreter, HIP settings and srcpin's state */
static void
settings(struct sha256 *h)
{
	static const char *hipfiles[] = {"__init__.py", "constants.py", "cuda_to_hip_mappings.py",
	                                 "hipify_python.py", "version.py"};
	static const char *hipdefault[] = {"/opt/rocm/hip", "/opt/rocm"};
	struct buf b = {0}, info = {0};
	const char *hp = getenv("HIP_PATH");
	char *p, *hipinfo = NULL;
	unsigned char d[32];
	char hx[65];
	int i, clang = 0;
	size_t k;

	keyadd(h, "PROJECT", projname[g.project]);
	for (i = 0; i < g.ncmd; i++) {
		if (i)
			bufputc(&b, ' ');
		shquote(&b, g.cmd[i]);
	}
	keyadd(h, "COMMAND", b.len ? b.s : "");
	buffree(&b);
	if (g.project != P_GENERIC) {
		sha256_buf(hw_driver, strlen(hw_driver), d);
		hex32(d, hx);
		keyadd(h, "DRIVER", hx);
	}
	for (i = 0; i < g.nscripts; i++)
		keyfile(h, "SCRIPT", g.scripts[i], g.scripts[i]);

	free(g.hipdir);
	g.hipdir = NULL;
	if (g.project == P_VISION) {
		g.hipdir = visiondir();
	} else if (g.project == P_TORCH) {
		g.hipdir = xasprintf("%s/torch/utils/hipify", g.srcdir);
	}
	if (g.hipdir) {
		keyadd(h, "HIPIFY_DIR", g.hipdir);
		for (k = 0; k < nelem(hipfiles); k++) {
			p = xasprintf("%s/%s", g.hipdir, hipfiles[k]);
			keyfile(h, "HIPIFY", p, hipfiles[k]);
			free(p);
		}
	}
	keyadd(h, "PYTHON", g.python ? g.python : "");
	keyadd(h, "PYTHON_ID", g.pyid ? g.pyid : "");

	/* build_amd.py asks $HIP_PATH/lib/.hipInfo (default /opt/rocm/hip) for HIP_COMPILER=clang */
	for (k = 0; k < (hp ? 1 : nelem(hipdefault)) && !hipinfo; k++) {
		p = xasprintf("%s/lib/.hipInfo", hp ? hp : hipdefault[k]);
		if (readfile(p, &info, 1 << 20) == 0) {
			hipinfo = p;
			clang = info.s && strstr(info.s, "HIP_COMPILER=clang") != NULL;
		} else {
			free(p);
		}
	}
	buffree(&info);
	keyadd(h, "HIP_PATH", hp ? hp : "");
	keyadd(h, "HIPINFO", hipinfo ? hipinfo : "none");
	keyadd(h, "HIP_CLANG", clang ? "yes" : "no");
	free(hipinfo);
	if (g.pinned) {
		keyadd(h, "SRCPIN_COMMIT", g.pin_commit);
		keyadd(h, "SRCPIN_SERIES", g.pin_series);
	}
}

/* the key as hex: settings plus the digest of the source before hipify */
void
makekey(const char *source, char out[65])
{
	struct sha256 h;
	unsigned char d[32];

	bufreset(&g.keytxt);
	sha256_init(&h);
	settings(&h);
	keyadd(&h, "SOURCE", source);
	sha256_final(&h, d);
	hex32(d, out);
}

/* digest of a list of inputs: every path with its content digest */
void
sourcedigest(const struct flist *l, char out[65])
{
	struct sha256 h;
	unsigned char d[32];
	size_t i;

	sha256_init(&h);
	for (i = 0; i < l->n; i++) {
		sha256_update(&h, l->v[i].path, strlen(l->v[i].path) + 1);
		sha256_update(&h, l->v[i].hash, 32);
	}
	sha256_final(&h, d);
	hex32(d, out);
}

/* ask srcpin whether srcdir is one of its checkouts: its record's NAME, COMMIT and
   SERIES_DIGEST. srcpin keeps the record in GITDIR/srcpin (srcpin(1), FILES); 'srcpin
   state' prints those lines and then checks the tree, which this key does not use, so
   when .git is the git folder itself the record is read here: no process, no libgit2 on
   a no-op. Otherwise (a .git file: another layout) srcpin is asked. */
void
srcpinstate(void)
{
	char *dotgit = tpath(".git"), *statefile = tpath(".git/srcpin"), *prog = NULL, *e = NULL;
	char *msg = NULL;
	const char *what = NULL, *c, *s, *n;
	struct buf out = {0}, err = {0};
	struct kvfile kv;
	struct procres r;
	struct stat st;

	if (lstat(dotgit, &st) < 0) {
		/* srcpin checkouts are git work trees: nothing to ask elsewhere */
	} else if (S_ISDIR(st.st_mode)) {
		if (os_readreg(statefile, O_NOFOLLOW, &out, 1 << 20, &msg) >= 0)
			what = statefile;
		else if (errno != ENOENT)
			warn("%s; keying on content only", msg);
		free(msg);
	} else if ((prog = findprog("srcpin", g.self))) {
		char *argv[] = {prog, "state", g.srcdir, NULL};
		if (proc_capture(argv, NULL, &out, &err, 0, 120000, &r) < 0 || r.notfound)
			warn("cannot run %s:", prog);
		else if (r.status == 0)
			what = "srcpin state";
		else if (r.status != EXIT_USAGE)
			warn("'srcpin state %s' failed (exit %d); keying on content only", g.srcdir, r.status);
	}
	if (what && kv_parse(&kv, what, out.s ? out.s : "", out.len, &e) < 0) {
		warn("%s", e);
		free(e);
	} else if (what) {
		c = kv_get(&kv, "COMMIT"), s = kv_get(&kv, "SERIES_DIGEST"), n = kv_get(&kv, "NAME");
		if (c && *c) {
			g.pinned = 1;
			g.pin_commit = xstrdup(c);
			g.pin_series = xstrdup(s ? s : "");
			g.pin_name = xstrdup(n ? n : "");
		}
		kv_free(&kv);
	}
	buffree(&out);
	buffree(&err);
	free(prog);
	free(statefile);
	free(dotgit);
}

/* ask srcpin to restore the pinned pristine tree */
void
srcpinreset(void)
{
	char *prog = findprog("srcpin", g.self), *out, *t;
	char *co[] = {prog, "checkout", g.pin_name, "--commit", g.pin_commit, "--into", g.srcdir,
	              "--force", NULL, NULL};
	char *pa[] = {prog, "patch", g.srcdir, (char *)g.series, NULL};
	struct buf o = {0}, e = {0};
	struct procres r;

	if (*g.pin_series && !g.series)
		dien(EXIT_PROBLEM, "%s: the srcpin checkout carries a patch series (digest %.12s...); --reset needs --series=FILE to apply it again",
		     g.srcdir, g.pin_series);
	t = tpath(".gitmodules");
	if (access(t, F_OK) == 0)
		co[8] = "--submodules";
	free(t);
	if (!g.json)
		fprintf(stderr, "%s: restoring %s with srcpin checkout --force\n", argv0, g.srcdir);
	if (proc_capture(co, NULL, &o, &e, 0, 0, &r) < 0 || r.status != 0)
		dien(EXIT_PROBLEM, "%s: 'srcpin checkout %s --commit %s --force' failed: %s", g.srcdir, g.pin_name,
		     g.pin_commit, e.len ? e.s : "cannot run srcpin");
	if (g.series) {
		bufreset(&e);
		if (proc_capture(pa, NULL, &o, &e, 0, 0, &r) < 0 || r.status != 0)
			dien(EXIT_PROBLEM, "%s: 'srcpin patch %s' failed: %s", g.srcdir, g.series, e.len ? e.s : "cannot run srcpin");
	}
	out = NULL;
	free(out);
	buffree(&o);
	buffree(&e);
	free(prog);
	/* the checkout replaced tracked files; the state now read is srcpin's again */
	free(g.pin_commit);
	free(g.pin_series);
	free(g.pin_name);
	g.pinned = 0;
	srcpinstate();
}

void
writestamp(const char *key, const char *source)
{
	struct buf b = {0};
	char *p = spath("stamp"), *id;

	bufputs(&b, "# hipify-wrap stamp: the key of the hipified tree; written last\n");
	bufprintf(&b, "KEY=%s\nSOURCE=%s\n", key, source);
	if (g.python) {
		kv_put(&b, "PYTHON", g.python);
		bufprintf(&b, "PYTHON_ID=%s\n", g.pyid);
	}
	/* what lets the next no-op skip reading the git index (tracked_from_stamp) */
	if (g.git == 1 && (id = indexid())) {
		kv_put(&b, "GIT_INDEX", id);
		bufprintf(&b, "TRACKED=%zu\n", g.tracked.n);
		free(id);
	}
	bufadd(&b, g.keytxt.s, g.keytxt.len);
	/* the key text names the hipify folder; keep it readable back for the next no-op */
	{
		const char *h = strstr(g.keytxt.s, "# HIPIFY_DIR=");
		if (h) {
			const char *e = strchr(h, '\n');
			char *d = xstrndup(h + 13, (size_t)(e - h - 13));
			kv_put(&b, "HIPIFY_DIR", d);
			free(d);
		}
	}
	if (writefile_atomic(p, b.s, b.len, 0644) < 0)
		die("%s:", p);
	free(p);
	buffree(&b);
}
