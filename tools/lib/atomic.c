/* atomic file output */
#include "atomic.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
writeall(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t w;

	while (n) {
		w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* the process umask, read once (umask can only be read by setting it) */
static mode_t
umask_get(void)
{
	static int known;
	static mode_t m;

	if (!known) {
		m = umask(022);
		umask(m);
		known = 1;
	}
	return m;
}

int
atomic_open(struct atomic *a, const char *path, unsigned mode)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dlen = slash ? (int)(slash - path + 1) : 0;
	int err;
	char *dir;

	a->path = xstrdup(path);
	a->tmp = xasprintf("%.*s.%s.tmpXXXXXX", dlen, path, base);
	/* an unnamed file (O_TMPFILE) vanishes with the process, even on SIGKILL; it gets
	   its temp name only at commit. Else (old kernels, no /proc) a named temp file. */
	dir = dlen ? xasprintf("%.*s", dlen, path) : xstrdup(".");
	a->fd = access("/proc/self/fd", X_OK) == 0 ? open(dir, O_WRONLY | O_TMPFILE | O_CLOEXEC, 0600) : -1;
	free(dir);
	if (a->fd >= 0)
		a->unnamed = 1;
	else if ((a->unnamed = 0, a->fd = mkostemp(a->tmp, O_CLOEXEC)) < 0) {
		err = errno;
		free(a->path);
		free(a->tmp);
		a->path = a->tmp = NULL;
		errno = err;
		return -1;
	}
	if (fchmod(a->fd, mode & ~(unsigned)umask_get()) < 0) {
		err = errno;
		atomic_abort(a);
		errno = err;
		return -1;
	}
	return 0;
}

int
atomic_write(struct atomic *a, const void *p, size_t n)
{
	return writeall(a->fd, p, n);
}

static void
syncdir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, (size_t)(slash - path + 1)) : xstrdup(".");
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

int
atomic_commit(struct atomic *a)
{
	int err;

	if (fsync(a->fd) < 0 || (!a->unnamed && close(a->fd) < 0)) {
		err = errno;
		a->fd = -1;
		atomic_abort(a);
		errno = err;
		return -1;
	}
	if (a->unnamed) {
		char proc[64];
		int fd;

		snprintf(proc, sizeof proc, "/proc/self/fd/%d", a->fd);
		if ((fd = mkostemp(a->tmp, O_CLOEXEC)) < 0 || (close(fd), unlink(a->tmp)) < 0 ||
		    linkat(AT_FDCWD, proc, AT_FDCWD, a->tmp, AT_SYMLINK_FOLLOW) < 0) {
			err = errno;
			a->unnamed = 0;
			atomic_abort(a);
			errno = err;
			return -1;
		}
		a->unnamed = 0;
		close(a->fd);
	}
	a->fd = -1;
	if (rename(a->tmp, a->path) < 0) {
		err = errno;
		atomic_abort(a);
		errno = err;
		return -1;
	}
	syncdir(a->path);
	free(a->tmp);
	free(a->path);
	a->tmp = a->path = NULL;
	return 0;
}

void
atomic_abort(struct atomic *a)
{
	int err = errno;

	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	if (a->tmp && !a->unnamed)
		unlink(a->tmp);
	a->unnamed = 0;
	free(a->tmp);
	free(a->path);
	a->tmp = a->path = NULL;
	errno = err;
}

int
writefile_atomic(const char *path, const void *p, size_t n, unsigned mode)
{
	struct atomic a;

	if (atomic_open(&a, path, mode) < 0)
		return -1;
	if (atomic_write(&a, p, n) < 0) {
		atomic_abort(&a);
		return -1;
	}
	return atomic_commit(&a);
}

int
writefile_ifchanged(const char *path, const void *p, size_t n, unsigned mode)
{
	struct buf old = {0};
	int same;

	if (readfile(path, &old, n + 1) == 0) {
		same = old.len == n && memcmp(old.s, p, n) == 0;
		buffree(&old);
		if (same)
			return 0;
	}
	buffree(&old);
	return writefile_atomic(path, p, n, mode) < 0 ? -1 : 1;
}
