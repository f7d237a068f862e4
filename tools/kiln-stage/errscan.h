/* the error that matters in a failed stage's log */
#ifndef KILN_ERRSCAN_H
#define KILN_ERRSCAN_H

#include <stdio.h>

/* the first real error of a log */
struct errfound {
	const char *kind;   /* "compiler", "CMake", "Python", "linker"; NULL: none found */
	long line;          /* its line number in the log (from 1) */
	char *text;         /* the line, made safe for a terminal or a file */
	long lastline;      /* a Python traceback: the line of its exception (0: not seen) */
	char *last;         /* and that line */
};

/* The kind of error the line s[0..n) reports, or NULL: a compiler's "FILE:L:C: error:"
   (nvcc's "FILE(L): error"), "CMake Error", "Traceback (most recent call last):", a
   linker's "undefined reference to"; pip's and setuptools' wrappers ("error:
   subprocess-exited-with-error", "error: command '...' failed") are not the error. */
const char *errkind(const char *s, size_t n);
/* Find the first real error of the log at path. Lines are read at most 4 KiB each (a
   longer one is judged by its start), any bytes. Returns 1 found, 0 none, -1 with errno
   when the log cannot be read. */
int errscan(const char *path, struct errfound *e);
/* release what errscan found */
void errfound_free(struct errfound *e);
/* A failed stage's summary on f, after its first line: the first error with its line
   number (or that none was recognised), the last n lines of the log made safe, the
   log's path. */
void failsummary(FILE *f, const char *stage, const char *logpath, int n);

#endif
