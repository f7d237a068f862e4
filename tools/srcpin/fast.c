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
#include <sys/stat.h>
#include <unistd.h>

void
index_sum(git_repository *r, char out[GIT_OID_HEXSZ + 1])
{
	git_index *idx;

	out[0] = 0;
	if (git_repository_index(&idx, r) < 0)
		return;
	if (git_index_read(idx, 1) == 0)
		git_oid_tostr(out, GIT_OID_HEXSZ + 1, git_index_checksum(idx));
	git_index_free(idx);
}

/* the walk's state */
struct fwalk {
	git_index *idx;
	struct timespec imt;   /* the index file's mtime: entries at or after it are racy */
	size_t matched;
	struct buf path;
};

/* true if the file name (in the folder open at fd, st its lstat) has the content e records:
   for an entry too recent to trust its stat data (racy, as git calls it) */
static int
samecontent(int fd, const char *name, const struct stat *st, const git_index_entry *e)
{
	git_oid id;
	struct buf b = {0};
	int ok = 0;

	if (S_ISLNK(st->st_mode)) {
		char t[4096];
		ssize_t n = readlinkat(fd, name, t, sizeof t);
		ok = n >= 0 && (size_t)n < sizeof t && git_odb_hash(&id, t, (size_t)n, GIT_OBJECT_BLOB) == 0;
	} else {
		int f = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		char tmp[65536];
		ssize_t k;
		if (f < 0)
			return 0;
		while ((k = read(f, tmp, sizeof tmp)) > 0)
			bufadd(&b, tmp, (size_t)k);
		close(f);
		ok = k == 0 && git_odb_hash(&id, b.s ? b.s : "", b.len, GIT_OBJECT_BLOB) == 0;
		buffree(&b);
	}
	return ok && git_oid_equal(&id, &e->id);
}

/* true if st is what e records: stat data, or content when the stat data is racy */
static int
statmatch(const git_index_entry *e, const struct stat *st, const struct timespec *imt, int fd,
          const char *name)
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
		return samecontent(fd, name, st, e);
	return 1;
}

/* walk the folder open at fd (its path below the top in w->path); returns 1 while every
   entry matches the index */
static int
walkdir(struct fwalk *w, int fd, int top)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	size_t base = w->path.len;
	int ok = 1;

	if (!d) {
		close(fd);
		return 0;
	}
	while (ok && (de = readdir(d))) {
		const char *n = de->d_name;
		const git_index_entry *e;
		struct stat st;
		int isdir;
		if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
			continue;
		if (top && strcmp(n, ".git") == 0)
			continue;
		w->path.len = base;
		bufputs(&w->path, n);
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				ok = 0;
				break;
			}
			isdir = S_ISDIR(st.st_mode);
		} else
			isdir = de->d_type == DT_DIR;
		if (isdir) {
			int sub;
			e = git_index_get_bypath(w->idx, w->path.s, 0);
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
			ok = walkdir(w, sub, 0);
			continue;
		}
		e = git_index_get_bypath(w->idx, w->path.s, 0);
		if (!e || (de->d_type != DT_UNKNOWN && fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0) ||
		    !statmatch(e, &st, &w->imt, fd, n)) {
			ok = 0;
			break;
		}
		w->matched++;
	}
	w->path.len = base;
	if (w->path.s)
		w->path.s[base] = 0;
	closedir(d);
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
	ip = xasprintf("%sindex", git_repository_path(r));
	ok = stat(ip, &ist) == 0 && strcmp(git_oid_tostr_s(git_index_checksum(idx)), s->index) == 0 &&
	     !git_index_has_conflicts(idx);
	free(ip);
	if (ok) {
		w.imt = ist.st_mtim;
		fd = open(git_repository_workdir(r), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ok = fd >= 0 && walkdir(&w, fd, 1) && w.matched == git_index_entrycount(idx);
	}
	buffree(&w.path);
	git_index_free(idx);
	return ok;
}
