/* the journal: originals kept, the pristine tree restored, outputs put back */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "hash.h"
#include "hw.h"
#include "os.h"
#include "util.h"

/* write src's bytes to dst (temp + rename, no fsync: journal data), with mode */
static int
copyfile(const char *src, const char *dst, unsigned mode)
{
	struct buf b = {0};
	char *tmp = xasprintf("%s.hw-tmp", dst);
	int fd, r = -1;

	if (readfile(src, &b, 0) < 0)
		goto out;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode ? mode : 0644)) < 0)
		goto out;
	if (writeall(fd, b.s ? b.s : "", b.len) < 0 || fchmod(fd, mode ? mode : 0644) < 0) {
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, dst) < 0) {
		unlink(tmp);
		goto out;
	}
	r = 0;
out:
	free(tmp);
	buffree(&b);
	return r;
}

/* remove a folder and everything in it (hipify-wrap's own state folders only) */
void
rmtree(const char *p)
{
	if (os_rmtree(p) < 0)
		warn("cannot remove all of %s:", p);
}

/* would the journal keep a copy of this file (sources, headers, build files, Python) */
static int
journaled(const struct fent *e)
{
	static const char *ext[] = {".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp",
	                            ".hxx", ".inl", ".in", ".hip", ".cmake", ".txt", ".py", ".pyi",
	                            ".yaml", ".yml", ".json", ".sh", ".bzl", ".bazel", "BUILD"};
	size_t k;

	if (e->size > (64u << 20))
		return 0;
	for (k = 0; k < nelem(ext); k++)
		if (endswith(e->path, ext[k]))
			return 1;
	return 0;
}

/* copy the originals of l into the journal folder dir (content-addressed) */
void
journal_copy(const struct flist *l, const char *dir)
{
	char hx[65], *dst, *src, *err = NULL;
	size_t i;

	if (os_owndir(dir, &err) < 0)
		dien(EXIT_USAGE, "%s", err);
	for (i = 0; i < l->n; i++) {
		if (!journaled(&l->v[i]))
			continue;
		hex32(l->v[i].hash, hx);
		dst = xasprintf("%s/%s", dir, hx);
		if (access(dst, F_OK) < 0) {
			src = tpath(l->v[i].path);
			if (copyfile(src, dst, 0444) < 0)
				die("cannot keep a copy of %s in %s:", src, dir);
			free(src);
		}
		free(dst);
	}
}

/* where a file of the tree waits in the stash: named by its path's digest, so a stash
   kept for the next run (stash_save) finds each file again */
static char *
stashname(const char *rel)
{
	unsigned char h[32];
	char hx[65], *d = spath("stash"), *r;

	sha256_buf(rel, strlen(rel), h);
	hex32(h, hx);
	r = xasprintf("%s/%s", d, hx);
	free(d);
	return r;
}

/* move a file of the tree aside into the stash, remembering its bytes */
static void
stash(const char *rel, const unsigned char hash[32])
{
	struct stash *s;
	char *from = tpath(rel), *dir = spath("stash"), *err = NULL;

	if (os_owndir(dir, &err) < 0)
		dien(EXIT_USAGE, "%s", err);
	g.st = xgrow(g.st, &g.cst, g.nst + 1, sizeof(*g.st));
	s = &g.st[g.nst];
	s->path = xstrdup(rel);
	s->at = stashname(rel);
	memcpy(s->hash, hash, 32);
	if (rename(from, s->at) < 0) {
		if (errno == ENOENT) {
			/* already gone (srcpin checkout --force cleans untracked files) */
			free(s->path);
			free(s->at);
			free(from);
			free(dir);
			return;
		}
		if (errno != EXDEV)
			die("cannot move %s aside to %s:", from, s->at);
		/* another filesystem: copy, keep the mtime, remove */
		struct stat st;
		struct timespec ts[2];
		if (stat(from, &st) < 0 || copyfile(from, s->at, st.st_mode & 07777) < 0)
			die("cannot move %s aside to %s:", from, s->at);
		ts[0] = st.st_atim, ts[1] = st.st_mtim;
		utimensat(AT_FDCWD, s->at, ts, 0);
		unlink(from);
	}
	g.nst++;
	free(from);
	free(dir);
}

