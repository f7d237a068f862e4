/* kiln-stage verify: rebuild a stage beside its stamped output and name every file (and
   zip member) that differs; kiln-stage explain: why a stage would run, and why its
   stage-cache lookup would miss */
#include "verify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapfile.h"
#include "os.h"
#include "remote.h"
#include "stage.h"
#include "util.h"
#include "zip.h"

/* what run, verify and explain share on their command line */
struct vopts {
	struct stageopts so;	/* --key, --stamp, --parent, --logdir, --out */
	const char *cache, *name;
	char **cmd;     /* after --, NULL-terminated; NULL when absent */
};

static void
vusage(const char *verb, const char *error)
{
	fprintf(stderr, "kiln-stage: %s: %s\n", verb, error);
	fprintf(stderr, "usage: kiln-stage %s --key=FILE --stamp=FILE [--parent=STAMP]... "
	                "[--logdir=DIR] [--out=DIR] [--stage-cache=DIR] STAGE%s\n",
	        verb, strcmp(verb, "verify") == 0 ? " -- CMD [ARG...]" : "");
	exit(EXIT_USAGE);
}

/* parse argv (argv[0] is the verb); run's other options are accepted and ignored, so a
   stage's command line serves with only its verb changed */
static void
parse(struct vopts *o, int argc, char **argv)
{
	const char *verb = argv[0];
	int i;

	memset(o, 0, sizeof *o);
	o->so.logdir = "build/logs";
	for (i = 1; i < argc; i++) {
		char *a = argv[i];
		if (strcmp(a, "--") == 0 || a[0] != '-')
			break;
		if (stage_opt(&o->so, a))
			;
		else if (startswith(a, "--stage-cache="))
			o->cache = a[14] ? a + 14 : NULL;
		else if (startswith(a, "--id-file=") || startswith(a, "--id-keys="))
			;
		else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			printf("usage: kiln-stage %s --key=FILE --stamp=FILE [--parent=STAMP]... "
			       "[--logdir=DIR] [--out=DIR] [--stage-cache=DIR] STAGE%s\n",
			       verb, strcmp(verb, "verify") == 0 ? " -- CMD [ARG...]" : "");
			exit(EXIT_OK);
		} else
			vusage(verb, xasprintf("unknown option '%s'", a));
	}
	if (i >= argc || strcmp(argv[i], "--") == 0)
		vusage(verb, "no STAGE name");
	o->name = argv[i++];
	/* parent stamps may follow the name, as run takes them (the graph's $in) */
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		o->so.parents = xgrow(o->so.parents, &o->so.cap, o->so.np + 1, sizeof *o->so.parents);
		o->so.parents[o->so.np++] = argv[i];
	}
	if (!o->so.key || !o->so.stamp)
		vusage(verb, "--key=FILE and --stamp=FILE are required");
	if (i < argc && strcmp(argv[i], "--") == 0 && i + 1 < argc)
		o->cmd = argv + i + 1;
	else if (i < argc)
		vusage(verb, xasprintf("unexpected argument '%s'", argv[i]));
}

/* load the stage and its stamp; exits 2 on bad input. Returns 1 with st filled when
   there is a stamp, else 0. */
static int
load(const struct vopts *o, struct stage *s, struct stamp *st)
{
	char *err = NULL;
	int r;

	if (stage_load(s, o->name, &o->so, &err) < 0)
		dien(EXIT_USAGE, "%s: %s", o->name, err);
	if ((r = stamp_read(st, o->so.stamp, &err)) < 0)
		dien(EXIT_USAGE, "%s", err);
	return r;
}

int
cmdexplain(int argc, char **argv)
{
	struct vopts o;
	struct stage s;
	struct stamp st;
	char *why;
	int r;

	parse(&o, argc, argv);
	r = load(&o, &s, &st);
	if (r == 1 && strcmp(st.key, s.key) == 0 && o.so.out && dir_count(o.so.out) == 0)
		why = xasprintf("would run: its outputs in %s are missing", o.so.out);
	else if (r == 1 && strcmp(st.key, s.key) == 0)
		why = xstrdup("up to date");
	else {
		char *w = stage_explain(&s, r == 1 ? &st : NULL, 6);
		why = xasprintf("would run: %s", w);
		free(w);
	}
	printf("%s: %s\n", o.name, why);
	free(why);
	if (o.cache) {
		why = remote_isurl(o.cache) ? remote_explain(o.cache, s.key)
		      : cache_explain(startswith(o.cache, "file://") ? o.cache + 7 : o.cache, &s);
		printf("%s: %s\n", o.name, why);
		free(why);
	}
	stamp_free(&st);
	stage_free(&s);
	free(o.so.parents);
	return EXIT_OK;
}

