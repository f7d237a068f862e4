/* kiln-stage: run one stage of kiln's build graph: compare its stamp to its key, run
   the command with a log, store or restore its outputs by key, write the stamp last. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "info.h"
#include "kv.h"
#include "os.h"
#include "opt.h"
#include "errscan.h"
#include "netguard.h"
#include "progress.h"
#include "trace.h"
#include "remote.h"
#include "reqs.h"
#include "rocmprobe.h"
#include "schema.h"
#include "sdk.h"
#include "sdklock.h"
#include "stage.h"
#include "util.h"
#include "depfile.h"
#include "sign.h"
#include "verify.h"
#include "vllm.h"


static int cmdrun(int argc, char **argv);
static int cmdinfo(int argc, char **argv);
static int cmdlabels(int argc, char **argv);
static int cmdkv(int argc, char **argv);
static int cmdenv(int argc, char **argv);
static int cmdkeygen(int argc, char **argv);

/* the verbs: each runs with argv[0] its own name; its synopsis is what follows the name
   in the usage, continued lines starting with a newline */
static const struct verb {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis;
} verbs[] = {
	{"run", cmdrun, "--key=FILE --stamp=FILE [--parent=STAMP]... [--logdir=DIR]\n"
	                "[--out=DIR] [--stage-cache=DIR|URL] [--id-file=FILE] [--id-keys=LIST]\n"
	                "[--cache-trusted-keys=LIST] [--cache-sign-key=FILE]\n"
	                "[-n] STAGE [PARENT-STAMP...] -- CMD [ARG...]"},
	{"verify", cmdverify, "--key=FILE --stamp=FILE [--parent=STAMP]... --out=DIR\n"
	                      "[--logdir=DIR] STAGE -- CMD [ARG...]"},
	{"explain", cmdexplain, "--key=FILE --stamp=FILE [--parent=STAMP]... [--out=DIR]\n"
	                        "[--stage-cache=DIR] STAGE"},
	{"env", cmdenv, "FILE... -- CMD [ARG...]"},
	{"kv", cmdkv, "-o FILE <KEY=VALUE-lines"},
	{"report", report_main, "[--json] [BUILDDIR]"},
	{"info", cmdinfo, "[-o FILE] DIR"},
	{"labels", cmdlabels, "[--format=args|file|containerfile] DIR"},
	{"keygen", cmdkeygen, "NAME SECRET-FILE PUBLIC-FILE"},
	{"graph", graph_main, "--srcdir=DIR --builddir=DIR [OPTION]... -- CONFIGURE [ARG]..."},
	{"fetch", fetch_main, "URL --sha256=HEX -o FILE [--max-size=N] [--max-time=SECONDS]"},
	{"unpack", unpack_main, "TARBALL --into=DIR [--sha256=HEX] [--layout=rocm] [--max-size=N]"},
	{"sdklock", sdklock_main, "LOCK URL [FILE | --sha256=HEX]"},
	{"rocm-probe", rocmprobe_main, "[--json | --get=layout|version|hipcc|clang|libdir|cmakedir|devlib] [--clang=PATH] DIR"},
	{"reqs", reqs_main, "[--flavour=rocm|cuda|cpu] [--runtime] [--exclude=LIST] [--frontend] TREE"},
	{"backend", backend_main, "[--wheels=DIR] TREE"},
	{"lock", lock_main, "DIR"},
	{"vllm-check", vllmcheck_main, "[--arch=LIST] [--flavour=rocm|cuda|cpu] [--name=TEXT] TREE"},
	{"netguard", netguard_main, "LOG"},
	{"depfile", depfile_main, "[-k] -o FILE TARGET [DEP...]"},
};

#define NVERBS (sizeof verbs / sizeof verbs[0])

/* the usage: every verb's synopsis, from the table */
static void
usage(const char *error)
{
	struct buf b = {0};
	const char *p, *nl;
	size_t i;

	for (i = 0; i < NVERBS; i++) {
		bufprintf(&b, "%s kiln-stage %s ", i ? "      " : "usage:", verbs[i].name);
		for (p = verbs[i].synopsis; (nl = strchr(p, '\n')); p = nl + 1)
			bufprintf(&b, "%.*s\n%*s", (int)(nl - p), p, (int)strlen(verbs[i].name) + 19, "");
		bufprintf(&b, "%s\n", p);
	}
	bufputs(&b, "       kiln-stage --version\n");
	opt_usage(error, b.s);
}

