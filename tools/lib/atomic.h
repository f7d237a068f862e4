/* atomic file output: temp file in the target's folder, fsync, rename */
#ifndef KILN_ATOMIC_H
#define KILN_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

/* an output file being written; nothing appears at path until atomic_commit */
struct atomic {
	char *path;   /* final path */
	char *tmp;    /* temp path in the same folder */
	int fd;       /* open for writing */
	int unnamed;  /* fd is an O_TMPFILE file: tmp does not exist until commit */
};

/* create a temp file beside path with the given mode; returns 0, or -1 with errno set */
int atomic_open(struct atomic *a, const char *path, unsigned mode);
/* write all n bytes; returns 0, or -1 with errno set (e.g. ENOSPC) */
int atomic_write(struct atomic *a, const void *p, size_t n);
/* fsync, rename over path and fsync the folder; returns 0, or -1 with errno set
   (the temp file is removed on failure) */
int atomic_commit(struct atomic *a);
/* remove the temp file and release; safe after a failed commit or on an unused struct */
void atomic_abort(struct atomic *a);

/* write the whole file atomically; returns 0, or -1 with errno set */
int writefile_atomic(const char *path, const void *p, size_t n, unsigned mode);
/* write the file atomically only if its content differs (mtime kept otherwise);
   returns 1 if written, 0 if unchanged, -1 with errno set on error */
int writefile_ifchanged(const char *path, const void *p, size_t n, unsigned mode);

/* write n bytes to fd, retrying short writes and EINTR; returns 0 or -1 */
int writeall(int fd, const void *p, size_t n);

#endif
