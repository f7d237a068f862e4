/* what each stage did in a build. Each `kiln-stage run` leaves LOGDIR/STAGE.run (its
   result, stage-cache result, wall-clock span and the build it belonged to: the ninja
   process that ran it, by pid and start time) and then writes LOGDIR/../trace.json
   from the records of its build, so the file is whole after the build's last stage,
   whichever finished last. A stage ninja did not run this time is up to date. */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "json.h"
#include "kv.h"
#include "os.h"
#include "strv.h"
#include "util.h"

/* the stage this process runs */
static struct {
	char *logdir, *stage, *build;
	int64_t start;
} cur;


/* one step of an inner build's .ninja_log */
struct step {
	int64_t start, end;   /* ms from the inner build's start */
	char *out;
};

static int64_t
wallus(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* "PID (COMM) S PPID ... STARTTIME": the fields after COMM, or NULL (fresh) */
static char *
procstat(pid_t pid, char **comm)
{
	struct buf b = {0};
	char *f = xasprintf("/proc/%ld/stat", (long)pid), *lp, *rp, *rest = NULL;

	if (readfile(f, &b, 1 << 16) == 0 && (lp = strchr(b.s, '(')) && (rp = strrchr(b.s, ')'))) {
		*rp = 0;
		if (comm)
			*comm = xstrdup(lp + 1);
		rest = xstrdup(rp + 1);
	}
	free(f);
	buffree(&b);
	return rest;
}

pid_t
ninja_pid(void)
{
	pid_t pid = getppid();
	char *rest, *comm = NULL;
	int i, hit, shell;

	/* only shells between: ninja's `sh -c` (a test script running kiln-stage under an
	   outer `ninja check` is not that ninja's step) */
	for (i = 0; i < 8 && pid > 1; i++) {
		if (!(rest = procstat(pid, &comm)))
			break;
		hit = strcmp(comm, "ninja") == 0 || strcmp(comm, "samu") == 0;
		shell = strcmp(comm, "sh") == 0 || strcmp(comm, "dash") == 0 || strcmp(comm, "bash") == 0;
		free(comm);
		comm = NULL;
		if (hit) {
			free(rest);
			return pid;
		}
		pid = (pid_t)strtol(rest + 3, NULL, 10);
		free(rest);
		if (!shell)
			break;
	}
	return 0;
}

/* the build: "PID.STARTTIME" of ninja (else of the parent: runs by hand from one shell) */
static char *
buildid(void)
{
	pid_t pid = ninja_pid();
	char *rest, *p, *id;
	int f;

	if (!pid)
		pid = getppid();
	if (!(rest = procstat(pid, NULL)))
		return xasprintf("%ld", (long)pid);
	/* field 22 of stat is starttime; rest starts at field 3 */
	for (p = rest, f = 3; p && f < 22; f++)
		if ((p = strchr(p + 1, ' ')))
			p++;
	id = xasprintf("%ld.%ld", (long)pid, p ? strtol(p, NULL, 10) : 0L);
	free(rest);
	return id;
}

void
trace_begin(const char *logdir, const char *stage)
{
	cur.logdir = xstrdup(logdir);
	cur.stage = xstrdup(stage);
	cur.build = buildid();
	cur.start = wallus();
}

void
freerec(struct rec *r)
{
	free(r->stage);
	free(r->result);
	free(r->cache);
	free(r->note);
	free(r->build);
}

/* every LOGDIR/STAGE.run, in name order */
/* a .run time field: microseconds since the epoch, 0 when absent, not a number or past
   2^53 (year 2255), so that no difference of two overflows */
static int64_t
usfield(const char *s)
{
	char *end;
	long long v;

	if (!s || !isdig(*s))
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	return errno || *end || v > (1LL << 53) ? 0 : (int64_t)v;
}

void
loadrecs(const char *logdir, struct rec **v, size_t *n)
{
	struct strv names = {0};
	struct kvfile f;
	char *p, *err = NULL;
	const char *s;
	size_t i, cap = 0;

	*v = NULL;
	*n = 0;
	if (os_listdir(logdir, &names) < 0)
		return;
	for (i = 0; i < names.n; i++) {
		if (!endswith(names.v[i], ".run"))
			continue;
		p = xasprintf("%s/%s", logdir, names.v[i]);
		if (kv_load(&f, p, &err) == 0 && (s = kv_get(&f, "STAGE")) && kv_get(&f, "BUILD")) {
			*v = xgrow(*v, &cap, *n + 1, sizeof **v);
			(*v)[*n].stage = xstrdup(s);
			(*v)[*n].result = xstrdup((s = kv_get(&f, "RESULT")) ? s : "?");
			(*v)[*n].cache = xstrdup((s = kv_get(&f, "CACHE")) ? s : "-");
			(*v)[*n].note = (s = kv_get(&f, "NOTE")) ? xstrdup(s) : NULL;
			(*v)[*n].build = xstrdup(kv_get(&f, "BUILD"));
			(*v)[*n].start = usfield(kv_get(&f, "START"));
			(*v)[*n].end = usfield(kv_get(&f, "END"));
			/* a span never runs backwards (a clock set back, a record edited) */
			if ((*v)[*n].end < (*v)[*n].start)
				(*v)[*n].end = (*v)[*n].start;
			(*n)++;
		}
		free(err);
		err = NULL;
		kv_free(&f);
		free(p);
	}
	strv_free(&names);
}

/* the records as this build sees them: those of the last build (the record that ended
   last) as they are; the others were not run by it: up to date, at its start (or not
   run, when they did not succeed before). Returns the build's start. */
int64_t
thisbuild(struct rec *v, size_t n)
{
	const char *b = NULL;
	int64_t end = 0, start = INT64_MAX;
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].end >= end)
			end = v[i].end, b = v[i].build;
	for (i = 0; i < n; i++)
		if (b && strcmp(v[i].build, b) == 0 && v[i].start < start)
			start = v[i].start;
	for (i = 0; i < n; i++) {
		if (b && strcmp(v[i].build, b) == 0)
			continue;
		if (strcmp(v[i].result, "failed") && strcmp(v[i].result, "interrupted") &&
		    strcmp(v[i].result, "not run")) {
			free(v[i].result);
			v[i].result = xstrdup("up to date");
		} else {
			free(v[i].result);
			v[i].result = xstrdup("not run");
		}
		free(v[i].cache);
		v[i].cache = xstrdup("-");
		free(v[i].note);
		v[i].note = NULL;
		v[i].start = v[i].end = start;
	}
	return n ? start : 0;
}

