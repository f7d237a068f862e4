/* hipify-wrap: run a project's hipify once per source state, never on hipified output,
   in a fresh interpreter, keeping the mtime of every file whose bytes did not change */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "hash.h"
#include "json.h"
#include "kv.h"
#include "proc.h"
#include "result.h"
#include "run.h"
#include "tree.h"
#include "util.h"

#define nelem(a) (sizeof(a) / sizeof((a)[0]))

enum { P_GENERIC, P_TORCH, P_VISION };
static const char *projname[] = {"generic", "torch", "vision"};

/* a file moved aside while the tree is restored, put back if hipify remakes its bytes */
struct stash {
	char *path, *at;
	unsigned char hash[32];
};

/* everything one run knows; kept here so nothing is lost before exit */
static struct {
	char *srcdir;         /* realpath of SRCDIR */
	char *state;          /* state folder */
	const char *statename; /* its name when it lies at the top of srcdir (walk skips it) */
	char *logpath;
	const char *self;
	int project, reset, json, progress;
	char *python, *pyid;  /* realpath of the interpreter and its size:mtime */
	char **cmd;           /* the command that runs hipify */
	int ncmd;
	const char **scripts; /* files whose content is part of the key */
	int nscripts;
	const char *series;   /* --series for a srcpin reset */
	int git;              /* srcdir is a git work tree: inputs are the tracked files */
	struct flist tracked, man, cur, pre, prewalk, post;
	struct kvfile stamp;
	int havestamp;
	struct stash *st;
	size_t nst, cst;
	char *pin_name, *pin_commit, *pin_series; /* srcpin state, when pinned */
	int pinned;
	char *hipdir;         /* torch's hipify folder that the key digests */
	struct buf keytxt;
} g;

static void
usage(const char *err)
{
	if (err)
		fprintf(stderr, "%s: %s\n", argv0, err);
	fprintf(err ? stderr : stdout,
	        "usage: hipify-wrap [--project=torch|vision|generic] [--python=PATH] [--reset]\n"
	        "                   [--log FILE] [--state=DIR] [--script=FILE]... [--series=FILE]\n"
	        "                   [--json] SRCDIR [-- CMD...]\n"
	        "Runs the project's hipify on SRCDIR once per source state (generic: CMD, run in\n"
	        "SRCDIR) and prints a summary; 'hipify: up to date' when nothing changed.\n"
	        "Exit: 0 done or up to date, 1 hipify failed or the tree was refused, 2 usage.\n");
	exit(err ? EXIT_USAGE : EXIT_OK);
}

static char *
spath(const char *name)
{
	return xasprintf("%s/%s", g.state, name);
}

static char *
tpath(const char *rel)
{
	return xasprintf("%s/%s", g.srcdir, rel);
}

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
		while (out.len && (out.s[out.len - 1] == '\n' || out.s[out.len - 1] == ' '))
			out.s[--out.len] = 0;
		if (out.len)
			d = xstrdup(out.s);
	}
	buffree(&out);
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
	const char *hp = getenv("HIP_PATH"), *od, *op, *oi;
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

	if (g.project == P_VISION) {
		/* reuse the folder found last time for the same interpreter: no Python on a no-op */
		od = g.havestamp ? kv_get(&g.stamp, "HIPIFY_DIR") : NULL;
		op = g.havestamp ? kv_get(&g.stamp, "PYTHON") : NULL;
		oi = g.havestamp ? kv_get(&g.stamp, "PYTHON_ID") : NULL;
		if (od && op && oi && strcmp(op, g.python) == 0 && strcmp(oi, g.pyid) == 0)
			g.hipdir = xstrdup(od);
		else if (!(g.hipdir = pyhipdir()))
			dien(EXIT_USAGE, "%s: cannot find torch.utils.hipify (is torch installed for this Python?)", g.python);
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
static void
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
	free(g.hipdir);
	g.hipdir = NULL;
}

/* digest of a list of inputs: every path with its content digest */
static void
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

/* ask srcpin whether srcdir is one of its checkouts */
static void
srcpinstate(void)
{
	char *prog = findprog("srcpin", g.self);
	char *argv[] = {prog, "state", g.srcdir, NULL};
	struct buf out = {0}, err = {0};
	struct procres r;
	struct kvfile kv;
	char *e = NULL;
	const char *c, *s, *n;

	char *dotgit = tpath(".git");
	int git = access(dotgit, F_OK) == 0;

	free(dotgit);
	if (!prog || !git) {
		/* srcpin checkouts are git work trees: nothing to ask elsewhere */
		free(prog);
		return;
	}
	if (proc_capture(argv, NULL, &out, &err, 0, 120000, &r) < 0 || r.notfound) {
		warn("cannot run %s:", prog);
	} else if (r.status == 0) {
		if (kv_parse(&kv, "srcpin state", out.s ? out.s : "", out.len, &e) < 0) {
			warn("%s", e);
			free(e);
		} else {
			c = kv_get(&kv, "COMMIT"), s = kv_get(&kv, "SERIES_DIGEST"), n = kv_get(&kv, "NAME");
			if (c && *c) {
				g.pinned = 1;
				g.pin_commit = xstrdup(c);
				g.pin_series = xstrdup(s ? s : "");
				g.pin_name = xstrdup(n ? n : "");
			}
			kv_free(&kv);
		}
	} else if (r.status != EXIT_USAGE) {
		warn("'srcpin state %s' failed (exit %d); keying on content only", g.srcdir, r.status);
	}
	buffree(&out);
	buffree(&err);
	free(prog);
}

