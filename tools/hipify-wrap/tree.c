/* listing, hashing and recording the files of a source tree */
#include "tree.h"
#include "os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "atomic.h"
#include "hash.h"
#include "mapfile.h"
#include "util.h"

struct fent *
flist_add(struct flist *l, const char *path)
{
	struct fent *e;

	l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->path = xstrdup(path);
	e->kind = F_INPUT;
	return e;
}

static int
fentcmp(const void *a, const void *b)
{
	return strcmp(((const struct fent *)a)->path, ((const struct fent *)b)->path);
}

void
flist_sort(struct flist *l)
{
	size_t i, j;

	if (l->n == 0)
		return;
	/* lists read back from a manifest or the git index come sorted: check before sorting */
	for (i = 1; i < l->n && strcmp(l->v[i - 1].path, l->v[i].path) < 0; i++)
		;
	if (i == l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), fentcmp);
	for (i = j = 0; i < l->n; i++) {
		if (j > 0 && strcmp(l->v[j - 1].path, l->v[i].path) == 0) {
			free(l->v[i].path);
			continue;
		}
		l->v[j++] = l->v[i];
	}
	l->n = j;
}

struct fent *
flist_find(const struct flist *l, const char *path)
{
	struct fent key;

	if (!l || l->n == 0)
		return NULL;
	key.path = (char *)path;
	return bsearch(&key, l->v, l->n, sizeof(*l->v), fentcmp);
}

struct fent *
flist_seek(const struct flist *l, size_t *at, const char *path)
{
	int d = 1;

	if (!l || l->n == 0)
		return NULL;
	if (*at > 0 && *at <= l->n && strcmp(l->v[*at - 1].path, path) >= 0)
		return flist_find(l, path); /* asked out of order */
	while (*at < l->n && (d = strcmp(l->v[*at].path, path)) < 0)
		++*at;
	if (*at < l->n && d == 0)
		return &l->v[(*at)++];
	return NULL;
}

void
flist_free(struct flist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* is this folder name one the walk never enters (top: at the root) */
static int
skipname(const char *name, int top, const char *skipdir)
{
	if (strcmp(name, ".git") == 0 || strcmp(name, ".hg") == 0 ||
	    strcmp(name, "__pycache__") == 0 || endswith(name, ".egg-info"))
		return 1;
	if (top && (strcmp(name, "build") == 0 || strcmp(name, "dist") == 0))
		return 1;
	return top && skipdir && strcmp(name, skipdir) == 0;
}

/* one walk of a tree: the path below the root being read, the folder name skipped at
   the root (may be NULL) and the files found */
struct treewalk {
	struct buf rel;
	const char *skipdir;
	struct flist *out;
};

/* add the files of the open folder dfd (w->rel below the root; top: the root) to w->out,
   recursively; closes dfd; 0, or -1 with *err */
static int
walkdir(struct treewalk *w, int dfd, int top, char **err)
{
	struct buf *rel = &w->rel;
	DIR *d;
	struct dirent *de;
	struct stat st;
	size_t len = rel->len;
	int fd, r = 0;

	if (!(d = fdopendir(dfd))) {
		*err = xasprintf("%s: cannot read folder: %s", rel->len ? rel->s : ".", strerror(errno));
		close(dfd);
		return -1;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		rel->len = len;
		if (len)
			bufputc(rel, '/');
		bufputs(rel, de->d_name);
		if (strchr(de->d_name, '\n') || strchr(de->d_name, '\t')) {
			*err = xasprintf("%s: file name has a tab or newline; hipify-wrap cannot record it", rel->s);
			r = -1;
			break;
		}
		if (de->d_type == DT_UNKNOWN || de->d_type == DT_LNK) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			if (S_ISDIR(st.st_mode))
				de->d_type = DT_DIR;
			else if (S_ISREG(st.st_mode))
				de->d_type = DT_REG;
			else
				continue;
		}
		if (de->d_type == DT_DIR) {
			if (skipname(de->d_name, top, w->skipdir))
				continue;
			fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0) {
				*err = xasprintf("%s: cannot open folder: %s", rel->s, strerror(errno));
				r = -1;
				break;
			}
			if ((r = walkdir(w, fd, 0, err)) < 0)
				break;
		} else if (de->d_type == DT_REG) {
			flist_add(w->out, rel->s);
		}
	}
	rel->len = len;
	if (rel->s)
		rel->s[len] = 0;
	closedir(d);
	return r;
}

