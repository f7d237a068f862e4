/* the quick pristine check: a work tree is its index when every file's stat data is what
   the index records (and not racy) and nothing else is on disk; the index is the tree
   srcpin wrote when its checksum is the one recorded. One fstatat per file and one
   directory read per folder, no ignore rules, no object reads. */
#include "srcpin.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#include <unistd.h>

#include <git2/sys/repository.h>

#include "atomic.h"

/* ---- the index file, read in place ---- */

/* one entry of an index file: its path and its bytes there */
struct ient {
	const char *path;
	const unsigned char *raw;
	size_t rawlen;
};
/* an index file as git and libgit2 write it (versions 2 and 3, no conflicts) */
struct fastidx {
	unsigned char *map;
	size_t len;
	unsigned version;
	struct ient *v;
	size_t n;
	struct timespec mtime;           /* the file's: entries at or after it are racy */
	char sum[GIT_OID_HEXSZ + 1];     /* its trailing checksum, hex */
};

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* the fixed part of an entry: ctime, mtime (seconds, nanoseconds), dev, ino, mode, uid,
   gid, size (32 bits each), the object id, 16 bits of flags */
enum { E_CTIME = 0, E_MTIME = 8, E_DEV = 16, E_INO = 20, E_MODE = 24, E_UID = 28,
       E_GID = 32, E_SIZE = 36, E_ID = 40, E_FLAGS = 60, E_HDR = 62 };

void
fastidx_free(struct fastidx *x)
{
	if (!x)
		return;
	if (x->map)
		munmap(x->map, x->len);
	free(x->v);
	free(x);
}

/* the index file of r read in place, or NULL when it is missing or is not one this reader
   takes (another version, a conflict, a damaged entry) */
static struct fastidx *
fastidx_load(git_repository *r)
{
	char *p = xasprintf("%sindex", git_repository_path(r));
	struct fastidx *x = xcalloc(1, sizeof *x);
	struct stat st;
	size_t off = 12, end;
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	free(p);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 32) {
		if (fd >= 0)
			close(fd);
		free(x);
		return NULL;
	}
	x->len = (size_t)st.st_size;
	x->mtime = st.st_mtim;
	x->map = mmap(NULL, x->len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (x->map == MAP_FAILED) {
		x->map = NULL;
		goto bad;
	}
	x->version = be32(x->map + 4);
	if (memcmp(x->map, "DIRC", 4) != 0 || (x->version != 2 && x->version != 3))
		goto bad;
	x->n = be32(x->map + 8);
	end = x->len - 20;
	if (x->n > end / E_HDR)
		goto bad;
	x->v = xcalloc(x->n + 1, sizeof *x->v);
	for (size_t i = 0; i < x->n; i++) {
		const unsigned char *e = x->map + off;
		const char *path, *nul;
		size_t hdr = E_HDR, plen;
		unsigned flags;
		if (off + E_HDR > end)
			goto bad;
		flags = (unsigned)e[E_FLAGS] << 8 | e[E_FLAGS + 1];
		if (flags & 0x3000)
			goto bad;   /* a conflict stage */
		if (flags & 0x4000) {
			if (x->version < 3)
				goto bad;
			hdr += 2;
		}
		path = (const char *)e + hdr;
		if (off + hdr >= end || !(nul = memchr(path, 0, end - off - hdr)))
			goto bad;
		plen = (size_t)(nul - path);
		if (!plen || ((flags & 0xfff) != 0xfff && (flags & 0xfff) != plen))
			goto bad;
		x->v[i].path = path;
		x->v[i].raw = e;
		x->v[i].rawlen = (hdr + plen + 8) & ~(size_t)7;
		off += x->v[i].rawlen;
		if (off > end)
			goto bad;
	}
	for (size_t i = 0; i < 20; i++)
		snprintf(x->sum + 2 * i, 3, "%02x", x->map[end + i]);
	return x;
bad:
	fastidx_free(x);
	return NULL;
}

