/* ELF edits in memory with tools/lib/elfedit (no patchelf, no scratch files), the
   --edit-elf mode that exposes them on files, and a small parallel-for */
#include "fw.h"
#include "atomic.h"
#include "elfedit.h"
#include "os.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int
elf_editbuf(struct buf *data, const struct elfedits *ed, char **err)
{
	struct elfinfo after;
	const char *soname = ed->soname, *rpath = ed->rpath;
	char *e2 = NULL;
	size_t i;
	int r;

	if ((r = elfedit(data, ed, err)) < 0)
		return -1;
	/* fatwheel's own reader must agree before the bytes go into the wheel */
	if (elfinfo_read(&after, data->s, data->len, &e2) < 0) {
		seterr(err, "edited file is no longer valid ELF: %.255s", e2);
		free(e2);
		return -1;
	}
	r = 0;
	if (soname && (!after.soname || strcmp(after.soname, soname) != 0))
		r = seterr(err, "SONAME reads back as '%s', want '%s'",
		           after.soname ? after.soname : "", soname);
	else if (rpath && (!after.rpath || strcmp(after.rpath, rpath) != 0 || after.runpath))
		r = seterr(err, "RPATH reads back as '%s', want '%s'",
		           after.rpath ? after.rpath : "", rpath);
	for (i = 0; !r && i < ed->nren; i++)
		for (size_t j = 0; !r && j < after.nneeded; j++)
			if (strcmp(after.needed[j], ed->oldn[i]) == 0 && strcmp(ed->oldn[i], ed->newn[i]) != 0)
				r = seterr(err, "DT_NEEDED still names '%s'", ed->oldn[i]);
	elfinfo_free(&after);
	return r ? -1 : 0;
}

/* fatwheel --edit-elf ------------------------------------------------------------------ */

static void
editusage(const char *msg)
{
	if (msg)
		fprintf(stderr, "fatwheel: %s\n", msg);
	fputs("usage: fatwheel --edit-elf [--set-soname NAME] [--replace-needed OLD NEW]...\n"
	      "                [--set-rpath PATH | --set-runpath PATH] IN OUT\n", stderr);
	exit(EXIT_USAGE);
}

int
editelf_main(int argc, char **argv)
{
	struct elfedits ed;
	struct buf data = {0};
	const char *in = NULL, *outp = NULL, **oldn, **newn;
	char *err = NULL;
	struct stat st;
	int i, r;

	memset(&ed, 0, sizeof ed);
	oldn = xcalloc((size_t)argc, sizeof *oldn);
	newn = xcalloc((size_t)argc, sizeof *newn);
	ed.oldn = oldn;
	ed.newn = newn;
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--set-soname") == 0 && i + 1 < argc) {
			ed.soname = argv[++i];
		} else if (strcmp(argv[i], "--replace-needed") == 0 && i + 2 < argc) {
			oldn[ed.nren] = argv[++i];
			newn[ed.nren++] = argv[++i];
		} else if ((strcmp(argv[i], "--set-rpath") == 0 || strcmp(argv[i], "--set-runpath") == 0) &&
		           i + 1 < argc) {
			if (ed.rpath)
				editusage("one of --set-rpath and --set-runpath");
			ed.runpath = argv[i][6] == 'r' && argv[i][7] == 'u';
			ed.rpath = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			editusage(xasprintf("unknown or incomplete option '%s'", argv[i]));
		} else if (!in) {
			in = argv[i];
		} else if (!outp) {
			outp = argv[i];
		} else {
			editusage("more than IN and OUT");
		}
	}
	if (!in || !outp)
		editusage("IN and OUT are needed");
	/* a FIFO, device or folder is named as such, never read (os_readreg) */
	if (os_readreg(in, 0, &data, 0, &err) < 0)
		dien(EXIT_USAGE, "%s", err);
	if ((r = elfedit(&data, &ed, &err)) < 0)
		dien(EXIT_USAGE, "%s: %s", in, err);
	if (stat(in, &st) < 0)
		st.st_mode = 0644;
	if (writefile_atomic(outp, data.s, data.len, st.st_mode & 07777) < 0)
		dien(EXIT_PROBLEM, "%s:", outp);
	buffree(&data);
	free(oldn);
	free(newn);
	return 0;
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