/* the stage's output identity from an id file: its content without trailing space */
static char *
readid(const char *path)
{
	struct buf b = {0};

	if (readfile(path, &b, 1 << 16) < 0) {
		buffree(&b);
		return NULL;
	}
	bufrtrim(&b, " \t\r\n");
	if (b.len == 0 || memchr(b.s, '\n', b.len)) {
		buffree(&b);
		errno = EINVAL;
		return NULL;
	}
	return bufdetach(&b);
}

/* LOGDIR/NAME.note for LOGDIR/NAME.log (fresh string), or NULL */
static char *
notepath(const char *logpath)
{
	size_t n = strlen(logpath);

	if (n < 4 || strcmp(logpath + n - 4, ".log") != 0)
		return NULL;
	return xasprintf("%.*s.note", (int)(n - 4), logpath);
}

/* the first line (at most 200 bytes, made safe for a terminal) of the file at p, which is
   then removed unless keep; fresh, or NULL when there is none or it is empty; frees p */
static char *
takeline(char *p, int keep)
{
	struct buf b = {0}, safe = {0};
	char *nl;

	if (!p)
		return NULL;
	if (readfile(p, &b, 4096) < 0 || !b.len) {
		if (!keep)
			unlink(p);
		free(p);
		buffree(&b);
		return NULL;
	}
	if (!keep)
		unlink(p);
	free(p);
	/* the step's text goes to the terminal: made safe (progress.h's safeadd) */
	if (!(nl = memchr(b.s, '\n', b.len)))
		nl = b.s + b.len;
	safeadd(&safe, b.s, (size_t)(nl - b.s), 200);
	buffree(&b);
	if (!safe.len) {
		buffree(&safe);
		return NULL;
	}
	return bufdetach(&safe);
}

/* the note the step left (LOGDIR/NAME.note), removed; fresh or NULL */
static char *
takenote(const char *logpath)
{
	return takeline(logpath ? notepath(logpath) : NULL, 0);
}

/* the outputs of a successful command: at least one file, none empty; their digests go
   into sums. A stage that made nothing is a failure, not a stamp. */
static void
checkout(const char *name, const char *out, struct buf *sums)
{
	struct strv names = {0};
	struct stat sb;
	char *err = NULL, *p;
	size_t i;

	if (dir_files(out, &names) < 0 || names.n == 0)
		dien(EXIT_PROBLEM, "%s: the command succeeded but left no files in %s; no stamp written",
		     name, out);
	for (i = 0; i < names.n; i++) {
		p = xasprintf("%s/%s", out, names.v[i]);
		if (stat(p, &sb) == 0 && sb.st_size == 0)
			dien(EXIT_PROBLEM, "%s: the command succeeded but left %s empty; no stamp written",
			     name, p);
		free(p);
	}
	strv_free(&names);
	if (dir_sums(out, sums, &err) < 0)
		dien(EXIT_PROBLEM, "%s: %s", name, err);
}

/* an up-to-date stage whose key the stage cache lacks: store its outputs, if they are
   still what the stamp recorded (a stage cache added to a built tree fills) */
static void
cachefill(const char *cache, const struct stage *s, const struct stamp *st, const char *out,
          const char *logdir)
{
	struct cacheio io = {.outdir = out};
	struct buf now = {0};
	struct stat sb;
	char *ent = cache_entry(cache, s->key), *err = NULL, *logpath;

	if (stat(ent, &sb) == 0) {
		free(ent);
		return;
	}
	free(ent);
	if (dir_sums(out, &now, &err) < 0 || (st->sums && strcmp(st->sums, now.s ? now.s : "") != 0)) {
		warn("%s: %s: the outputs differ from those the stamp records; not stored in the "
		     "stage cache (run the stage again: rm %s/*)", s->name, err ? err : out, out);
	} else {
		logpath = xasprintf("%s/%s.log", logdir, s->name);
		io.logpath = logpath;
		if (cache_store(cache, s, &io, st->id, &err) < 0)
			warn("%s: stage cache: %s", s->name, err);
		else
			printf("%s: stored in the stage cache\n", s->name);
		free(logpath);
	}
	free(err);
	buffree(&now);
}

/* what `kiln-stage run` is asked */
struct runopt {
	struct stageopts so;	/* --key, --stamp, --parent, --logdir, --out */
	const char *cache, *remote, *idfile, *idkeys, *name;
	const char *trustedarg, *signkeyf;
	int dry, explain;
	char **cmd;	/* the command after -- */
};

