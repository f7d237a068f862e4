/* reading the input wheel: every member inflated and checked against RECORD */
#include "state.h"
#include "elffile.h"
#include "hash.h"
#include "pep440.h"
#include "wheelname.h"

#include <stdlib.h>
#include <string.h>


static pthread_mutex_t progmu = PTHREAD_MUTEX_INITIALIZER;
static size_t vdone;
static uint64_t vbytes;

struct hashctx {
	struct sha256 h;
	struct buf *keep;           /* content kept when it is ELF */
	unsigned char head[4];
	size_t nhead;
	int iself;
};

static int
hashchunk(void *ctx, const void *p, size_t n)
{
	struct hashctx *c = ctx;
	size_t take;

	sha256_update(&c->h, p, n);
	if (c->nhead < 4) {
		take = n < 4 - c->nhead ? n : 4 - c->nhead;
		memcpy(c->head + c->nhead, p, take);
		c->nhead += take;
		if (c->nhead == 4)
			c->iself = memcmp(c->head, "\177ELF", 4) == 0;
	}
	/* keep the bytes while undecided and for ELF files */
	if (c->iself || c->nhead < 4)
		bufadd(c->keep, p, n);
	else if (c->keep->len)
		buffree(c->keep);
	return 0;
}

/* members up to this size are inflated whole with libdeflate, larger ones streamed */
#define FAST_MAX ((uint64_t)1 << 30)
/* the inflated bytes of ELF members are kept for their edit, up to this much in all:
   inflating a big member a second time is on the critical path of a small wheel */
#define KEEP_MAX ((uint64_t)1 << 30)
static uint64_t kept;

/* keep the inflated ELF member m's bytes (in keep) as m->data, within KEEP_MAX */
static void
keepelf(struct member *m, struct buf *keep)
{
	int ok;

	pthread_mutex_lock(&progmu);
	ok = kept + keep->len <= KEEP_MAX;
	if (ok)
		kept += keep->len;
	pthread_mutex_unlock(&progmu);
	if (!ok)
		return;
	m->data = *keep;
	memset(keep, 0, sizeof *keep);
	m->inflated = 1;
}

/* the members to check, for verify1 on the pfor threads */
struct checkctx {
	struct fw *fw;
	struct member **order;
};

/* inflate one member: check it against RECORD, read its ELF facts */
static void
verify1(void *ctx, size_t i)
{
	struct fw *fw = ((struct checkctx *)ctx)->fw;
	struct member *m = ((struct checkctx *)ctx)->order[i];
	struct hashctx c;
	struct buf keep = {0};
	struct recline *r;
	struct buf want = {0};

	memset(&c, 0, sizeof c);
	c.keep = &keep;
	if (m->e->usize <= FAST_MAX) {
		/* whole member at once: libdeflate, then hash */
		if (fast_inflate(&fw->zin, m->e, &keep, &m->err) < 0) {
			m->bad = 1;
			buffree(&keep);
			return;
		}
		sha256_buf(keep.s, keep.len, m->sha);
		c.iself = elf_is(keep.s, keep.len);
	} else {
		sha256_init(&c.h);
		if (zip_read(&fw->zin, m->e, hashchunk, &c, &m->err) < 0) {
			sha256_final(&c.h, m->sha);
			m->bad = 1;
			buffree(&keep);
			return;
		}
		sha256_final(&c.h, m->sha);
	}
	r = record_find(fw->rec, fw->nrec, m->e->name);
	if (r) {
		r->seen = 1;
		bufputs(&want, "sha256=");
		b64url(&want, m->sha, 32);
		if (!startswith(r->hash, "sha256="))
			m->bad = seterr(&m->err, "RECORD gives '%s' no sha256 hash ('%s')",
			                m->e->name, r->hash) < 0;
		else if (strcmp(r->hash, want.s) != 0)
			m->bad = seterr(&m->err, "RECORD lies about '%s': it says %s, the content is %s",
			                m->e->name, r->hash, want.s) < 0;
		else if (*r->size && strtoull(r->size, NULL, 10) != m->e->usize)
			m->bad = seterr(&m->err, "RECORD gives '%s' size %s, the content has %llu bytes",
			                m->e->name, r->size, (unsigned long long)m->e->usize) < 0;
	} else {
		m->bad = seterr(&m->err, "member '%s' is not listed in RECORD", m->e->name) < 0;
	}
	buffree(&want);
	if (!m->bad && c.iself && keep.len >= 16) {
		if (elfinfo_read(&m->ei, keep.s, keep.len, NULL) == 0)
			m->iself = m->ei.dynamic;
		else
			elfinfo_free(&m->ei);
		if (m->iself)
			keepelf(m, &keep);
	}
	buffree(&keep);
	pthread_mutex_lock(&progmu);
	vdone++;
	vbytes += m->e->usize;
	progress(fw, "checking", vdone, fw->nmem, vbytes);
	pthread_mutex_unlock(&progmu);
}

