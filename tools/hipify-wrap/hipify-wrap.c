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
#include "hw.h"
#include "opt.h"
#include "os.h"
#include "json.h"
#include "kv.h"
#include "proc.h"
#include "result.h"
#include "run.h"
#include "tree.h"
#include "util.h"


static void
usage(const char *err)
{
	opt_usage(err,
	          "usage: hipify-wrap [--project=torch|vision|generic] [--python=PATH] [--reset]\n"
	          "                   [--log FILE] [--state=DIR] [--script=FILE]... [--series=FILE]\n"
	          "                   [--json] SRCDIR [-- CMD...]\n"
	          "       hipify-wrap --undo [--state=DIR] [--json] SRCDIR\n"
	          "       hipify-wrap --version\n"
	          "Runs the project's hipify on SRCDIR once per source state (generic: CMD, run in\n"
	          "SRCDIR) and prints a summary; 'hipify: up to date' when nothing changed.\n"
	          "--undo puts the pristine tree back and keeps hipify's files aside for the next run.\n"
	          "Exit: 0 done or up to date, 1 hipify failed or the tree was refused, 2 usage.\n");
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

/* what a run did to the output files */
struct filecounts {
	unsigned long made;      /* created */
	unsigned long rewrote;   /* rewritten in place */
	unsigned long kept;      /* mtimes kept */
};

static void
report(const char *what, const char *key, const struct tally *t, int haveresult,
       const struct filecounts *fc)
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
		json_kint(&j, "created", (int64_t)fc->made);
		json_kint(&j, "rewritten", (int64_t)fc->rewrote);
		json_kint(&j, "mtime_kept", (int64_t)fc->kept);
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
		       fc->made, fc->rewrote, fc->kept, g.logpath);
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
		else if (opt_isversion(a))
			opt_version();
		else if (strcmp(a, "--reset") == 0)
			g.reset = 1;
		else if (strcmp(a, "--undo") == 0)
			g.undo = 1;
		else if (strcmp(a, "--json") == 0)
			g.json = 1;
		else if ((v = opt_val(argc, argv, &i, "--project", usage))) {
			if (strcmp(v, "torch") == 0)
				g.project = P_TORCH;
			else if (strcmp(v, "vision") == 0)
				g.project = P_VISION;
			else if (strcmp(v, "generic") == 0)
				g.project = P_GENERIC;
			else
				dien(EXIT_USAGE, "unknown --project '%s'; use torch, vision or generic", v);
		} else if ((v = opt_val(argc, argv, &i, "--python", usage)) ||
		           (v = opt_val(argc, argv, &i, "--log", usage)) ||
		           (v = opt_val(argc, argv, &i, "--state", usage)) ||
		           (v = opt_val(argc, argv, &i, "--script", usage)) ||
		           (v = opt_val(argc, argv, &i, "--series", usage))) {
			if (!*v)
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
	if (g.project == P_GENERIC && g.ncmd == 0 && !g.undo)
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
	for (i = 0; i < g.nscripts; i++) {
		/* hashed into the key: a FIFO or device there must not hang the run */
		char *msg = NULL;
		int fd = os_openreg(g.scripts[i], 0, NULL, &msg);
		if (fd < 0)
			dien(EXIT_USAGE, "--script=%s", msg);
		close(fd);
	}
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

/* the state folder: .git/kiln-hipify in a git work tree, else SRCDIR/.kiln-hipify.
   It must be a folder of its own: a symlink planted there (or at .git) would send the
   log, the journal and the stash outside the tree, so it is refused (exit 2). */
static void
findstate(void)
{
	struct stat st;
	char *gitdir = tpath(".git"), *err = NULL;

	if (!g.state) {
		if (lstat(gitdir, &st) == 0 && S_ISDIR(st.st_mode)) {
			g.state = xasprintf("%s/kiln-hipify", gitdir);
		} else {
			g.state = tpath(".kiln-hipify");
			g.statename = ".kiln-hipify";
		}
	} else {
		char *r;
		if (os_mkdirs(g.state, 0755) < 0)
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
	if (os_owndir(g.state, &err) < 0)
		dien(EXIT_USAGE, "%s", err);
}

/* where this binary lies, so envclean and srcpin are found beside it */
static void
findself(const char *argv0_)
{
	static char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0)
		exe[n] = 0;
	g.self = n > 0 ? exe : argv0_;
}

/* one hipify-wrap at a time on a tree: the lock is held until exit */
static void
takelock(void)
{
	char *msg = NULL, *lockp = spath("lock");
	int lockfd;

	if ((lockfd = os_createreg(lockp, O_RDWR, 0644, &msg)) < 0)
		dien(EXIT_USAGE, "%s", msg);
	if (flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr, "%s: waiting for another hipify-wrap on %s\n", argv0, g.srcdir);
		if (flock(lockfd, LOCK_EX) < 0)
			die("%s:", lockp);
	}
	free(lockp);
}

