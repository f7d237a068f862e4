/* the digest lock of SDK downloads (trust on first use). AMD publishes no sha256 for
   TheRock's tarballs, so a tarball pinned by URL alone is trusted the first time it is
   fetched and held to that digest afterwards. The lock file is text, one line per URL:
       SHA256 URL
   (64 lowercase hex digits, one space, the URL as pinned); '#' lines are comments */
#include "sdklock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "hash.h"
#include "opt.h"
#include "os.h"
#include "util.h"

/* the lock file is small: a line per pinned URL */
#define LOCK_MAX (1u << 20)

/* read the lock file into b (empty when it does not exist); -1 with *err */
static int
lockread(const char *lock, struct buf *b, char **err)
{
	char *e = NULL;

	if (os_readreg(lock, 0, b, LOCK_MAX, &e) == 0)
		return 0;
	if (errno == ENOENT) {
		free(e);
		bufreset(b);
		return 0;
	}
	*err = e;
	return -1;
}

/* what a walk over a lock file does with each entry: f(sha, url, line, n, arg) */
struct lockvisit {
	int (*f)(const char *sha, const char *url, const char *line, size_t n, void *arg);
	void *arg;
};

/* walk the lines of text: for each entry call v->f(sha, url, line, n, v->arg); a line
   that is not an entry or a comment is an error naming lock:line. Returns f's first
   nonzero, else 0 */
static int
lockwalk(const char *lock, const char *text, size_t len, const struct lockvisit *v, char **err)
{
	const char *p = text, *end = text + len, *nl;
	int lineno = 0, r;

	while (p < end) {
		size_t n;
		lineno++;
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n && p[0] != '#') {
			if (n < 66 || p[64] != ' ' || !ishexn(p, 64) || memchr(p, '\0', n)) {
				*err = xasprintf("%s:%d: not a lock line (SHA256 URL: 64 lowercase hex "
				                 "digits, a space, the URL)", lock, lineno);
				return -1;
			}
			if ((r = v->f(p, p + 65, p, n, v->arg)) != 0)
				return r;
		}
		p += n + (nl != NULL);
	}
	return 0;
}

struct find {
	const char *url;
	char *hex;
	int found;
};

/* note url's digest; the walk goes on, so that a malformed line anywhere is an error */
static int
findone(const char *sha, const char *url, const char *line, size_t n, void *arg)
{
	struct find *fd = arg;
	size_t ul = n - 65;

	(void)line;
	if (strlen(fd->url) != ul || memcmp(url, fd->url, ul))
		return 0;
	memcpy(fd->hex, sha, 64);
	fd->hex[64] = '\0';
	fd->found = 1;
	return 0;
}

int
sdklock_get(const char *lock, const char *url, char hex[65], char **err)
{
	struct buf b = {0};
	struct find fd = {url, hex, 0};
	int r;

	if (lockread(lock, &b, err) < 0)
		return -1;
	r = lockwalk(lock, b.s ? b.s : "", b.len, &(struct lockvisit){findone, &fd}, err);
	buffree(&b);
	return r < 0 ? -1 : fd.found;
}

struct keep {
	const char *url;
	struct buf *out;
};

/* copy every entry but url's */
static int
keepother(const char *sha, const char *url, const char *line, size_t n, void *arg)
{
	struct keep *k = arg;
	size_t ul = n - 65;

	(void)sha;
	if (strlen(k->url) == ul && !memcmp(url, k->url, ul))
		return 0;
	bufprintf(k->out, "%.*s\n", (int)n, line);
	return 0;
}

int
sdklock_put(const char *lock, const char *url, const char *hex, char **err)
{
	struct buf b = {0}, out = {0};
	struct keep k = {url, &out};
	int r = -1;

	if (strlen(hex) != 64 || !ishexn(hex, 64) || !*url || strchr(url, '\n')) {
		*err = xasprintf("%s: cannot lock '%s' at '%s'", lock, url, hex);
		return -1;
	}
	if (lockread(lock, &b, err) < 0)
		return -1;
	bufputs(&out, "# kiln: sha256 of each ROCm SDK download, locked the first time it was "
	              "fetched (trust on first use)\n");
	if (lockwalk(lock, b.s ? b.s : "", b.len, &(struct lockvisit){keepother, &k}, err) < 0)
		goto out;
	bufprintf(&out, "%s %s\n", hex, url);
	if (os_mkparents(lock, 0755) < 0 || writefile_ifchanged(lock, out.s, out.len, 0644) < 0) {
		*err = xasprintf("%s: %s", lock, strerror(errno));
		goto out;
	}
	r = 0;
out:
	buffree(&b);
	buffree(&out);
	return r;
}

int
sdklock_check(const char *lock, const char *url, const char *got, char **err)
{
	char hex[65];
	int r = sdklock_get(lock, url, hex, err);

	if (r < 0)
		return -1;
	if (r == 1) {
		if (!strcmp(hex, got))
			return 0;
		*err = xasprintf("%s: sha256 is %s, but %s locked it at %s the first time it was "
		                 "fetched: the tarball changed since (if that is expected, delete its "
		                 "line from %s, or pin it: --pin rocm=URL#sha256=HEX)", url, got, lock,
		                 hex, lock);
		return 1;
	}
	if (sdklock_put(lock, url, got, err) < 0)
		return -1;
	fprintf(stderr, "kiln: %s: sha256 %s locked in %s (trust on first use: every later "
	        "build verifies it; to pin it: --pin rocm=URL#sha256=%s)\n", url, got, lock, got);
	return 0;
}

static void
lockusage(const char *error)
{
	opt_usage(error, "usage: kiln-stage sdklock LOCK URL [FILE | --sha256=HEX]\n");
}

/* check (trust on first use) the digest hex got of url: 0, or exit 1 / 2 with the reason */
static void
lockcheck(const char *lock, const char *url, const char *hex)
{
	char *err = NULL;
	int r = sdklock_check(lock, url, hex, &err);

	if (r < 0)
		dien(EXIT_USAGE, "%s", err);
	if (r > 0)
		dien(EXIT_PROBLEM, "%s", err);
}

int
sdklock_main(int argc, char **argv)
{
	unsigned char dg[32];
	struct buf h = {0};
	char hex[65], *err = NULL;
	int r;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		lockusage(NULL);
	if (argc < 3 || argc > 4)
		lockusage("sdklock: give LOCK, URL and optionally FILE");
	if (argc == 3) {
		r = sdklock_get(argv[1], argv[2], hex, &err);
		if (r < 0)
			dien(EXIT_USAGE, "%s", err);
		if (r == 1)
			printf("%s\n", hex);
		return EXIT_OK;
	}
	/* --sha256=HEX: a digest known already (a wheel's, from its index) */
	if (startswith(argv[3], "--sha256=")) {
		if (strlen(argv[3] + 9) != 64 || !ishexn(argv[3] + 9, 64))
			dien(EXIT_USAGE, "%s: %s is not a sha256 (64 lowercase hex digits)", argv[2], argv[3]);
		bufputs(&h, argv[3] + 9);
	} else {
		if (sha256_file(argv[3], dg, NULL) < 0)
			dien(EXIT_PROBLEM, "%s:", argv[3]);
		hexenc(&h, dg, sizeof dg);
	}
	lockcheck(argv[1], argv[2], h.s);
	printf("%s\n", h.s);
	buffree(&h);
	return EXIT_OK;
}
