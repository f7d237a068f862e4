/* the cache of interpreters' answers (see pycache.h) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "elffile.h"
#include "hash.h"
#include "os.h"
#include "pycache.h"

/* the cache folder's parent ($XDG_CACHE_HOME/kiln or ~/.cache/kiln), or NULL */
static char *
cachebase(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		return xasprintf("%s/kiln", xdg);
	if (home && home[0] == '/')
		return xasprintf("%s/.cache/kiln", home);
	return NULL;
}

/* 1 when the file at path starts with the ELF magic */
static int
iself(const char *path)
{
	unsigned char head[4];
	int fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return 0;
	r = read(fd, head, 4) == 4 && elf_is(head, 4);
	close(fd);
	return r;
}

/* the first 24 hex digits of the SHA-256 of text */
static char *
hexof(const struct buf *text)
{
	unsigned char d[32];
	struct buf hex = {0};

	sha256_buf(text->s, text->len, d);
	hexenc(&hex, d, 12);
	return bufdetach(&hex);
}

int
pycache_open(struct pycache *c, const char *abspath, const char *q)
{
	char real[PATH_MAX], lc[64] = "";
	struct buf t = {0};
	struct stat st;
	char *base, *h;
	size_t n;

	memset(c, 0, sizeof *c);
	if (!realpath(abspath, real) || stat(real, &st) < 0 || !S_ISREG(st.st_mode) || !iself(real))
		return -1;
	if (!(base = cachebase()))
		return -1;
	n = confstr(_CS_GNU_LIBC_VERSION, lc, sizeof lc);
	if (n == 0 || n > sizeof lc)
		lc[0] = 0;
	bufprintf(&t, "wheelpick-python-3\n%s\n%s", abspath, lc);
	h = hexof(&t);
	c->file = xasprintf("%s/wheelpick/python-%s", base, h);
	free(h);
	bufreset(&t);
	bufprintf(&t, "%s\n%llu %llu %lld %lld.%09ld %lld.%09ld\n%s", real,
	          (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (long long)st.st_size,
	          (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
	          st.st_ctim.tv_nsec, q);
	c->sig = hexof(&t);
	buffree(&t);
	free(base);
	return 0;
}

int
pycache_read(const struct pycache *c, struct buf *out)
{
	size_t n = strlen(c->sig);

	bufreset(out);
	if (readfile(c->file, out, 1 << 16) < 0 || !out->s)
		return -1;
	if (strncmp(out->s, "sig=", 4) || strncmp(out->s + 4, c->sig, n) || out->s[4 + n] != '\n') {
		bufreset(out);
		return -1;
	}
	return 0;
}

/* remove the files NAMEprefix* of dir whose line KEY=PATH names a path that is gone */
static void
prune(const char *dir, const char *prefix, const char *key)
{
	struct strv names = {0};
	struct buf text = {0};
	struct stat st;
	size_t i, kl = strlen(key);
	char *f, *p, *e;

	if (os_listdir(dir, &names) < 0)
		return;
	for (i = 0; i < names.n; i++) {
		if (!startswith(names.v[i], prefix))
			continue;
		f = xasprintf("%s/%s", dir, names.v[i]);
		bufreset(&text);
		if (readfile(f, &text, 1 << 16) == 0 && text.s) {
			for (p = text.s; p && *p; p = e ? e + 1 : NULL) {
				e = strchr(p, '\n');
				if (e)
					*e = 0;
				if (!strncmp(p, key, kl) && p[kl] == '=' && p[kl + 1] == '/' &&
				    lstat(p + kl + 1, &st) < 0 && errno == ENOENT) {
					unlink(f);
					break;
				}
			}
		}
		free(f);
	}
	buffree(&text);
	strv_free(&names);
}

void
pycache_write(const struct pycache *c, const char *abspath, const struct buf *answer)
{
	struct buf t = {0};
	char *dir = xstrdup(c->file), *slash = strrchr(dir, '/');

	bufprintf(&t, "sig=%s\npath=%s\n", c->sig, abspath);
	bufadd(&t, answer->s, answer->len);
	os_mkparents(c->file, 0755); /* errors are left to the write that follows */
	writefile_atomic(c->file, t.s, t.len, 0644);
	buffree(&t);
	*slash = 0;
	prune(dir, "python-", "path");
	if ((slash = strrchr(dir, '/'))) {
		*slash = 0;
		prune(dir, "wheelpick-python-", "executable");
	}
	free(dir);
}

void
pycache_free(struct pycache *c)
{
	free(c->file);
	free(c->sig);
	memset(c, 0, sizeof *c);
}
