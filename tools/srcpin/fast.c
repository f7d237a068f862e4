/* the quick pristine check: a work tree is its index when every file's stat data is what
   the index records (and not racy) and nothing else is on disk; the index is the tree
   srcpin wrote when its checksum is the one recorded. One fstatat per file and one
   directory read per folder, no ignore rules, no object reads. */
#include "srcpin.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#include <unistd.h>

void
index_sum(git_repository *r, char out[GIT_OID_HEXSZ + 1])
{
	git_index *idx;

	out[0] = 0;
	if (git_repository_index(&idx, r) < 0)
		return;
	if (git_index_read(idx, 0) == 0)   /* reread only when another process wrote it */
		git_oid_tostr(out, GIT_OID_HEXSZ + 1, git_index_checksum(idx));
	git_index_free(idx);
}

/* the walk's state */
struct fwalk {
	git_repository *r;
	git_index *idx;
	const git_index_entry **ents;   /* the index's entries, in its (path) order */
	struct timespec imt;   /* the index file's mtime: entries at or after it are racy */
	size_t matched;
	struct buf path;
};

/* true if the file name (in the folder open at fd, st its lstat) has the content e records:
   for an entry too recent to trust its stat data (racy, as git calls it) */
static int
samecontent(git_repository *r, int fd, const char *name, const struct stat *st,
            const git_index_entry *e)
{
	git_oid id;
	int ok = 0;

	if (S_ISLNK(st->st_mode)) {
		char t[4096];
		ssize_t n = readlinkat(fd, name, t, sizeof t);
		ok = n >= 0 && (size_t)n < sizeof t && git_odb_hash(&id, t, (size_t)n, GIT_OBJECT_BLOB) == 0;
	} else {
		/* as git add would store it: through the filters its attributes name */
		char *p = xasprintf("%s%s", git_repository_workdir(r), e->path);
		ok = git_repository_hashfile(&id, r, p, GIT_OBJECT_BLOB, e->path) == 0;
		free(p);
	}
	return ok && git_oid_equal(&id, &e->id);
}

/* true if st is what e records: stat data, or content when the stat data is racy */
static int
statmatch(git_repository *r, const git_index_entry *e, const struct stat *st,
          const struct timespec *imt, int fd, const char *name)
{
	uint32_t mode;

	if (S_ISLNK(st->st_mode))
		mode = GIT_FILEMODE_LINK;
	else if (S_ISREG(st->st_mode))
		mode = st->st_mode & 0100 ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
	else
		return 0;
	if (e->mode != mode || e->file_size != (uint32_t)st->st_size ||
	    e->ino != (uint32_t)st->st_ino ||
	    e->mtime.seconds != (int32_t)st->st_mtim.tv_sec ||
	    e->mtime.nanoseconds != (uint32_t)st->st_mtim.tv_nsec ||
	    e->ctime.seconds != (int32_t)st->st_ctim.tv_sec ||
	    e->ctime.nanoseconds != (uint32_t)st->st_ctim.tv_nsec)
		return 0;
	/* racy: written in the same clock tick as the index or after it; a change made then
	   may keep size and times, so the content decides */
	if (st->st_mtim.tv_sec > imt->tv_sec ||
	    (st->st_mtim.tv_sec == imt->tv_sec && st->st_mtim.tv_nsec >= imt->tv_nsec))
		return samecontent(r, fd, name, st, e);
	return 1;
}

/* the entries of the folder open at fd, read in one go: name and d_type pairs, each name
   NUL-ended and followed by its type byte. On Linux straight from getdents64 (a DIR
   stream costs an fstat and two fcntl per folder). Returns 0 or -1. */
static int
readnames(int fd, struct buf *out)
{
#ifdef __linux__
	char tmp[32768];
	long k;

	while ((k = syscall(SYS_getdents64, fd, tmp, sizeof tmp)) > 0) {
		for (long off = 0; off < k;) {
			unsigned short reclen;
			const char *name = tmp + off + 19;
			memcpy(&reclen, tmp + off + 16, sizeof reclen);
			bufadd(out, name, strlen(name) + 1);
			bufputc(out, tmp[off + 18]);
			off += reclen;
		}
	}
	return k < 0 ? -1 : 0;
#else
	DIR *d = fdopendir(dup(fd));
	struct dirent *de;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		bufadd(out, de->d_name, strlen(de->d_name) + 1);
		bufputc(out, de->d_type);
	}
	closedir(d);
	return 0;