/* write src's bytes to dst (temp + rename, no fsync: journal data), with mode */
static int
copyfile(const char *src, const char *dst, unsigned mode)
{
	struct buf b = {0};
	char *tmp = xasprintf("%s.hw-tmp", dst);
	int fd, r = -1;

	if (readfile(src, &b, 0) < 0)
		goto out;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode ? mode : 0644)) < 0)
		goto out;
	if (writeall(fd, b.s ? b.s : "", b.len) < 0 || fchmod(fd, mode ? mode : 0644) < 0) {
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, dst) < 0) {
		unlink(tmp);
		goto out;
	}
	r = 0;
out:
	free(tmp);
	buffree(&b);
	return r;
}

static int
rmone(const char *p, const struct stat *st, int type, struct FTW *f)
{
	(void)st, (void)type, (void)f;
	if (remove(p) < 0 && errno != ENOENT)
		warn("cannot remove %s:", p);
	return 0;
}

/* remove a folder and everything in it (hipify-wrap's own state folders only) */
static void
rmtree(const char *p)
{
	nftw(p, rmone, 16, FTW_DEPTH | FTW_PHYS);
}

/* would the journal keep a copy of this file (sources, headers, build files, Python) */
static int
journaled(const struct fent *e)
{
	static const char *ext[] = {".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp",
	                            ".hxx", ".inl", ".in", ".hip", ".cmake", ".txt", ".py", ".pyi",
	                            ".yaml", ".yml", ".json", ".sh", ".bzl", ".bazel", "BUILD"};
	size_t k;

	if (e->size > (64u << 20))
		return 0;
	for (k = 0; k < nelem(ext); k++)
		if (endswith(e->path, ext[k]))
			return 1;
	return 0;
}

/* copy the originals of l into the journal folder dir (content-addressed) */
static void
journal_copy(const struct flist *l, const char *dir)
{
	char hx[65], *dst, *src;
	size_t i;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die("%s:", dir);
	for (i = 0; i < l->n; i++) {
		if (!journaled(&l->v[i]))
			continue;
		hex32(l->v[i].hash, hx);
		dst = xasprintf("%s/%s", dir, hx);
		if (access(dst, F_OK) < 0) {
			src = tpath(l->v[i].path);
			if (copyfile(src, dst, 0444) < 0)
				die("cannot keep a copy of %s in %s:", src, dir);
			free(src);
		}
		free(dst);
	}
}

/* move a file of the tree aside into the stash, remembering its bytes */
static void
stash(const char *rel, const unsigned char hash[32])
{
	struct stash *s;
	char *from = tpath(rel), *dir = spath("stash");

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die("%s:", dir);
	g.st = xgrow(g.st, &g.cst, g.nst + 1, sizeof(*g.st));
	s = &g.st[g.nst];
	s->path = xstrdup(rel);
	s->at = xasprintf("%s/%zu", dir, g.nst);
	memcpy(s->hash, hash, 32);
	if (rename(from, s->at) < 0) {
		if (errno == ENOENT) {
			/* already gone (srcpin checkout --force cleans untracked files) */
			free(s->path);
			free(s->at);
			free(from);
			free(dir);
			return;
		}
		if (errno != EXDEV)
			die("cannot move %s aside to %s:", from, s->at);
		/* another filesystem: copy, keep the mtime, remove */
		struct stat st;
		struct timespec ts[2];
		if (stat(from, &st) < 0 || copyfile(from, s->at, st.st_mode & 07777) < 0)
			die("cannot move %s aside to %s:", from, s->at);
		ts[0] = st.st_atim, ts[1] = st.st_mtim;
		utimensat(AT_FDCWD, s->at, ts, 0);
		unlink(from);
	}
	g.nst++;
	free(from);
	free(dir);
}

/* what restoring the pristine tree does to a file of the manifest */
enum { A_NONE, A_STASH, A_RESTORE };

/* Restore the pristine tree: files hipify made are moved aside (A_STASH), files it
   rewrote are moved aside and get their originals back (A_RESTORE); classify chose. */
static void
undo(void)
{
	const struct fent *e, *c;
	char hx[65], *o, *t;
	size_t i;

	for (i = 0; i < g.man.n; i++) {
		e = &g.man.v[i];
		if (e->act == A_NONE || !(c = flist_find(&g.cur, e->path)))
			continue;
		stash(e->path, c->hash);
		if (e->act == A_RESTORE) {
			hex32(e->orig, hx);
			o = xasprintf("%s/orig/%s", g.state, hx);
			t = tpath(e->path);
			if (copyfile(o, t, (unsigned)e->mode) < 0)
				die("cannot restore %s from %s:", t, o);
			free(o);
			free(t);
		}
	}
}