/* store a built stage on the remote stage cache. By default in the background, in a
   child process of its own session whose messages go to the stage's log, holding an
   flock on STAMP.upload until it is done (so a later upload of the stage, or a test,
   can wait for it); KILN_CACHE_UPLOAD=wait stores before returning. Never fails. */
static void
upload(const struct runopt *o, const struct stage *s, const char *id, const char *logpath)
{
	const struct cacheio io = {.outdir = o->so.out, .logpath = logpath};
	const char *mode = getenv("KILN_CACHE_UPLOAD");
	char *lock, *err = NULL;
	int lockfd, fd, r;
	pid_t pid;

	fflush(NULL);
	if (mode && !strcmp(mode, "wait")) {
		if ((r = remote_store(o->remote, s, &io, id, &err)) < 0) {
			warn("%s: remote stage cache: %s (not stored; the stage itself succeeded)", s->name, err);
			free(err);
		} else if (r == 0) {
			printf("%s: stored in the remote stage cache\n", s->name);
		}
		return;
	}
	lock = xasprintf("%s.upload", o->so.stamp);
	lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	while (lockfd >= 0 && flock(lockfd, LOCK_EX) < 0 && errno == EINTR)
		;
	fd = logpath ? open(logpath, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW) : -1;
	if ((pid = proc_detach(fd)) < 0) {
		warn("%s: remote stage cache: cannot start the upload: %s (not stored)", s->name,
		     strerror(errno));
	} else if (pid == 0) {
		if ((r = remote_store(o->remote, s, &io, id, &err)) < 0)
			printf("# kiln-stage %s: remote stage cache: %s (not stored)\n", s->name, err);
		else
			printf("# kiln-stage %s: %s in the remote stage cache\n", s->name,
			       r == 0 ? "stored" : "already");
		fflush(stdout);
		_exit(0);
	} else {
		printf("%s: storing in the remote stage cache in the background (the log says when done)\n",
		       s->name);
	}
	if (lockfd >= 0)
		close(lockfd);
	free(lock);
}

/* an up-to-date stage whose key the server lacks: upload its outputs, if they are still
   what the stamp recorded (a remote stage cache added to a built tree fills) */
static void
remotefill(const struct runopt *o, const struct stage *s, const struct stamp *st)
{
	const char *out = o->so.out;
	struct buf now = {0};
	char *err = NULL, *logpath;
	int h = remote_has(o->remote, s->key, &err);

	if (h < 0)
		warn("%s: remote stage cache: %s (not stored)", s->name, err);
	else if (h == 0 && (dir_sums(out, &now, &err) < 0 || (st->sums && strcmp(st->sums, now.s ? now.s : "") != 0)))
		warn("%s: %s: the outputs differ from those the stamp records; not stored in the "
		     "remote stage cache (run the stage again: rm %s/*)", s->name, err ? err : out, out);
	else if (h == 0) {
		logpath = xasprintf("%s/%s.log", o->so.logdir, s->name);
		upload(o, s, st->id, logpath);
		free(logpath);
	}
	free(err);
	buffree(&now);
}

/* a failed command: how it ended and after how long, its log's first error, tail and
   path */
static void
failreport(const char *name, const struct procres *res, const char *dur, const char *logpath)
{
	if (res->sig)
		fprintf(stderr, "kiln: %s failed (killed by signal %d) after %s\n", name, res->sig, dur);
	else
		fprintf(stderr, "kiln: %s failed (exit %d) after %s\n", name, res->status, dur);
	failsummary(stderr, name, logpath, 30);
}

/* --stage-cache=: a folder, file://FOLDER, or http(s)://SERVER/PATH (remote.c) */
static void
runcache(struct runopt *o, const char *v)
{
	char *why;

	o->cache = *v ? v : NULL;
	o->remote = NULL;
	if (o->cache && startswith(o->cache, "file://")) {
		o->cache += 7;
	} else if (o->cache && remote_isurl(o->cache)) {
		if ((why = remote_checkurl(o->cache))) {
			char *m = xasprintf("run: --stage-cache: %s", why);
			free(why);
			usage(m);
		}
		o->remote = o->cache;
		o->cache = NULL;
	} else if (o->cache && strstr(o->cache, "://")) {
		usage(xasprintf("run: --stage-cache=%s: not a folder, file://, http:// or https:// URL",
		                o->cache));
	}
}

