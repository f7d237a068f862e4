/* ELF edits through patchelf, one edit per call, each verified by reading the file back;
   and a small parallel-for */
#include "fw.h"
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
	char *argv[8];
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
	buffree(&out);
	buffree(&eo);
	return r;
}

/* read path back as ELF */
static int
readback(const char *path, struct elfinfo *info, char *err, size_t errlen)
{
	struct buf b = {0};
	char e2[256];

	if (readfile(path, &b, 0) < 0) {
		snprintf(err, errlen, "cannot read back %s: %s", path, strerror(errno));
		return -1;
	}
	if (elfinfo_read(info, b.s, b.len, e2, sizeof e2) < 0) {
		snprintf(err, errlen, "edited file is no longer valid ELF: %s", e2);
		buffree(&b);
		return -1;
	}
	buffree(&b);
	return 0;
}

static int
streq(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

int
elf_edit(const char *pe, const char *path, const char *soname, char **oldn, char **newn,
         size_t nren, const char *rpath, char *err, size_t errlen)
{
	struct elfinfo before, after;
	char *args[4];
	size_t i, j;
	int bad = 0;

	if (readback(path, &before, err, errlen) < 0)
		return -1;
	if (soname) {
		args[0] = "--set-soname";
		args[1] = (char *)soname;
		if (patchelf(pe, args, 2, path, err, errlen) < 0)
			goto fail;
	}
	for (i = 0; i < nren; i++) {
		args[0] = "--replace-needed";
		args[1] = oldn[i];
		args[2] = newn[i];
		if (patchelf(pe, args, 3, path, err, errlen) < 0)
			goto fail;
	}
	if (rpath) {
		/* DT_RUNPATH would be ignored for RPATH, and vice versa: remove both first */
		args[0] = "--remove-rpath";
		if ((before.rpath || before.runpath) && patchelf(pe, args, 1, path, err, errlen) < 0)
			goto fail;
		args[0] = "--force-rpath";
		args[1] = "--set-rpath";
		args[2] = (char *)rpath;
		if (patchelf(pe, args, 3, path, err, errlen) < 0)
			goto fail;
	}
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
	return bad ? -1 : 0;
fail:
	elfinfo_free(&before);
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
