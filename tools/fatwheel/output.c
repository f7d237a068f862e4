/* carrying out the plan: ELF edits, deflating, writing the archive */
#include "state.h"
#include "elfedit.h"
#include "fault.h"
#include "hash.h"
#include "wheelpath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* what goes into the output, in order */
struct outm {
	const char *name;
	struct member *m;           /* raw copy of m unless data is set */
	struct buf *data;           /* new content */
	struct editjob *edit;       /* the ELF edit to make on data first, or NULL */
	unsigned extattr;
	struct buf z;               /* deflated */
	uint64_t usize;             /* data's size once edited */
	uint32_t crc;
	unsigned char sha[32];
	int done;                   /* edited, deflated and hashed (under workmu) */
};


static int
collect(void *ctx, const void *p, size_t n)
{
	bufadd(ctx, p, n);
	return 0;
}


struct editjob {
	struct member *m;
	struct lib *l;
	char *err;                  /* why it failed (bad), fresh */
	int bad;
};

/* the edits planned for a wheel member (m) or a bundled library (l) */
static struct elfedits
plannededits(const struct editjob *j)
{
	const struct edplan *p = j->m ? &j->m->ed : &j->l->ed;
	struct elfedits ed;

	memset(&ed, 0, sizeof ed);
	ed.soname = j->m ? NULL : j->l->soname;
	ed.oldn = (const char **)p->oldn;
	ed.newn = (const char **)p->newn;
	ed.nren = p->nren;
	ed.rpath = p->rpath;
	return ed;
}

/* inflate (for a wheel member) and edit one object in memory */
static void
edit1(struct fw *fw, void *ctx, size_t i)
{
	struct editjob *j = &((struct editjob *)ctx)[i];
	struct buf *data = j->m ? &j->m->data : &j->l->data;
	const char *what = j->m ? j->m->e->name : j->l->member;
	struct elfedits ed = plannededits(j);
	char *e2 = NULL;

	if (j->m && !j->m->inflated && fast_inflate(&fw->zin, j->m->e, data, &j->err) < 0) {
		j->bad = 1;
	} else if (elf_editbuf(data, &ed, &e2) < 0) {
		seterr(&j->err, "%s: %.899s", what, e2);
		free(e2);
		j->bad = 1;
	}
	if (j->m)
		j->m->changed = !j->bad;
}

/* deflate and hash one new member's content; the uncompressed bytes are let go once
   they are in z (only their size is kept: data->len stays for the report) */
static void *
sha1thread(void *arg)
{
	struct outm *o = arg;

	sha256_buf(o->data->s, o->data->len, o->sha);
	return NULL;
}

static void
deflate1(struct fw *fw, struct outm *o)
{
	struct pdeflate how = {fw->opt.level, fw->opt.jobs, FW_PIECE};
	pthread_t th;
	int hashing;

	o->usize = o->data->len;
	/* a member of several pieces: its hash on a thread of its own meanwhile, so that
	   the hash does not wait for the pieces (nor they for it) */
	hashing = o->data->len > FW_PIECE && pthread_create(&th, NULL, sha1thread, o) == 0;
	fast_pdeflate(o->data->s, o->data->len, &how, &o->z, &o->crc);
	if (hashing)
		pthread_join(th, NULL);
	else
		sha256_buf(o->data->s, o->data->len, o->sha);
	free(o->data->s);
	o->data->s = NULL;
	o->data->cap = 0;
}

/* the work queue: the new members' indexes in outv, largest first, so that the biggest
   library does not start last and leave one thread deflating alone */
static pthread_mutex_t workmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t workcv = PTHREAD_COND_INITIALIZER;
static size_t *workq, nwork, worknext;

static uint64_t
worksize(const struct outm *o)
{
	if (o->edit && o->edit->m)
		return o->edit->m->e->usize;
	return o->data->len;
}

static struct outm *outv;

static int
cmpwork(const void *a, const void *b)
{
	uint64_t x = worksize(&outv[*(const size_t *)a]), y = worksize(&outv[*(const size_t *)b]);

	return x < y ? 1 : x > y ? -1 : 0;
}