/* one option of run's; 0 when a is none of them */
static int
runoption(struct runopt *o, char *a)
{
	char *why;

	if (stage_opt(&o->so, a))
		;
	else if (startswith(a, "--stage-cache="))
		runcache(o, a + 14);
	else if (startswith(a, "--cache-trusted-keys=")) {
		/* one line, exit 2: the list is wrong, not the command's shape */
		if ((why = sign_checklist(a + 21)))
			dien(EXIT_USAGE, "run: --cache-trusted-keys: %s", why);
		o->trustedarg = a + 21;
	} else if (startswith(a, "--cache-sign-key="))
		o->signkeyf = a + 17;
	else if (startswith(a, "--id-file="))
		o->idfile = a + 10;
	else if (startswith(a, "--id-keys="))
		o->idkeys = a + 10;
	else if (strcmp(a, "-n") == 0 || strcmp(a, "--dry-run") == 0)
		o->dry = 1;
	else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
		usage(NULL);
	else
		return 0;
	return 1;
}

static void
runargs(struct runopt *o, int argc, char **argv)
{
	int i;

	o->so.logdir = "build/logs";
	for (i = 1; i < argc && strcmp(argv[i], "--") && argv[i][0] == '-'; i++)
		if (!runoption(o, argv[i])) {
			free(o->so.parents);
			usage(xasprintf("run: unknown option '%s'", argv[i]));
		}
	if (i >= argc || strcmp(argv[i], "--") == 0)
		usage("run: no STAGE name");
	o->name = argv[i++];
	/* parent stamps may follow the name (ninja's $in: each parent written once) */
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		o->so.parents = xgrow(o->so.parents, &o->so.cap, o->so.np + 1, sizeof *o->so.parents);
		o->so.parents[o->so.np++] = argv[i];
	}
	if (!o->so.key || !o->so.stamp)
		usage("run: --key=FILE and --stamp=FILE are required");
	if (!o->dry && (i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc))
		usage("run: no command after --");
	o->cmd = i < argc ? argv + i + 1 : argv + argc;
	if (o->idfile && o->idkeys)
		usage("run: --id-file and --id-keys exclude each other");
	o->explain = getenv("KILN_EXPLAIN") && *getenv("KILN_EXPLAIN") &&
	             strcmp(getenv("KILN_EXPLAIN"), "0");
}

/* one run of a stage at a time (a build started while an older one still runs); the lock
   is held until exit */