/* remove the state file NAME (a folder with rmtree when dir) */
static void
dropstate(const char *name, int dir)
{
	char *p = spath(name);

	if (dir)
		rmtree(p);
	else
		unlink(p);
	free(p);
}

/* an earlier run that never finished: only the journal can restore the tree (--reset) */
static void
recover(void)
{
	char *p = spath("pending"), *pw, *jd, *err = NULL;
	struct flist pw_l = {0};

	if (access(p, F_OK) < 0) {
		free(p);
		return;
	}
	if (!g.reset) {
		free(p);
		dien(EXIT_PROBLEM, "%s: an earlier hipify run did not finish, the tree may be half hipified; "
		     "run again with --reset to restore it from hipify-wrap's journal", g.srcdir);
	}
	pw = spath("pending.walk");
	jd = spath("orig.new");
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
	dropstate("manifest", 0);
	dropstate("stamp", 0);
	dropstate("stash", 1);
}

/* the stamp and the manifest of the last run, and which files are tracked */
static void
loadstate(void)
{
	char *p = spath("stamp"), *err = NULL;
	int rc;

	if (access(p, F_OK) == 0) {
		if (kv_load(&g.stamp, p, &err) < 0)
			dien(EXIT_PROBLEM, "%s (remove it, or use --reset)", err);
		g.havestamp = 1;
	}
	free(p);
	p = spath("manifest");
	rc = manifest_read(p, &g.man, &err);
	free(p);
	if (rc < 0)
		dien(EXIT_PROBLEM, "%s", err);
	if (g.havestamp && g.man.n == 0)
		dien(EXIT_PROBLEM, "%s: stamp without manifest in %s; use --reset", g.srcdir, g.state);
	srcpinstate();
	if (tracked_from_stamp())
		g.git = 1;
	else if ((g.git = tree_gitfiles(g.srcdir, &g.tracked, &err)) < 0)
		dien(EXIT_USAGE, "%s", err);
}

/* refuse (exit 1) when a file hipify rewrote in place must be restored and no original
   was kept */
static void
needorigs(void)
{
	size_t i;

	for (i = 0; i < g.man.n; i++)
		if (g.man.v[i].act == A_RESTORE && !g.man.v[i].has_orig)
			dien(EXIT_PROBLEM, "%s: refusing to hipify: %s was rewritten in place by hipify and no "
			     "original was kept; restore the pristine tree (srcpin checkout --force, or git "
			     "checkout) and run again", g.srcdir, g.man.v[i].path);
}

/* the tree was hipified before: undo that run (or refuse); 1 when it is up to date (its
   key in key) */