/* a worker: edit (inflating a wheel member first), deflate and hash new members until
   the queue is empty; a failed edit is left for the writer to report */
static void *
worker(void *arg)
{
	struct fw *fw = arg;
	struct outm *o;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&workmu);
		i = worknext < nwork ? workq[worknext++] : SIZE_MAX;
		pthread_mutex_unlock(&workmu);
		if (i == SIZE_MAX)
			return NULL;
		o = &outv[i];
		if (o->edit)
			edit1(fw, o->edit, 0);
		if (!o->edit || !o->edit->bad)
			deflate1(fw, o);
		pthread_mutex_lock(&workmu);
		o->done = 1;
		pthread_cond_broadcast(&workcv);
		pthread_mutex_unlock(&workmu);
	}
}

/* the workers stopped before an exit: no member is handed out any more, and each finishes
   the one it holds. exit's handlers (OpenSSL's cleanup among them) must not run while a
   worker still hashes: under ASan that use of freed memory hung the process at exit */
static void
stopworkers(pthread_t *th, int nth)
{
	int k;

	pthread_mutex_lock(&workmu);
	worknext = nwork;
	pthread_mutex_unlock(&workmu);
	for (k = 0; k < nth; k++)
		pthread_join(th[k], NULL);
}

static size_t outcap;

static struct outm *
addout(struct fw *fw, const char *name)
{
	struct outm *o;

	outv = xgrow(outv, &outcap, fw->nout + 1, sizeof *outv);
	o = &outv[fw->nout++];
	memset(o, 0, sizeof *o);
	o->name = name;
	return o;
}

/* Every output member path is safe and none two install to one path: a bundled
   library's name comes from a DT_NEEDED string, an --include from a file name, and
   neither may reach outside the wheel's folders or replace another member. Dies (exit 2)
   naming the member otherwise. */
static void
checknames(struct fw *fw)
{
	char **names = xmalloc((fw->nout ? fw->nout : 1) * sizeof *names), *err = NULL;
	size_t i, a, b;
	int r;

	for (i = 0; i < fw->nout; i++) {
		names[i] = (char *)outv[i].name;
		if (!zip_safename(names[i])) {
			struct buf q = {0};
			wheelpath_escape(&q, names[i]);
			free(names);
			die("%s: refusing to write the member '%s': it is not a safe path inside the wheel",
			    fw->opt.in, q.s);
		}
	}
	r = wheelpath_clash(names, fw->nout, &a, &b);
	if (r)
		err = wheelpath_clashmsg(names, r, a, b);
	free(names);
	if (r)
		die("%s: refusing to write the output: %s", fw->opt.in, err);
}

/* the external attributes written for a member copied from the input: a symbolic link
   becomes a regular file holding the link text, which is what pip installs (it never
   creates links), so no other installer makes a link from fatwheel's output */
static uint32_t
outattr(struct fw *fw, const struct member *m)
{
	uint32_t a = m->e->extattr, mode = a >> 16;

	if ((m->e->madeby >> 8) != 3 || (mode & 0170000) != 0120000)
		return a;
	if (!fw->opt.quiet)
		warn("%s: member '%s' is a symbolic link; written as a regular file holding the link text, as pip installs it",
		     fw->opt.in, m->e->name);
	/* pip's zip_item_is_executable wants S_ISREG, so the file it writes is 0644 */
	return ((0100000u | 0644u) << 16) | (a & 0xffffu);
}

