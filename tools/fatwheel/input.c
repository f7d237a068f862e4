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

/* inflate one member: check it against RECORD, read its ELF facts */
static void
verify1(void *ctx, size_t i)
{
	struct member *m = &mem[((size_t *)ctx)[i]];
	struct hashctx c;
	struct buf keep = {0};
	struct recline *r;
	struct buf want = {0};

	memset(&c, 0, sizeof c);
	c.keep = &keep;
	if (m->e->usize <= FAST_MAX) {
		/* whole member at once: libdeflate, then hash */
		if (fast_inflate(&zin, m->e, &keep, &m->err) < 0) {
			m->bad = 1;
			buffree(&keep);
			return;
		}
		sha256_buf(keep.s, keep.len, m->sha);
		c.iself = elf_is(keep.s, keep.len);
	} else {
		sha256_init(&c.h);
		if (zip_read(&zin, m->e, hashchunk, &c, &m->err) < 0) {
			sha256_final(&c.h, m->sha);
			m->bad = 1;
			buffree(&keep);
			return;
		}
		sha256_final(&c.h, m->sha);
	}
	r = record_find(rec, nrec, m->e->name);
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
	progress("checking", vdone, nmem, vbytes);
	pthread_mutex_unlock(&progmu);
}

/* the NAME.dist-info folder must be the wheel's own: pip installs its metadata as the
   project the folder names, so a wheel carrying another project's .dist-info would
   overwrite (and later uninstall) that project's files */
static void
checkdistinfo(void)
{
	struct buf a = {0};
	struct pep440 v;
	char *stem = xstrndup(distinfo, strlen(distinfo) - 11), *dash = strrchr(stem, '-');
	int same = dash != NULL;

	/* NAME-VERSION of the folder against the file name's, as pip compares them */
	if (same) {
		canonname(&a, stem, (size_t)(dash - stem));
		same = strcmp(a.s, wn.n.name) == 0;
	}
	if (same) {
		same = pep440_parses(&v, dash + 1) == 0 && pep440_cmp(&v, &wn.n.ver) == 0;
		pep440_free(&v); /* zeroed when it does not parse */
	}
	buffree(&a);
	free(stem);
	if (!same)
		dien(EXIT_USAGE, "%s: the metadata folder %s is not this wheel's (%s %s): it would install as another project",
		     opt.in, distinfo, wn.name, wn.version);
}

static int
cmpbysize(const void *a, const void *b)
{
	uint64_t x = mem[*(const size_t *)a].e->csize, y = mem[*(const size_t *)b].e->csize;

	return x < y ? 1 : x > y ? -1 : 0;
}

void
readinput(void)
{
	char *err = NULL;
	size_t i, nd = 0, *order, nord = 0;
	struct buf rb = {0};
	const char *slash;

	if (zip_open(&zin, opt.in, &err) < 0)
		die("%s: %s", opt.in, err);
	nmem = zin.n;
	mem = xcalloc(nmem ? nmem : 1, sizeof *mem);
	/* the one top-level NAME.dist-info folder with WHEEL and RECORD */
	for (i = 0; i < nmem; i++) {
		mem[i].e = &zin.e[i];
		slash = strchr(zin.e[i].name, '/');
		if (slash && slash - zin.e[i].name > 10 && strncmp(slash - 10, ".dist-info", 10) == 0 &&
		    strcmp(slash + 1, "RECORD") == 0) {
			nd++;
			free(distinfo);
			distinfo = xstrndup(zin.e[i].name, (size_t)(slash - zin.e[i].name + 1));
			recordm = &mem[i];
		}
	}
	if (nd != 1)
		die("%s: not a wheel: %s", opt.in, nd ? "more than one .dist-info/RECORD" : "no NAME.dist-info/RECORD");
	/* one .dist-info folder only (pip refuses several), and it is the wheel's own */
	for (i = 0; i < nmem; i++) {
		const char *n = zin.e[i].name;
		slash = strchr(n, '/');
		if (slash && slash - n > 10 && strncmp(slash - 10, ".dist-info", 10) == 0 &&
		    !startswith(n, distinfo))
			die("%s: not a wheel: more than one .dist-info folder (%s, %.*s)", opt.in, distinfo,
			    (int)(slash - n + 1), n);
	}
	checkdistinfo();
	for (i = 0; i < nmem; i++) {
		const char *n = mem[i].e->name;
		mem[i].dist = startswith(n, distinfo);
		if (mem[i].dist && strcmp(n + strlen(distinfo), "WHEEL") == 0)
			wheelm = &mem[i];
		if (endswith(n, "/") || &mem[i] == recordm)
			mem[i].skip = 1;
		if (mem[i].dist && (strcmp(n + strlen(distinfo), "RECORD.jws") == 0 ||
		                    strcmp(n + strlen(distinfo), "RECORD.p7s") == 0)) {
			mem[i].skip = mem[i].drop = 1;
			if (!opt.quiet)
				warn("%s: dropping the signature %s (the rewritten RECORD invalidates it)", opt.in, n);
		}
	}
	if (!wheelm)
		die("%s: not a wheel: no %sWHEEL", opt.in, distinfo);
	/* RECORD: read it first, the other members are checked against it */
	if (recordm->e->usize > (64u << 20))
		die("%s: %s is %llu bytes; not a RECORD", opt.in, recordm->e->name,
		    (unsigned long long)recordm->e->usize);
	{
		struct hashctx c;
		memset(&c, 0, sizeof c);
		c.keep = &rb;
		c.iself = 1;
		c.nhead = 4;
		memcpy(c.head, "\177ELF", 4);
		sha256_init(&c.h);
		if (zip_read(&zin, recordm->e, hashchunk, &c, &err) < 0)
			die("%s: %s", opt.in, err);
		sha256_final(&c.h, recordm->sha);
	}
	if (record_parse(rb.s ? rb.s : "", rb.len, &rec, &nrec, &err) < 0)
		die("%s: %s", opt.in, err);
	buffree(&rb);
	order = xmalloc((nmem ? nmem : 1) * sizeof *order);
	for (i = 0; i < nmem; i++)
		if (!mem[i].skip)
			order[nord++] = i;
	qsort(order, nord, sizeof *order, cmpbysize);
	{
		size_t saved = nmem;
		nmem = nord;  /* progress total */
		pfor(nord, opt.jobs, verify1, order);
		nmem = saved;
	}
	free(order);
	for (i = 0; i < nmem; i++)
		if (mem[i].bad)
			die("%s: %s", opt.in, mem[i].err);
	for (i = 0; i < nrec; i++) {
		struct zipent *e = NULL;
		size_t j;
		if (rec[i].seen || strcmp(rec[i].path, recordm->e->name) == 0)
			continue;
		for (j = 0; j < nmem; j++)
			if (strcmp(mem[j].e->name, rec[i].path) == 0)
				e = mem[j].e;
		if (!e)
			die("%s: RECORD lists '%s', which is not in the wheel", opt.in, rec[i].path);
	}
}