static int
undolast(char key[65])
{
	char *why = NULL;
	const char *ok;
	int state = classify(&why, 0);

	if (state == T_CLEAN) {
		ok = kv_get(&g.stamp, "SOURCE");
		makekey(ok ? ok : "", key);
		ok = kv_get(&g.stamp, "KEY");
		if (g.havestamp && ok && strcmp(ok, key) == 0) {
			free(why);
			return 1;
		}
		free(why);
		why = xstrdup("the hipify settings changed (see the stamp's key lines)");
	}
	if (state == T_DIRTY && !g.reset) {
		fprintf(stderr, "%s: %s: refusing to hipify: the tree was hipified by hipify-wrap and %s; "
		        "restore it (--reset) instead of hipifying hipified files\n", argv0, g.srcdir, why);
		free(why);
		exit(EXIT_PROBLEM);
	}
	if (!g.json)
		fprintf(stderr, "%s: %s; re-hipifying from the pristine tree\n", argv0, why);
	free(why);
	why = NULL;
	dropstate("stamp", 0);
	if (g.reset && g.pinned) {
		/* srcpin restores the tracked files; then see again what is left to undo */
		srcpinreset();
		flist_free(&g.cur);
		inputs(&g.cur, &g.man);
		hashlist(&g.cur, &g.man);
	}
	classify(&why, g.reset);
	free(why);
	needorigs();
	undo();
	dropstate("manifest", 0);
	return 0;
}

/* --undo's result: what (undone, nothing to undo) and the files kept aside */
static void
undone(const char *what)
{
	struct buf b = {0};
	struct json j;

	if (!g.json) {
		if (strcmp(what, "undone") == 0)
			printf("hipify: %s: the pristine tree is back; %zu files hipify made or rewrote kept aside "
			       "for the next run\n", g.srcdir, g.nst);
		else
			printf("hipify: %s: %s\n", g.srcdir, what);
		return;
	}
	json_init(&j, &b);
	json_obj(&j);
	json_kstr(&j, "status", what);
	json_kstr(&j, "srcdir", g.srcdir);
	json_kint(&j, "kept_aside", (int64_t)g.nst);
	json_end(&j);
	printf("%s\n", b.s);
	buffree(&b);
}

/* --undo: the pristine tree back, whatever was edited since; hipify's files stay aside
   in the state folder, and the next run that hipifies puts back each one whose bytes it
   makes again (same inode and mtime). For a step that changes the tree between two
   hipify runs (kiln's patch stage: srcpin checkout --force removes untracked files). */
static int
undorun(void)
{
	char *why = NULL;

	if (!g.man.n) {
		undone("nothing to undo");
		return EXIT_OK;
	}
	classify(&why, 1);
	free(why);
	needorigs();
	undo();
	if (g.nst && stash_save() < 0)
		die("%s/stash/list:", g.state);
	dropstate("manifest", 0);
	dropstate("stamp", 0);
	undone("undone");
	return EXIT_OK;
}

/* refuse a tree that already holds hipify's output at path */
static void
nocrumb(const char *path)
{
	dien(EXIT_PROBLEM, "%s: refusing to hipify: %s starts with hipify's generated-file line, so the tree "
	     "is already hipified; restore the pristine tree (srcpin checkout --force, git checkout + git clean, "
	     "or --reset in a srcpin checkout)", g.srcdir, path);
}

/* the pristine inputs, none of them (nor any untracked file) hipify's output; their digest */
static void
pristine(char source[65])
{
	char *err = NULL;
	size_t i;

	inputs(&g.pre, NULL);
	hashlist(&g.pre, &g.cur);
	for (i = 0; i < g.pre.n; i++)
		if (g.pre.v[i].crumb)
			nocrumb(g.pre.v[i].path);
	if (tree_walk(g.srcdir, g.statename, &g.prewalk, &err) < 0)
		dien(EXIT_USAGE, "%s", err);
	/* files that are not inputs (untracked in git) must not be hipify's output either */
	for (i = 0; i < g.prewalk.n; i++)
		if (!flist_find(&g.pre, g.prewalk.v[i].path) && tree_crumb(g.srcdir, g.prewalk.v[i].path))
			nocrumb(g.prewalk.v[i].path);
	sourcedigest(&g.pre, source);
}

/* the journal: originals of everything hipify might rewrite, then the pending mark */
static char *
journal_begin(void)
{
	char *journal = spath("orig.new"), *p;

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
	return journal;
}

