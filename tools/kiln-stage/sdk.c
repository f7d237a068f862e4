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
#include "util.h"

static void
sdkusage(const char *error)
{
	opt_usage(error,
	          "usage: kiln-stage fetch URL --sha256=HEX|--lock=LOCK -o FILE\n"
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

struct dl {
	CURL *curl;
	int fd;
	uint64_t start;   /* bytes in FILE.part when this attempt began */
	uint64_t have;    /* bytes in FILE.part now */
	int checked;      /* the response code was looked at */
	int restarted;    /* the server ignored the Range: the part was thrown away */
	int term;         /* stderr is a terminal: a progress line */
	time_t shown;
	const char *url;
};

static size_t
onwrite(char *p, size_t sz, size_t n, void *u)
{
	struct dl *d = u;
	long code = 0;

	if (!d->checked) {
		d->checked = 1;
		curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &code);
		/* asked for a range, got the whole file (200): start over */
		if (d->start > 0 && code == 200) {
			if (ftruncate(d->fd, 0) < 0 || lseek(d->fd, 0, SEEK_SET) < 0)
				return 0;
			d->have = d->start = 0;
			d->restarted = 1;
		}
	}
	if (writeall(d->fd, p, sz * n) < 0)
		return 0;
	d->have += sz * n;
	return sz * n;
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

/* one attempt: append to FILE.part from where it stops. Returns the curl code */
static CURLcode
attempt(struct dl *d, const char *url, long *code)
{
	CURLcode rc;
	struct stat st;

	if (fstat(d->fd, &st) < 0 || lseek(d->fd, 0, SEEK_END) < 0)
		return CURLE_WRITE_ERROR;
	d->start = d->have = (uint64_t)st.st_size;
	d->checked = 0;
	curl_easy_reset(d->curl);
	curl_easy_setopt(d->curl, CURLOPT_URL, url);
	curl_easy_setopt(d->curl, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(d->curl, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(d->curl, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(d->curl, CURLOPT_WRITEFUNCTION, onwrite);
	curl_easy_setopt(d->curl, CURLOPT_WRITEDATA, d);
	curl_easy_setopt(d->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(d->curl, CURLOPT_XFERINFOFUNCTION, onprogress);
	curl_easy_setopt(d->curl, CURLOPT_XFERINFODATA, d);
	curl_easy_setopt(d->curl, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)d->start);
	curl_easy_setopt(d->curl, CURLOPT_CONNECTTIMEOUT, 30L);
	/* a stalled server: under 1 KiB/s for 60 s ends the attempt (it is resumed) */
	curl_easy_setopt(d->curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(d->curl, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(d->curl, CURLOPT_USERAGENT, "kiln-stage");
	rc = curl_easy_perform(d->curl);
	*code = 0;
	curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, code);
	if (d->term && d->shown)
		fputc('\n', stderr);
	d->shown = 0;
	return rc;
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

int
fetch_main(int argc, char **argv)
{
	const char *url = NULL, *sha = NULL, *out = NULL, *lock = NULL, *v;
	char *part, *got, *tries_env, locked[65];
	unsigned char dg[32];
	struct dl d = {0};
	CURLcode rc = CURLE_OK;
	long code = 0;
	int i, tries, n;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			sdkusage(NULL);
		else if ((v = opt_val(argc, argv, &i, "--sha256", sdkusage)))
			sha = v;
		else if ((v = opt_val(argc, argv, &i, "--lock", sdkusage)))
			lock = v;
		else if ((v = opt_val(argc, argv, &i, "-o", sdkusage)) ||
		         (v = opt_val(argc, argv, &i, "--out", sdkusage)))
			out = v;
		else if (argv[i][0] == '-')
			sdkusage(xasprintf("fetch: unknown option '%s'", argv[i]));
		else if (!url)
			url = argv[i];
		else
			sdkusage(xasprintf("fetch: unexpected argument '%s'", argv[i]));
	}
	if (!url || (!sha && !lock) || !out)
		sdkusage("fetch: give URL, --sha256=HEX (or --lock=LOCK) and -o FILE");
	if (sha && !ishex64(sha))
		dien(EXIT_USAGE, "%s: --sha256=%s is not a sha256 (64 lowercase hex digits)", url, sha);
	if (!sha)
		sha = fetchlocked(lock, url, locked);
	/* already here and whole: nothing to do */
	if (sha && sha256_file(out, dg, NULL) == 0) {
		got = hexof(dg);
		n = strcmp(got, sha);
		free(got);
		if (n == 0)
			return EXIT_OK;
	}
	if (os_mkparents(out, 0755) < 0)
		dien(EXIT_PROBLEM, "%s: cannot create its folder:", out);
	part = xasprintf("%s.part", out);
	if ((d.fd = open(part, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0)
		dien(EXIT_PROBLEM, "%s:", part);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0 || !(d.curl = curl_easy_init()))
		dien(EXIT_PROBLEM, "%s: cannot start libcurl", url);
	d.term = isatty(2);
	d.url = url;
	tries_env = getenv("KILN_FETCH_TRIES");
	tries = tries_env && atoi(tries_env) > 0 ? atoi(tries_env) : 5;
	for (n = 1; n <= tries; n++) {
		rc = attempt(&d, url, &code);
		if (rc == CURLE_OK)
			break;
		/* a part that is already whole: the server answers 416 to its Range */
		if (rc == CURLE_HTTP_RETURNED_ERROR && code == 416 && d.start > 0) {
			rc = CURLE_OK;
			break;
		}
		if (d.have == d.start || n == tries)
			break;
		warn("%s: stopped at %llu bytes (%s); resuming", url, (unsigned long long)d.have,
		     curl_easy_strerror(rc));
		sleep(1);
	}
	curl_easy_cleanup(d.curl);
	curl_global_cleanup();
	if (close(d.fd) < 0)
		dien(EXIT_PROBLEM, "%s:", part);
	if (rc != CURLE_OK) {
		if (code >= 400)
			dien(EXIT_PROBLEM, "%s: HTTP %ld (%s)", url, code, curl_easy_strerror(rc));
		dien(EXIT_PROBLEM, "%s: %s after %llu bytes (kept in %s: run again to resume)", url,
		     curl_easy_strerror(rc), (unsigned long long)d.have, part);
	}
	if (sha256_file(part, dg, NULL) < 0)
		dien(EXIT_PROBLEM, "%s:", part);
	got = hexof(dg);
	/* --lock: the first download locks its digest; a locked one is held to it */
	if (lock && (!sha || sha == locked))
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

/* does link target t, placed at member name, stay inside the tree (lexically) */
static int
staysin(const char *name, const char *t)
{
	long depth = 0;
	const char *p;
	size_t n;

	if (t[0] == '/' || !*t)
		return 0;
	for (p = name; *p; p += n + (p[n] == '/')) {
		n = strcspn(p, "/");
		if (!p[n])
			break;   /* the last part is the link itself */
		if (n && !(n == 1 && *p == '.'))
			depth++;
	}
	for (p = t; *p; p += n + (p[n] == '/')) {
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return 0;
		} else if (n && !(n == 1 && *p == '.')) {
			depth++;
		}
	}
	return 1;
}

int
unpack_main(int argc, char **argv)
{
	const char *into = NULL, *sha = NULL, *layout = NULL, *v, *name, *t;
	struct archive *a;
	struct archive_entry *e;
	struct src s;
	struct stat st;
	char *path, *tpath, *parent, **lk = NULL, **ln = NULL, *got;
	size_t nlk = 0, caplk = 0, capln = 0, i, nentries = 0;
	uint64_t cap = (uint64_t)64 << 30, total = 0;
	unsigned char dg[32];
	int r, fd, i2, lockfd;
	const void *blk;
	size_t blen;
	la_int64_t off;

	for (i2 = 1; i2 < argc; i2++) {
		if (!strcmp(argv[i2], "-h") || !strcmp(argv[i2], "--help"))
			sdkusage(NULL);
		else if ((v = opt_val(argc, argv, &i2, "--into", sdkusage)))
			into = v;
		else if ((v = opt_val(argc, argv, &i2, "--sha256", sdkusage)))
			sha = v;
		else if ((v = opt_val(argc, argv, &i2, "--layout", sdkusage)))
			layout = v;
		else if ((v = opt_val(argc, argv, &i2, "--max-size", sdkusage))) {
			char *end;
			errno = 0;
			cap = strtoull(v, &end, 10);
			if (errno || end == v || *end || cap == 0)
				sdkusage(xasprintf("unpack: --max-size=%s is not a byte count", v));
		} else if (argv[i2][0] == '-' && argv[i2][1])
			sdkusage(xasprintf("unpack: unknown option '%s'", argv[i2]));
		else if (!tarname)
			tarname = argv[i2];
		else
			sdkusage(xasprintf("unpack: unexpected argument '%s'", argv[i2]));
	}
	if (!tarname || !into)
		sdkusage("unpack: give TARBALL and --into=DIR");
	if (sha && !ishex64(sha))
		dien(EXIT_USAGE, "%s: --sha256=%s is not a sha256 (64 lowercase hex digits)", tarname, sha);
	if (layout && strcmp(layout, "rocm"))
		sdkusage(xasprintf("unpack: unknown --layout '%s' (rocm)", layout));
	/* the folder appears whole or not at all: if it is there, it is done */
	if (lstat(into, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return EXIT_OK;
		dien(EXIT_PROBLEM, "%s: exists and is not a folder", into);
	}
	if ((s.fd = open(tarname, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		dien(EXIT_PROBLEM, "%s:", tarname);
	if (fstat(s.fd, &st) < 0 || !S_ISREG(st.st_mode))
		dien(EXIT_PROBLEM, "%s: not a regular file", tarname);
	fcntl(s.fd, F_SETFL, 0);
	if (os_mkparents(into, 0755) < 0)
		dien(EXIT_PROBLEM, "%s: cannot create its folder:", into);
	/* one unpack into the parent folder at a time; under the lock, a DIR.tmp-* folder
	   is what a killed unpack left, and goes */
	if ((lockfd = lockparent(into)) < 0)
		dien(EXIT_PROBLEM, "%s: cannot lock its folder:", into);
	if (lstat(into, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return EXIT_OK;  /* another run finished it meanwhile */
		dien(EXIT_PROBLEM, "%s: exists and is not a folder", into);
	}
	dropstale(into);
	sha256_init(&s.h);
	s.read = 0;
	tmpdir = xasprintf("%s.tmp-XXXXXX", into);
	if (!mkdtemp(tmpdir))
		dien(EXIT_PROBLEM, "%s:", tmpdir);
	chmod(tmpdir, 0755);

	a = archive_read_new();
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	if (archive_read_open(a, &s, NULL, srcread, NULL) != ARCHIVE_OK)
		bad("not a tar archive (%s)", archive_error_string(a));
	for (;;) {
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			bad("%s (a truncated or corrupt tarball)", archive_error_string(a));
		if (++nentries > (1u << 22))
			bad("more than %u members (refused)", 1u << 22);
		if (!(name = membername(archive_entry_pathname(e))))
			continue;
		path = xasprintf("%s/%s", tmpdir, name);
		while (path[strlen(path) - 1] == '/')
			path[strlen(path) - 1] = 0;
		if ((t = archive_entry_hardlink(e))) {
			const char *tn = membername(t);
			if (!tn)
				bad("member '%s' is a hard link to the top folder (refused)", name);
			tpath = xasprintf("%s/%s", tmpdir, tn);
			if (lstat(tpath, &st) < 0 || !S_ISREG(st.st_mode))
				bad("member '%s' links to '%s', not a file before it (refused)", name, tn);
			if (os_mkparents(path, 0755) < 0 || link(tpath, path) < 0)
				bad("cannot link %s:", path);
			free(tpath);
			free(path);
			continue;
		}
		switch (archive_entry_filetype(e)) {
		case AE_IFDIR:
			if (os_mkdirs(path, 0755) < 0)
				bad("cannot create %s: %s", path, strerror(errno));
			break;
		case AE_IFLNK:
			t = archive_entry_symlink(e);
			if (!t || !staysin(name, t))
				bad("member '%s' is a link to '%s', outside the folder (refused)", name,
				    t ? t : "");
			/* links are made last: no member is ever written through one */
			lk = xgrow(lk, &caplk, nlk + 1, sizeof *lk);
			ln = xgrow(ln, &capln, nlk + 1, sizeof *ln);
			lk[nlk] = xstrdup(t);
			ln[nlk++] = xstrdup(path);
			break;
		case AE_IFREG:
			if (archive_entry_size_is_set(e) &&
			    (uint64_t)archive_entry_size(e) > cap - total)
				bad("member '%s' would pass the size cap of %llu bytes (--max-size)", name,
				    (unsigned long long)cap);
			if (os_mkparents(path, 0755) < 0)
				bad("cannot create the folder of %s: %s", path, strerror(errno));
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			          (archive_entry_perm(e) & 0755) | 0600);
			if (fd < 0)
				bad("cannot create %s: %s", path, strerror(errno));
			for (;;) {
				r = archive_read_data_block(a, &blk, &blen, &off);
				if (r == ARCHIVE_EOF)
					break;
				if (r < ARCHIVE_WARN)
					bad("member '%s': %s (a truncated or corrupt tarball)", name,
					    archive_error_string(a));
				if ((uint64_t)blen > cap - total)
					bad("member '%s' passes the size cap of %llu bytes (--max-size)", name,
					    (unsigned long long)cap);
				total += blen;
				if (pwrite(fd, blk, blen, (off_t)off) != (ssize_t)blen)
					bad("cannot write %s: %s", path, strerror(errno));
			}
			if (ftruncate(fd, archive_entry_size(e)) < 0 || close(fd) < 0)
				bad("cannot write %s: %s", path, strerror(errno));
			break;
		default:
			bad("member '%s' is a device, FIFO or socket (refused)", name);
		}
		free(path);
	}
	/* the rest of the file (tar padding) counts toward its sha256 too */
	{
		const void *p;
		while (srcread(a, &s, &p) > 0)
			;
	}
	archive_read_free(a);
	close(s.fd);
	sha256_final(&s.h, dg);
	got = hexof(dg);
	if (sha && strcmp(got, sha))
		bad("sha256 is %s, but the pin says %s", got, sha);
	free(got);
	for (i = 0; i < nlk; i++) {
		if (os_mkparents(ln[i], 0755) < 0 || symlink(lk[i], ln[i]) < 0)
			bad("cannot make the link %s: %s", ln[i], strerror(errno));
		free(lk[i]);
		free(ln[i]);
	}
	free(lk);
	free(ln);
	if (layout) {
		static const char *const need[] = {".info/version", "bin", "lib", "include"};
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
	if (rename(tmpdir, into) < 0) {
		if ((errno == EEXIST || errno == ENOTEMPTY) && stat(into, &st) == 0 &&
		    S_ISDIR(st.st_mode)) {
			/* another run finished first: its folder is as good as this one */
			os_rmtree(tmpdir);
		} else {
			bad("cannot rename %s to %s: %s", tmpdir, into, strerror(errno));
		}
	}
	parent = tmpdir;
	tmpdir = NULL;
	free(parent);
	close(lockfd);
	return EXIT_OK;
}