/* the NAME.dist-info folder must be the wheel's own: pip installs its metadata as the
   project the folder names, so a wheel carrying another project's .dist-info would
   overwrite (and later uninstall) that project's files */
static void
checkdistinfo(struct fw *fw)
{
	struct buf a = {0};
	struct pep440 v;
	char *stem = xstrndup(fw->distinfo, strlen(fw->distinfo) - 11), *dash = strrchr(stem, '-');
	int same = dash != NULL;

	/* NAME-VERSION of the folder against the file name's, as pip compares them */
	if (same) {
		canonname(&a, stem, (size_t)(dash - stem));
		same = strcmp(a.s, fw->wn.n.name) == 0;
	}
	if (same) {
		same = pep440_parses(&v, dash + 1) == 0 && pep440_cmp(&v, &fw->wn.n.ver) == 0;
		pep440_free(&v); /* zeroed when it does not parse */
	}
	buffree(&a);
	free(stem);
	if (!same)
		dien(EXIT_USAGE, "%s: the metadata folder %s is not this wheel's (%s %s): it would install as another project",
		     fw->opt.in, fw->distinfo, fw->wn.name, fw->wn.version);
}

static int
cmpbysize(const void *a, const void *b)
{
	uint64_t x = (*(struct member *const *)a)->e->csize, y = (*(struct member *const *)b)->e->csize;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* the one top-level NAME.dist-info folder with WHEEL and RECORD (fw->distinfo, fw->recordm) */
static void
finddistinfo(struct fw *fw)
{
	size_t i, nd = 0;
	const char *slash;

	for (i = 0; i < fw->nmem; i++) {
		fw->mem[i].e = &fw->zin.e[i];
		slash = strchr(fw->zin.e[i].name, '/');
		if (slash && slash - fw->zin.e[i].name > 10 && strncmp(slash - 10, ".dist-info", 10) == 0 &&
		    strcmp(slash + 1, "RECORD") == 0) {
			nd++;
			free(fw->distinfo);
			fw->distinfo = xstrndup(fw->zin.e[i].name, (size_t)(slash - fw->zin.e[i].name + 1));
			fw->recordm = &fw->mem[i];
		}
	}
	if (nd != 1)
		die("%s: not a wheel: %s", fw->opt.in, nd ? "more than one .dist-info/RECORD" : "no NAME.dist-info/RECORD");
	/* one .dist-info folder only (pip refuses several), and it is the wheel's own */
	for (i = 0; i < fw->nmem; i++) {
		const char *n = fw->zin.e[i].name;
		slash = strchr(n, '/');
		if (slash && slash - n > 10 && strncmp(slash - 10, ".dist-info", 10) == 0 &&
		    !startswith(n, fw->distinfo))
			die("%s: not a wheel: more than one .dist-info folder (%s, %.*s)", fw->opt.in, fw->distinfo,
			    (int)(slash - n + 1), n);
	}
}

/* which members are WHEEL, RECORD, folders, signatures (dropped) */
static void
markmembers(struct fw *fw)
{
	size_t i;

	for (i = 0; i < fw->nmem; i++) {
		const char *n = fw->mem[i].e->name;
		fw->mem[i].dist = startswith(n, fw->distinfo);
		if (fw->mem[i].dist && strcmp(n + strlen(fw->distinfo), "WHEEL") == 0)
			fw->wheelm = &fw->mem[i];
		if (endswith(n, "/") || &fw->mem[i] == fw->recordm)
			fw->mem[i].skip = 1;
		if (fw->mem[i].dist && (strcmp(n + strlen(fw->distinfo), "RECORD.jws") == 0 ||
		                    strcmp(n + strlen(fw->distinfo), "RECORD.p7s") == 0)) {
			fw->mem[i].skip = fw->mem[i].drop = 1;
			if (!fw->opt.quiet)
				warn("%s: dropping the signature %s (the rewritten RECORD invalidates it)", fw->opt.in, n);
		}
	}
	if (!fw->wheelm)
		die("%s: not a wheel: no %sWHEEL", fw->opt.in, fw->distinfo);
}

/* RECORD: read it first, the other members are checked against it */
static void
readrecord(struct fw *fw)
{
	struct buf rb = {0};
	char *err = NULL;

	if (fw->recordm->e->usize > (64u << 20))
		die("%s: %s is %llu bytes; not a RECORD", fw->opt.in, fw->recordm->e->name,
		    (unsigned long long)fw->recordm->e->usize);
	{
		struct hashctx c;
		memset(&c, 0, sizeof c);
		c.keep = &rb;
		c.iself = 1;
		c.nhead = 4;
		memcpy(c.head, "\177ELF", 4);
		sha256_init(&c.h);
		if (zip_read(&fw->zin, fw->recordm->e, hashchunk, &c, &err) < 0)
			die("%s: %s", fw->opt.in, err);
		sha256_final(&c.h, fw->recordm->sha);
	}
	if (record_parse(rb.s ? rb.s : "", rb.len, &fw->rec, &fw->nrec, &err) < 0)
		die("%s: %s", fw->opt.in, err);
	buffree(&rb);
}

/* every member against RECORD, biggest first on the pfor threads, and every RECORD line
   against the members */
static void
checkmembers(struct fw *fw)
{
	size_t i, nord = 0;
	struct member **order;

	order = xmalloc((fw->nmem ? fw->nmem : 1) * sizeof *order);
	for (i = 0; i < fw->nmem; i++)
		if (!fw->mem[i].skip)
			order[nord++] = &fw->mem[i];
	qsort(order, nord, sizeof *order, cmpbysize);
	{
		size_t saved = fw->nmem;
		struct checkctx cx = {fw, order};
		fw->nmem = nord;  /* progress total */
		pfor(nord, fw->opt.jobs, verify1, &cx);
		fw->nmem = saved;
	}
	free(order);
	for (i = 0; i < fw->nmem; i++)
		if (fw->mem[i].bad)
			die("%s: %s", fw->opt.in, fw->mem[i].err);
	for (i = 0; i < fw->nrec; i++) {
		struct zipent *e = NULL;
		size_t j;
		if (fw->rec[i].seen || strcmp(fw->rec[i].path, fw->recordm->e->name) == 0)
			continue;
		for (j = 0; j < fw->nmem; j++)
			if (strcmp(fw->mem[j].e->name, fw->rec[i].path) == 0)
				e = fw->mem[j].e;
		if (!e)
			die("%s: RECORD lists '%s', which is not in the wheel", fw->opt.in, fw->rec[i].path);
	}
}

void
readinput(struct fw *fw)
{
	char *err = NULL;

	if (zip_open(&fw->zin, fw->opt.in, &err) < 0)
		die("%s: %s", fw->opt.in, err);
	fw->nmem = fw->zin.n;
	fw->opt.sp.wheel = &fw->zin;
	fw->mem = xcalloc(fw->nmem ? fw->nmem : 1, sizeof *fw->mem);
	finddistinfo(fw);
	checkdistinfo(fw);
	markmembers(fw);
	readrecord(fw);
	checkmembers(fw);
}