static void
stagelock(const struct runopt *o)
{
	char *lock = xasprintf("%s.lock", o->so.stamp);
	int lockfd;

	if ((lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
		dien(EXIT_USAGE, "%s:", lock);
	if (flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr, "kiln: %s: waiting for another run of this stage to finish\n", o->name);
		while (flock(lockfd, LOCK_EX) < 0)
			if (errno != EINTR || proc_gotsig)
				dien(EXIT_USAGE, "%s:", lock);
	}
	free(lock);
}

/* the stage is up to date (r 1, same key, its outputs there): fill the caches that lack it */
static int
uptodate(const struct runopt *o, struct stage *s, struct stamp *st, int r)
{
	if (r != 1 || strcmp(st->key, s->key) || (o->so.out && dir_count(o->so.out) <= 0))
		return 0;
	if (o->explain || o->dry)
		fprintf(stderr, "kiln: %s: up to date\n", o->name);
	if (o->dry)
		return 1;
	trace_end("up to date", "-", NULL);
	if (o->cache && o->so.out)
		cachefill(o->cache, s, st, o->so.out, o->so.logdir);
	if (o->remote && o->so.out)
		remotefill(o, s, st);
	return 1;
}

/* why the stage runs (its stamp r/st against s); a line a check left (*extwhy) counts */
static void
sayrun(const struct runopt *o, struct stage *s, struct stamp *st, int r, char **extwhy)
{
	char *why;

	if (r == 1 && strcmp(st->key, s->key) == 0)
		why = xasprintf("its outputs in %s are missing", o->so.out);
	else if (r == 0 && (*extwhy = takeline(xasprintf("%s.why", o->so.stamp), o->dry)))
		why = xstrdup(*extwhy);
	else
		why = stage_explain(s, r == 1 ? st : NULL, 6);
	if (o->explain || o->dry)
		fprintf(stderr, "kiln: %s: %s: %s\n", o->name, o->dry ? "would run" : "running", why);
	free(why);
}

/* the stage's outputs from the local, then the remote stage cache: 1 restored (*id), 0
   not there (*cachewhy says why, when a cache failed), 128+N interrupted by signal N */
static int
restore(const struct runopt *o, struct stage *s, char **id, char **cachewhy)
{
	const struct cacheio io = {.outdir = o->so.out, .logdir = o->so.logdir};
	char *err = NULL, *why;
	int r;

	if (o->cache && o->so.out) {
		if (o->explain) {
			why = cache_explain(o->cache, s);
			fprintf(stderr, "kiln: %s: %s\n", o->name, why);
			free(why);
		}
		r = cache_restore(o->cache, s, &io, id, &err);
		if (r == 1)
			return 1;
		if (r < 0) {
			warn("%s: %s (building instead)", o->name, err);
			*cachewhy = err;
			err = NULL;
		}
	}
	if (!o->remote || !o->so.out)
		return 0;
	if (o->explain) {
		why = remote_explain(o->remote, s->key);
		fprintf(stderr, "kiln: %s: %s\n", o->name, why);
		free(why);
	}
	r = remote_restore(o->remote, s, &io, id, &err);
	if (r < 0 && proc_gotsig) {
		/* the restore removed what it had fetched; nothing is built either */
		warn("%s: interrupted during the remote restore; no stamp written", o->name);
		free(err);
		return 128 + proc_gotsig;
	}
	if (r < 0) {
		warn("%s: %s (building instead)", o->name, err);
		free(*cachewhy);
		*cachewhy = err;
	}
	return r == 1;
}

/* the stage's log: its header (the command, and why a cache did not serve); the log's
   descriptor, its absolute path in *logpath */
static int
openlog(struct runopt *o, struct stage *s, const char *cachewhy, char **logpath, char **abs)
{
	struct buf b = {0};
	char *err = NULL, **a;
	int logfd;

	if (o->so.out && dir_empty(o->so.out, &err) < 0)
		dien(EXIT_USAGE, "%s: %s", o->name, err);
	if (os_mkdirs(o->so.logdir, 0777) < 0)
		dien(EXIT_USAGE, "%s: cannot create:", o->so.logdir);
	if ((logfd = log_open(o->so.logdir, o->name, logpath, &err)) < 0)
		dien(EXIT_USAGE, "%s", err);
	free(*logpath);
	if ((*abs = realpath(o->so.logdir, NULL)))
		o->so.logdir = *abs;
	*logpath = xasprintf("%s/%s.log", o->so.logdir, o->name);
	bufprintf(&b, "# kiln-stage %s (key %.16s)\n# $", o->name, s->key);
	for (a = o->cmd; *a; a++) {
		bufputc(&b, ' ');
		shquote(&b, *a);
	}
	bufputc(&b, '\n');
	if (cachewhy)
		bufprintf(&b, "# %s (building instead)\n", cachewhy);
	writeall(logfd, b.s, b.len);
	buffree(&b);
	return logfd;
}

/* run the stage's command with its output in the log; 0 done, else the exit status
   (interrupted: 128+N; failed: EXIT_PROBLEM, said with the log's tail) */
static int
runstage(const struct runopt *o, struct stage *s, int logfd, const char *logpath, double t0)
{
	struct spawnopt so = {0};
	struct progress prog;
	struct procres res;
	char *note = notepath(logpath), *dur;
	int r;

	progress_start(&prog, o->name, o->so.logdir, logpath);
	so.logpath = logpath;
	so.out = o->so.out;
	so.note = note;
	so.prog = &prog;
	r = stage_spawn(o->cmd, logfd, s, &so, &res);
	progress_end(&prog, r == 0 && !proc_gotsig && res.status == 0);
	free(note);
	close(logfd);
	dur = fmtdur(mono() - t0);
	if (r < 0)
		dien(EXIT_PROBLEM, "%s: cannot run %s:", o->name, o->cmd[0]);
	r = 0;
	if (proc_gotsig) {
		warn("%s: interrupted after %s; no stamp written (the next run starts it again)",
		     o->name, dur);
		trace_end("interrupted", o->cache || o->remote ? "miss" : "-", NULL);
		r = 128 + proc_gotsig;
	} else if (res.status != 0) {
		failreport(o->name, &res, dur, logpath);
		trace_end("failed", o->cache || o->remote ? "miss" : "-", NULL);
		r = EXIT_PROBLEM;
	}
	free(dur);
	return r;
}

/* the identity a built stage gives its children: --id-file's line, the --id-keys, or the key */
static char *
stageid(const struct runopt *o, struct stage *s)
{
	char *id;

	if (o->idkeys)
		return stage_idfrom(s, o->idkeys);
	if (!o->idfile)
		return xstrdup(s->key);
	if (!(id = readid(o->idfile)))
		dien(EXIT_PROBLEM, "%s: %s: the command did not write its identity (one line):",
		     o->name, o->idfile);
	return id;
}

/* one stage's run, from the old stamp's removal to the new one */
struct run {
	struct runopt *o;
	struct stage *s;
	char *extwhy;      /* why a check removed the stamp (sayrun), or NULL */
	char *cachewhy;    /* why the stage cache had nothing, when it failed */
	char *id;          /* the identity it gives its children, once built or restored */
	char *uplog;       /* a built stage's log (the upload's and takenote's) */
	struct buf sums;   /* its outputs' digests */
	int restored;      /* restored from a stage cache, not built */
	double t0;         /* when it started */
};

/* the stamp, the summary line and the trace; after the stamp, the upload of a built
   stage (a server that fails is a warning, never a failed build) */
static void
finish(struct run *u)
{
	const struct runopt *o = u->o;
	struct buf b = {0};
	char *err = NULL, *dur, *why;

	if (u->restored && o->so.out && dir_sums(o->so.out, &u->sums, &err) < 0)
		dien(EXIT_PROBLEM, "%s: %s", o->name, err);
	stamp_format(&b, u->s, u->id, u->sums.s);
	if (writefile_atomic(o->so.stamp, b.s, b.len, 0644) < 0)
		dien(EXIT_PROBLEM, "%s: cannot write the stamp %s:", o->name, o->so.stamp);
	dur = fmtdur(mono() - u->t0);
	why = !u->restored ? takenote(u->uplog) : NULL;
	if (!why) {
		/* a check's reason for removing the stamp is the summary's note too */
		why = u->extwhy;
		u->extwhy = NULL;
	}
	printf("%s: %s in %s%s%s%s\n", o->name, u->restored ? "restored from the stage cache" : "rebuilt",
	       dur, why ? " (" : "", why ? why : "", why ? ")" : "");
	trace_end(u->restored ? "restored" : "built",
	          u->restored ? "hit" : o->cache || o->remote ? "miss" : "-", why);
	free(why);
	free(dur);
	if (o->remote && o->so.out && !u->restored)
		upload(o, u->s, u->id, u->uplog);
	buffree(&b);
}

/* a miss: build the stage; 0 built (u->id, u->sums, u->uplog), else the exit status */
static int
build(struct run *u)
{
	struct runopt *o = u->o;
	struct cacheio io = {.outdir = o->so.out};
	char *logpath = NULL, *abs = NULL, *err = NULL;
	int logfd, r;

	logfd = openlog(o, u->s, u->cachewhy, &logpath, &abs);
	r = runstage(o, u->s, logfd, logpath, u->t0);
	if (r) {
		free(logpath);
		free(abs);
		return r;
	}
	if (o->so.out)
		checkout(o->name, o->so.out, &u->sums);
	u->id = stageid(o, u->s);
	io.logpath = logpath;
	if (o->cache && o->so.out && cache_store(o->cache, u->s, &io, u->id, &err) < 0) {
		warn("%s: stage cache: %s (the stage itself succeeded)", o->name, err);
		free(err);
	}
	u->uplog = logpath;
	o->so.logdir = NULL;	/* it pointed into abs */
	free(abs);
	return 0;
}

/* the stage runs: its old stamp removed, then restored from a stage cache or built, and
   stamped; returns the exit status */
static int
rerun(struct run *u)
{
	int r;

	/* from here until the stamp is written, the stage is not done */
	if (unlink(u->o->so.stamp) < 0 && errno != ENOENT)
		dien(EXIT_USAGE, "%s: cannot remove the old stamp:", u->o->so.stamp);
	u->t0 = mono();
	r = restore(u->o, u->s, &u->id, &u->cachewhy);
	u->restored = r == 1;
	if (r == 0)
		r = build(u);
	else if (u->restored)
		r = 0;
	if (r == 0)
		finish(u);
	free(u->extwhy);
	free(u->cachewhy);
	free(u->uplog);
	free(u->id);
	buffree(&u->sums);
	return r;
}

/* the stage's key and parents (s), or EXIT_USAGE said in one line */
static int
loadstage(struct runopt *o, struct stage *s)
{
	char *err = NULL;
	int r = stage_load(s, o->name, &o->so, &err);

	free(o->so.parents);
	if (r < 0) {
		warn("%s: %s", o->name, err);
		free(err);
		stage_free(s);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static int
cmdrun(int argc, char **argv)
{
	struct runopt o = {0};
	struct run u = {.o = &o};
	char *err = NULL;
	struct stage s;
	struct stamp st;
	int r;

	runargs(&o, argc, argv);
	/* the stage's parent died (ninja killed): stop too, leaving no stamp */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	proc_forward();
	remote_setkeys(o.trustedarg, o.signkeyf);
	if (!o.dry)
		stagelock(&o);
	if (!o.dry && o.so.out)
		remote_rmstale(o.so.out);
	if (loadstage(&o, &s) != EXIT_OK)
		return EXIT_USAGE;
	if ((r = stamp_read(&st, o.so.stamp, &err)) < 0) {
		warn("%s (rebuilding)", err);
		free(err);
		r = 0;
	}
	if (!o.dry)
		trace_begin(o.so.logdir, o.name);
	if (uptodate(&o, &s, &st, r)) {
		stamp_free(&st);
		stage_free(&s);
		return EXIT_OK;
	}
	sayrun(&o, &s, &st, r, &u.extwhy);
	if (r == 1)
		stamp_free(&st);
	if (o.dry) {
		free(u.extwhy);
		stage_free(&s);
		return EXIT_PROBLEM;
	}
	u.s = &s;
	r = rerun(&u);
	stage_free(&s);
	return r;
}

static int
cmdinfo(int argc, char **argv)
{
	const char *outf = NULL, *dir = NULL;
	struct buf b = {0};
	char *err = NULL, *lock;
	int i, fd = -1;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			outf = argv[++i];
		else if (startswith(argv[i], "-o") && argv[i][2])
			outf = argv[i] + 2;
		else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			usage(NULL);
		else if (argv[i][0] == '-' || dir)
			usage(xasprintf("info: unexpected argument '%s'", argv[i]));
		else
			dir = argv[i];
	}
	if (!dir)
		usage("info: no record folder");
	if (outf) {
		/* installs may finish together: one writer at a time, each reading all records */
		lock = xasprintf("%s.lock", outf);
		if ((fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 || flock(fd, LOCK_EX) < 0)
			dien(EXIT_USAGE, "%s:", lock);
		free(lock);
	}
	if (info_json(dir, &b, &err) < 0) {
		warn("%s", err);
		free(err);
		buffree(&b);
		return EXIT_USAGE;
	}
	if (outf) {
		if (writefile_ifchanged(outf, b.s, b.len, 0644) < 0)
			dien(EXIT_USAGE, "%s:", outf);
		close(fd);
	} else {
		fwrite(b.s, 1, b.len, stdout);
	}
	buffree(&b);
	return EXIT_OK;
}

static int
cmdlabels(int argc, char **argv)
{
	struct buf b = {0};
	enum labelfmt fmt = LABEL_ARGS;
	const char *dir = NULL, *f;
	char *err = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			usage(NULL);
		if (startswith(argv[i], "--format=")) {
			f = argv[i] + 9;
			if (!strcmp(f, "args"))
				fmt = LABEL_ARGS;
			else if (!strcmp(f, "file"))
				fmt = LABEL_FILE;
			else if (!strcmp(f, "containerfile"))
				fmt = LABEL_CONTAINERFILE;
			else
				usage(xasprintf("labels: unknown --format '%s' (args, file or containerfile)", f));
		} else if (argv[i][0] == '-' || dir) {
			usage(xasprintf("labels: unexpected argument '%s'", argv[i]));
		} else {
			dir = argv[i];
		}
	}
	if (!dir)
		usage("labels: give one record folder (build/info)");
	if (info_labels(dir, fmt, &b, &err) < 0) {
		warn("%s", err);
		free(err);
		buffree(&b);
		return EXIT_USAGE;
	}
	fwrite(b.s, 1, b.len, stdout);
	buffree(&b);
	return EXIT_OK;
}

/* kiln-stage kv -o FILE: raw KEY=VALUE lines on stdin (as a shell step prints them: the
   value is everything after the first '=') written to FILE atomically in the quoting
   kv.c reads back, so no value is ever shell text */
static int
cmdkv(int argc, char **argv)
{
	struct buf in = {0}, out = {0};
	const char *outf = NULL;
	char *line, *next, *eq, *k;
	int n = 0;

	if (argc == 3 && strcmp(argv[1], "-o") == 0)
		outf = argv[2];
	else
		usage("kv: write with -o FILE");
	if (readfile("/dev/stdin", &in, 16 << 20) < 0)
		dien(EXIT_USAGE, "kv: stdin:");
	bufputc(&in, 0);
	for (line = in.s; line && *line; line = next) {
		n++;
		if ((next = strchr(line, '\n')))
			*next++ = 0;
		if (!*line)
			continue;
		eq = strchr(line, '=');
		k = eq ? xstrndup(line, (size_t)(eq - line)) : NULL;
		if (!k || !*k || strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
		    strlen(k) || (k[0] >= '0' && k[0] <= '9'))
			dien(EXIT_USAGE, "kv: stdin:%d: expected KEY=VALUE", n);
		kv_put(&out, k, eq + 1);
		free(k);
	}
	if (writefile_atomic(outf, out.s ? out.s : "", out.len, 0644) < 0)
		dien(EXIT_USAGE, "%s:", outf);
	buffree(&in);
	buffree(&out);
	return EXIT_OK;
}

/* kiln-stage env FILE... -- CMD: run CMD with every KEY=VALUE of the files (read by
   kv.c, never by a shell) in its environment as KILN_K_KEY, and their names, in order,
   in KILN_KEYS; ninja/stack-steps.sh takes its settings and key values from there */
static int
cmdenv(int argc, char **argv)
{
	struct kvfile f;
	struct buf names = {0}, k = {0};
	char *err = NULL;
	size_t j;
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (argv[i][0] == '-')
			usage(xasprintf("env: unexpected option '%s'", argv[i]));
		if (kv_load(&f, argv[i], &err) < 0) {
			warn("%s", err);
			free(err);
			kv_free(&f);
			buffree(&names);
			return EXIT_USAGE;
		}
		for (j = 0; j < f.n; j++) {
			bufreset(&k);
			bufprintf(&k, "KILN_K_%s", f.v[j].key);
			if (setenv(k.s, f.v[j].value, 1) < 0)
				dien(EXIT_USAGE, "env: %s:", f.v[j].key);
			/* a later file's value wins; each name is listed once */
			bufreset(&k);
			bufprintf(&k, " %s ", f.v[j].key);
			if (names.s && strstr(names.s, k.s))
				continue;
			if (!names.len)
				bufputc(&names, ' ');
			bufprintf(&names, "%s ", f.v[j].key);
		}
		kv_free(&f);
	}
	if (i + 1 >= argc)
		usage("env: no command after --");
	setenv("KILN_KEYS", names.s ? names.s : "", 1);
	buffree(&names);
	buffree(&k);
	execvp(argv[i + 1], argv + i + 1);
	dien(errno == ENOENT ? 127 : 126, "%s:", argv[i + 1]);
}

/* kiln-stage keygen NAME SECRET PUBLIC: an Ed25519 key pair for signed manifests */
static int
cmdkeygen(int argc, char **argv)
{
	char *err = NULL;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		usage(NULL);
	if (argc != 4 || argv[1][0] == '-')
		usage("keygen: give NAME SECRET-FILE PUBLIC-FILE");
	if (sign_keygen(argv[1], argv[2], argv[3], &err) < 0)
		dien(EXIT_USAGE, "%s", err);
	return EXIT_OK;
}

int
main(int argc, char **argv)
{
	struct buf names = {0};
	size_t i;

	setprogname(argv[0]);
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		usage(NULL);
	if (argc >= 2 && opt_isversion(argv[1]))
		opt_version();
	for (i = 0; argc >= 2 && i < NVERBS; i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].run(argc - 1, argv + 1);
	for (i = 0; i < NVERBS; i++)
		bufprintf(&names, "%s%s", i ? (i + 1 < NVERBS ? ", " : " or ") : "", verbs[i].name);
	usage(argc < 2 ? xasprintf("no verb (%s)", names.s)
	               : xasprintf("unknown verb '%s' (%s)", argv[1], names.s));
	return EXIT_USAGE;
}