/* run hipify (the project's driver, or the generic command) with its output in logfd;
   its exit status, the tally in *t */
static int
hipify(int logfd, struct tally *t, int *haveresult)
{
	char *cmd[7], *resultp = spath("result.jsonl");
	int rc;

	if (g.project != P_GENERIC) {
		cmd[0] = g.python;
		cmd[1] = "-I";
		cmd[2] = "-c";
		cmd[3] = (char *)hw_driver;
		cmd[4] = (char *)projname[g.project];
		cmd[5] = g.srcdir;
		cmd[6] = g.hipdir ? g.hipdir : "";
		g.cmd = cmd;
		g.ncmd = 7;
	}
	unlink(resultp);
	rc = runhipify(resultp, logfd);
	if (g.project != P_GENERIC) {
		*haveresult = tally_jsonfile(resultp, t) >= 0;
		g.cmd = NULL;
		g.ncmd = 0;
	} else {
		*haveresult = tally_logfile(g.logpath, t) > 0;
	}
	unlink(resultp);
	free(resultp);
	return rc;
}

/* hipify failed: say how, restore the tree from the journal */
static void
hipify_failed(int rc, const struct tally *t, const char *journal)
{
	struct buf tail = {0};

	tailfile(g.logpath, 15, "  ", &tail);
	if (rc != 0)
		fprintf(stderr, "%s: hipify failed (exit %d); last lines of %s:\n%s", argv0, rc, g.logpath,
		        tail.s ? tail.s : "");
	else
		fprintf(stderr, "%s: hipify could not write %lu files; see %s\n", argv0, t->failed, g.logpath);
	buffree(&tail);
	if (rollback(&g.pre, &g.prewalk, journal) == 0) {
		fprintf(stderr, "%s: the tree is restored to its state before hipify\n", argv0);
		dropstate("pending", 0);
		dropstate("pending.walk", 0);
		rmtree(journal);
	}
	dropstate("stash", 1);
}

/* what hipify left: the inputs and every file it made */
static void
collect_post(void)
{
	struct flist w = {0};
	char *err = NULL;
	size_t i;

	inputs(&g.post, NULL);
	if (tree_walk(g.srcdir, g.statename, &w, &err) < 0)
		dien(EXIT_USAGE, "%s", err);
	for (i = 0; i < w.n; i++)
		if (!flist_find(&g.prewalk, w.v[i].path) && !flist_find(&g.pre, w.v[i].path))
			flist_add(&g.post, w.v[i].path)->kind = F_OUTPUT;
	flist_free(&w);
	flist_sort(&g.post);
	for (i = 0; i < g.post.n; i++)
		if (!flist_find(&g.pre, g.post.v[i].path) && !flist_find(&g.prewalk, g.post.v[i].path))
			g.post.v[i].kind = F_OUTPUT;
	hashlist(&g.post, &g.pre);
}

/* input e came out with the bytes it had (c): give it its old mtime back */
static int
keepmtime(struct fent *e, const struct fent *c)
{
	struct timespec ts[2] = {{0, UTIME_OMIT}, {c->msec, c->mnsec}};
	char *p;

	if (e->msec == c->msec && e->mnsec == c->mnsec)
		return 0;
	p = tpath(e->path);
	if (utimensat(AT_FDCWD, p, ts, 0) < 0)
		warn("cannot restore the mtime of %s:", p);
	free(p);
	fent_restat(g.srcdir, e);
	return 1;
}

