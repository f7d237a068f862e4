/* a pinned SDK tarball (ROCm, TheRock's dist layout): fetch downloads it with libcurl,
   resuming a partial download, and checks its sha256; unpack extracts it with libarchive
   into a temporary folder beside the target, refusing members that would leave it, and
   renames it into place last, so a half-extracted SDK is never used */
#include "sdk.h"

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "hash.h"
#include "opt.h"
#include "os.h"
#include "sdklock.h"
#include "strv.h"
#include "tartree.h"
#include "util.h"

static void
sdkusage(const char *error)
{
	opt_usage(error,
	          "usage: kiln-stage fetch URL --sha256=HEX|--lock=LOCK -o FILE [--max-size=BYTES]\n"
	          "                        [--max-time=SECONDS]\n"
	          "       kiln-stage unpack TARBALL --into=DIR [--sha256=HEX] [--layout=rocm]\n"
	          "                         [--max-size=BYTES]\n");
}

/* is s 64 lowercase hex digits */
static int
ishex64(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

static char *
hexof(const unsigned char d[32])
{
	struct buf h = {0};

	hexenc(&h, d, 32);
	return bufdetach(&h);
}

/* --- fetch ------------------------------------------------------------------------- */

/* defaults: a ROCm SDK tarball is 1 to 4 GB; a fetch that needs more than 4 hours or
   32 GiB is a server that misbehaves */
#define FETCH_MAXTIME 14400L
#define FETCH_MAXSIZE ((uint64_t)32 << 30)

struct dl {
	CURL *curl;
	int fd;
	uint64_t start;   /* bytes in FILE.part when this attempt began */
	uint64_t have;    /* bytes in FILE.part now */
	uint64_t max;     /* --max-size */
	int maxset;
	int over;         /* the body passed max */
	long long said;   /* the Content-Length of the last response, -1 none */
	long maxtime;     /* --max-time, seconds */
	time_t deadline;
	int term;         /* stderr is a terminal: a progress line */
	time_t shown;
	const char *url;
};

static size_t
onwrite(char *p, size_t sz, size_t n, void *u)
{
	struct dl *d = u;

	if ((uint64_t)(sz * n) > d->max - d->have) {
		d->over = 1;
		return 0;
	}
	if (writeall(d->fd, p, sz * n) < 0)
		return 0;
	d->have += sz * n;
	return sz * n;
}

/* the Content-Length a response announces (a new status line forgets the last one) */
static size_t
onheader(char *p, size_t sz, size_t n, void *u)
{
	struct dl *d = u;
	size_t len = sz * n;
	char num[32];

	if (len > 5 && !strncmp(p, "HTTP/", 5))
		d->said = -1;
	else if (len > 15 && len < 15 + sizeof num && !strncasecmp(p, "content-length:", 15)) {
		memcpy(num, p + 15, len - 15);
		num[len - 15] = 0;
		d->said = strtoll(num, NULL, 10);
	}
	return len;
}

static int
onprogress(void *u, curl_off_t total, curl_off_t now, curl_off_t ut, curl_off_t un)
{
	struct dl *d = u;
	time_t t = time(NULL);

	(void)ut;
	(void)un;
	if (!d->term || t == d->shown)
		return 0;
	d->shown = t;
	if (total > 0)
		fprintf(stderr, "\rkiln-stage: fetching %s: %.1f of %.1f MiB", d->url,
		        (double)(d->start + (uint64_t)now) / 1048576.0,
		        (double)(d->start + (uint64_t)total) / 1048576.0);
	else
		fprintf(stderr, "\rkiln-stage: fetching %s: %.1f MiB", d->url,
		        (double)(d->start + (uint64_t)now) / 1048576.0);
	return 0;
}

/* the options of one attempt: only http, https, ftp and file (redirects: not file),
   the deadline's rest, the size cap, credentials from ~/.netrc ($NETRC) and
   KILN_FETCH_TOKEN (a bearer token; libcurl sends neither to another host) */
static void
setopts(struct dl *d, const char *url, long left)
{
	const char *tok = getenv("KILN_FETCH_TOKEN"), *netrc = getenv("NETRC");

	curl_easy_reset(d->curl);
	curl_easy_setopt(d->curl, CURLOPT_URL, url);
	curl_easy_setopt(d->curl, CURLOPT_PROTOCOLS_STR, "http,https,ftp,file");
	curl_easy_setopt(d->curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https,ftp");
	curl_easy_setopt(d->curl, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(d->curl, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(d->curl, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(d->curl, CURLOPT_WRITEFUNCTION, onwrite);
	curl_easy_setopt(d->curl, CURLOPT_WRITEDATA, d);
	curl_easy_setopt(d->curl, CURLOPT_HEADERFUNCTION, onheader);
	curl_easy_setopt(d->curl, CURLOPT_HEADERDATA, d);
	curl_easy_setopt(d->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(d->curl, CURLOPT_XFERINFOFUNCTION, onprogress);
	curl_easy_setopt(d->curl, CURLOPT_XFERINFODATA, d);
	curl_easy_setopt(d->curl, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)d->start);
	curl_easy_setopt(d->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(d->max - d->start));
	curl_easy_setopt(d->curl, CURLOPT_CONNECTTIMEOUT, left < 30 ? left : 30L);
	curl_easy_setopt(d->curl, CURLOPT_TIMEOUT, left);
	/* a stalled server: under 1 KiB/s for 60 s ends the attempt (it is resumed) */
	curl_easy_setopt(d->curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(d->curl, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(d->curl, CURLOPT_USERAGENT, "kiln-stage");
	curl_easy_setopt(d->curl, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
	if (netrc && *netrc)
		curl_easy_setopt(d->curl, CURLOPT_NETRC_FILE, netrc);
	if (tok && *tok) {
		curl_easy_setopt(d->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
		curl_easy_setopt(d->curl, CURLOPT_XOAUTH2_BEARER, tok);
	}
}

/* one attempt: append to FILE.part from where it stops. Returns the curl code */
static CURLcode
attempt(struct dl *d, const char *url, long *code)
{
	CURLcode rc;
	struct stat st;
	long left = (long)(d->deadline - time(NULL));

	if (left <= 0)
		return CURLE_OPERATION_TIMEDOUT;
	if (fstat(d->fd, &st) < 0 || lseek(d->fd, 0, SEEK_END) < 0)
		return CURLE_WRITE_ERROR;
	d->start = d->have = (uint64_t)st.st_size;
	setopts(d, url, left);
	rc = curl_easy_perform(d->curl);
	*code = 0;
	curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, code);
	if (d->term && d->shown)
		fputc('\n', stderr);
	d->shown = 0;
	return rc;
}

/* the part thrown away: the next attempt starts from zero */
static void
restart(struct dl *d, const char *part)
{
	if (ftruncate(d->fd, 0) < 0 || lseek(d->fd, 0, SEEK_SET) < 0)
		dien(EXIT_PROBLEM, "%s:", part);
	d->have = d->start = 0;
}

/* a fetch that passed --max-size: the part goes, one line says by how much */
static void __attribute__((noreturn))
toobig(struct dl *d, const char *part)
{
	char *said = NULL;

	if (d->said > 0)
		said = xasprintf("; the server announces %lld bytes", d->said);
	unlink(part);
	dien(EXIT_PROBLEM, "%s: more than --max-size=%llu bytes%s%s; the part is removed", d->url,
	     (unsigned long long)d->max, d->maxset ? "" : " (the default, 32 GiB)", said ? said : "");
}

/* the attempts of one run, resumed while each one got further; dies with one line */
static void
download(struct dl *d, const char *part)
{
	CURLcode rc = CURLE_OK;
	long code = 0;
	int tries, n;
	const char *te = getenv("KILN_FETCH_TRIES");

	tries = te && atoi(te) > 0 ? atoi(te) : 5;
	for (n = 1; n <= tries; n++) {
		d->over = 0;
		d->said = -1;
		rc = attempt(d, d->url, &code);
		if (rc == CURLE_OK)
			break;
		/* a part that is already whole: the server answers 416 to its Range */
		if (rc == CURLE_HTTP_RETURNED_ERROR && code == 416 && d->start > 0) {
			rc = CURLE_OK;
			break;
		}
		if (d->over || rc == CURLE_FILESIZE_EXCEEDED)
			toobig(d, part);
		if (time(NULL) >= d->deadline)
			dien(EXIT_PROBLEM, "%s: not done after --max-time=%ld seconds (%llu bytes kept in "
			     "%s: run again to resume)", d->url, d->maxtime, (unsigned long long)d->have, part);
		/* asked for a range, got the whole file or another range: from zero */
		if (rc == CURLE_RANGE_ERROR && d->start > 0) {
			warn("%s: the server ignores Range; starting over from zero", d->url);
			restart(d, part);
			continue;
		}
		if (d->have == d->start || n == tries)
			break;
		warn("%s: stopped at %llu bytes (%s); resuming", d->url, (unsigned long long)d->have,
		     curl_easy_strerror(rc));
		sleep(1);
	}
	if (rc == CURLE_OK)
		return;
	if (code >= 400)
		dien(EXIT_PROBLEM, "%s: HTTP %ld (%s)", d->url, code, curl_easy_strerror(rc));
	dien(EXIT_PROBLEM, "%s: %s after %llu bytes (kept in %s: run again to resume)", d->url,
	     curl_easy_strerror(rc), (unsigned long long)d->have, part);
}

/* the URL before anything is contacted: a scheme of http, https, ftp or file (exit 2
   otherwise), no credentials (they would land in the stage's command line, build.ninja
   and the logs) */
static void
checkfetchurl(const char *url)
{
	static const char *const ok[] = {"http", "https", "ftp", "file"};
	const char *sep = strstr(url, "://"), *h, *end;
	size_t i, n = sep ? (size_t)(sep - url) : 0;

	for (i = 0; sep && i < sizeof ok / sizeof ok[0]; i++)
		if (n == strlen(ok[i]) && !strncasecmp(url, ok[i], n))
			break;
	if (!sep || n == 0 || n > 16 || i == sizeof ok / sizeof ok[0])
		dien(EXIT_USAGE, "%.200s: the URL scheme '%.*s' is not one of http, https, ftp, file", url,
		     sep && n <= 16 ? (int)n : 0, url);
	h = sep + 3;
	end = h + strcspn(h, "/?#");
	if (memchr(h, '@', (size_t)(end - h)))
		dien(EXIT_USAGE, "%.*s...: credentials in the URL would land in build.ninja, the logs and "
		     "a command line; put them in ~/.netrc (or $NETRC) or KILN_FETCH_TOKEN instead",
		     (int)(sep - url + 3), url);
}

/* a file:// URL's path (fresh; host empty or localhost), else NULL */
static char *
filepath(CURL *c, const char *url)
{
	const char *p;
	char *s;

	if (strncasecmp(url, "file://", 7))
		return NULL;
	p = url + 7;
	if (!strncasecmp(p, "localhost/", 10))
		p += 9;
	if (*p != '/')
		dien(EXIT_USAGE, "%s: a file:// URL names a host; give file:///PATH", url);
	if (!(s = curl_easy_unescape(c, p, 0, NULL)) || strlen(s) == 0)
		die("%s: cannot decode the path", url);
	p = s;
	s = xstrdup(p);
	curl_free((char *)p);
	return s;
}

/* file://: copied by kiln itself from a regular file (a FIFO, device or folder is exit 2
   with one line, never opened for reading, before anything is made), under the same
   size cap */
static int
openlocal(const char *path)
{
	char *err = NULL;
	int fd = os_openreg(path, 0, NULL, &err);

	if (fd < 0)
		dien(EXIT_USAGE, "%s", err);
	return fd;
}

/* copy the file:// input (fd, from openlocal) into the part */
static void
copylocal(struct dl *d, int fd, const char *path, const char *part)
{
	char blk[1 << 16];
	ssize_t n;

	restart(d, part);
	while ((n = read(fd, blk, sizeof blk)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			dien(EXIT_PROBLEM, "%s:", path);
		if (onwrite(blk, 1, (size_t)n, d) != (size_t)n) {
			if (d->over)
				toobig(d, part);
			dien(EXIT_PROBLEM, "%s:", part);
		}
	}
	close(fd);
}

/* an output path that exists must be a regular file (exit 2 naming what it is) */
static void
checkout(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		dien(EXIT_USAGE, "%s: is %s, not a regular file", path, os_ftype(st.st_mode));
}

/* is the regular file path already the pinned sha */
static int
hasdigest(const char *path, const char *sha)
{
	char blk[1 << 16], *got;
	unsigned char dg[32];
	struct sha256 h;
	ssize_t n;
	int fd = os_openreg(path, O_NOFOLLOW, NULL, NULL), same;

	if (fd < 0)
		return 0;
	sha256_init(&h);
	while ((n = read(fd, blk, sizeof blk)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			sha256_update(&h, blk, (size_t)n);
	sha256_final(&h, dg);
	close(fd);
	if (n < 0)
		return 0;
	got = hexof(dg);
	same = !strcmp(got, sha);
	free(got);
	return same;
}

/* a --max-time or --max-size value: a positive whole number */
static uint64_t
posnum(const char *opt, const char *v)
{
	char *end;
	uint64_t n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || *end || n == 0 || *v == '-')
		sdkusage(xasprintf("fetch: %s=%s is not a positive whole number", opt, v));
	return n;
}

/* --lock without --sha256: the digest the lock holds for url (in buf), or NULL */
static const char *
fetchlocked(const char *lock, const char *url, char buf[65])
{
	char *err = NULL;
	int r = sdklock_get(lock, url, buf, &err);

	if (r < 0)
		dien(EXIT_USAGE, "%s", err);
	return r == 1 ? buf : NULL;
}

/* trust on first use: lock the digest got of url, or refuse it (part removed) when the
   lock holds another */
static void
fetchlock(const char *lock, const char *url, const char *got, const char *part)
{
	char *err = NULL;
	int r = sdklock_check(lock, url, got, &err);

	if (r == 0)
		return;
	unlink(part);
	dien(r < 0 ? EXIT_USAGE : EXIT_PROBLEM, "%s", err);
}

/* what kiln-stage fetch is asked besides the download itself */
struct fetchopt {
	const char *sha;    /* --sha256 */
	const char *out;    /* -o FILE */
	const char *lock;   /* --lock */
};

/* kiln-stage fetch's arguments into d and f; bad ones are usage */
static void
fetchargs(int argc, char **argv, struct dl *d, struct fetchopt *f)
{
	const char *v;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			sdkusage(NULL);
		else if ((v = opt_val(argc, argv, &i, "--sha256", sdkusage)))
			f->sha = v;
		else if ((v = opt_val(argc, argv, &i, "--lock", sdkusage)))
			f->lock = v;
		else if ((v = opt_val(argc, argv, &i, "-o", sdkusage)) ||
		         (v = opt_val(argc, argv, &i, "--out", sdkusage)))
			f->out = v;
		else if ((v = opt_val(argc, argv, &i, "--max-size", sdkusage))) {
			d->max = posnum("--max-size", v);
			d->maxset = 1;
		} else if ((v = opt_val(argc, argv, &i, "--max-time", sdkusage)))
			d->maxtime = (long)(posnum("--max-time", v) > 31536000 ? 31536000 : posnum("--max-time", v));
		else if (argv[i][0] == '-')
			sdkusage(xasprintf("fetch: unknown option '%s'", argv[i]));
		else if (!d->url)
			d->url = argv[i];
		else
			sdkusage(xasprintf("fetch: unexpected argument '%s'", argv[i]));
	}
	if (!d->url || (!f->sha && !f->lock) || !f->out)
		sdkusage("fetch: give URL, --sha256=HEX (or --lock=LOCK) and -o FILE");
	if (f->sha && !ishex64(f->sha))
		dien(EXIT_USAGE, "%s: --sha256=%s is not a sha256 (64 lowercase hex digits)", d->url, f->sha);
}

/* d's URL into part (out's folder made first): copied from a local file, or downloaded */
static void
fetchinto(struct dl *d, const char *out, const char *part)
{
	char *local, *err = NULL;
	int lfd = -1;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0 || !(d->curl = curl_easy_init()))
		dien(EXIT_PROBLEM, "%s: cannot start libcurl", d->url);
	if ((local = filepath(d->curl, d->url)))
		lfd = openlocal(local);
	if (os_mkparents(out, 0755) < 0)
		dien(EXIT_PROBLEM, "%s: cannot create its folder:", out);
	if ((d->fd = os_createreg(part, 0, 0644, &err)) < 0)
		dien(errno == ENXIO || errno == EINVAL || errno == ELOOP ? EXIT_USAGE : EXIT_PROBLEM, "%s", err);
	d->term = isatty(2);
	d->deadline = time(NULL) + d->maxtime;
	if (local)
		copylocal(d, lfd, local, part);
	else
		download(d, part);
	free(local);
	curl_easy_cleanup(d->curl);
	curl_global_cleanup();
	if (close(d->fd) < 0)
		dien(EXIT_PROBLEM, "%s:", part);
}

/* the part's sha256 against the pin, then renamed to out */
static void
settle(const char *url, const char *part, const char *out, const char *sha, const char *lock)
{
	unsigned char dg[32];
	char *got;

	if (sha256_file(part, dg, NULL) < 0)
		dien(EXIT_PROBLEM, "%s:", part);
	got = hexof(dg);
	/* --lock: the first download locks its digest; a locked one is held to it */
	if (lock)
		fetchlock(lock, url, got, part);
	if (sha && strcmp(got, sha) != 0) {
		/* a wrong file is never resumed from */
		unlink(part);
		dien(EXIT_PROBLEM, "%s: sha256 is %s, but the pin says %s (a changed or corrupt "
		     "download; check the URL and the pinned sha)", url, got, sha);
	}
	free(got);
	if (rename(part, out) < 0)
		dien(EXIT_PROBLEM, "%s:", out);
}

int
fetch_main(int argc, char **argv)
{
	struct fetchopt f = {0};
	struct dl d = {0};
	char *part, locked[65];

	d.max = FETCH_MAXSIZE;
	d.maxtime = FETCH_MAXTIME;
	fetchargs(argc, argv, &d, &f);
	checkfetchurl(d.url);
	/* --lock alone: the digest locked by an earlier fetch, if any (trust on first use) */
	if (!f.sha)
		f.sha = fetchlocked(f.lock, d.url, locked);
	part = xasprintf("%s.part", f.out);
	checkout(f.out);
	checkout(part);
	/* already here and whole: nothing to do */
	if (f.sha && hasdigest(f.out, f.sha)) {
		free(part);
		return EXIT_OK;
	}
	fetchinto(&d, f.out, part);
	settle(d.url, part, f.out, f.sha, f.lock);
	free(part);
	return EXIT_OK;
}

/* --- unpack ------------------------------------------------------------------------ */

static char *tmpdir;       /* the folder being filled; removed on any failure */

/* the folder into is made in, opened and locked (flock, exclusive; released when the
   process ends, killed or not); returns the descriptor, or -1 with errno set */
static int
lockparent(const char *into)
{
	char *dir = xstrdup(into), *slash = strrchr(dir, '/');
	int fd;

	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* remove the INTO.tmp-XXXXXX folders beside into that an unpack killed before its
   rename left (the caller holds lockparent, so no live unpack is filling one) */
static void
dropstale(const char *into)
{
	struct strv names = {0};
	const char *slash = strrchr(into, '/'), *base = slash ? slash + 1 : into;
	char *dir = slash ? xasprintf("%.*s", (int)(slash == into ? 1 : slash - into), into) : xstrdup(".");
	char *pre = xasprintf("%s.tmp-", base), *p;
	size_t i, pl = strlen(pre);

	if (os_listdir(dir, &names) == 0) {
		for (i = 0; i < names.n; i++) {
			if (strncmp(names.v[i], pre, pl) || strlen(names.v[i]) != pl + 6)
				continue;
			p = xasprintf("%s/%s", dir, names.v[i]);
			if (os_rmtree(p) == 0)
				fprintf(stderr, "kiln-stage: %s: removed, left by an unpack that was stopped\n", p);
			free(p);
		}
	}
	strv_free(&names);
	free(pre);
	free(dir);
}
static const char *tarname;

static void __attribute__((noreturn, format(printf, 1, 2)))
bad(const char *fmt, ...)
{
	va_list ap;
	char *m;
	struct buf b = {0};

	if (tmpdir)
		os_rmtree(tmpdir);
	va_start(ap, fmt);
	m = NULL;
	{
		va_list aq;
		int n;
		va_copy(aq, ap);
		n = vsnprintf(NULL, 0, fmt, aq);
		va_end(aq);
		m = xmalloc((size_t)n + 1);
		vsnprintf(m, (size_t)n + 1, fmt, ap);
	}
	va_end(ap);
	bufprintf(&b, "%s: %s", tarname, m);
	dien(EXIT_PROBLEM, "%s", b.s);
}

struct src {
	int fd;
	struct sha256 h;
	char block[1 << 16];
	uint64_t read;
};

static la_ssize_t
srcread(struct archive *a, void *u, const void **p)
{
	struct src *s = u;
	ssize_t n;

	(void)a;
	do
		n = read(s->fd, s->block, sizeof s->block);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		archive_set_error(a, errno, "read error");
		return -1;
	}
	sha256_update(&s->h, s->block, (size_t)n);
	s->read += (uint64_t)n;
	*p = s->block;
	return n;
}

/* a member name made relative and checked: NULL for the top folder itself; refused when
   absolute or when a part is ".." */
static const char *
membername(const char *name)
{
	const char *p;
	size_t n;

	if (!name || !*name)
		bad("a member without a name");
	if (name[0] == '/')
		bad("member '%s' is an absolute path (refused)", name);
	while (name[0] == '.' && name[1] == '/')
		for (name += 2; *name == '/'; name++)
			;
	if (!*name || !strcmp(name, "."))
		return NULL;
	for (p = name; *p; p += n + (p[n] == '/')) {
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			bad("member '%s' leaves the folder (a '..' part; refused)", name);
	}
	return name;
}

/* the default size cap: CAPTIMES times the tarball's size, at least CAPFLOOR. A ROCm SDK
   expands 3 to 10 times; a tarball that declares more than 32 times its size is a bomb */
#define CAPTIMES 32
#define CAPFLOOR ((uint64_t)2 << 30)

/* one unpack: the archive, its stream, the size counted so far and the tree it declares */
struct unpack {
	struct archive *a;
	struct src s;
	uint64_t cap, total;
	int capset;          /* --max-size given */
	struct tartree tree;
};

static void __attribute__((noreturn))
overcap(const struct unpack *u, const char *name)
{
	bad("member '%s' would pass the size cap of %llu bytes (%s)", name,
	    (unsigned long long)u->cap, u->capset ? "--max-size" :
	    "32 times the tarball's size, at least 2 GiB; --max-size=BYTES sets another");
}

/* count n more bytes of the unpacked tree toward the cap */
static void
count(struct unpack *u, const char *name, uint64_t n)
{
	if (n > u->cap - u->total)
		overcap(u, name);
	u->total += n;
}

/* a regular member: its declared (expanded) size counts before a byte is written, and a
   block past it (a sparse map that lies) counts too */
static void
unpackfile(struct unpack *u, struct archive_entry *e, const char *name, const char *path)
{
	uint64_t counted = archive_entry_size_is_set(e) ? (uint64_t)archive_entry_size(e) : 0;
	const void *blk;
	size_t blen;
	la_int64_t off;
	int fd, r;

	count(u, name, counted);
	if (os_mkparents(path, 0755) < 0)
		bad("cannot create the folder of %s: %s", path, strerror(errno));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	          (archive_entry_perm(e) & 0755) | 0600);
	if (fd < 0)
		bad("cannot create %s: %s", path, strerror(errno));
	for (;;) {
		r = archive_read_data_block(u->a, &blk, &blen, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN || off < 0)
			bad("member '%s': %s (a truncated or corrupt tarball)", name,
			    archive_error_string(u->a));
		if ((uint64_t)off + blen > counted) {
			count(u, name, (uint64_t)off + blen - counted);
			counted = (uint64_t)off + blen;
		}
		if (pwrite(fd, blk, blen, (off_t)off) != (ssize_t)blen)
			bad("cannot write %s: %s", path, strerror(errno));
	}
	if (ftruncate(fd, (off_t)counted) < 0 || close(fd) < 0)
		bad("cannot write %s: %s", path, strerror(errno));
}

/* a hard link: to a regular file extracted before it */
static void
unpackhard(const char *tmp, const char *name, const char *path, const char *t)
{
	const char *tn = membername(t);
	struct stat st;
	char *tpath;

	if (!tn)
		bad("member '%s' is a hard link to the top folder (refused)", name);
	tpath = xasprintf("%s/%s", tmp, tn);
	if (lstat(tpath, &st) < 0 || !S_ISREG(st.st_mode))
		bad("member '%s' links to '%s', not a file before it (refused)", name, tn);
	if (os_mkparents(path, 0755) < 0 || link(tpath, path) < 0)
		bad("cannot link %s: %s", path, strerror(errno));
	free(tpath);
}

/* add a member to the tree; a refusal is the tarball's fault */
static void
declare(struct unpack *u, const char *name, int kind, const char *target)
{
	char *why = NULL;

	if (tt_add(&u->tree, name, kind, target, &why) < 0)
		bad("%s", why);
}

/* one member: folders and files made now, links recorded (made last, by makelinks) */
static void
unpackmember(struct unpack *u, struct archive_entry *e, const char *name)
{
	char *path = xasprintf("%s/%s", tmpdir, name);
	const char *t;

	while (path[strlen(path) - 1] == '/')
		path[strlen(path) - 1] = 0;
	if ((t = archive_entry_hardlink(e))) {
		declare(u, name, TT_FILE, NULL);
		unpackhard(tmpdir, name, path, t);
	} else {
		switch (archive_entry_filetype(e)) {
		case AE_IFDIR:
			declare(u, name, TT_DIR, NULL);
			if (os_mkdirs(path, 0755) < 0)
				bad("cannot create %s: %s", path, strerror(errno));
			break;
		case AE_IFLNK:
			t = archive_entry_symlink(e);
			declare(u, name, TT_LINK, t ? t : "");
			count(u, name, strlen(t));
			break;
		case AE_IFREG:
			declare(u, name, TT_FILE, NULL);
			unpackfile(u, e, name, path);
			break;
		default:
			bad("member '%s' is a device, FIFO or socket (refused)", name);
		}
	}
	free(path);
}

/* every link, once the whole tree is known: each resolved through the others as the
   kernel will (tartree.c) must stay inside and end at a file, a folder or nothing; then
   they are made, after every file, so nothing is ever written through one */
static void
makelinks(struct unpack *u)
{
	char *why = NULL, *p;
	size_t i;

	if (tt_check(&u->tree, &why) < 0)
		bad("%s", why);
	for (i = 0; i < u->tree.n; i++) {
		if (u->tree.v[i].kind != TT_LINK)
			continue;
		p = xasprintf("%s/%s", tmpdir, u->tree.v[i].name);
		if (os_mkparents(p, 0755) < 0 || symlink(u->tree.v[i].target, p) < 0)
			bad("cannot make the link %s: %s", p, strerror(errno));
		free(p);
	}
}

/* read every member, then the rest of the stream for its sha256 */
static void
unpackall(struct unpack *u)
{
	struct archive_entry *e;
	const char *name;
	size_t nentries = 0;
	const void *p;
	int r;

	u->a = archive_read_new();
	archive_read_support_filter_all(u->a);
	archive_read_support_format_tar(u->a);
	archive_read_support_format_gnutar(u->a);
	if (archive_read_open(u->a, &u->s, NULL, srcread, NULL) != ARCHIVE_OK)
		bad("not a tar archive (%s)", archive_error_string(u->a));
	for (;;) {
		r = archive_read_next_header(u->a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			bad("%s (a truncated or corrupt tarball)", archive_error_string(u->a));
		if (++nentries > (1u << 22))
			bad("more than %u members (refused)", 1u << 22);
		if ((name = membername(archive_entry_pathname(e))))
			unpackmember(u, e, name);
	}
	/* the rest of the file (tar padding) counts toward its sha256 too */
	while (srcread(u->a, &u->s, &p) > 0)
		;
	archive_read_free(u->a);
}

/* the SDK layout at the top of the folder being filled */
static void
checklayout(void)
{
	static const char *const need[] = {".info/version", "bin", "lib", "include"};
	struct stat st;
	size_t i;
	char *path;

	for (i = 0; i < sizeof need / sizeof need[0]; i++) {
		path = xasprintf("%s/%s", tmpdir, need[i]);
		/* TheRock's multi-arch tarballs record their version in
		   share/therock/therock_manifest.json (ROCm/TheRock RELEASES.md) */
		if (i == 0 && lstat(path, &st) < 0) {
			free(path);
			path = xasprintf("%s/share/therock/therock_manifest.json", tmpdir);
		}
		if (lstat(path, &st) < 0)
			bad("not a ROCm SDK tarball: no %s at its top (TheRock's dist layout: bin/ "
			    "lib/ include/ llvm/ share/ .info/version)", need[i]);
		free(path);
	}
}

/* --max-size=BYTES */
static uint64_t
parsecap(const char *v)
{
	char *end;
	uint64_t cap;

	errno = 0;
	cap = strtoull(v, &end, 10);
	if (errno || end == v || *end || cap == 0 || *v == '-')
		sdkusage(xasprintf("unpack: --max-size=%s is not a byte count", v));
	return cap;
}

/* is into already there: 1 a folder (done), else it must be absent */
static int
intodone(const char *into)
{
	struct stat st;

	if (lstat(into, &st) < 0)
		return 0;
	if (S_ISDIR(st.st_mode))
		return 1;
	dien(EXIT_PROBLEM, "%s: exists and is %s, not a folder", into, os_ftype(st.st_mode));
}

/* open the tarball: a regular file or one line naming what it is */
static int
opentar(struct stat *st)
{
	char *err = NULL;
	int fd = os_openreg(tarname, 0, st, &err);

	if (fd < 0)
		dien(EXIT_USAGE, "%s", err);
	return fd;
}

/* rename the filled folder into place (another run that finished first wins) */
static void
finish(const char *into)
{
	struct stat st;
	char *t;

	if (rename(tmpdir, into) < 0) {
		if ((errno == EEXIST || errno == ENOTEMPTY) && stat(into, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			os_rmtree(tmpdir);
		else
			bad("cannot rename %s to %s: %s", tmpdir, into, strerror(errno));
	}
	t = tmpdir;
	tmpdir = NULL;
	free(t);
}

/* what kiln-stage unpack is asked besides the tarball (tarname) */
struct unpackopt {
	const char *into;     /* --into */
	const char *sha;      /* --sha256, or NULL */
	const char *layout;   /* --layout (rocm), or NULL */
};

/* kiln-stage unpack's arguments into tarname, u and uo; bad ones are usage */
static void
unpackargs(int argc, char **argv, struct unpack *u, struct unpackopt *uo)
{
	const char *v;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			sdkusage(NULL);
		else if ((v = opt_val(argc, argv, &i, "--into", sdkusage)))
			uo->into = v;
		else if ((v = opt_val(argc, argv, &i, "--sha256", sdkusage)))
			uo->sha = v;
		else if ((v = opt_val(argc, argv, &i, "--layout", sdkusage)))
			uo->layout = v;
		else if ((v = opt_val(argc, argv, &i, "--max-size", sdkusage))) {
			u->cap = parsecap(v);
			u->capset = 1;
		} else if (argv[i][0] == '-' && argv[i][1])
			sdkusage(xasprintf("unpack: unknown option '%s'", argv[i]));
		else if (!tarname)
			tarname = argv[i];
		else
			sdkusage(xasprintf("unpack: unexpected argument '%s'", argv[i]));
	}
	if (!tarname || !uo->into)
		sdkusage("unpack: give TARBALL and --into=DIR");
	if (uo->sha && !ishex64(uo->sha))
		dien(EXIT_USAGE, "%s: --sha256=%s is not a sha256 (64 lowercase hex digits)", tarname, uo->sha);
	if (uo->layout && strcmp(uo->layout, "rocm"))
		sdkusage(xasprintf("unpack: unknown --layout '%s' (rocm)", uo->layout));
}

/* the tarball unpacked into a new DIR.tmp-* folder, its sha256 checked against uo->sha,
   its links made and the layout checked, then renamed to uo->into (finish) */
static void
unpackrun(struct unpack *u, const struct unpackopt *uo)
{
	unsigned char dg[32];
	char *got;

	sha256_init(&u->s.h);
	u->s.read = 0;
	tmpdir = xasprintf("%s.tmp-XXXXXX", uo->into);
	if (!mkdtemp(tmpdir))
		dien(EXIT_PROBLEM, "%s:", tmpdir);
	chmod(tmpdir, 0755);
	unpackall(u);
	close(u->s.fd);
	sha256_final(&u->s.h, dg);
	got = hexof(dg);
	if (uo->sha && strcmp(got, uo->sha))
		bad("sha256 is %s, but the pin says %s", got, uo->sha);
	free(got);
	makelinks(u);
	tt_free(&u->tree);
	if (uo->layout)
		checklayout();
	finish(uo->into);
}

int
unpack_main(int argc, char **argv)
{
	struct unpackopt uo = {0};
	struct unpack u = {0};
	struct stat st;
	int lockfd;

	unpackargs(argc, argv, &u, &uo);
	/* the folder appears whole or not at all: if it is there, it is done */
	if (intodone(uo.into))
		return EXIT_OK;
	u.s.fd = opentar(&st);
	if (!u.capset)
		u.cap = (uint64_t)st.st_size > CAPFLOOR / CAPTIMES ? (uint64_t)st.st_size * CAPTIMES
		                                                     : CAPFLOOR;
	if (os_mkparents(uo.into, 0755) < 0)
		dien(EXIT_PROBLEM, "%s: cannot create its folder:", uo.into);
	/* one unpack into the parent folder at a time; under the lock, a DIR.tmp-* folder
	   is what a killed unpack left, and goes */
	if ((lockfd = lockparent(uo.into)) < 0)
		dien(EXIT_PROBLEM, "%s: cannot lock its folder:", uo.into);
	if (intodone(uo.into))
		return EXIT_OK;  /* another run finished it meanwhile */
	dropstale(uo.into);
	unpackrun(&u, &uo);
	close(lockfd);
	return EXIT_OK;
}
