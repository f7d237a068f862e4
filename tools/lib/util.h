/* kiln shared utilities: errors, allocation, growable strings. */
#ifndef KILN_UTIL_H
#define KILN_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* exit codes every tool documents */
enum { EXIT_OK = 0, EXIT_PROBLEM = 1, EXIT_USAGE = 2 };

/* program name used as the prefix of every message; set once by setprogname */
extern const char *argv0;
/* remember the program's name (basename of argv[0]) for messages */
void setprogname(const char *arg0);

/* print "prog: msg" to stderr and exit 2; a trailing ':' in fmt appends strerror(errno) */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* like die, but exit with the given status */
void dien(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* print "prog: msg" to stderr and return; a trailing ':' appends strerror(errno) */
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* vwarn: the va_list form of warn */
void vwarn(const char *fmt, va_list ap);

/* allocators that never return NULL: they die on failure */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
/* grow-by-doubling array realloc: returns p resized to hold at least need items of size */
void *xgrow(void *p, size_t *cap, size_t need, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a fresh allocation */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* the library error convention (HACKING.md): when err is not NULL, set *err to a fresh
   formatted message, which the caller frees; returns -1 with errno unchanged */
int seterr(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* growable byte string; always NUL-terminated once anything was added */
struct buf {
	char *s;
	size_t len, cap;
};
/* append n bytes */
void bufadd(struct buf *b, const void *p, size_t n);
/* append a NUL-terminated string */
void bufputs(struct buf *b, const char *s);
/* append one byte */
void bufputc(struct buf *b, int c);
/* append formatted text */
void bufprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* the va_list form of bufprintf */
void bufvprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* make len 0 (keeps the allocation) */
void bufreset(struct buf *b);
/* drop the bytes of set (" \t\r\n": trailing white space) from the end of b */
void bufrtrim(struct buf *b, const char *set);
/* the same for the string s, in place; returns s */
char *strrtrim(char *s, const char *set);
/* release the memory and zero the struct */
void buffree(struct buf *b);
/* take ownership of the string (never NULL); the buf is left empty */
char *bufdetach(struct buf *b);

/* ASCII digit / letter-or-digit tests that ignore the locale (names and versions in
   wheel files are ASCII rules, whatever LC_CTYPE says) */
static inline int isdig(int c) { return c >= '0' && c <= '9'; }
static inline int isalnumc(int c) { return isdig(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* true if s starts with prefix / ends with suffix */
int startswith(const char *s, const char *prefix);
int endswith(const char *s, const char *suffix);

/* read a whole file (at most max bytes, 0 = no limit) into a fresh buffer;
   returns 0, or -1 with errno set (EFBIG when over max) */
int readfile(const char *path, struct buf *out, size_t max);
/* read what is left of fd into out (replacing its content) the same way; the fd stays
   open */
int readfd(int fd, struct buf *out, size_t max);

/* append the last n lines of the file at path to b, each line prefixed with pfx and
   ending in a newline; reads at most the file's last 256 KiB (a build log can be huge).
   Appends nothing when the file is missing or empty. */
void tailfile(const char *path, int n, const char *pfx, struct buf *b);

/* append s to b quoted for a POSIX shell ('...' with ' escaped), so it survives copy-paste */
void shquote(struct buf *b, const char *s);

#endif