/* each file after hipify: made, rewritten (its original in the journal) or as it was */
static void
sortpost(const char *journal, unsigned long *made, unsigned long *rewrote, unsigned long *kept)
{
	char hx[65], *p;
	struct fent *e;
	const struct fent *c;
	size_t i;

	for (i = 0; i < g.post.n; i++) {
		e = &g.post.v[i];
		if (!(c = flist_find(&g.pre, e->path))) {
			e->kind = F_OUTPUT;
			(*made)++;
		} else if (memcmp(c->hash, e->hash, 32) != 0) {
			e->kind = F_MODIFIED;
			memcpy(e->orig, c->hash, 32);
			hex32(c->hash, hx);
			p = xasprintf("%s/%s", journal, hx);
			e->has_orig = access(p, F_OK) == 0;
			free(p);
			(*rewrote)++;
		} else {
			e->kind = F_INPUT;
			*kept += (unsigned long)keepmtime(e, c);
		}
	}
	unstash();
	for (i = 0; i < g.nst; i++) {
		e = flist_find(&g.post, g.st[i].path);
		if (e && memcmp(e->hash, g.st[i].hash, 32) == 0)
			(*kept)++;
	}
	dropstate("stash", 1);
}

/* keep the originals of rewritten files only; the journal goes */
static void
keeporig(const char *journal, unsigned long rewrote)
{
	char *msg = NULL, hx[65], *from, *to, *orig = spath("orig");
	const struct fent *e;
	size_t i;

	rmtree(orig);
	if (rewrote && os_owndir(orig, &msg) < 0)
		dien(EXIT_USAGE, "%s", msg);
	for (i = 0; rewrote && i < g.post.n; i++) {
		e = &g.post.v[i];
		if (e->kind != F_MODIFIED || !e->has_orig)
			continue;
		hex32(e->orig, hx);
		from = xasprintf("%s/%s", journal, hx);
		to = xasprintf("%s/%s", orig, hx);
		if (access(to, F_OK) < 0 && rename(from, to) < 0)
			die("cannot keep %s as %s:", from, to);
		free(from);
		free(to);
	}
	rmtree(journal);
	free(orig);
}

int
main(int argc, char **argv)
{
	char key[65], source[65], *msg = NULL, *p, *journal;
	struct tally t = {0};
	int logfd, rc, haveresult = 0;
	unsigned long made = 0, rewrote = 0, kept = 0;

	setprogname(argv[0]);
	findself(argv[0]);
	opts(argc, argv);
	if (!g.undo)
		findpython();
	if (g.project == P_TORCH && !g.undo) {
		p = tpath("tools/amd_build/build_amd.py");
		rc = access(p, R_OK);
		free(p);
		if (rc < 0)
			dien(EXIT_USAGE, "%s: no tools/amd_build/build_amd.py; --project=torch needs a pytorch tree", g.srcdir);
	}
	findstate();
	g.progress = isatty(2) && !g.json;
	takelock();
	if (!g.logpath)
		g.logpath = spath("hipify.log");
	recover();
	loadstate();

	/* where the tree stands against what hipify-wrap made last time */
	inputs(&g.cur, &g.man);
	hashlist(&g.cur, &g.man);
	if (g.undo)
		return undorun();
	if (g.man.n && undolast(key)) {
		report("up to date", key, &t, 0, &(struct filecounts){0, 0, 0});
		return EXIT_OK;
	}
	if (!g.man.n && g.reset && g.pinned)
		srcpinreset();
	pristine(source);
	makekey(source, key);
	/* outputs an --undo kept aside (a patch stage changed the tree in between) */
	stash_load();

	/* the log first: a log that cannot be written stops us before anything is journaled */
	if ((logfd = os_createreg(g.logpath, O_TRUNC, 0644, &msg)) < 0)
		dien(EXIT_USAGE, "%s", msg);
	journal = journal_begin();
	rc = hipify(logfd, &t, &haveresult);
	if (rc != 0 || t.failed) {
		hipify_failed(rc, &t, journal);
		free(journal);
		return EXIT_PROBLEM;
	}
	collect_post();
	sortpost(journal, &made, &rewrote, &kept);
	keeporig(journal, rewrote);
	free(journal);

	p = spath("manifest");
	if (manifest_write(p, &g.post) < 0)
		die("%s:", p);
	free(p);
	dropstate("pending", 0);
	dropstate("pending.walk", 0);
	writestamp(key, source);
	report("hipified", key, &t, haveresult, &(struct filecounts){made, rewrote, kept});
	return EXIT_OK;
}