/* the most milliseconds a .ninja_log step time may say (34 years): past it, or ending
   before it starts, the line is not a step (and no sum of such times overflows) */
#define STEPMAX ((int64_t)1 << 40)

/* the steps of a .ninja_log (v5 and later: START END MTIME OUTPUT HASH, tab-separated);
   *mt: the MTIME of the step that ended last, in microseconds since the epoch (0: none) */
static size_t
loadsteps(const char *path, struct step **v, int64_t *mt)
{
	struct buf b = {0};
	char *line, *nl, *f[5];
	size_t n = 0, cap = 0;
	int64_t lastend = -1, m;
	int k;

	*v = NULL;
	*mt = 0;
	if (readfile(path, &b, (size_t)256 << 20) < 0 || !startswith(b.s, "# ninja log v")) {
		buffree(&b);
		return 0;
	}
	for (line = b.s; line && *line && n < 200000; line = nl) {
		if ((nl = strchr(line, '\n')))
			*nl++ = 0;
		if (*line == '#')
			continue;
		for (k = 0, f[0] = line; k < 4 && f[k]; k++)
			if ((f[k + 1] = strchr(f[k], '\t')))
				*f[k + 1]++ = 0;
		if (k < 4 || !f[4] || !isdig(*f[0]) || !isdig(*f[1]) || strlen(f[0]) > 15 || strlen(f[1]) > 15 ||
		    strtoll(f[0], NULL, 10) > STEPMAX || strtoll(f[1], NULL, 10) > STEPMAX ||
		    strtoll(f[1], NULL, 10) < strtoll(f[0], NULL, 10))
			continue;
		*v = xgrow(*v, &cap, n + 1, sizeof **v);
		(*v)[n].start = strtoll(f[0], NULL, 10);
		(*v)[n].end = strtoll(f[1], NULL, 10);
		(*v)[n].out = xstrdup(f[3]);
		if ((*v)[n].end >= lastend) {
			lastend = (*v)[n].end;
			m = strtoll(f[2], NULL, 10);
			/* nanoseconds (ninja 1.10 and later) or seconds */
			*mt = m > 100000000000000000LL ? m / 1000 : m > 1000000000LL && m < 100000000000LL ? m * 1000000 : 0;
			if (*mt)
				*mt -= lastend * 1000;
		}
		n++;
	}
	buffree(&b);
	return n;
}

/* the inner build's steps as spans of process pid, each on the first lane (thread) free
   at its start: placed by the ninja log's own clock when it falls inside the stage's
   span, else from the stage's start */
static void
innersteps(struct json *j, const char *logdir, const struct rec *r, int pid, int64_t base)
{
	char *path = xasprintf("%s/%s.ninja_log", logdir, r->stage);
	struct step *v;
	int64_t off, lanes[256], first = INT64_MAX;
	size_t n = loadsteps(path, &v, &off), i, l, nl = 0;

	for (i = 0; i < n; i++)
		if (v[i].start < first)
			first = v[i].start;
	if (!off || off + first * 1000 < r->start - 2000000 || off + first * 1000 > r->end + 2000000)
		off = r->start - (n ? first * 1000 : 0);
	for (i = 0; i < n; i++) {
		for (l = 0; l < nl && lanes[l] > v[i].start; l++)
			;
		if (l == nl && nl < 256)
			nl++;
		if (l == 256)
			l = 255;
		lanes[l] = v[i].end;
		json_obj(j);
		json_kstr(j, "name", v[i].out);
		json_kstr(j, "cat", "inner");
		json_kstr(j, "ph", "X");
		json_kint(j, "ts", off + v[i].start * 1000 - base);
		json_kint(j, "dur", (v[i].end - v[i].start) * 1000);
		json_kint(j, "pid", pid);
		json_kint(j, "tid", (int64_t)l + 1);
		json_end(j);
		free(v[i].out);
	}
	free(v);
	free(path);
}

