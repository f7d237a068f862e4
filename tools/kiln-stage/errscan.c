/* the error that matters in a failed stage's log: the first line a compiler, CMake,
   Python or the linker wrote as an error, not the last lines (for CMake and compiler
   failures those are the build tool's own "subcommand failed" and pip's wrappers) */
#include "errscan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

#define LINEMAX 4096

/* s[0..n) holds the text w */
static int
has(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w), i;

	for (i = 0; i + k <= n; i++)
		if (s[i] == w[0] && memcmp(s + i, w, k) == 0)
			return 1;
	return 0;
}

/* what pip and setuptools say after the real error: not it */
static const char *const wrappers[] = {
	"error: subprocess-exited-with-error", "error: metadata-generation-failed",
	"error: legacy-install-failure", "error: command '", "error: Failed to build",
};

const char *
errkind(const char *s, size_t n)
{
	size_t i;

	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	if (n >= 11 && memcmp(s, "CMake Error", 11) == 0)
		return "CMake";
	if (n >= 34 && memcmp(s, "Traceback (most recent call last):", 34) == 0)
		return "Python";
	if (has(s, n, "undefined reference to"))
		return "linker";
	if (has(s, n, ": error:") || has(s, n, ": fatal error:") || has(s, n, "): error"))
		return "compiler";
	if (n >= 7 && memcmp(s, "error: ", 7) == 0) {
		for (i = 0; i < sizeof wrappers / sizeof *wrappers; i++)
			if (n >= strlen(wrappers[i]) && memcmp(s, wrappers[i], strlen(wrappers[i])) == 0)
				return NULL;
		return "compiler";
	}
	return NULL;
}

/* the indentation of a line */
static size_t
indent(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* inside a traceback that started at indentation tb: is this its exception line? */
static int
tbend(const char *s, size_t n, size_t tb)
{
	size_t k = indent(s, n);

	if (k >= n || k > tb)
		return 0;
	s += k, n -= k;
	return !(n >= 5 && memcmp(s, "File ", 5) == 0) && !(n >= 9 && memcmp(s, "Traceback", 9) == 0) &&
	       !(n >= 6 && memcmp(s, "During", 6) == 0) && !(n >= 9 && memcmp(s, "The above", 9) == 0);
}

/* one line of the log (its first LINEMAX bytes); 1 when the scan is done */
static int
scanline(struct errfound *e, const char *s, size_t n, long no, size_t *tb)
{
	const char *k;
	struct buf b = {0};

	if (e->kind) {
		/* the traceback's exception line */
		if (tbend(s, n, *tb)) {
			safeadd(&b, s, n, 300);
			e->last = bufdetach(&b);
			e->lastline = no;
			return 1;
		}
		return 0;
	}
	if (!(k = errkind(s, n)))
		return 0;
	e->kind = k;
	e->line = no;
	safeadd(&b, s, n, 300);
	e->text = bufdetach(&b);
	*tb = indent(s, n);
	return strcmp(k, "Python") != 0;
}

int
errscan(const char *path, struct errfound *e)
{
	char chunk[65536], *nl, *s;
	struct buf line = {0};
	size_t tb = 0, len;
	long no = 0;
	ssize_t n;
	int fd, done = 0;

	memset(e, 0, sizeof *e);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return -1;
	while (!done && (n = read(fd, chunk, sizeof chunk)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (s = chunk; !done && s < chunk + n; s = nl + 1) {
			nl = memchr(s, '\n', (size_t)(chunk + n - s));
			len = nl ? (size_t)(nl - s) : (size_t)(chunk + n - s);
			if (line.len < LINEMAX)
				bufadd(&line, s, len < LINEMAX - line.len ? len : LINEMAX - line.len);
			if (!nl)
				break;
			done = scanline(e, line.s ? line.s : "", line.len, ++no, &tb);
			bufreset(&line);
		}
	}
	if (!done && line.len)
		scanline(e, line.s, line.len, ++no, &tb);
	close(fd);
	buffree(&line);
	return e->kind != NULL;
}

void
errfound_free(struct errfound *e)
{
	free(e->text);
	free(e->last);
	memset(e, 0, sizeof *e);
}

void
failsummary(FILE *f, const char *stage, const char *logpath, int n)
{
	struct errfound e;
	struct buf t = {0}, safe = {0};
	const char *s, *nl;

	if (errscan(logpath, &e) == 1) {
		fprintf(f, "kiln: %s: first error (%s), line %ld of %s:\n  %s\n", stage, e.kind, e.line,
		        logpath, e.text);
		if (e.last)
			fprintf(f, "  ... line %ld: %s\n", e.lastline, e.last);
	} else {
		fprintf(f, "kiln: %s: no compiler, CMake, Python or linker error recognised in the log\n",
		        stage);
	}
	errfound_free(&e);
	fprintf(f, "kiln: %s: last %d lines of %s:\n", stage, n, logpath);
	tailfile(logpath, n, "", &t);
	for (s = t.s; s && s < t.s + t.len; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(t.s + t.len - s));
		if (!nl)
			nl = t.s + t.len;
		safeadd(&safe, s, (size_t)(nl - s), 400);
		bufputc(&safe, '\n');
	}
	if (safe.len)
		fwrite(safe.s, 1, safe.len, f);
	buffree(&t);
	buffree(&safe);
	fprintf(f, "kiln: %s failed; full log: %s\n", stage, logpath);
}