int
tree_walk(const char *root, const char *skipdir, struct flist *out, char **err)
{
	struct treewalk w = {{0}, skipdir, out};
	int fd, r;

	if ((fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		*err = xasprintf("%s: %s", root, strerror(errno));
		return -1;
	}
	r = walkdir(&w, fd, 1, err);
	buffree(&w.rel);
	flist_sort(out);
	return r;
}

int
tree_gitfiles(const char *root, struct flist *out, char **err)
{
	git_repository *repo = NULL;
	git_index *idx = NULL;
	const git_index_entry *ie;
	const char *wd;
	size_t i, n, rl;
	int r = 0;
	char *rp = NULL, *wp = NULL;

	git_libgit2_init();
	if (git_repository_open_ext(&repo, root, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		goto done;
	if (!(wd = git_repository_workdir(repo)))
		goto done;
	rp = realpath(root, NULL);
	wp = realpath(wd, NULL);
	if (!rp || !wp || strcmp(rp, wp) != 0)
		goto done;
	if (git_repository_index(&idx, repo) < 0) {
		*err = xasprintf("%s: cannot read the git index: %s", root, git_error_last()->message);
		r = -1;
		goto done;
	}
	n = git_index_entrycount(idx);
	for (i = 0; i < n; i++) {
		ie = git_index_get_byindex(idx, i);
		if ((ie->mode & 0170000) != 0100000)
			continue; /* submodules and symlinks are not hipify inputs */
		rl = strlen(ie->path);
		if (strchr(ie->path, '\n') || strchr(ie->path, '\t') || rl == 0)
			continue;
		flist_add(out, ie->path);
	}
	flist_sort(out);
	r = 1;
done:
	free(rp);
	free(wp);
	git_index_free(idx);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return r;
}

int
tree_gitclean(const char *root, const char *path)
{
	git_repository *repo = NULL;
	git_index *idx = NULL;
	const git_index_entry *ie;
	git_oid id;
	char *full = xasprintf("%s/%s", root, path);
	int r = 0;

	git_libgit2_init();
	if (git_repository_open_ext(&repo, root, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0 &&
	    git_repository_index(&idx, repo) == 0 && (ie = git_index_get_bypath(idx, path, 0)) &&
	    git_odb_hashfile(&id, full, GIT_OBJECT_BLOB) == 0)
		r = git_oid_equal(&id, &ie->id);
	git_index_free(idx);
	git_repository_free(repo);
	git_libgit2_shutdown();
	free(full);
	return r;
}

int
tree_crumb(const char *root, const char *path)
{
	char *full = xasprintf("%s/%s", root, path), head[sizeof(HIPIFY_CRUMB)];
	/* O_NONBLOCK: a FIFO left in the tree reads as nothing instead of hanging the walk */
	int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK), r = 0;
	ssize_t n;

	free(full);
	if (fd < 0)
		return 0;
	n = read(fd, head, sizeof(HIPIFY_CRUMB) - 1);
	r = n == (ssize_t)sizeof(HIPIFY_CRUMB) - 1 && memcmp(head, HIPIFY_CRUMB, (size_t)n) == 0;
	close(fd);
	return r;
}

static void
setstat(struct fent *e, const struct stat *st)
{
	e->size = (uint64_t)st->st_size;
	e->ino = (uint64_t)st->st_ino;
	e->msec = st->st_mtim.tv_sec;
	e->mnsec = st->st_mtim.tv_nsec;
	e->mode = st->st_mode & 07777;
}

int
fent_restat(const char *root, struct fent *e)
{
	struct stat st;
	char *p = xasprintf("%s/%s", root, e->path);
	int r = stat(p, &st);

	free(p);
	if (r == 0)
		setstat(e, &st);
	return r;
}

int
tree_hash(const char *root, struct flist *l, const struct flist *cache, char **err)
{
	struct stat st;
	struct mapfile m;
	const struct fent *c;
	struct fent *e;
	struct buf p = {0};
	size_t i, j, ci = 0, cl = strlen(HIPIFY_CRUMB);
	int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (rfd < 0) {
		*err = xasprintf("%s: %s", root, strerror(errno));
		return -1;
	}
	for (i = j = 0; i < l->n; i++) {
		e = &l->v[i];
		/* relative to the root's descriptor: the kernel walks the file's own path only */
		if (fstatat(rfd, e->path, &st, 0) < 0 || !S_ISREG(st.st_mode)) {
			free(e->path);
			continue;
		}
		setstat(e, &st);
		c = flist_seek(cache, &ci, e->path);
		if (c && c->hashed && c->size == e->size && c->ino == e->ino &&
		    c->msec == e->msec && c->mnsec == e->mnsec) {
			memcpy(e->hash, c->hash, 32);
			e->crumb = c->crumb;
		} else {
			bufreset(&p);
			bufprintf(&p, "%s/%s", root, e->path);
			if (map_open(&m, p.s) < 0) {
				*err = xasprintf("%s: %s", p.s, strerror(errno));
				memmove(&l->v[j], &l->v[i], (l->n - i) * sizeof(*l->v));
				l->n = j + (l->n - i);
				buffree(&p);
				close(rfd);
				return -1;
			}
			sha256_buf(m.p ? (const void *)m.p : "", m.n, e->hash);
			e->crumb = m.n >= cl && memcmp(m.p, HIPIFY_CRUMB, cl) == 0;
			map_close(&m);
		}
		e->hashed = 1;
		l->v[j++] = *e;
	}
	l->n = j;
	buffree(&p);
	close(rfd);
	return 0;
}

void
hex32(const unsigned char h[32], char out[65])
{
	static const char hx[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 32; i++) {
		out[2 * i] = hx[h[i] >> 4];
		out[2 * i + 1] = hx[h[i] & 15];
	}
	out[64] = 0;
}

static int
unhex32(const char *s, unsigned char h[32])
{
	/* lowercase hex digit values, -1 for anything else (a manifest has 23k digests) */
	static const signed char hv[256] = {
		['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
		['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	};
	int i, a, b;

	for (i = 0; i < 32; i++) {
		a = hv[(unsigned char)s[2 * i]] - 1, b = hv[(unsigned char)s[2 * i + 1]] - 1;
		if ((a | b) < 0)
			return -1;
		h[i] = (unsigned char)(a << 4 | b);
	}
	return 0;
}

/* manifest line: KIND CRUMB HASH ORIG SIZE MSEC MNSEC INO MODE PATH, tab separated */
int
manifest_write(const char *path, const struct flist *l)
{
	struct buf b = {0};
	const struct fent *e;
	char h[65], o[65];
	size_t i;
	int r;

	bufputs(&b, "# hipify-wrap manifest 1\n");
	for (i = 0; i < l->n; i++) {
		e = &l->v[i];
		hex32(e->hash, h);
		if (e->has_orig)
			hex32(e->orig, o);
		else
			memset(o, '-', 64), o[64] = 0;
		bufprintf(&b, "%c\t%d\t%s\t%s\t%llu\t%lld\t%lld\t%llu\t%o\t%s\n", e->kind, e->crumb, h, o,
		          (unsigned long long)e->size, (long long)e->msec, (long long)e->mnsec,
		          (unsigned long long)e->ino, (unsigned)e->mode, e->path);
	}
	r = writefile_atomic(path, b.s, b.len, 0644);
	buffree(&b);
	return r;
}

/* a whole field as an unsigned number in base b (no sign, no blanks); -1 if it is not */
static int
num(const char *s, int b, unsigned long long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, b);
	return *end || errno ? -1 : 0;
}

/* a whole field as a signed decimal number */
static int
snum(const char *s, long long *v)
{
	char *end;

	if (!(*s >= '0' && *s <= '9') && !(*s == '-' && s[1] >= '0' && s[1] <= '9'))
		return -1;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return *end || errno ? -1 : 0;
}

int
manifest_read(const char *path, struct flist *l, char **err)
{
	struct buf b = {0};
	struct fent *e;
	char *line, *next, *f[10];
	int k, lineno = 0;
	unsigned long long size, ino, mode8;
	long long ms, mns;
	unsigned mode;
	char *msg = NULL;

	/* a state file: never through a planted link, never blocking on a planted FIFO */
	if (os_readreg(path, O_NOFOLLOW, &b, 0, &msg) < 0) {
		if (errno == ENOENT) {
			free(msg);
			return 0;
		}
		*err = msg;
		return -1;
	}
	for (line = b.s; line && *line; line = next) {
		lineno++;
		next = strchr(line, '\n');
		if (!next)
			goto bad;
		*next++ = 0;
		if (lineno == 1) {
			if (strcmp(line, "# hipify-wrap manifest 1") != 0)
				goto bad;
			continue;
		}
		for (k = 0; k < 9; k++) {
			f[k] = line;
			if (!(line = strchr(line, '\t')))
				goto bad;
			*line++ = 0;
		}
		f[9] = line;
		if (strlen(f[0]) != 1 || !strchr("imo", f[0][0]) || strlen(f[2]) != 64 || strlen(f[3]) != 64 || !*f[9])
			goto bad;
		if (num(f[4], 10, &size) < 0 || snum(f[5], &ms) < 0 || snum(f[6], &mns) < 0 ||
		    num(f[7], 10, &ino) < 0 || num(f[8], 8, &mode8) < 0 || mode8 > 07777)
			goto bad;
		mode = (unsigned)mode8;
		e = flist_add(l, f[9]);
		e->kind = f[0][0];
		e->crumb = f[1][0] == '1';
		if (unhex32(f[2], e->hash) < 0)
			goto bad;
		e->has_orig = f[3][0] != '-';
		if (e->has_orig && unhex32(f[3], e->orig) < 0)
			goto bad;
		e->size = size, e->ino = ino, e->msec = ms, e->mnsec = mns, e->mode = (int)mode;
		e->hashed = 1;
	}
	buffree(&b);
	flist_sort(l);
	return 1;
bad:
	*err = xasprintf("%s:%d: not a hipify-wrap manifest line (remove the state folder or use --reset)", path, lineno);
	buffree(&b);
	return -1;
}