/* a metadata event naming a process (a stage) or a thread (a lane) */
static void
meta(struct json *j, const char *what, int pid, int tid, const char *name)
{
	json_obj(j);
	json_kstr(j, "name", what);
	json_kstr(j, "ph", "M");
	json_kint(j, "pid", pid);
	json_kint(j, "tid", tid);
	json_key(j, "args");
	json_obj(j);
	json_kstr(j, "name", name);
	json_end(j);
	json_end(j);
}

int
trace_json(const char *logdir, struct buf *out, char **err)
{
	struct rec *v;
	struct json j;
	size_t n, i;
	int64_t base;
	char *log;

	loadrecs(logdir, &v, &n);
	if (!n) {
		*err = xasprintf("%s: no stage records (*.run): no stage has run here", logdir);
		return -1;
	}
	base = thisbuild(v, n);
	json_init(&j, out);
	json_obj(&j);
	json_kstr(&j, "displayTimeUnit", "ms");
	json_key(&j, "otherData");
	json_obj(&j);
	json_kint(&j, "start_unix_us", base);
	json_end(&j);
	json_key(&j, "traceEvents");
	json_arr(&j);
	for (i = 0; i < n; i++) {
		meta(&j, "process_name", (int)i + 1, 0, v[i].stage);
		meta(&j, "thread_name", (int)i + 1, 0, "stage");
		json_obj(&j);
		json_kstr(&j, "name", v[i].stage);
		json_kstr(&j, "cat", "stage");
		json_kstr(&j, "ph", "X");
		json_kint(&j, "ts", v[i].start - base);
		json_kint(&j, "dur", v[i].end - v[i].start);
		json_kint(&j, "pid", (int)i + 1);
		json_kint(&j, "tid", 0);
		json_key(&j, "args");
		json_obj(&j);
		json_kstr(&j, "result", v[i].result);
		json_kstr(&j, "cache", v[i].cache);
		if (v[i].note)
			json_kstr(&j, "note", v[i].note);
		log = xasprintf("%s/%s.log", logdir, v[i].stage);
		json_kstr(&j, "log", log);
		free(log);
		json_end(&j);
		json_end(&j);
		if (!strcmp(v[i].result, "built") || !strcmp(v[i].result, "failed"))
			innersteps(&j, logdir, &v[i], (int)i + 1, base);
	}
	json_end(&j);
	json_end(&j);
	bufputc(out, '\n');
	for (i = 0; i < n; i++)
		freerec(&v[i]);
	free(v);
	return 0;
}

void
trace_end(const char *result, const char *cache, const char *note)
{
	struct buf b = {0}, t = {0};
	char *p, *err = NULL, *top, *slash;
	int fd;

	if (!cur.stage || !os_isdir(cur.logdir)) {
		free(cur.logdir);
		free(cur.stage);
		free(cur.build);
		memset(&cur, 0, sizeof cur);
		return;
	}
	kv_put(&b, "STAGE", cur.stage);
	kv_put(&b, "RESULT", result);
	kv_put(&b, "CACHE", cache);
	if (note)
		kv_put(&b, "NOTE", note);
	kv_put(&b, "BUILD", cur.build);
	bufprintf(&t, "%lld", (long long)cur.start);
	kv_put(&b, "START", t.s);
	bufreset(&t);
	bufprintf(&t, "%lld", (long long)wallus());
	kv_put(&b, "END", t.s);
	p = xasprintf("%s/%s.run", cur.logdir, cur.stage);
	if (writefile_atomic(p, b.s, b.len, 0644) < 0)
		warn("%s: cannot write the stage's record %s:", cur.stage, p);
	free(p);
	/* LOGDIR/../trace.json, one writer at a time */
	top = xstrdup(cur.logdir);
	if ((slash = strrchr(top, '/')))
		*slash = 0;
	else
		strcpy(top, ".");
	p = xasprintf("%s/.trace.lock", cur.logdir);
	fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	free(p);
	if (fd >= 0 && flock(fd, LOCK_EX) == 0) {
		bufreset(&b);
		p = xasprintf("%s/trace.json", top);
		if (trace_json(cur.logdir, &b, &err) < 0 || writefile_atomic(p, b.s, b.len, 0644) < 0)
			warn("%s: cannot write %s: %s", cur.stage, p, err ? err : strerror(errno));
		free(p);
	}
	if (fd >= 0)
		close(fd);
	free(err);
	free(top);
	buffree(&b);
	buffree(&t);
	free(cur.logdir);
	free(cur.stage);
	free(cur.build);
	memset(&cur, 0, sizeof cur);
}