static const struct zipent *
member(const struct zipin *z, const char *name, size_t *at)
{
	size_t i;

	for (i = 0; i < z->n; i++)
		if (strcmp(z->e[i].name, name) == 0) {
			*at = i;
			return &z->e[i];
		}
	return NULL;
}

/* append why two zips a (stamped) and b (rebuilt) differ, member by member; returns 0
   if either is not a zip */
static int
zipdiff(const char *a, const char *b, struct buf *why)
{
	struct zipin za, zb;
	const struct zipent *ea, *eb;
	size_t i, at, n = 0, order = 0;

	if (zip_open(&za, a, NULL) < 0)
		return 0;
	if (zip_open(&zb, b, NULL) < 0) {
		zip_close(&za);
		return 0;
	}
	for (i = 0; i < za.n; i++) {
		ea = &za.e[i];
		eb = member(&zb, ea->name, &at);
		if (!eb) {
			if (n++ < 8)
				bufprintf(why, "; member %s is missing from the rebuild", ea->name);
			continue;
		}
		if (at != i)
			order++;
		if (ea->crc != eb->crc || ea->usize != eb->usize) {
			if (n++ < 8)
				bufprintf(why, "; member %s: content differs (%llu bytes, CRC %08x -> "
				          "%llu bytes, CRC %08x)", ea->name, (unsigned long long)ea->usize,
				          (unsigned)ea->crc, (unsigned long long)eb->usize, (unsigned)eb->crc);
		} else if (ea->mtime != eb->mtime || ea->mdate != eb->mdate) {
			if (n++ < 8)
				bufprintf(why, "; member %s: time stamp differs (set SOURCE_DATE_EPOCH)",
				          ea->name);
		} else if (ea->extattr != eb->extattr) {
			if (n++ < 8)
				bufprintf(why, "; member %s: mode differs (%o -> %o)", ea->name,
				          (unsigned)(ea->extattr >> 16), (unsigned)(eb->extattr >> 16));
		} else if (ea->method != eb->method || ea->csize != eb->csize) {
			if (n++ < 8)
				bufprintf(why, "; member %s: compressed differently", ea->name);
		}
	}
	for (i = 0; i < zb.n; i++)
		if (!member(&za, zb.e[i].name, &at) && n++ < 8)
			bufprintf(why, "; member %s is only in the rebuild", zb.e[i].name);
	if (n > 8)
		bufprintf(why, "; and %zu more members", n - 8);
	if (order)
		bufprintf(why, "; %zu members in another order (sort the archive)", order);
	if (!n && !order)
		bufputs(why, "; same members, content, times and modes: the zip headers differ");
	zip_close(&za);
	zip_close(&zb);
	return 1;
}

/* compare two files; returns 1 identical, 0 differs (why appended), -1 on error */
static int
filediff(const char *a, const char *b, struct buf *why)
{
	struct mapfile ma, mb;
	size_t i, n;
	int r;

	if (map_open(&ma, a) < 0)
		return -1;
	if (map_open(&mb, b) < 0) {
		map_close(&ma);
		return -1;
	}
	n = ma.n < mb.n ? ma.n : mb.n;
	for (i = 0; i < n && ma.p[i] == mb.p[i]; i++)
		;
	r = i == n && ma.n == mb.n;
	if (!r) {
		bufprintf(why, "differs from byte %zu (%zu -> %zu bytes)", i, ma.n, mb.n);
		zipdiff(a, b, why);
	}
	map_close(&ma);
	map_close(&mb);
	return r;
}

/* the stage must be built for its current key; say if its files changed since */
static void
verify_built(const struct vopts *o, struct stage *s, struct stamp *st)
{
	struct buf now = {0};
	char *err = NULL;
	int r = load(o, s, st);

	if (r == 0 || strcmp(st->key, s->key) != 0 || dir_count(o->so.out) == 0)
		dien(EXIT_USAGE, "%s: not built for its current key (%s); build it first (ninja %s)",
		     o->name, o->so.stamp, o->name);
	if (st->sums && (dir_sums(o->so.out, &now, &err) < 0 || strcmp(st->sums, now.s ? now.s : "") != 0))
		warn("%s: the files in %s are not those its stamp records (changed since the build)",
		     o->name, o->so.out);
	free(err);
	buffree(&now);
}

/* the stage's command again, into SCRATCH (empty, a folder of its own), logged to
   NAME.verify's log; any failure ends kiln-stage */
