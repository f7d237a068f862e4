/* running a child process and capturing what it prints */
#ifndef KILN_PROC_H
#define KILN_PROC_H

#include "util.h"

/* what a finished child did */
struct procres {
	int status;     /* exit status, or 128+signal */
	int timedout;   /* killed after the timeout */
	int notfound;   /* could not be started (errno in err) */
	int err;
};

/* Run argv (PATH searched) with envp (NULL = current environment), stdin from
   /dev/null, stdout captured into out (at most max bytes, 0 = 64 MiB) and stderr into
   errout (or inherited when errout is NULL). Kills the child after timeout_ms
   (0 = none). Returns 0 if it ran (see res), -1 with errno set if it could not. */
int proc_capture(char *const argv[], char *const envp[], struct buf *out, struct buf *errout,
                 size_t max, int timeout_ms, struct procres *res);

/* Run argv (PATH searched) in folder cwd (NULL: here) with envp (NULL = this
   environment), stdin from /dev/null, stdout and stderr both written to the open file
   fd (a log). After each chunk of output, tick (may be NULL) gets the number of lines
   written so far and arg. Returns the exit status (128+signal when killed), 127 if
   argv[0] could not be started or cwd entered (said on fd), -1 with errno set if no
   child could be made. */
int proc_tofd(char *const argv[], char *const envp[], const char *cwd, int fd,
              void (*tick)(unsigned long lines, void *arg), void *arg);

#endif