#endif
}

/* the first entry in [lo, hi) whose path is not below key (byte order, as the index) */
static size_t
lbound(const struct fwalk *w, size_t lo, size_t hi, const char *key)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(w->ents[mid]->path, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* the entry in [lo, hi) at path w->path, or NULL */
static const git_index_entry *
entryat(const struct fwalk *w, size_t lo, size_t hi)
{
	size_t i = lbound(w, lo, hi, w->path.s);

	return i < hi && strcmp(w->ents[i]->path, w->path.s) == 0 ? w->ents[i] : NULL;
}

/* walk the folder open at fd (its path below the top in w->path, the index entries below
   it in [lo, hi)); returns 1 while every entry matches the index */
static int
walkdir(struct fwalk *w, int fd, int top, size_t lo, size_t hi)
{
	struct buf names = {0};
	size_t base = w->path.len;
	int ok = readnames(fd, &names) == 0;

	for (size_t off = 0; ok && off < names.len;) {
		const char *n = names.s + off;
		unsigned char type = (unsigned char)names.s[off + strlen(n) + 1];
		const git_index_entry *e;
		struct stat st;
		int isdir;
		off += strlen(n) + 2;
		if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
			continue;
		if (top && strcmp(n, ".git") == 0)
			continue;
		w->path.len = base;
		bufputs(&w->path, n);
		if (type == DT_UNKNOWN) {
			if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				ok = 0;
				break;
			}
			isdir = S_ISDIR(st.st_mode);
		} else
			isdir = type == DT_DIR;
		if (isdir) {
			int sub;
			size_t slo, shi;
			e = entryat(w, lo, hi);
			if (e && e->mode == GIT_FILEMODE_COMMIT) {
				w->matched++;   /* a submodule: checked on its own */
				continue;
			}
			if (e) {
				ok = 0;
				break;
			}
			sub = openat(fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				ok = 0;
				break;
			}
			bufputc(&w->path, '/');
			slo = lbound(w, lo, hi, w->path.s);
			w->path.s[w->path.len - 1] = '0';   /* '/' + 1: just past the folder's entries */
			shi = lbound(w, slo, hi, w->path.s);
			w->path.s[w->path.len - 1] = '/';
			ok = walkdir(w, sub, 0, slo, shi);
			continue;
		}
		e = entryat(w, lo, hi);
		if (!e || (type != DT_UNKNOWN && fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0) ||
		    !statmatch(w->r, e, &st, &w->imt, fd, n)) {
			ok = 0;
			break;
		}
		w->matched++;
	}
	w->path.len = base;
	if (w->path.s)
		w->path.s[base] = 0;
	buffree(&names);
	close(fd);
	return ok;
}

