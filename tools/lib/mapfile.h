/* read-only memory maps of whole files */
#ifndef KILN_MAPFILE_H
#define KILN_MAPFILE_H

#include <stddef.h>

/* a mapped file; p is NULL for an empty file */
struct mapfile {
	const unsigned char *p;
	size_t n;
};

/* map path read-only; returns 0, or -1 with errno set (EISDIR for folders, EINVAL for FIFOs, devices,
   sockets; a FIFO never blocks the open) */
int map_open(struct mapfile *m, const char *path);
/* map the regular file open on fd read-only (the fd may be closed after); returns 0,
   or -1 with errno set (EISDIR for folders, EINVAL for other non-regular files) */
int map_fd(struct mapfile *m, int fd);
/* unmap; safe on a zeroed struct */
void map_close(struct mapfile *m);

#endif
