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
	          "       hipify-wrap --version\n"
	          "Runs the project's hipify on SRCDIR once per source state (generic: CMD, run in\n"
	          "SRCDIR) and prints a summary; 'hipify: up to date' when nothing changed.\n"
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
		else if (opt_isversion(a))
			opt_version();
		else if (strcmp(a, "--reset") == 0)
			g.reset = 1;
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
	for (i = 0; i < g.nscripts; i++) {
		/* hashed into the key: a FIFO or device there must not hang the run */
		char msg[PATH_MAX + 128];
		int fd = os_openreg(g.scripts[i], 0, NULL, msg, sizeof msg);
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
	char *gitdir = tpath(".git"), err[PATH_MAX + 128];

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
	if (os_owndir(g.state, err, sizeof err) < 0)
		dien(EXIT_USAGE, "%s", err);
}

int
main(int argc, char **argv)
{
	char key[65], source[65], hx[65], msg[PATH_MAX + 128], *err = NULL, *why = NULL, *p, *lockp, *resultp, *journal, *orig;
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
	if ((lockfd = os_createreg(lockp, O_RDWR, 0644, msg, sizeof msg)) < 0)
		dien(EXIT_USAGE, "%s", msg);
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
	if ((logfd = os_createreg(g.logpath, O_TRUNC, 0644, msg, sizeof msg)) < 0)
		dien(EXIT_USAGE, "%s", msg);

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
		tailfile(g.logpath, 15, "  ", &tail);
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
		if (os_owndir(orig, msg, sizeof msg) < 0)
			dien(EXIT_USAGE, "%s", msg);
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