static void
rebuild(const struct vopts *o, const struct stage *s, const char *scratch)
{
	struct stat sb;
	struct procres res;
	char *vname, *logpath = NULL, *err = NULL, *abs;
	int fd, r;

	if (lstat(scratch, &sb) == 0 && !S_ISDIR(sb.st_mode))
		dien(EXIT_USAGE, "%s: not a folder; refusing to rebuild into it", scratch);
	if (dir_empty(scratch, &err) < 0)
		dien(EXIT_USAGE, "%s", err);
	if (os_mkdirs(o->so.logdir, 0777) < 0)
		dien(EXIT_USAGE, "%s: cannot create:", o->so.logdir);
	vname = xasprintf("%s.verify", o->name);
	fd = log_open(o->so.logdir, vname, &logpath, &err);
	free(vname);
	if (fd < 0)
		dien(EXIT_USAGE, "%s", err);
	abs = realpath(scratch, NULL);
	fprintf(stderr, "kiln: %s: rebuilding into %s to compare with %s\n", o->name, scratch, o->so.out);
	r = stage_spawn(o->cmd, fd, s,
	                &(struct spawnopt){.logpath = logpath, .out = abs ? abs : scratch, .verify = 1},
	                &res);
	close(fd);
	/* freed before any exit here: LeakSanitizer counts what no live frame still holds */
	free(abs);
	if (r < 0)
		dien(EXIT_PROBLEM, "%s: cannot run %s:", o->name, o->cmd[0]);
	if (res.status != 0)
		dien(EXIT_PROBLEM, "%s: the rebuild failed (%s %d); its log: %s", o->name,
		     res.sig ? "killed by signal" : "exit", res.sig ? res.sig : res.status, logpath);
	free(err);
	free(logpath);
}

/* each output beside its rebuild, a line each; returns how many differ */
static size_t
compare(const struct vopts *o, const char *scratch, size_t *same)
{
	struct strv fa = {0}, fb = {0};
	struct buf why = {0};
	size_t i, k, differ = 0;
	char *p, *q;
	int r;

	if (dir_files(o->so.out, &fa) < 0 || dir_files(scratch, &fb) < 0)
		dien(EXIT_USAGE, "%s: cannot list the outputs:", o->name);
	for (i = 0; i < fa.n; i++) {
		if (!strv_has(&fb, fa.v[i])) {
			printf("%s: %s: missing from the rebuild\n", o->name, fa.v[i]);
			differ++;
			continue;
		}
		p = xasprintf("%s/%s", o->so.out, fa.v[i]);
		q = xasprintf("%s/%s", scratch, fa.v[i]);
		bufreset(&why);
		if ((r = filediff(p, q, &why)) < 0)
			dien(EXIT_USAGE, "%s: cannot compare with %s:", p, q);
		if (r)
			printf("%s: %s: identical\n", o->name, fa.v[i]);
		else
			printf("%s: %s: %s\n", o->name, fa.v[i], why.s);
		*same += r != 0;
		differ += r == 0;
		free(p);
		free(q);
	}
	for (k = 0; k < fb.n; k++)
		if (!strv_has(&fa, fb.v[k])) {
			printf("%s: %s: only in the rebuild\n", o->name, fb.v[k]);
			differ++;
		}
	strv_free(&fa);
	strv_free(&fb);
	buffree(&why);
	return differ;
}

int
cmdverify(int argc, char **argv)
{
	struct vopts o;
	struct stage s;
	struct stamp st;
	char *scratch, *err = NULL;
	size_t same = 0, differ;

	parse(&o, argc, argv);
	if (!o.cmd)
		vusage("verify", "no command after -- (the stage's own command)");
	if (!o.so.out)
		vusage("verify", "--out=DIR is required (a stage without outputs has nothing to compare)");
	verify_built(&o, &s, &st);
	/* the rebuild goes beside the output, into a folder of its own */
	scratch = xasprintf("%s.verify", o.so.out);
	rebuild(&o, &s, scratch);
	differ = compare(&o, scratch, &same);
	if (differ)
		printf("%s: %zu identical, %zu differ; the rebuild is kept in %s\n", o.name, same, differ,
		       scratch);
	else {
		printf("%s: %zu identical: the stage is reproducible\n", o.name, same);
		if (dir_empty(scratch, &err) == 0)
			rmdir(scratch);
	}
	free(err);
	free(scratch);
	stamp_free(&st);
	stage_free(&s);
	free(o.so.parents);
	return differ ? EXIT_PROBLEM : EXIT_OK;
}