/* write member o with the zip writer; returns -1 on a write error */
static int
writeone(struct fw *fw, struct zipout *zw, struct outm *o)
{
	struct zipcd cd;

	memset(&cd, 0, sizeof cd);
	cd.name = (char *)o->name;
	if (o->m) {
		cd.flags = o->m->e->flags;
		cd.mtime = o->m->e->mtime;
		cd.mdate = o->m->e->mdate;
		cd.madeby = o->m->e->madeby;
		cd.extattr = outattr(fw, o->m);
	} else {
		cd.mtime = fw->wheelm->e->mtime;
		cd.mdate = fw->wheelm->e->mdate;
		cd.madeby = 3 << 8;
		cd.extattr = o->extattr;
	}
	if (o->data) {
		cd.flags &= (uint16_t)~6u; /* deflate speed bits describe the old stream */
		cd.method = 8;
		cd.crc = o->crc;
		cd.csize = o->z.len;
		cd.usize = o->usize;
		if (zipw_add(zw, &cd, o->z.s) < 0)
			return -1;
		buffree(&o->z);
	} else {
		cd.method = o->m->e->method;
		cd.crc = o->m->e->crc;
		cd.csize = o->m->e->csize;
		cd.usize = o->m->e->usize;
		if (zipw_add(zw, &cd, fw->zin.m.p + o->m->e->dataoff) < 0)
			return -1;
	}
	return 0;
}

static void
writefail(struct fw *fw, struct zipout *zw)
{
	int e = errno;

	zipw_free(zw);
	errno = e;
	dien(EXIT_PROBLEM, "%s: writing the output failed (nothing was left behind):", fw->outpath);
}

/* the edits (static: a failed one is reported while workers may still run) */
static struct editjob *jobs;

/* WHEEL's Tag lines retagged for the new platform tag, when it changes */
static void
retagwheel(struct fw *fw)
{
	struct buf wheeltext = {0};
	char *err = NULL, *t;

	if (strcmp(fw->newplat, fw->wn.plat) == 0)
		return;
	if (zip_read(&fw->zin, fw->wheelm->e, collect, &wheeltext, &err) < 0)
		die("%s: %s", fw->opt.in, err);
	t = wheel_retag(wheeltext.s ? wheeltext.s : "", wheeltext.len, fw->newplat);
	bufreset(&fw->wheelm->data);
	bufputs(&fw->wheelm->data, t);
	free(t);
	fw->wheelm->changed = 1;
	buffree(&wheeltext);
}

/* the output's members in order: package members, the libraries, .dist-info (RECORD
   comes last, apart); an ELF edit a job for the workers, each checked by reading it back */
static void
planout(struct fw *fw)
{
	size_t nj = 0, i;
	struct outm *o;

	jobs = xcalloc(fw->nmem + fw->nlibs + 1, sizeof *jobs);
	/* the bytes kept for an edit that is not made are let go */
	for (i = 0; i < fw->nmem; i++)
		if (fw->mem[i].inflated && !fw->mem[i].edit) {
			buffree(&fw->mem[i].data);
			fw->mem[i].inflated = 0;
		}
	for (i = 0; i < fw->nmem; i++) {
		if (fw->mem[i].dist || fw->mem[i].drop)
			continue;
		o = addout(fw, fw->mem[i].e->name);
		o->m = &fw->mem[i];
		if (fw->mem[i].edit) {
			jobs[nj].m = &fw->mem[i];
			o->edit = &jobs[nj++];
			o->data = &fw->mem[i].data;
		}
	}
	for (i = 0; i < fw->nlibs; i++) {
		o = addout(fw, fw->libs[i]->member);
		o->data = &fw->libs[i]->data;
		o->extattr = (0100755u << 16);
		if (fw->libs[i]->ed.rpath || fw->libs[i]->soname || fw->libs[i]->ed.nren) {
			jobs[nj].l = fw->libs[i];
			o->edit = &jobs[nj++];
		}
	}
	for (i = 0; i < fw->nmem; i++) {
		if (!fw->mem[i].dist || fw->mem[i].drop || &fw->mem[i] == fw->recordm)
			continue;
		o = addout(fw, fw->mem[i].e->name);
		o->m = &fw->mem[i];
		o->data = fw->mem[i].changed ? &fw->mem[i].data : NULL;
	}
	checknames(fw);
	workq = xmalloc((fw->nout ? fw->nout : 1) * sizeof *workq);
	for (i = 0; i < fw->nout; i++)
		if (outv[i].data)
			workq[nwork++] = i;
	qsort(workq, nwork, sizeof *workq, cmpwork);
}

/* each member written in order as soon as the workers (TH, NTH) made it ready; the workers
   are stopped before any exit from here */