/* Restore the pristine tree: files hipify made are moved aside (A_STASH), files it
   rewrote are moved aside and get their originals back (A_RESTORE); classify chose. */
void
undo(void)
{
	const struct fent *e, *c;
	char hx[65], *o, *t;
	size_t i;

	for (i = 0; i < g.man.n; i++) {
		e = &g.man.v[i];
		if (e->act == A_NONE || !(c = flist_find(&g.cur, e->path)))
			continue;
		stash(e->path, c->hash);
		if (e->act == A_RESTORE) {
			hex32(e->orig, hx);
			o = xasprintf("%s/orig/%s", g.state, hx);
			t = tpath(e->path);
			if (copyfile(o, t, (unsigned)e->mode) < 0)
				die("cannot restore %s from %s:", t, o);
			free(o);
			free(t);
		}
	}
}

/* set *why to msg (taking it) unless a reason of the same weight is there already */
static void
because(char **why, int *state, int level, char *msg)
{
	if (level > *state || !*why) {
		free(*why);
		*why = msg;
		if (level > *state)
			*state = level;
	} else {
		free(msg);
	}
}

/* Compare the tree (g.cur) with what hipify-wrap made (g.man) and choose, per file, what
   restoring the pristine tree does. A file hipify made or rewrote that was edited since
   makes the tree dirty; with force it is restored anyway (the edit is lost). A rewritten
   file back at its original bytes, or equal to git's index, is pristine already; files
   that are gone need nothing. Returns T_CLEAN, T_INPUTS (inputs changed) or T_DIRTY. */
int
classify(char **why, int force)
{
	struct fent *e;
	const struct fent *c;
	size_t i, at = 0;
	int r = T_CLEAN;

	for (i = 0; i < g.man.n; i++) {
		e = &g.man.v[i];
		c = flist_seek(&g.cur, &at, e->path);
		e->act = A_NONE;
		if (!c) {
			if (e->kind != F_INPUT || r == T_CLEAN)
				because(why, &r, T_INPUTS, xasprintf("%s (%s) was removed", e->path,
				        e->kind == F_OUTPUT ? "made by hipify" : e->kind == F_MODIFIED ? "rewritten by hipify" : "an input"));
			continue;
		}
		if (memcmp(c->hash, e->hash, 32) == 0) {
			e->act = e->kind == F_OUTPUT ? A_STASH : e->kind == F_MODIFIED ? A_RESTORE : A_NONE;
			continue;
		}
		if (e->kind == F_INPUT) {
			because(why, &r, T_INPUTS, xasprintf("%s was edited", e->path));
		} else if (e->kind == F_MODIFIED && ((e->has_orig && memcmp(c->hash, e->orig, 32) == 0) ||
		                                     (g.git && tree_gitclean(g.srcdir, e->path)))) {
			because(why, &r, T_INPUTS, xasprintf("%s is pristine again", e->path));
		} else {
			because(why, &r, T_DIRTY, xasprintf("%s (%s by hipify) was edited since", e->path,
			        e->kind == F_OUTPUT ? "made" : "rewritten"));
			if (force)
				e->act = e->kind == F_OUTPUT ? A_STASH : A_RESTORE;
		}
	}
	for (i = at = 0; i < g.cur.n; i++) {
		c = &g.cur.v[i];
		if (flist_seek(&g.man, &at, c->path))
			continue;
		if (c->crumb)
			because(why, &r, T_DIRTY, xasprintf("%s carries hipify's generated-file line but hipify-wrap did not make it", c->path));
		else
			because(why, &r, T_INPUTS, xasprintf("%s is new", c->path));
	}
	return r;
}

/* bring the tree back to the snapshot pre (files listed in walk existed before):
   changed files from the journal dir, new files removed. Returns 0 or -1. */