/* what the tree is compared with the manifest */
enum { T_CLEAN, T_INPUTS, T_DIRTY };

/* set *why to msg (taking it) unless a reason of the same weight is there already */
static void
because(char **why, int *state, int level, char *msg)
{
	if (level > *state || !*why) {
		free(*why);
		*why = msg;
		if (level > *state)
			*state = level;
	} else {
		free(msg);
	}
}

/* Compare the tree (g.cur) with what hipify-wrap made (g.man) and choose, per file, what
   restoring the pristine tree does. A file hipify made or rewrote that was edited since
   makes the tree dirty; with force it is restored anyway (the edit is lost). A rewritten
   file back at its original bytes, or equal to git's index, is pristine already; files
   that are gone need nothing. Returns T_CLEAN, T_INPUTS (inputs changed) or T_DIRTY. */
static int
classify(char **why, int force)
{
	struct fent *e;
	const struct fent *c;
	size_t i;
	int r = T_CLEAN;

	for (i = 0; i < g.man.n; i++) {
		e = &g.man.v[i];
		c = flist_find(&g.cur, e->path);
		e->act = A_NONE;
		if (!c) {
			if (e->kind != F_INPUT || r == T_CLEAN)
				because(why, &r, T_INPUTS, xasprintf("%s (%s) was removed", e->path,
				        e->kind == F_OUTPUT ? "made by hipify" : e->kind == F_MODIFIED ? "rewritten by hipify" : "an input"));
			continue;
		}
		if (memcmp(c->hash, e->hash, 32) == 0) {
			e->act = e->kind == F_OUTPUT ? A_STASH : e->kind == F_MODIFIED ? A_RESTORE : A_NONE;
			continue;
		}
		if (e->kind == F_INPUT) {
			because(why, &r, T_INPUTS, xasprintf("%s was edited", e->path));
		} else if (e->kind == F_MODIFIED && ((e->has_orig && memcmp(c->hash, e->orig, 32) == 0) ||
		                                     (g.git && tree_gitclean(g.srcdir, e->path)))) {
			because(why, &r, T_INPUTS, xasprintf("%s is pristine again", e->path));
		} else {
			because(why, &r, T_DIRTY, xasprintf("%s (%s by hipify) was edited since", e->path,
			        e->kind == F_OUTPUT ? "made" : "rewritten"));
			if (force)
				e->act = e->kind == F_OUTPUT ? A_STASH : A_RESTORE;
		}
	}
	for (i = 0; i < g.cur.n; i++) {
		c = &g.cur.v[i];
		if (flist_find(&g.man, c->path))
			continue;
		if (c->crumb)
			because(why, &r, T_DIRTY, xasprintf("%s carries hipify's generated-file line but hipify-wrap did not make it", c->path));
		else
			because(why, &r, T_INPUTS, xasprintf("%s is new", c->path));
	}
	return r;
}

/* the files that are hipify's inputs now: tracked files (git) or everything (walk) */
static void
inputs(struct flist *l, const struct flist *also)
{
	char *err = NULL;
	size_t i;

	if (g.git) {
		for (i = 0; i < g.tracked.n; i++)
			flist_add(l, g.tracked.v[i].path);
		for (i = 0; also && i < also->n; i++)
			if (also->v[i].kind == F_OUTPUT)
				flist_add(l, also->v[i].path);
		flist_sort(l);
	} else if (tree_walk(g.srcdir, g.statename, l, &err) < 0) {
		dien(EXIT_USAGE, "%s", err);
	}
}

static void
hashlist(struct flist *l, const struct flist *cache)
{
	char *err = NULL;

	if (tree_hash(g.srcdir, l, cache, &err) < 0)
		dien(EXIT_USAGE, "%s", err);
}

/* bring the tree back to the snapshot pre (files listed in walk existed before):
   changed files from the journal dir, new files removed. Returns 0 or -1. */
static int
rollback(const struct flist *pre, const struct flist *walk, const char *dir)
{
	struct flist now = {0}, w = {0};
	const struct fent *p;
	char *err = NULL, hx[65], *o, *t;
	size_t i;
	int r = 0;

	for (i = 0; i < pre->n; i++)
		flist_add(&now, pre->v[i].path);
	flist_sort(&now);
	hashlist(&now, pre);
	for (i = 0; i < pre->n; i++) {
		p = &pre->v[i];
		const struct fent *c = flist_find(&now, p->path);
		if (c && memcmp(c->hash, p->hash, 32) == 0)
			continue;
		hex32(p->hash, hx);
		o = xasprintf("%s/%s", dir, hx);
		t = tpath(p->path);
		if (copyfile(o, t, (unsigned)p->mode) < 0) {
			warn("cannot restore %s from %s:", t, o);
			r = -1;
		}
		free(o);
		free(t);
	}
	if (tree_walk(g.srcdir, g.statename, &w, &err) < 0) {
		warn("%s", err);
		free(err);
		r = -1;
	}
	for (i = 0; i < w.n; i++) {
		if (flist_find(walk, w.v[i].path) || flist_find(pre, w.v[i].path))
			continue;
		t = tpath(w.v[i].path);
		if (unlink(t) < 0)
			warn("cannot remove %s:", t), r = -1;
		free(t);
	}
	flist_free(&now);
	flist_free(&w);
	return r;
}