int
fast_pristine(git_repository *r, const struct spstate *s)
{
	struct fwalk w;
	git_index *idx;
	struct stat ist;
	char *ip;
	int fd, ok;

	if (!s->index || !*s->index || git_repository_index(&idx, r) < 0)
		return 0;
	memset(&w, 0, sizeof w);
	w.idx = idx;
	w.r = r;
	ip = xasprintf("%sindex", git_repository_path(r));
	ok = stat(ip, &ist) == 0 && strcmp(git_oid_tostr_s(git_index_checksum(idx)), s->index) == 0 &&
	     !git_index_has_conflicts(idx);
	free(ip);
	if (ok) {
		size_t n = git_index_entrycount(idx);
		w.imt = ist.st_mtim;
		w.ents = xcalloc(n + 1, sizeof *w.ents);
		for (size_t i = 0; i < n; i++)
			w.ents[i] = git_index_get_byindex(idx, i);
		bufputs(&w.path, "");
		fd = open(git_repository_workdir(r), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ok = fd >= 0 && walkdir(&w, fd, 1, 0, n) && w.matched == n;
	}
	free(w.ents);
	buffree(&w.path);
	git_index_free(idx);
	return ok;
}

/* remove the folders above path (below the work tree wd) that are left empty */
static void
rmparents(const char *wd, const char *path)
{
	char *p = xasprintf("%s%s", wd, path), *s;
	size_t wl = strlen(wd);

	while ((s = strrchr(p + wl, '/'))) {
		*s = 0;
		if (rmdir(p) < 0)
			break;
	}
	free(p);
}

/* write blob id of mode at path (below wd): a new file or link renamed over the old */
static int
writeone(git_repository *r, const char *wd, const char *path, const git_oid *id, uint32_t mode)
{
	char *p = xasprintf("%s%s", wd, path), *tmp = xasprintf("%s.srcpin-new", p), *s;
	git_blob *b;
	int e = -1;

	if (git_blob_lookup(&b, r, id) < 0)
		goto out;
	if ((s = strrchr(p, '/')) && s > p + strlen(wd)) {
		struct stat st;
		*s = 0;
		if (stat(p, &st) < 0 && os_mkdirs(p, 0777) < 0)
			goto outb;
		*s = '/';
	}
	unlink(tmp);
	if (mode == GIT_FILEMODE_LINK) {
		char *t = xstrndup(git_blob_rawcontent(b), (size_t)git_blob_rawsize(b));
		e = symlink(t, tmp);
		free(t);
	} else {
		/* the bytes git writes for it: the blob through the checkout filters its attributes
		   and core.autocrlf ask for */
		git_blob_filter_options fo;
		git_buf fb = {0};
		int fd;
		const char *c;
		size_t n;
		git_blob_filter_options_init(&fo, GIT_BLOB_FILTER_OPTIONS_VERSION);
		if (git_blob_filter(&fb, b, path, &fo) < 0)
			goto outb;
		c = fb.ptr;
		n = fb.size;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		          mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0777 : 0666);
		if (fd < 0) {
			git_buf_dispose(&fb);
			goto outb;
		}
		while (n) {
			ssize_t k = write(fd, c, n);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			c += k;
			n -= (size_t)k;
		}
		e = close(fd) < 0 || n ? -1 : 0;
		git_buf_dispose(&fb);
	}
	if (e == 0 && rename(tmp, p) < 0)
		e = -1;
	if (e < 0)
		unlink(tmp);
outb:
	git_blob_free(b);
out:
	free(p);
	free(tmp);
	return e;
}

/* the index entry of the file just written at path */
static int
addentry(git_index *idx, const char *wd, const char *path, const git_oid *id, uint32_t mode)
{
	git_index_entry e;
	struct stat st;
	char *p = xasprintf("%s%s", wd, path);
	int r = lstat(p, &st);

	free(p);
	if (r < 0)
		return -1;
	memset(&e, 0, sizeof e);
	e.ctime.seconds = (int32_t)st.st_ctim.tv_sec;
	e.ctime.nanoseconds = (uint32_t)st.st_ctim.tv_nsec;
	e.mtime.seconds = (int32_t)st.st_mtim.tv_sec;
	e.mtime.nanoseconds = (uint32_t)st.st_mtim.tv_nsec;
	e.dev = (uint32_t)st.st_dev;
	e.ino = (uint32_t)st.st_ino;
	e.mode = mode;
	e.uid = (uint32_t)st.st_uid;
	e.gid = (uint32_t)st.st_gid;
	e.file_size = (uint32_t)st.st_size;
	git_oid_cpy(&e.id, id);
	e.path = path;
	return git_index_add(idx, &e);
}

/* one path two trees differ in: mode 0 on the side that lacks it */
struct change {
	char *path;
	git_oid oid, nid;
	uint32_t omode, nmode;
};
struct changes {
	struct change *v;
	size_t n, cap;
	int links;     /* a submodule is among them */
};

/* git's order of tree entries: by name, a folder's name as if it ended in '/' */
static int
entcmp(const git_tree_entry *a, const git_tree_entry *b)
{
	const char *x = git_tree_entry_name(a), *y = git_tree_entry_name(b);
	size_t lx = strlen(x), ly = strlen(y), n = lx < ly ? lx : ly;
	int c = memcmp(x, y, n);
	unsigned char cx, cy;

	if (c)
		return c;
	cx = lx > n ? (unsigned char)x[n] : git_tree_entry_type(a) == GIT_OBJECT_TREE ? '/' : 0;
	cy = ly > n ? (unsigned char)y[n] : git_tree_entry_type(b) == GIT_OBJECT_TREE ? '/' : 0;
	return (int)cx - (int)cy;
}

