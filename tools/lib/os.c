/* the operating-system layer: folders, paths, PATH lookup, safe opens */
#include "os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
os_isdir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int
os_isfile(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int
os_mkdirs(const char *path, unsigned mode)
{
	char *p = xstrdup(path), *s;
	int err;

	for (s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		if (s[-1] != '/') {
			char c = *s;

			*s = 0;
			if (mkdir(p, (mode_t)mode) < 0 && (errno != EEXIST || !os_isdir(p))) {
				err = errno == EEXIST ? ENOTDIR : errno;
				free(p);
				errno = err;
				return -1;
			}
			*s = c;
		}
		if (!*s)
			break;
	}
	free(p);
	return 0;
}

int
os_mkparents(const char *file, unsigned mode)
{
	const char *sl = strrchr(file, '/');
	char *d;
	int r;

	if (!sl || sl == file)
		return 0;
	d = xstrndup(file, (size_t)(sl - file));
	r = os_mkdirs(d, mode);
	free(d);
	return r;
}

char *
os_abspath(const char *path, const char *cwd)
{
	struct buf in = {0}, out = {0};
	char *p, *seg, *save = NULL, here[4096];

	if (path[0] != '/') {
		if (!cwd) {
			if (!getcwd(here, sizeof here))
				die("cannot read the current folder:");
			cwd = here;
		}
		bufprintf(&in, "%s/", cwd);
	}
	bufputs(&in, path);
	for (p = in.s; (seg = strtok_r(p, "/", &save)); p = NULL) {
		if (strcmp(seg, ".") == 0)
			continue;
		if (strcmp(seg, "..") == 0) {
			char *slash = out.len ? strrchr(out.s, '/') : NULL;
			if (slash)
				out.len = (size_t)(slash - out.s), out.s[out.len] = 0;
			continue;
		}
		bufputc(&out, '/');
		bufputs(&out, seg);
	}
	if (!out.len)
		bufputc(&out, '/');
	buffree(&in);
	return bufdetach(&out);
}

char *
os_findprog(const char *name, const char *path, const char *cwd)
{
	struct stat st;
	const char *p, *end;
	char *cand;
	int why = ENOENT;

	if (!*name) {
		errno = ENOENT;
		return NULL;
	}
	if (strchr(name, '/')) {
		if (stat(name, &st) < 0) {
			errno = ENOENT;
			return NULL;
		}
		return xstrdup(name);
	}
	if (!path)
		path = getenv("PATH");
	if (!path)
		path = OS_DEFPATH;
	for (p = path;; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (end == p)
			cand = xasprintf("%s/%s", cwd ? cwd : ".", name);
		else
			cand = xasprintf("%.*s/%s", (int)(end - p), p, name);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(cand, X_OK) == 0)
				return cand;
			why = EACCES;
		}
		free(cand);
		if (!*end)
			break;
	}
	errno = why;
	return NULL;
}

static int rmerr; /* errno of os_rmtree's first failure */

static int
rmone(const char *p, const struct stat *st, int type, struct FTW *f)
{
	int r;

	(void)st, (void)f;
	r = type == FTW_DP ? rmdir(p) : unlink(p);
	if (r < 0 && errno != ENOENT && !rmerr)
		rmerr = errno;
	return 0;
}

int
os_rmtree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
	rmerr = 0;
	if (nftw(path, rmone, 16, FTW_DEPTH | FTW_PHYS) < 0 && !rmerr)
		rmerr = errno;
	if (rmerr) {
		errno = rmerr;
		return -1;
	}
	return 0;
}

static int
namecmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
os_listdir(const char *dir, struct strv *out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t first = out->n;

	if (!d)
		return -1;
	errno = 0;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		strv_add(out, de->d_name, 0);
	}
	closedir(d);
	if (out->n > first)
		qsort(out->v + first, out->n - first, sizeof *out->v, namecmp);
	return 0;
}

const char *
os_ftype(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO: return "a FIFO";
	case S_IFDIR: return "a folder";
	case S_IFLNK: return "a symbolic link";
	case S_IFSOCK: return "a socket";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFREG: return "a regular file";
	}
	return "not a regular file";
}

int
os_openreg(const char *path, int flags, struct stat *stp, char **err)
{
	struct stat st;
	int fd, fl;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
	if (fd < 0) {
		if (errno == ELOOP && (flags & O_NOFOLLOW))
			seterr(err, "%s: is a symbolic link, which is not followed here", path);
		else
			seterr(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		seterr(err, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		seterr(err, "%s: %s", path, strerror(EISDIR));
		errno = EISDIR;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		seterr(err, "%s: is %s, not a regular file", path, os_ftype(st.st_mode));
		errno = EINVAL;
		goto fail;
	}
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		seterr(err, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (stp)
		*stp = st;
	return fd;
fail:
	fl = errno;
	close(fd);
	errno = fl;
	return -1;
}

int
os_readreg(const char *path, int flags, struct buf *out, size_t max, char **err)
{
	int fd, e;

	bufreset(out);
	if ((fd = os_openreg(path, flags, NULL, err)) < 0)
		return -1;
	if (readfd(fd, out, max) < 0) {
		e = errno;
		if (e == EFBIG)
			seterr(err, "%s: over %zu bytes, too large for what it should hold", path, max);
		else
			seterr(err, "%s: %s", path, strerror(e));
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

int
os_owndir(const char *dir, char **err)
{
	struct stat st;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		seterr(err, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) < 0) {
		seterr(err, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		seterr(err, "%s: is a symbolic link; a state folder is never followed "
		       "(remove the link)", dir);
		errno = ELOOP;
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		seterr(err, "%s: is %s, not a folder", dir, os_ftype(st.st_mode));
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

int
os_createreg(const char *path, int flags, unsigned mode, char **err)
{
	struct stat st;
	int fd, e, trunc = flags & O_TRUNC;

	flags &= ~O_TRUNC;
	if (!(flags & (O_RDWR | O_WRONLY)))
		flags |= O_WRONLY;
	fd = open(path, O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags, (mode_t)mode);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP)
			seterr(err, "%s: is a symbolic link; kiln's own files are never written "
			       "through one (remove the link)", path);
		else if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
			seterr(err, "%s: is %s, not a regular file", path, os_ftype(st.st_mode));
		else
			seterr(err, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		seterr(err, "%s: %s", path, strerror(e));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		seterr(err, "%s: is %s, not a regular file", path, os_ftype(st.st_mode));
		e = EINVAL;
		goto fail;
	}
	/* a hard link planted in place of the file would let us write to its other name */
	if (st.st_nlink > 1) {
		seterr(err, "%s: has %lu hard links; kiln's own files are never written "
		       "through one (remove it)", path, (unsigned long)st.st_nlink);
		e = EMLINK;
		goto fail;
	}
	if ((trunc && ftruncate(fd, 0) < 0) || (e = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, e & ~O_NONBLOCK) < 0) {
		e = errno;
		seterr(err, "%s: %s", path, strerror(e));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	errno = e;
	return -1;
}