static void
writemembers(struct fw *fw, struct zipout *zw, pthread_t *th, int nth)
{
	uint64_t done = 0;
	struct outm *o;
	size_t i;

	for (i = 0; i < fw->nout; i++) {
		o = &outv[i];
		if (o->data) {
			pthread_mutex_lock(&workmu);
			while (!o->done)
				pthread_cond_wait(&workcv, &workmu);
			pthread_mutex_unlock(&workmu);
			/* a library the editor refuses is malformed input, as one the reader
			   refuses is (closure.c's parselib): exit 2 both */
			if (o->edit && o->edit->bad) {
				stopworkers(th, nth);
				dien(EXIT_USAGE, "%s: %s", fw->opt.in, o->edit->err);
			}
			if (o->m)
				o->m->changed = 1;
		}
		if (writeone(fw, zw, o) < 0) {
			stopworkers(th, nth);
			writefail(fw, zw);
		}
		fault_at("FATWHEEL_FAULT_AFTER", o->name);
		done += o->data ? o->z.len : o->m->e->csize;
		progress(fw, "writing", i + 1, fw->nout + 1, done);
	}
}

/* RECORD last, listing everything written, then the central directory */
static void
writerecord(struct fw *fw, struct zipout *zw)
{
	struct buf recbuf = {0};
	struct outm *o;
	size_t i;

	for (i = 0; i < fw->nout; i++) {
		o = &outv[i];
		if (endswith(o->name, "/"))
			continue;
		if (o->data)
			record_line(&recbuf, o->name, o->sha, o->usize);
		else
			record_line(&recbuf, o->name, o->m->sha, o->m->e->usize);
	}
	record_line(&recbuf, fw->recordm->e->name, NULL, 0);
	o = addout(fw, fw->recordm->e->name);
	o->m = fw->recordm;
	o->data = &recbuf;
	deflate1(fw, o);
	if (writeone(fw, zw, o) < 0)
		writefail(fw, zw);
	fault_at("FATWHEEL_FAULT_AFTER", o->name);
	if (zipw_finish(zw) < 0)
		writefail(fw, zw);
	fault_at("FATWHEEL_FAULT_AFTER", "the central directory");
	o->data = NULL;
	buffree(&recbuf);
}

void
execute(struct fw *fw)
{
	struct zipout zw;
	struct stat sin, sout;
	pthread_t th[64];
	int k, nth = 0;

	if (stat(fw->opt.in, &sin) == 0 && stat(fw->outpath, &sout) == 0 && sin.st_dev == sout.st_dev &&
	    sin.st_ino == sout.st_ino)
		die("%s: the output would replace the input; choose another -w folder", fw->outpath);
	retagwheel(fw);
	planout(fw);
	/* the workers edit, deflate and hash; this thread writes each member in order as
	   soon as it is ready */
	if (atomic_open(&fw->out, fw->outpath, 0644) < 0)
		dien(EXIT_PROBLEM, "%s: cannot create the output wheel:", fw->opt.outdir);
	fw->outopen = 1;
	for (k = 0; k < fw->opt.jobs && k < 64 && (size_t)k < nwork; k++)
		if (pthread_create(&th[nth], NULL, worker, fw) == 0)
			nth++;
	if (!nth && nwork)
		worker(NULL);
	zipw_init(&zw, fw->out.fd);
	writemembers(fw, &zw, th, nth);
	stopworkers(th, nth);
	free(jobs);
	jobs = NULL;
	free(workq);
	workq = NULL;
	writerecord(fw, &zw);
	if (atomic_commit(&fw->out) < 0) {
		fw->outopen = 0;
		dien(EXIT_PROBLEM, "%s: writing the output failed (nothing was left behind):", fw->outpath);
	}
	fw->outopen = 0;
	fault_at("FATWHEEL_FAULT_AFTER", "the wheel in place");
}

void
execute_free(struct fw *fw)
{
	size_t i;

	for (i = 0; i < fw->nout; i++)
		buffree(&outv[i].z);
	free(outv);
}