static void
addchange(struct changes *c, const char *pre, const git_tree_entry *o, const git_tree_entry *n)
{
	struct change *ch;
	const git_tree_entry *e = o ? o : n;

	if ((o && git_tree_entry_filemode(o) == GIT_FILEMODE_COMMIT) ||
	    (n && git_tree_entry_filemode(n) == GIT_FILEMODE_COMMIT))
		c->links = 1;
	c->v = xgrow(c->v, &c->cap, c->n + 1, sizeof *c->v);
	ch = &c->v[c->n++];
	memset(ch, 0, sizeof *ch);
	ch->path = xasprintf("%s%s", pre, git_tree_entry_name(e));
	if (o) {
		git_oid_cpy(&ch->oid, git_tree_entry_id(o));
		ch->omode = git_tree_entry_filemode(o);
	}
	if (n) {
		git_oid_cpy(&ch->nid, git_tree_entry_id(n));
		ch->nmode = git_tree_entry_filemode(n);
	}
}

/* Collect the blobs trees a and b (either may be NULL: empty) differ in, below the folder
   pre ("" or "dir/"); subtrees with the same id are not read. Returns 0 or -1. */
static int
treediff(git_repository *r, const git_oid *a, const git_oid *b, const char *pre, struct changes *c)
{
	git_tree *ta = NULL, *tb = NULL;
	size_t i = 0, j = 0, na, nb;
	int e = 0;

	if ((a && git_tree_lookup(&ta, r, a) < 0) || (b && git_tree_lookup(&tb, r, b) < 0)) {
		git_tree_free(ta);
		return -1;
	}
	na = ta ? git_tree_entrycount(ta) : 0;
	nb = tb ? git_tree_entrycount(tb) : 0;
	while (e == 0 && (i < na || j < nb)) {
		const git_tree_entry *x = i < na ? git_tree_entry_byindex(ta, i) : NULL;
		const git_tree_entry *y = j < nb ? git_tree_entry_byindex(tb, j) : NULL;
		int k = !x ? 1 : !y ? -1 : entcmp(x, y);
		const git_tree_entry *o = k <= 0 ? x : NULL, *n = k >= 0 ? y : NULL;
		i += k <= 0;
		j += k >= 0;
		if (o && n && git_oid_equal(git_tree_entry_id(o), git_tree_entry_id(n)) &&
		    git_tree_entry_filemode(o) == git_tree_entry_filemode(n))
			continue;
		if ((o && git_tree_entry_type(o) == GIT_OBJECT_TREE) ||
		    (n && git_tree_entry_type(n) == GIT_OBJECT_TREE)) {
			/* entcmp pairs a folder only with a folder */
			char *sub = xasprintf("%s%s/", pre, git_tree_entry_name(o ? o : n));
			e = treediff(r, o ? git_tree_entry_id(o) : NULL, n ? git_tree_entry_id(n) : NULL, sub, c);
			free(sub);
		} else
			addchange(c, pre, o, n);
	}
	git_tree_free(ta);
	git_tree_free(tb);
	return e;
}

static void
freechanges(struct changes *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
}

int
fast_switch(git_repository *r, git_tree *ot, git_tree *t)
{
	const char *wd = git_repository_workdir(r);
	struct changes c = {0};
	git_index *idx;
	int e = -1;

	if (!wd || git_repository_index(&idx, r) < 0)
		return -1;
	if (treediff(r, git_tree_id(ot), git_tree_id(t), "", &c) < 0 || c.links)
		goto out;   /* submodules, and changed attributes below: libgit2's checkout */
	for (size_t i = 0; i < c.n; i++) {
		const char *b = strrchr(c.v[i].path, '/');
		if (strcmp(b ? b + 1 : c.v[i].path, ".gitattributes") == 0)
			goto out;
	}
	/* deletions first (a folder may become a file), then what is new or changed */
	for (size_t i = 0; i < c.n; i++) {
		char *p;
		if (c.v[i].nmode)
			continue;
		p = xasprintf("%s%s", wd, c.v[i].path);
		if (unlink(p) < 0 && errno != ENOENT)
			die("%s: cannot remove:", p);
		free(p);
		rmparents(wd, c.v[i].path);
		git_index_remove(idx, c.v[i].path, 0);
	}
	for (size_t i = 0; i < c.n; i++) {
		if (!c.v[i].nmode)
			continue;
		if (writeone(r, wd, c.v[i].path, &c.v[i].nid, c.v[i].nmode) < 0 ||
		    addentry(idx, wd, c.v[i].path, &c.v[i].nid, c.v[i].nmode) < 0)
			die("%s%s: cannot write:", wd, c.v[i].path);
	}
	if (git_index_write(idx) < 0)
		die("%s: cannot write the index: %s", wd, gitmsg());
	e = 0;
out:
	freechanges(&c);
	git_index_free(idx);
	return e;
}