int
rollback(const struct flist *pre, const struct flist *walk, const char *dir)
{
	struct flist now = {0}, w = {0};
	const struct fent *p;
	char *err = NULL, hx[65], *o, *t;
	size_t i;
	int r = 0;

	for (i = 0; i < pre->n; i++)
		flist_add(&now, pre->v[i].path);
	flist_sort(&now);
	hashlist(&now, pre);
	for (i = 0; i < pre->n; i++) {
		p = &pre->v[i];
		const struct fent *c = flist_find(&now, p->path);
		if (c && memcmp(c->hash, p->hash, 32) == 0)
			continue;
		hex32(p->hash, hx);
		o = xasprintf("%s/%s", dir, hx);
		t = tpath(p->path);
		if (copyfile(o, t, (unsigned)p->mode) < 0) {
			warn("cannot restore %s from %s:", t, o);
			r = -1;
		}
		free(o);
		free(t);
	}
	if (tree_walk(g.srcdir, g.statename, &w, &err) < 0) {
		warn("%s", err);
		free(err);
		r = -1;
	}
	for (i = 0; i < w.n; i++) {
		if (flist_find(walk, w.v[i].path) || flist_find(pre, w.v[i].path))
			continue;
		t = tpath(w.v[i].path);
		if (unlink(t) < 0)
			warn("cannot remove %s:", t), r = -1;
		free(t);
	}
	flist_free(&now);
	flist_free(&w);
	return r;
}

/* put stashed files back where hipify remade the same bytes; drop the rest */
void
unstash(void)
{
	struct fent *e;
	char *t;
	size_t i;

	for (i = 0; i < g.nst; i++) {
		e = flist_find(&g.post, g.st[i].path);
		if (e && memcmp(e->hash, g.st[i].hash, 32) == 0) {
			t = tpath(e->path);
			if (rename(g.st[i].at, t) < 0 && errno == EXDEV) {
				struct stat st;
				struct timespec ts[2];
				if (stat(g.st[i].at, &st) == 0) {
					ts[0].tv_nsec = UTIME_OMIT, ts[0].tv_sec = 0;
					ts[1] = st.st_mtim;
					utimensat(AT_FDCWD, t, ts, 0);
				}
			}
			free(t);
			fent_restat(g.srcdir, e);
		}
		unlink(g.st[i].at);
	}
}

/* Keep the stash for the next run: its list (path and bytes of each file) as a manifest
   in the stash folder. Returns 0, or -1 with errno set. */
int
stash_save(void)
{
	struct flist l = {0};
	struct fent *e;
	char *p;
	size_t i;
	int r;

	for (i = 0; i < g.nst; i++) {
		e = flist_add(&l, g.st[i].path);
		e->kind = F_OUTPUT;
		memcpy(e->hash, g.st[i].hash, 32);
	}
	flist_sort(&l);
	p = spath("stash/list");
	r = manifest_write(p, &l);
	free(p);
	flist_free(&l);
	return r;
}

/* Take up the stash an earlier run kept (stash_save): its files join g.st, to be put
   back by unstash where hipify remakes their bytes. Returns how many. */
size_t
stash_load(void)
{
	struct flist l = {0};
	struct stash *s;
	char *p = spath("stash/list"), *err = NULL;
	size_t i, n = 0;

	if (manifest_read(p, &l, &err) <= 0) {
		/* no list, or one that cannot be read: the stash goes with this run */
		if (err)
			warn("%s; the outputs kept aside are dropped", err), free(err);
		free(p);
		return 0;
	}
	for (i = 0; i < l.n; i++) {
		g.st = xgrow(g.st, &g.cst, g.nst + 1, sizeof(*g.st));
		s = &g.st[g.nst];
		s->path = xstrdup(l.v[i].path);
		s->at = stashname(s->path);
		memcpy(s->hash, l.v[i].hash, 32);
		if (access(s->at, F_OK) < 0) {
			free(s->path), free(s->at);
			continue;
		}
		g.nst++, n++;
	}
	unlink(p);
	free(p);
	flist_free(&l);
	return n;
}