void
index_sum(git_repository *r, char out[GIT_OID_HEXSZ + 1])
{
	char *p = xasprintf("%sindex", git_repository_path(r));
	unsigned char b[20];
	struct stat st;
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	free(p);
	out[0] = 0;
	if (fd < 0)
		return;
	/* the checksum git and libgit2 end the file with */
	if (fstat(fd, &st) == 0 && st.st_size >= 32 &&
	    pread(fd, b, sizeof b, st.st_size - (off_t)sizeof b) == (ssize_t)sizeof b)
		for (size_t i = 0; i < sizeof b; i++)
			snprintf(out + 2 * i, 3, "%02x", b[i]);
	close(fd);
}

int
fast_links(git_repository *r, void (*cb)(const char *path, const git_oid *id, void *arg),
           void *arg)
{
	struct fastidx *x = fastidx_load(r);

	if (!x)
		return -1;
	for (size_t i = 0; i < x->n; i++)
		if (be32(x->v[i].raw + E_MODE) == GIT_FILEMODE_COMMIT) {
			git_oid id;
			git_oid_fromraw(&id, x->v[i].raw + E_ID);
			cb(x->v[i].path, &id, arg);
		}
	fastidx_free(x);
	return 0;
}

/* ---- the quick check ---- */

/* the walk's state */
struct fwalk {
	git_repository *r;
	const struct fastidx *x;
	size_t matched;
	struct buf path;
};

/* true if the file name (in the folder open at fd, st its lstat) has the content e records:
   for an entry too recent to trust its stat data (racy, as git calls it) */
static int
samecontent(git_repository *r, int fd, const char *name, const struct stat *st,
            const struct ient *e)
{
	git_oid id, want;
	int ok = 0;

	git_oid_fromraw(&want, e->raw + E_ID);
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
	return ok && git_oid_equal(&id, &want);
}

/* a file of the work tree: name in the folder open at fd, and its lstat */
struct ondisk {
	int fd;
	const char *name;
	const struct stat *st;
};