/* put stashed files back where hipify remade the same bytes; drop the rest */
static void
unstash(void)
{
	struct fent *e;
	char *t;
	size_t i;

	for (i = 0; i < g.nst; i++) {
		e = flist_find(&g.post, g.st[i].path);
		if (e && memcmp(e->hash, g.st[i].hash, 32) == 0) {
			t = tpath(e->path);
			if (rename(g.st[i].at, t) < 0 && errno == EXDEV) {
				struct stat st;
				struct timespec ts[2];
				if (stat(g.st[i].at, &st) == 0) {
					ts[0].tv_nsec = UTIME_OMIT, ts[0].tv_sec = 0;
					ts[1] = st.st_mtim;
					utimensat(AT_FDCWD, t, ts, 0);
				}
			}
			free(t);
			fent_restat(g.srcdir, e);
		}
		unlink(g.st[i].at);
	}
}

/* the environment for the child when envclean is absent: a small allow-list */
static char **
minimalenv(void)
{
	static const char *keep[] = {"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TERM", "HIP_PATH",
	                             "ROCM_PATH", "ROCM_HOME", "PYTORCH_ROCM_ARCH", "CUDA_HOME"};
	char **env = xcalloc(nelem(keep) + 4, sizeof(*env));
	size_t i, n = 0;
	const char *v;

	for (i = 0; i < nelem(keep); i++)
		if ((v = getenv(keep[i])))
			env[n++] = xasprintf("%s=%s", keep[i], v);
	env[n++] = xstrdup("LC_ALL=C.UTF-8");
	env[n++] = xstrdup("PYTHONUTF8=1");
	env[n++] = xstrdup("PYTHONDONTWRITEBYTECODE=1");
	env[n] = NULL;
	return env;
}

