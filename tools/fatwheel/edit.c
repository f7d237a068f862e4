/* ELF edits through patchelf, one edit per call, each verified by reading the file back;
   and a small parallel-for */
#include "fw.h"
#include "mapfile.h"
#include "proc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* run patchelf with the given arguments on path; returns 0 or -1 with err */
static int
patchelf(const char *pe, char **args, size_t nargs, const char *path, char *err, size_t errlen)
{
	char **argv = xcalloc(nargs + 3, sizeof *argv);
	struct buf out = {0}, eo = {0};
	struct procres res;
	size_t i, k = 0;
	int r = 0;

	argv[k++] = (char *)pe;
	for (i = 0; i < nargs; i++)
		argv[k++] = args[i];
	argv[k++] = (char *)path;
	argv[k] = NULL;
	if (proc_capture(argv, NULL, &out, &eo, 0, 0, &res) < 0 || res.notfound) {
		snprintf(err, errlen, "cannot run %s: %s", pe, strerror(res.notfound ? res.err : errno));
		r = -1;
	} else if (res.status != 0) {
		if (eo.len && eo.s[eo.len - 1] == '\n')
			eo.s[--eo.len] = 0;
		snprintf(err, errlen, "%s %s failed (exit %d): %s", pe, args[0], res.status,
		         eo.s ? eo.s : "");
		r = -1;
	}
	free(argv);
	buffree(&out);
	buffree(&eo);
	return r;
}

int
patchelf_batches(const char *pe)
{
	char *argv[] = {(char *)pe, "--version", NULL};
	struct buf out = {0};
	struct procres res;
	int a = 0, b = 0, c = 0, ok;

	ok = proc_capture(argv, NULL, &out, NULL, 0, 10000, &res) == 0 && !res.notfound &&
	     res.status == 0 && out.s && sscanf(out.s, "patchelf %d.%d.%d", &a, &b, &c) >= 2;
	buffree(&out);
	if (!ok)
		return -1;
	/* 0.14.5 fixed several different edits in one call */
	return a > 0 || b > 14 || (b == 14 && c >= 5);
}

/* read path back as ELF */
static int
readback(const char *path, struct elfinfo *info, char *err, size_t errlen)
{
	struct mapfile m;
	char e2[256];

	if (map_open(&m, path) < 0) {
		snprintf(err, errlen, "cannot read back %s: %s", path, strerror(errno));
		return -1;
	}
	if (elfinfo_read(info, m.p, m.n, e2, sizeof e2) < 0) {
		snprintf(err, errlen, "edited file is no longer valid ELF: %s", e2);
		map_close(&m);
		return -1;
	}
	map_close(&m);
	return 0;
}

static int
streq(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

/* run the collected arguments, or keep collecting when batching */
static int
flush(const char *pe, char **args, size_t *n, int batch, int last, const char *path, char *err,
      size_t errlen)
{
	int r = 0;

	if (*n && (!batch || last))
		r = patchelf(pe, args, *n, path, err, errlen);
	if (!batch || last)
		*n = 0;
	return r;
}

int
elf_edit(const char *pe, int batch, const char *path, const char *soname, char **oldn,
         char **newn, size_t nren, const char *rpath, char *err, size_t errlen)
{
	struct elfinfo before, after;
	char **args = xcalloc(3 * nren + 8, sizeof *args);
	size_t i, j, n = 0;
	int bad = 0;

	if (readback(path, &before, err, errlen) < 0) {
		free(args);
		return -1;
	}
	/* one kind of edit per call (several --replace-needed are one edit inside
	   patchelf), or everything in one call when patchelf is new enough */
	if (soname) {
		args[n++] = "--set-soname";
		args[n++] = (char *)soname;
	}
	if (flush(pe, args, &n, batch, 0, path, err, errlen) < 0)
		goto fail;
	for (i = 0; i < nren; i++) {
		args[n++] = "--replace-needed";
		args[n++] = oldn[i];
		args[n++] = newn[i];
	}
	if (flush(pe, args, &n, batch, 0, path, err, errlen) < 0)
		goto fail;
	if (rpath) {
		/* --force-rpath turns a DT_RUNPATH into DT_RPATH; with both present, the
		   RUNPATH would still win: remove both first */
		if (before.rpath && before.runpath) {
			args[n++] = "--remove-rpath";
			if (flush(pe, args, &n, 0, 0, path, err, errlen) < 0)
				goto fail;
		}
		args[n++] = "--force-rpath";
		args[n++] = "--set-rpath";
		args[n++] = (char *)rpath;
	}
	if (flush(pe, args, &n, batch, 1, path, err, errlen) < 0)
		goto fail;
	if (readback(path, &after, err, errlen) < 0)
		goto fail;
	/* every edit must be there, and nothing else changed */
	if (soname && !streq(after.soname, soname))
		bad = snprintf(err, errlen, "SONAME reads back as '%s', want '%s'",
		               after.soname ? after.soname : "", soname);
	else if (!soname && !streq(after.soname, before.soname))
		bad = snprintf(err, errlen, "SONAME changed unasked");
	else if (rpath && (!streq(after.rpath, rpath) || after.runpath))
		bad = snprintf(err, errlen, "RPATH reads back as '%s' (RUNPATH '%s'), want RPATH '%s'",
		               after.rpath ? after.rpath : "", after.runpath ? after.runpath : "", rpath);
	else if (!rpath && (!streq(after.rpath, before.rpath) || !streq(after.runpath, before.runpath)))
		bad = snprintf(err, errlen, "RPATH or RUNPATH changed unasked");
	else if (after.nneeded != before.nneeded)
		bad = snprintf(err, errlen, "DT_NEEDED count changed from %zu to %zu", before.nneeded,
		               after.nneeded);
	for (i = 0; !bad && i < before.nneeded; i++) {
		const char *want = before.needed[i];
		for (j = 0; j < nren; j++)
			if (strcmp(want, oldn[j]) == 0)
				want = newn[j];
		if (strcmp(after.needed[i], want) != 0)
			bad = snprintf(err, errlen, "DT_NEEDED[%zu] reads back as '%s', want '%s'", i,
			               after.needed[i], want);
	}
	elfinfo_free(&before);
	elfinfo_free(&after);
	free(args);
	return bad ? -1 : 0;
fail:
	elfinfo_free(&before);
	free(args);
	return -1;
}

/* parallel for ---------------------------------------------------------------------- */

struct pforctx {
	pthread_mutex_t mu;
	size_t next, n;
	void (*fn)(void *ctx, size_t i);
	void *ctx;
};

static void *
pforwork(void *arg)
{
	struct pforctx *c = arg;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&c->mu);
		i = c->next++;
		pthread_mutex_unlock(&c->mu);
		if (i >= c->n)
			return NULL;
		c->fn(c->ctx, i);
	}
}

void
pfor(size_t n, int nthreads, void (*fn)(void *ctx, size_t i), void *ctx)
{
	struct pforctx c;
	pthread_t th[64];
	int i, k = 0;

	c.next = 0;
	c.n = n;
	c.fn = fn;
	c.ctx = ctx;
	pthread_mutex_init(&c.mu, NULL);
	if (nthreads > 64)
		nthreads = 64;
	if ((size_t)nthreads > n)
		nthreads = (int)n;
	for (i = 1; i < nthreads; i++)
		if (pthread_create(&th[k], NULL, pforwork, &c) == 0)
			k++;
	pforwork(&c);
	for (i = 0; i < k; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&c.mu);
}
