/* read-only memory maps of whole files */
#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int
map_fd(struct mapfile *m, int fd)
{
	struct stat st;
	void *p;

	m->p = NULL;
	m->n = 0;
	if (fstat(fd, &st) < 0)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if (st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			return -1;
		m->p = p;
		m->n = (size_t)st.st_size;
	}
	return 0;
}

int
map_open(struct mapfile *m, const char *path)
{
	struct stat st;
	void *p;
	int fd, err;

	m->p = NULL;
	m->n = 0;
	/* O_NONBLOCK: a FIFO opens at once (and is refused below) instead of hanging */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		goto fail;
	}
	if (st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			goto fail;
		m->p = p;
		m->n = (size_t)st.st_size;
	}
	close(fd);
	return 0;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

void
map_close(struct mapfile *m)
{
	if (m->p)
		munmap((void *)m->p, m->n);
	m->p = NULL;
	m->n = 0;
}