/* true if f is what e records: stat data, or content when the stat data is racy */
static int
statmatch(git_repository *r, const struct ient *e, const struct ondisk *f,
          const struct timespec *imt)
{
	const struct stat *st = f->st;
	const unsigned char *b = e->raw;
	uint32_t mode;

	if (S_ISLNK(st->st_mode))
		mode = GIT_FILEMODE_LINK;
	else if (S_ISREG(st->st_mode))
		mode = st->st_mode & 0100 ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
	else
		return 0;
	if (be32(b + E_MODE) != mode || be32(b + E_SIZE) != (uint32_t)st->st_size ||
	    be32(b + E_INO) != (uint32_t)st->st_ino ||
	    be32(b + E_MTIME) != (uint32_t)st->st_mtim.tv_sec ||
	    be32(b + E_MTIME + 4) != (uint32_t)st->st_mtim.tv_nsec ||
	    be32(b + E_CTIME) != (uint32_t)st->st_ctim.tv_sec ||
	    be32(b + E_CTIME + 4) != (uint32_t)st->st_ctim.tv_nsec)
		return 0;
	/* racy: written in the same clock tick as the index or after it; a change made then
	   may keep size and times, so the content decides */
	if (st->st_mtim.tv_sec > imt->tv_sec ||
	    (st->st_mtim.tv_sec == imt->tv_sec && st->st_mtim.tv_nsec >= imt->tv_nsec))
		return samecontent(r, f->fd, f->name, st, e);
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
		if (strcmp(w->x->v[mid].path, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* the entry in [lo, hi) at path w->path, or NULL */
static const struct ient *
entryat(const struct fwalk *w, size_t lo, size_t hi)
{
	size_t i = lbound(w, lo, hi, w->path.s);

	return i < hi && strcmp(w->x->v[i].path, w->path.s) == 0 ? &w->x->v[i] : NULL;
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
		const struct ient *e;
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
			if (e && be32(e->raw + E_MODE) == GIT_FILEMODE_COMMIT) {
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
		    !statmatch(w->r, e, &(struct ondisk){fd, n, &st}, &w->x->mtime)) {
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
fast_pristine(git_repository *r, const struct spstate *s, struct fastidx **keep)
{
	struct fwalk w;
	struct fastidx *x;
	int fd, ok;

	if (keep)
		*keep = NULL;
	if (!s->index || !*s->index || !(x = fastidx_load(r)))
		return 0;
	memset(&w, 0, sizeof w);
	w.r = r;
	w.x = x;
	ok = strcmp(x->sum, s->index) == 0;
	if (ok) {
		/* A racy file is hashed through the filters its attributes name, which libgit2
		   looks up in the work tree's .gitattributes first and in the index only for one
		   missing there: and a missing file makes the answer "no" anyway. An empty index
		   in memory spares it the load of the whole index file. */
		git_index *none;
		if (git_index_new(&none) == 0) {
			git_repository_set_index(r, none);
			git_index_free(none);
		}
		bufputs(&w.path, "");
		fd = open(git_repository_workdir(r), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ok = fd >= 0 && walkdir(&w, fd, 1, 0, x->n) && w.matched == x->n;
		git_repository_set_index(r, NULL);
	}
	buffree(&w.path);
	if (ok && keep)
		*keep = x;
	else
		fastidx_free(x);
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

/* Write blob id of mode at path (below wd), as git's checkout does: the old file removed,
   a new one created in its place. Not a temp file renamed over the old: ext4 starts the
   write-back of a file renamed over another at once (auto_da_alloc), and replacing that
   file again (the next checkout) then waits for the disk. A checkout killed half-way
   leaves files whose stat data is not in the index, so the next one rewrites them. */
static int
writeone(git_repository *r, const char *wd, const char *path, const git_oid *id, uint32_t mode)
{
	char *p = xasprintf("%s%s", wd, path), *s;
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
	if (unlink(p) < 0 && errno != ENOENT)
		goto outb;
	if (mode == GIT_FILEMODE_LINK) {
		char *t = xstrndup(git_blob_rawcontent(b), (size_t)git_blob_rawsize(b));
		e = symlink(t, p);
		free(t);
	} else {
		/* the bytes git writes for it: the blob through the checkout filters its attributes
		   and core.autocrlf ask for */
		git_blob_filter_options fo;
		git_buf fb = {0};
		int fd;
		git_blob_filter_options_init(&fo, GIT_BLOB_FILTER_OPTIONS_VERSION);
		/* every blob through the filters, as libgit2's and git's checkouts do (the crlf
		   filter itself leaves binary content alone under text=auto); with the default
		   CHECK_FOR_BINARY, git_blob_filter gives nothing at all for a binary blob */
		fo.flags &= ~(uint32_t)GIT_BLOB_FILTER_CHECK_FOR_BINARY;
		if (git_blob_filter(&fb, b, path, &fo) < 0)
			goto outb;
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		          mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0777 : 0666);
		if (fd >= 0) {
			e = writeall(fd, fb.ptr, fb.size);
			if (close(fd) < 0)
				e = -1;
		}
		git_buf_dispose(&fb);
	}
outb:
	git_blob_free(b);
out:
	free(p);
	return e;
}

/* append to out the index entry of the file just written at path (below wd) */
static int
addentry(struct buf *out, const char *wd, const char *path, const git_oid *id, uint32_t mode)
{
	unsigned char e[E_HDR];
	struct stat st;
	char *p = xasprintf("%s%s", wd, path);
	size_t plen = strlen(path), len = (E_HDR + plen + 8) & ~(size_t)7;
	int r = lstat(p, &st);

	free(p);
	if (r < 0)
		return -1;
	put32(e + E_CTIME, (uint32_t)st.st_ctim.tv_sec);
	put32(e + E_CTIME + 4, (uint32_t)st.st_ctim.tv_nsec);
	put32(e + E_MTIME, (uint32_t)st.st_mtim.tv_sec);
	put32(e + E_MTIME + 4, (uint32_t)st.st_mtim.tv_nsec);
	put32(e + E_DEV, (uint32_t)st.st_dev);
	put32(e + E_INO, (uint32_t)st.st_ino);
	put32(e + E_MODE, mode);
	put32(e + E_UID, (uint32_t)st.st_uid);
	put32(e + E_GID, (uint32_t)st.st_gid);
	put32(e + E_SIZE, (uint32_t)st.st_size);
	memcpy(e + E_ID, id->id, 20);
	e[E_FLAGS] = (unsigned char)((plen < 0xfff ? plen : 0xfff) >> 8);
	e[E_FLAGS + 1] = (unsigned char)(plen < 0xfff ? plen : 0xfff);
	bufadd(out, e, sizeof e);
	bufadd(out, path, plen);
	for (size_t i = E_HDR + plen; i < len; i++)
		bufputc(out, 0);
	return 0;
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

/* write the index file of r: bytes, then their SHA-1, through index.lock as git does */
static void
writeindex(git_repository *r, struct buf *b, char sum[GIT_OID_HEXSZ + 1])
{
	char *p = xasprintf("%sindex", git_repository_path(r)), *lk = xasprintf("%s.lock", p);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int fd;

	if (!EVP_Digest(b->s, b->len, md, &mdlen, EVP_sha1(), NULL) || mdlen != 20)
		die("libcrypto: SHA-1 failed");
	bufadd(b, md, 20);
	if ((fd = open(lk, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0)
		die("%s: cannot lock the index (another git or srcpin at work?):", lk);
	if (writeall(fd, b->s, b->len) < 0 || close(fd) < 0 || rename(lk, p) < 0) {
		unlink(lk);
		die("%s: cannot write:", p);
	}
	for (size_t i = 0; i < 20; i++)
		snprintf(sum + 2 * i, 3, "%02x", md[i]);
	free(p);
	free(lk);
}

int
fast_switch(git_repository *r, struct fastidx *x, git_tree *ot, git_tree *t,
            char sum[GIT_OID_HEXSZ + 1])
{
	const char *wd = git_repository_workdir(r);
	struct changes c = {0};
	struct buf b = {0};
	size_t i, j, n = 0;
	int e = -1;

	if (!wd || treediff(r, git_tree_id(ot), git_tree_id(t), "", &c) < 0 || c.links)
		goto out;   /* submodules, and changed attributes below: libgit2's checkout */
	for (i = 0; i < c.n; i++) {
		const char *s = strrchr(c.v[i].path, '/');
		if (strcmp(s ? s + 1 : c.v[i].path, ".gitattributes") == 0)
			goto out;
	}
	/* deletions first (a folder may become a file), then what is new or changed */
	for (i = 0; i < c.n; i++) {
		char *p;
		if (c.v[i].nmode)
			continue;
		p = xasprintf("%s%s", wd, c.v[i].path);
		if (unlink(p) < 0 && errno != ENOENT)
			die("%s: cannot remove:", p);
		free(p);
		rmparents(wd, c.v[i].path);
		fault("switch: a file removed");
	}
	{
		/* The filters' attributes: libgit2 looks in the index first, then in the work
		   tree's .gitattributes files, which are the index's here (the tree is pristine
		   and no .gitattributes changes). An empty index in memory spares it the load of
		   the whole index file; the repository forgets it after the writes. */
		git_index *none;
		if (git_index_new(&none) == 0) {
			git_repository_set_index(r, none);
			git_index_free(none);
		}
		for (i = 0; i < c.n; i++) {
			if (!c.v[i].nmode)
				continue;
			if (writeone(r, wd, c.v[i].path, &c.v[i].nid, c.v[i].nmode) < 0)
				die("%s%s: cannot write:", wd, c.v[i].path);
			fault("switch: a file written");
		}
		git_repository_set_index(r, NULL);
	}
	/* the new index: the old entries (the old tree, as the quick check found them on disk)
	   merged with the changes, both in path order (a tree's order is its paths' order) */
	bufadd(&b, "DIRC", 4);
	bufadd(&b, "\0\0\0\0\0\0\0\0", 8);
	for (i = 0, j = 0; i < x->n || j < c.n;) {
		int k = i == x->n ? 1 : j == c.n ? -1 : strcmp(x->v[i].path, c.v[j].path);
		if (k < 0) {
			bufadd(&b, x->v[i].raw, x->v[i].rawlen);
			n++;
		} else if (c.v[j].nmode) {
			if (addentry(&b, wd, c.v[j].path, &c.v[j].nid, c.v[j].nmode) < 0)
				die("%s%s: cannot read back:", wd, c.v[j].path);
			n++;
		}
		i += k <= 0;
		j += k >= 0;
	}
	put32((unsigned char *)b.s + 4, x->version);
	put32((unsigned char *)b.s + 8, (uint32_t)n);
	writeindex(r, &b, sum);
	fault("switch: index written");
	e = 0;
out:
	buffree(&b);
	freechanges(&c);
	return e;
}
