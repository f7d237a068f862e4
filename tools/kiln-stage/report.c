/* kiln-stage report: the last build as a table (stage, result, time, cache), or --json */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "opt.h"
#include "progress.h"
#include "trace.h"
#include "util.h"

static void
usage(const char *error)
{
	opt_usage(error, "usage: kiln-stage report [--json] [BUILDDIR]\n");
}

/* by start, then by name */
static int
bystart(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return strcmp(x->stage, y->stage);
}

/* the cache column: the stage cache's answer and the step's note (ccache's hits) */
static void
cachecol(const struct rec *r, struct buf *b)
{
	safeadd(b, r->cache, strlen(r->cache), 120);
	if (r->note) {
		bufputs(b, "; ");
		safeadd(b, r->note, strlen(r->note), 120);
	}
}

static void
table(struct rec *v, size_t n)
{
	struct buf c = {0};
	int w = 5, nb = 0, nr = 0, nu = 0, nf = 0;
	int64_t first = INT64_MAX, last = 0;
	size_t i;
	char *d;

	for (i = 0; i < n; i++) {
		/* what the .run records say is shown safe for a terminal, like a log's text */
		bufreset(&c);
		safeadd(&c, v[i].stage, strlen(v[i].stage), 200);
		free(v[i].stage);
		v[i].stage = xstrdup(c.s ? c.s : "");
		bufreset(&c);
		safeadd(&c, v[i].result, strlen(v[i].result), 40);
		free(v[i].result);
		v[i].result = xstrdup(c.s ? c.s : "");
		if ((int)strlen(v[i].stage) > w)
			w = (int)strlen(v[i].stage);
	}
	printf("%-*s  %-19s  %8s  %s\n", w, "STAGE", "RESULT", "TIME", "CACHE");
	for (i = 0; i < n; i++) {
		d = strcmp(v[i].result, "up to date") && strcmp(v[i].result, "not run") ?
		    fmtdur((double)(v[i].end - v[i].start) / 1e6) : xstrdup("-");
		bufreset(&c);
		cachecol(&v[i], &c);
		printf("%-*s  %-19s  %8s  %s\n", w, v[i].stage,
		       !strcmp(v[i].result, "restored") ? "restored from cache" : v[i].result, d, c.s);
		free(d);
		nb += !strcmp(v[i].result, "built");
		nr += !strcmp(v[i].result, "restored");
		nu += !strcmp(v[i].result, "up to date");
		nf += !strcmp(v[i].result, "failed") || !strcmp(v[i].result, "interrupted");
		if (v[i].start < first)
			first = v[i].start;
		if (v[i].end > last)
			last = v[i].end;
	}
	d = fmtdur((double)(last - first) / 1e6);
	printf("%zu stage%s: %d built, %d restored from cache, %d up to date, %d failed; %s from the "
	       "first start to the last end\n", n, n == 1 ? "" : "s", nb, nr, nu, nf, d);
	free(d);
	buffree(&c);
}

static void
jsonout(const struct rec *v, size_t n, int64_t base)
{
	struct buf b = {0};
	struct json j;
	size_t i;

	json_init(&j, &b);
	json_obj(&j);
	json_kint(&j, "start_unix_us", base);
	json_key(&j, "stages");
	json_arr(&j);
	for (i = 0; i < n; i++) {
		json_obj(&j);
		json_kstr(&j, "stage", v[i].stage);
		json_kstr(&j, "result", v[i].result);
		json_kint(&j, "start_us", v[i].start - base);
		json_kint(&j, "duration_us", v[i].end - v[i].start);
		json_kstr(&j, "cache", v[i].cache);
		json_kstr(&j, "note", v[i].note);
		json_end(&j);
	}
	json_end(&j);
	json_end(&j);
	bufputc(&b, '\n');
	fwrite(b.s, 1, b.len, stdout);
	buffree(&b);
}

int
report_main(int argc, char **argv)
{
	const char *dir = "build";
	struct rec *v;
	size_t n, i;
	int64_t base;
	int js = 0, a, failed = 0;
	char *logdir;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help"))
			usage(NULL);
		else if (!strcmp(argv[a], "--json"))
			js = 1;
		else if (argv[a][0] == '-' || a + 1 < argc)
			usage(xasprintf("report: unexpected argument '%s'", argv[a]));
		else
			dir = argv[a];
	}
	logdir = xasprintf("%s/logs", dir);
	loadrecs(logdir, &v, &n);
	if (!n) {
		warn("%s: no stage records (*.run); run ninja in %s first", logdir, dir);
		free(logdir);
		return EXIT_USAGE;
	}
	base = thisbuild(v, n);
	qsort(v, n, sizeof *v, bystart);
	if (js)
		jsonout(v, n, base);
	else
		table(v, n);
	for (i = 0; i < n; i++) {
		failed |= !strcmp(v[i].result, "failed") || !strcmp(v[i].result, "interrupted");
		freerec(&v[i]);
	}
	free(v);
	free(logdir);
	return failed ? EXIT_PROBLEM : EXIT_OK;
}