/* run the hipify command; returns its exit status */
static int
runhipify(const char *resultpath, int fd)
{
	char *envclean = findprog("envclean", g.self), **argv, **env = NULL;
	int n = 0, i, rc;

	argv = xcalloc((size_t)g.ncmd + 24, sizeof(*argv));
	if (envclean) {
		argv[n++] = envclean;
		argv[n++] = "--set";
		argv[n++] = "PYTHONUTF8=1";
		argv[n++] = "--set";
		argv[n++] = "PYTHONDONTWRITEBYTECODE=1";
		argv[n++] = "--keep";
		argv[n++] = "HIP_PATH";
		argv[n++] = "--keep";
		argv[n++] = "ROCM_PATH";
		argv[n++] = "--keep";
		argv[n++] = "PYTORCH_ROCM_ARCH";
		argv[n++] = "--";
	} else {
		env = minimalenv();
		warn("envclean not found beside %s or on PATH; running hipify in a minimal environment", argv0);
	}
	for (i = 0; i < g.ncmd; i++)
		argv[n++] = g.cmd[i];
	if (g.project != P_GENERIC)
		argv[n++] = (char *)resultpath;
	argv[n] = NULL;
	rc = run_logged(argv, env, g.srcdir, fd, g.progress);
	if (rc < 0)
		die("cannot start hipify:");
	close(fd);
	free(envclean);
	free(argv);
	for (i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
	return rc;
}

static void
writestamp(const char *key, const char *source)
{
	struct buf b = {0};
	char *p = spath("stamp");

	bufputs(&b, "# hipify-wrap stamp: the key of the hipified tree; written last\n");
	bufprintf(&b, "KEY=%s\nSOURCE=%s\n", key, source);
	if (g.python) {
		bufputs(&b, "PYTHON=");
		shquote(&b, g.python);
		bufprintf(&b, "\nPYTHON_ID=%s\n", g.pyid);
	}
	bufadd(&b, g.keytxt.s, g.keytxt.len);
	/* the key text names the hipify folder; keep it readable back for the next no-op */
	{
		const char *h = strstr(g.keytxt.s, "# HIPIFY_DIR=");
		if (h) {
			const char *e = strchr(h, '\n');
			char *d = xstrndup(h + 13, (size_t)(e - h - 13));
			bufputs(&b, "HIPIFY_DIR=");
			shquote(&b, d);
			bufputc(&b, '\n');
			free(d);
		}
	}
	if (writefile_atomic(p, b.s, b.len, 0644) < 0)
		die("%s:", p);
	free(p);
	buffree(&b);
}

static void
report(const char *what, const char *key, const struct tally *t, int haveresult,
       unsigned long made, unsigned long rewrote, unsigned long kept)
{
	struct buf b = {0};
	struct json j;

	if (g.json) {
		json_init(&j, &b);
		json_obj(&j);
		json_kstr(&j, "status", what);
		json_kstr(&j, "srcdir", g.srcdir);
		json_kstr(&j, "key", key);
		json_kstr(&j, "project", projname[g.project]);
		if (haveresult) {
			json_key(&j, "hipify");
			json_obj(&j);
			json_kint(&j, "hipified", (int64_t)t->hipified);
			json_kint(&j, "unchanged", (int64_t)t->unchanged);
			json_kint(&j, "skipped", (int64_t)t->skipped);
			json_kint(&j, "failed", (int64_t)t->failed);
			json_end(&j);
		}
		json_key(&j, "files");
		json_obj(&j);
		json_kint(&j, "created", (int64_t)made);
		json_kint(&j, "rewritten", (int64_t)rewrote);
		json_kint(&j, "mtime_kept", (int64_t)kept);
		json_end(&j);
		json_kstr(&j, "log", strcmp(what, "up to date") ? g.logpath : NULL);
		json_end(&j);
		printf("%s\n", b.s);
	} else if (strcmp(what, "up to date") == 0) {
		printf("hipify: up to date\n");
	} else {
		printf("hipify: ");
		if (haveresult)
			printf("%lu hipified, %lu unchanged, %lu skipped, %lu failed; ",
			       t->hipified, t->unchanged, t->skipped, t->failed);
		printf("%lu files created, %lu rewritten in place, %lu mtimes kept (log: %s)\n",
		       made, rewrote, kept, g.logpath);
	}
	buffree(&b);
}

static void
opts(int argc, char **argv)
{
	int i;
	const char *a, *v;
	const char *srcdir = NULL;

	g.scripts = xcalloc((size_t)argc + 1, sizeof(*g.scripts));
	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strcmp(a, "--") == 0) {
			g.cmd = &argv[i + 1];
			g.ncmd = argc - i - 1;
			break;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
			usage(NULL);
		else if (strcmp(a, "--reset") == 0)
			g.reset = 1;
		else if (strcmp(a, "--json") == 0)
			g.json = 1;
		else if (startswith(a, "--project=") || strcmp(a, "--project") == 0) {
			v = strchr(a, '=') ? strchr(a, '=') + 1 : (++i < argc ? argv[i] : NULL);
			if (!v)
				usage("--project needs torch, vision or generic");
			if (strcmp(v, "torch") == 0)
				g.project = P_TORCH;
			else if (strcmp(v, "vision") == 0)
				g.project = P_VISION;
			else if (strcmp(v, "generic") == 0)
				g.project = P_GENERIC;
			else
				dien(EXIT_USAGE, "unknown --project '%s'; use torch, vision or generic", v);
		} else if (startswith(a, "--python=") || strcmp(a, "--python") == 0 ||
		           startswith(a, "--log=") || strcmp(a, "--log") == 0 ||
		           startswith(a, "--state=") || strcmp(a, "--state") == 0 ||
		           startswith(a, "--script=") || strcmp(a, "--script") == 0 ||
		           startswith(a, "--series=") || strcmp(a, "--series") == 0) {
			v = strchr(a, '=') ? strchr(a, '=') + 1 : (++i < argc ? argv[i] : NULL);
			if (!v || !*v)
				dien(EXIT_USAGE, "%.*s needs a value", (int)strcspn(a, "="), a);
			if (startswith(a, "--python"))
				g.python = (char *)v;
			else if (startswith(a, "--log"))
				g.logpath = (char *)v;
			else if (startswith(a, "--state"))
				g.state = (char *)v;
			else if (startswith(a, "--script"))
				g.scripts[g.nscripts++] = v;
			else
				g.series = v;
		} else if (a[0] == '-' && a[1]) {
			dien(EXIT_USAGE, "unknown option '%s' (see hipify-wrap --help)", a);
		} else if (!srcdir) {
			srcdir = a;
		} else {
			dien(EXIT_USAGE, "unexpected argument '%s'; the hipify command goes after --", a);
		}
	}
	if (!srcdir)
		usage("missing SRCDIR");
	if (g.project == P_GENERIC && g.ncmd == 0)
		usage("--project=generic needs the hipify command after --");
	if (g.project != P_GENERIC && g.ncmd > 0)
		dien(EXIT_USAGE, "--project=%s runs its own hipify; give a command only with --project=generic", projname[g.project]);
	if (!(g.srcdir = realpath(srcdir, NULL)))
		dien(EXIT_USAGE, "%s: %s", srcdir, strerror(errno));
	{
		struct stat st;
		if (stat(g.srcdir, &st) < 0 || !S_ISDIR(st.st_mode))
			dien(EXIT_USAGE, "%s: not a folder", srcdir);
	}
	for (i = 0; i < g.nscripts; i++)
		if (access(g.scripts[i], R_OK) < 0)
			dien(EXIT_USAGE, "--script=%s: %s", g.scripts[i], strerror(errno));
}

