/* errors, checked allocation, growable strings */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *argv0 = "kiln";

void
setprogname(const char *arg0)
{
	const char *p;

	if (!arg0)
		return;
	p = strrchr(arg0, '/');
	argv0 = p ? p + 1 : arg0;
}

void
vwarn(const char *fmt, va_list ap)
{
	size_t n = strlen(fmt);
	int err = errno;

	fprintf(stderr, "%s: ", argv0);
	vfprintf(stderr, fmt, ap);
	if (n && fmt[n - 1] == ':')
		fprintf(stderr, " %s", strerror(err));
	fputc('\n', stderr);
}

void
warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

void
dien(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		die("out of memory allocating %zu x %zu bytes", nmemb, size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *
xgrow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 8;

	if (need <= *cap)
		return p;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			die("out of memory: %zu items", need);
		n *= 2;
	}
	if (size && n > SIZE_MAX / size)
		die("out of memory: %zu items of %zu bytes", n, size);
	*cap = n;
	return xrealloc(p, n * size);
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;

	va_start(ap, fmt);
	bufvprintf(&b, fmt, ap);
	va_end(ap);
	return bufdetach(&b);
}

int
seterr(char **err, const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;
	int e = errno;

	if (!err)
		return -1;
	va_start(ap, fmt);
	bufvprintf(&b, fmt, ap);
	va_end(ap);
	*err = bufdetach(&b);
	errno = e;
	return -1;
}

void
bufadd(struct buf *b, const void *p, size_t n)
{
	if (n > SIZE_MAX - b->len - 1)
		die("out of memory: string too long");
	b->s = xgrow(b->s, &b->cap, b->len + n + 1, 1);
	if (n)
		memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = 0;
}

void
bufputs(struct buf *b, const char *s)
{
	bufadd(b, s, strlen(s));
}

void
bufputc(struct buf *b, int c)
{
	char ch = (char)c;

	bufadd(b, &ch, 1);
}

void
bufvprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		die("bufprintf: bad format");
	b->s = xgrow(b->s, &b->cap, b->len + (size_t)n + 1, 1);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
bufprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bufvprintf(b, fmt, ap);
	va_end(ap);
}

void
bufrtrim(struct buf *b, const char *set)
{
	while (b->len && b->s[b->len - 1] && strchr(set, b->s[b->len - 1]))
		b->s[--b->len] = 0;
}

char *
strrtrim(char *s, const char *set)
{
	size_t k = strlen(s);

	while (k && strchr(set, s[k - 1]))
		s[--k] = 0;
	return s;
}

void
bufreset(struct buf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = 0;
}

void
buffree(struct buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

char *
bufdetach(struct buf *b)
{
	char *s = b->s ? b->s : xstrdup("");

	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

int
startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int
endswith(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int
readfd(int fd, struct buf *out, size_t max)
{
	char tmp[65536];
	ssize_t n;

	bufreset(out);
	for (;;) {
		n = read(fd, tmp, sizeof tmp);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		if (max && out->len + (size_t)n > max) {
			errno = EFBIG;
			return -1;
		}
		bufadd(out, tmp, (size_t)n);
	}
	if (!out->s)
		bufadd(out, "", 0);
	return 0;
}

int
readfile(const char *path, struct buf *out, size_t max)
{
	int fd, err;

	bufreset(out);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (readfd(fd, out, max) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	close(fd);
	return 0;
}

void
tailfile(const char *path, int n, const char *pfx, struct buf *b)
{
	char *tail;
	size_t i, start, len;
	off_t size, from;
	ssize_t got;
	int fd, seen = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	from = size > (off_t)256 * 1024 ? size - (off_t)256 * 1024 : 0;
	if (size <= 0) {
		close(fd);
		return;
	}
	tail = xmalloc((size_t)(size - from));
	got = pread(fd, tail, (size_t)(size - from), from);
	close(fd);
	len = got > 0 ? (size_t)got : 0;
	i = len;
	if (i && tail[i - 1] == '\n')
		i--;
	while (i > 0) {
		if (tail[i - 1] == '\n' && ++seen == n)
			break;
		i--;
	}
	for (start = i; start < len;) {
		char *nl = memchr(tail + start, '\n', len - start);
		size_t e = nl ? (size_t)(nl - tail) : len;

		bufputs(b, pfx);
		bufadd(b, tail + start, e - start);
		bufputc(b, '\n');
		start = e + 1;
	}
	free(tail);
}

void
shquote(struct buf *b, const char *s)
{
	bufputc(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			bufputs(b, "'\\''");
		else
			bufputc(b, *s);
	}
	bufputc(b, '\'');
}
