/* the operating-system layer the tools share: folders, paths, programs on PATH, and
   opening files that came from someone else without hanging or following links */
#ifndef KILN_OS_H
#define KILN_OS_H

#include <stddef.h>
#include <sys/stat.h>

#include "strv.h"
#include "util.h"

/* true if path is a folder / a regular file (links followed) */
int os_isdir(const char *path);
int os_isfile(const char *path);

/* mkdir -p path with mode (before the umask); returns 0, or -1 with errno set.
   A part of the path that exists and is not a folder fails with ENOTDIR. */
int os_mkdirs(const char *path, unsigned mode);
/* os_mkdirs of the folder holding file (nothing when file has no '/') */
int os_mkparents(const char *file, unsigned mode);

/* The absolute form of path, lexically: joined to cwd (NULL: the current folder) when
   relative, then "." and empty parts dropped and each ".." removing the part before it
   (never above "/"). Links are not resolved (realpath(3) does that); the path need not
   exist. Always a fresh string starting with '/', without a trailing '/' (but "/"). */
char *os_abspath(const char *path, const char *cwd);

/* The program a shell would run for name: name itself when it holds a '/' (and exists), else the
   first PATH entry (path; NULL: $PATH, or OS_DEFPATH when unset)
   holding an executable regular file of that name; an empty entry is cwd (NULL: ".").
   Returns a fresh path, or NULL with errno ENOENT (none) or EACCES (only files that are
   not executable). */
#define OS_DEFPATH "/usr/local/bin:/usr/bin:/bin"
char *os_findprog(const char *name, const char *path, const char *cwd);

/* rm -rf path without following links: a symlink or file is unlinked, a folder emptied
   depth first and removed; a missing path is fine. Keeps going past what it cannot
   remove; returns 0, or -1 with errno of the first failure. */
int os_rmtree(const char *path);

/* the names in folder dir except "." and "..", sorted (strcmp), appended to out;
   returns 0, or -1 with errno set */
int os_listdir(const char *dir, struct strv *out);

/* "a FIFO", "a folder", "a symbolic link", "a socket", "a character device", "a block
   device", "a regular file", for what is wrong with an input */
const char *os_ftype(unsigned mode);

/* Open path read-only as an input that may be hostile: O_NONBLOCK (a FIFO cannot hang
   the open), O_NOCTTY, O_CLOEXEC and the extra flags (O_NOFOLLOW to refuse a final
   symlink), then fstat: anything but a regular file is refused. The fd is returned in
   blocking mode, its stat in *st (may be NULL). Returns the fd, or -1 with errno set and
   "PATH: is a FIFO, not a regular file" (a folder: "PATH: Is a directory", errno
   EISDIR; others EINVAL; else "PATH: strerror") in err. */
int os_openreg(const char *path, int flags, struct stat *st, char **err);
/* os_openreg + read the whole file (at most max bytes, 0 = no limit) into out;
   returns 0, or -1 with errno set and the message in err ("PATH: over N bytes" for
   EFBIG) */
int os_readreg(const char *path, int flags, struct buf *out, size_t max, char **err);

/* Make sure dir is a folder of its own: create it (mode 0755) when missing, then lstat
   it; a symlink or anything not a folder is refused. Returns 0, or -1 with errno set
   and "DIR: is a symbolic link; state folders are never followed" (or strerror) in
   err. */
int os_owndir(const char *dir, char **err);
/* Create or open a file for writing in a folder os_owndir checked: O_WRONLY |
   O_CREAT | O_NOFOLLOW | O_CLOEXEC | flags (O_TRUNC, O_APPEND, O_RDWR instead of
   O_WRONLY...), then fstat: a symlink (ELOOP) or anything but a regular file is refused.
   Returns the fd, or -1 with errno set and the message in err. */
int os_createreg(const char *path, int flags, unsigned mode, char **err);

#endif