/* the interpreter: --python, else python3 on PATH; its realpath and size:mtime */
static void
findpython(void)
{
	struct stat st;
	char *p, *r;

	if (!g.python && g.project == P_GENERIC)
		return;
	if (g.python && strchr(g.python, '/')) {
		p = xstrdup(g.python);
		if (access(p, X_OK) < 0 && access(g.python, F_OK) == 0) {
			/* a venv folder */
			free(p);
			p = xasprintf("%s/bin/python", g.python);
		}
	} else {
		p = findprog(g.python ? g.python : "python3", NULL);
		if (!p)
			dien(EXIT_USAGE, "%s: not found on PATH (give --python=PATH)", g.python ? g.python : "python3");
	}
	if (!(r = realpath(p, NULL)) || stat(r, &st) < 0 || !S_ISREG(st.st_mode) || access(r, X_OK) < 0)
		dien(EXIT_USAGE, "--python=%s: not an executable interpreter", g.python ? g.python : p);
	/* keep the path the user named when it is a symlink into a venv: the venv decides
	   sys.path, so a venv's bin/python stays as named (realpath of its folder only) */
	if (strstr(p, "/bin/python")) {
		char *dir = xstrndup(p, (size_t)(strrchr(p, '/') - p)), *rd = realpath(dir, NULL);
		if (rd) {
			free(r);
			r = xasprintf("%s%s", rd, strrchr(p, '/'));
			free(rd);
		}
		free(dir);
	}
	g.python = r;
	g.pyid = xasprintf("%llu:%lld.%09ld", (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
	                   st.st_mtim.tv_nsec);
	free(p);
}

/* the state folder: .git/kiln-hipify in a git work tree, else SRCDIR/.kiln-hipify */
static void
findstate(void)
{
	struct stat st;
	char *gitdir = tpath(".git");

	if (!g.state) {
		if (stat(gitdir, &st) == 0 && S_ISDIR(st.st_mode)) {
			g.state = xasprintf("%s/kiln-hipify", gitdir);
		} else {
			g.state = tpath(".kiln-hipify");
			g.statename = ".kiln-hipify";
		}
	} else {
		char *r;
		if (mkdir(g.state, 0755) < 0 && errno != EEXIST)
			dien(EXIT_USAGE, "--state=%s: %s", g.state, strerror(errno));
		if (!(r = realpath(g.state, NULL)))
			dien(EXIT_USAGE, "--state=%s: %s", g.state, strerror(errno));
		g.state = r;
		if (startswith(r, g.srcdir) && r[strlen(g.srcdir)] == '/' && !strchr(r + strlen(g.srcdir) + 1, '/'))
			g.statename = r + strlen(g.srcdir) + 1;
		else if (startswith(r, g.srcdir) && r[strlen(g.srcdir)] == '/')
			dien(EXIT_USAGE, "--state=%s: inside SRCDIR it must be a top-level folder", g.state);
	}
	free(gitdir);
	if (mkdir(g.state, 0755) < 0 && errno != EEXIST)
		dien(EXIT_USAGE, "%s: cannot create the state folder: %s", g.state, strerror(errno));
}

/* ask srcpin to restore the pinned pristine tree */
static void
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

int
main(int argc, char **argv)
{
	char key[65], source[65], hx[65], *err = NULL, *why = NULL, *p, *lockp, *resultp, *journal, *orig;
	struct tally t = {0};
	int lockfd, logfd, rc, state, haveresult = 0, dirty = 0;
	unsigned long made = 0, rewrote = 0, kept = 0;
	size_t i;
	struct fent *e;
	const struct fent *c;
	const char *ok;

	setprogname(argv[0]);
	/* where this binary lies, so envclean and srcpin are found beside it */
	{
		static char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n > 0)
			exe[n] = 0;
		g.self = n > 0 ? exe : argv[0];
	}
	opts(argc, argv);
	findpython();
	if (g.project == P_TORCH) {
		p = tpath("tools/amd_build/build_amd.py");
		rc = access(p, R_OK);
		free(p);
		if (rc < 0)
			dien(EXIT_USAGE, "%s: no tools/amd_build/build_amd.py; --project=torch needs a pytorch tree", g.srcdir);
	}
	findstate();
	g.progress = isatty(2) && !g.json;

	lockp = spath("lock");
	if ((lockfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
		die("%s:", lockp);
	if (flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr, "%s: waiting for another hipify-wrap on %s\n", argv0, g.srcdir);
		if (flock(lockfd, LOCK_EX) < 0)
			die("%s:", lockp);
	}
	free(lockp);
	if (!g.logpath)
		g.logpath = spath("hipify.log");

	/* an earlier run that never finished: only the journal can restore the tree */
	p = spath("pending");
	if (access(p, F_OK) == 0) {
		char *pw = spath("pending.walk"), *jd = spath("orig.new");
		struct flist pw_l = {0};
		if (!g.reset) {
			free(p), free(pw), free(jd);
			dien(EXIT_PROBLEM, "%s: an earlier hipify run did not finish, the tree may be half hipified; "
			     "run again with --reset to restore it from hipify-wrap's journal", g.srcdir);
		}
		if (manifest_read(p, &g.pre, &err) < 0 || manifest_read(pw, &pw_l, &err) < 0)
			dien(EXIT_PROBLEM, "%s", err);
		if (rollback(&g.pre, &pw_l, jd) < 0)
			dien(EXIT_PROBLEM, "%s: could not restore every file from the journal", g.srcdir);
		fprintf(stderr, "%s: restored %s from the journal of the unfinished run\n", argv0, g.srcdir);
		flist_free(&g.pre);
		flist_free(&pw_l);
		unlink(pw);
		rmtree(jd);
		unlink(p);
		free(pw);
		free(jd);
		free(p);
		p = spath("manifest"), unlink(p), free(p);
		p = spath("stamp"), unlink(p), free(p);
		p = spath("stash"), rmtree(p), free(p);
	} else {
		free(p);
	}

	p = spath("stamp");
	if (access(p, F_OK) == 0) {
		if (kv_load(&g.stamp, p, &err) < 0)
			dien(EXIT_PROBLEM, "%s (remove it, or use --reset)", err);
		g.havestamp = 1;
	}
	free(p);
	p = spath("manifest");
	if (manifest_read(p, &g.man, &err) < 0)
		dien(EXIT_PROBLEM, "%s", err);
	free(p);
	if (g.havestamp && g.man.n == 0)
		dien(EXIT_PROBLEM, "%s: stamp without manifest in %s; use --reset", g.srcdir, g.state);

	srcpinstate();
	if ((g.git = tree_gitfiles(g.srcdir, &g.tracked, &err)) < 0)
		dien(EXIT_USAGE, "%s", err);

	/* where the tree stands against what hipify-wrap made last time */
	inputs(&g.cur, &g.man);
	hashlist(&g.cur, &g.man);
	if (g.man.n) {
		state = classify(&why, 0);
		if (state == T_CLEAN) {
			ok = kv_get(&g.stamp, "SOURCE");
			makekey(ok ? ok : "", key);
			ok = kv_get(&g.stamp, "KEY");
			if (g.havestamp && ok && strcmp(ok, key) == 0) {
				report("up to date", key, &t, 0, 0, 0, 0);
				free(why);
				return EXIT_OK;
			}
			free(why);
			why = xstrdup("the hipify settings changed (see the stamp's key lines)");
		}
		if (state == T_DIRTY && !g.reset) {
			fprintf(stderr, "%s: %s: refusing to hipify: the tree was hipified by hipify-wrap and %s; "
			        "restore it (--reset) instead of hipifying hipified files\n", argv0, g.srcdir, why);
			free(why);
			return EXIT_PROBLEM;
		}
		if (!g.json)
			fprintf(stderr, "%s: %s; re-hipifying from the pristine tree\n", argv0, why);
		p = spath("stamp"), unlink(p), free(p);
		if (g.reset && g.pinned) {
			/* srcpin restores the tracked files; then see again what is left to undo */
			srcpinreset();
			flist_free(&g.cur);
			inputs(&g.cur, &g.man);
			hashlist(&g.cur, &g.man);
		}
		free(why);
		why = NULL;
		classify(&why, g.reset);
		free(why);
		why = NULL;
		for (i = 0; i < g.man.n; i++)
			if (g.man.v[i].act == A_RESTORE && !g.man.v[i].has_orig) {
				fprintf(stderr, "%s: %s: refusing to hipify: %s was rewritten in place by hipify and no original "
				        "was kept; restore the pristine tree (srcpin checkout --force, or git checkout) and run again\n",
				        argv0, g.srcdir, g.man.v[i].path);
				return EXIT_PROBLEM;
			}
		undo();
		p = spath("manifest"), unlink(p), free(p);
	} else if (g.reset && g.pinned) {
		srcpinreset();
	}

	/* the pristine inputs */
	inputs(&g.pre, NULL);
	hashlist(&g.pre, &g.cur);
	for (i = 0; i < g.pre.n; i++)
		if (g.pre.v[i].crumb) {
			dirty = 1;
			break;
		}
	if (dirty)
		dien(EXIT_PROBLEM, "%s: refusing to hipify: %s starts with hipify's generated-file line, so the tree "
		     "is already hipified; restore the pristine tree (srcpin checkout --force, git checkout + git clean, "
		     "or --reset in a srcpin checkout)", g.srcdir, g.pre.v[i].path);
	if (tree_walk(g.srcdir, g.statename, &g.prewalk, &err) < 0)
		dien(EXIT_USAGE, "%s", err);
	/* files that are not inputs (untracked in git) must not be hipify's output either */
	for (i = 0; i < g.prewalk.n; i++)
		if (!flist_find(&g.pre, g.prewalk.v[i].path) && tree_crumb(g.srcdir, g.prewalk.v[i].path))
			dien(EXIT_PROBLEM, "%s: refusing to hipify: %s starts with hipify's generated-file line, so the tree "
			     "is already hipified; restore the pristine tree (srcpin checkout --force, git checkout + git clean, "
			     "or --reset in a srcpin checkout)", g.srcdir, g.prewalk.v[i].path);
	sourcedigest(&g.pre, source);
	makekey(source, key);

	/* the log first: a log that cannot be written stops us before anything is journaled */
	if ((logfd = open(g.logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		dien(EXIT_USAGE, "%s: %s", g.logpath, strerror(errno));

	/* the journal: originals of everything hipify might rewrite, then the pending mark */
	journal = spath("orig.new");
	rmtree(journal);
	journal_copy(&g.pre, journal);
	p = spath("pending.walk");
	if (manifest_write(p, &g.prewalk) < 0)
		die("%s:", p);
	free(p);
	p = spath("pending");
	if (manifest_write(p, &g.pre) < 0)
		die("%s:", p);
	free(p);

	if (g.project != P_GENERIC) {
		char **cmd = xcalloc(6, sizeof(*cmd));
		cmd[0] = g.python;
		cmd[1] = "-I";
		cmd[2] = "-c";
		cmd[3] = (char *)hw_driver;
		cmd[4] = (char *)projname[g.project];
		cmd[5] = g.srcdir;
		g.cmd = cmd;
		g.ncmd = 6;
	}
	resultp = spath("result.jsonl");
	unlink(resultp);
	rc = runhipify(resultp, logfd);
	if (g.project != P_GENERIC) {
		haveresult = tally_jsonfile(resultp, &t) >= 0;
		free(g.cmd);
	} else {
		haveresult = tally_logfile(g.logpath, &t) > 0;
	}
	unlink(resultp);
	free(resultp);
	if (rc != 0 || t.failed) {
		struct buf tail = {0};
		log_tail(g.logpath, 15, "  ", &tail);
		if (rc != 0)
			fprintf(stderr, "%s: hipify failed (exit %d); last lines of %s:\n%s", argv0, rc, g.logpath, tail.s ? tail.s : "");
		else
			fprintf(stderr, "%s: hipify could not write %lu files; see %s\n", argv0, t.failed, g.logpath);
		buffree(&tail);
		if (rollback(&g.pre, &g.prewalk, journal) == 0) {
			fprintf(stderr, "%s: the tree is restored to its state before hipify\n", argv0);
			p = spath("pending"), unlink(p), free(p);
			p = spath("pending.walk"), unlink(p), free(p);
			rmtree(journal);
		}
		p = spath("stash"), rmtree(p), free(p);
		free(journal);
		return EXIT_PROBLEM;
	}

	/* what hipify did: inputs it left, rewrote, and the files it made */
	inputs(&g.post, NULL);
	{
		struct flist w = {0};
		if (tree_walk(g.srcdir, g.statename, &w, &err) < 0)
			dien(EXIT_USAGE, "%s", err);
		for (i = 0; i < w.n; i++)
			if (!flist_find(&g.prewalk, w.v[i].path) && !flist_find(&g.pre, w.v[i].path))
				flist_add(&g.post, w.v[i].path)->kind = F_OUTPUT;
		flist_free(&w);
		flist_sort(&g.post);
	}
	for (i = 0; i < g.post.n; i++) {
		e = &g.post.v[i];
		if (!flist_find(&g.pre, e->path) && !flist_find(&g.prewalk, e->path))
			e->kind = F_OUTPUT;
	}
	hashlist(&g.post, &g.pre);
	for (i = 0; i < g.post.n; i++) {
		e = &g.post.v[i];
		c = flist_find(&g.pre, e->path);
		if (!c) {
			e->kind = F_OUTPUT;
			made++;
			continue;
		}
		if (memcmp(c->hash, e->hash, 32) != 0) {
			e->kind = F_MODIFIED;
			memcpy(e->orig, c->hash, 32);
			hex32(c->hash, hx);
			p = xasprintf("%s/%s", journal, hx);
			e->has_orig = access(p, F_OK) == 0;
			free(p);
			rewrote++;
			continue;
		}
		e->kind = F_INPUT;
		if (e->msec != c->msec || e->mnsec != c->mnsec) {
			/* same bytes written again: give the file its old mtime back */
			struct timespec ts[2] = {{0, UTIME_OMIT}, {c->msec, c->mnsec}};
			p = tpath(e->path);
			if (utimensat(AT_FDCWD, p, ts, 0) < 0)
				warn("cannot restore the mtime of %s:", p);
			free(p);
			fent_restat(g.srcdir, e);
			kept++;
		}
	}
	unstash();
	for (i = 0; i < g.nst; i++) {
		e = flist_find(&g.post, g.st[i].path);
		if (e && memcmp(e->hash, g.st[i].hash, 32) == 0)
			kept++;
	}
	p = spath("stash"), rmtree(p), free(p);

	/* keep the originals of rewritten files only */
	orig = spath("orig");
	rmtree(orig);
	if (rewrote) {
		if (mkdir(orig, 0755) < 0 && errno != EEXIST)
			die("%s:", orig);
		for (i = 0; i < g.post.n; i++) {
			e = &g.post.v[i];
			if (e->kind != F_MODIFIED || !e->has_orig)
				continue;
			char *from, *to;
			hex32(e->orig, hx);
			from = xasprintf("%s/%s", journal, hx);
			to = xasprintf("%s/%s", orig, hx);
			if (access(to, F_OK) < 0 && rename(from, to) < 0)
				die("cannot keep %s as %s:", from, to);
			free(from);
			free(to);
		}
	}
	rmtree(journal);
	free(journal);
	free(orig);

	p = spath("manifest");
	if (manifest_write(p, &g.post) < 0)
		die("%s:", p);
	free(p);
	p = spath("pending"), unlink(p), free(p);
	p = spath("pending.walk"), unlink(p), free(p);
	writestamp(key, source);
	report("hipified", key, &t, haveresult, made, rewrote, kept);
	return EXIT_OK;
}
