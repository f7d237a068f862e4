/* the remote stage cache: a stage's outputs on a plain HTTP(S) server, addressed by key.
   Layout under the base URL, as bazel-remote's HTTP API lays it out:
     cas/SHA256   one output file (or a log), named by the SHA-256 of its bytes
     ac/KEY       the manifest: the stage's stamp text for KEY (stage, key, identity, the
                  key's inputs, "SHA256  NAME" of every output) and LOG="SHA256"
   Files go up first and the manifest last, so a manifest only names files already
   stored; two builders storing one key at once each leave a manifest that names its own
   content-addressed files, so whichever manifest wins is whole. On restore every file is
   checked against the manifest's digest (an HTTP error page or a truncated object never
   matches) before cache_restore installs it. libcurl speaks HTTP; credentials come from
   ~/.netrc (or $NETRC) and $KILN_CACHE_TOKEN (a bearer token), never from arguments. */
#include "remote.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "atomic.h"
#include "hash.h"
#include "os.h"
#include "kv.h"
#include "proc.h"
#include "sign.h"
#include "strv.h"

/* the largest object a restore downloads unless KILN_CACHE_MAX_OBJECT says otherwise */
#define MAXOBJECT ((uint64_t)16 << 30)

/* set once a connection failed or timed out: the rest of this run does not wait again */
static char *down;
/* objects this run found corrupt: stored again after the rebuild, not skipped by HEAD */
static struct strv suspect;

int
remote_isurl(const char *s)
{
	return startswith(s, "http://") || startswith(s, "https://");
}

char *
remote_checkurl(const char *url)
{
	const char *h = strstr(url, "://") + 3, *end = h + strcspn(h, "/?#");
	const char *at = memchr(h, '@', (size_t)(end - h));

	if (at)
		return xstrdup("credentials in the URL would land in build.ninja and the logs; put "
		               "them in ~/.netrc or KILN_CACHE_TOKEN instead");
	return NULL;
}

/* seconds from the environment variable name, else def */
static long
envsecs(const char *name, long def)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	n = strtol(v, &end, 10);
	return *end || n <= 0 ? def : n;
}

/* base URL + "/" + rest, without a doubled slash (fresh string) */
static char *
objurl(const char *base, const char *kind, const char *name)
{
	size_t n = strlen(base);

	return xasprintf("%s%s%s/%s", base, n && base[n - 1] == '/' ? "" : "/", kind, name);
}

struct sink {
	int fd;           /* write here when >= 0 */
	struct buf *b;    /* else append here */
	uint64_t max;     /* at most this many bytes either way */
	int over;
	uint64_t got;
};

static size_t
onbody(char *p, size_t size, size_t n, void *arg)
{
	struct sink *k = arg;

	n *= size;
	if (n > k->max - k->got) {
		k->over = 1;
		return 0;
	}
	k->got += n;
	if (k->fd >= 0)
		return writeall(k->fd, p, n) < 0 ? 0 : n;
	bufadd(k->b, p, n);
	return n;
}

/* a SIGINT, SIGTERM or SIGHUP (proc_forward's handler, kiln-stage run) ends a transfer
   within a second, slow server or not: the caller cleans up and stops */
static int
onprogress(void *u, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)u;
	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return proc_gotsig != 0;
}

/* one HTTP request: its URL, its method and the body each way */
struct req {
	const char *url;
	const char *method;   /* GET, HEAD or PUT */
	struct sink *sink;    /* GET: where the body goes */
	FILE *up;             /* PUT: the body, of upsize bytes */
	long long upsize;
};

/* the transfer's settings on c: the URL, credentials (netrc, KILN_CACHE_TOKEN as *hdr),
   timeouts, redirects, the method and its body, and the signal check */
static void
reqsetup(CURL *c, const struct req *q, char *eb, struct curl_slist **hdr)
{
	const char *tok = getenv("KILN_CACHE_TOKEN");
	char *h;

	curl_easy_setopt(c, CURLOPT_URL, q->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, eb);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kiln-stage");
	curl_easy_setopt(c, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
	if (getenv("NETRC") && *getenv("NETRC"))
		curl_easy_setopt(c, CURLOPT_NETRC_FILE, getenv("NETRC"));
	/* a server that is down or slow costs seconds, never the build */
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, envsecs("KILN_CACHE_CONNECT_TIMEOUT", 5));
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, envsecs("KILN_CACHE_STALL_TIMEOUT", 20));
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	if (tok && *tok) {
		h = xasprintf("Authorization: Bearer %s", tok);
		*hdr = curl_slist_append(*hdr, h);
		free(h);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdr);
	}
	if (!strcmp(q->method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(q->method, "PUT")) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READDATA, q->up);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)q->upsize);
	} else {
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, onbody);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, q->sink);
		curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)q->sink->max);
	}
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, onprogress);
}

/* a transfer that ended with rc: code (the HTTP status) as it was, or -1 with *err when
   no answer came (a server that did not answer is taken as down: down), or -2 with *err
   for a body too large or broken off */
static long
reqend(const struct req *q, CURLcode rc, long code, const char *eb, char **err)
{
	struct sink *k = q->sink;

	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		*err = xasprintf("%s: interrupted by signal %d", q->url, (int)proc_gotsig);
		return -1;
	}
	if ((rc == CURLE_WRITE_ERROR && k && k->over) || rc == CURLE_FILESIZE_EXCEEDED) {
		*err = xasprintf("%s: larger than the %llu bytes it may have", q->url,
		                 (unsigned long long)(k ? k->max : 0));
		return -2;
	}
	if (rc == CURLE_OK)
		return code;
	*err = xasprintf("%s: %s", q->url, *eb ? eb : curl_easy_strerror(rc));
	if (code >= 200 && code < 300)
		return -2;   /* an answer that broke off: a truncated object */
	if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT ||
	    rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_SSL_CONNECT_ERROR ||
	    rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING) {
		down = xasprintf("the remote stage cache did not answer (%s)", *err);
		free(*err);
		*err = xstrdup(down);
	}
	return -1;
}

/* One request: GET (body to q->sink), HEAD or PUT (q->up). Returns the HTTP status, or
   -1 with *err when no answer came (the server is then taken as down for the rest of
   the run), -2 with *err for a body too large or broken off. */
static long
request(const struct req *q, char **err)
{
	static int inited;
	char eb[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdr = NULL;
	CURLcode rc;
	long code = -1;
	CURL *c;

	if (down) {
		*err = xstrdup(down);
		return -1;
	}
	if ((!inited++ && curl_global_init(CURL_GLOBAL_DEFAULT) != 0) || !(c = curl_easy_init())) {
		*err = xstrdup("libcurl cannot start");
		return -1;
	}
	reqsetup(c, q, eb, &hdr);
	rc = proc_gotsig ? CURLE_ABORTED_BY_CALLBACK : curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	code = reqend(q, rc, code, eb, err);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	return code;
}

/* GET url into the new file path, at most max bytes; 1 got, 0 not there (404/410), -1
   with *err */
static int
getfile(const char *url, const char *path, uint64_t max, char **err)
{
	struct sink k = {0};
	long code;

	k.max = max;
	if ((k.fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0) {
		*err = xasprintf("%s: %s", path, strerror(errno));
		return -1;
	}
	code = request(&(struct req){.url = url, .method = "GET", .sink = &k}, err);
	if (close(k.fd) < 0 && code >= 200 && code < 300) {
		*err = xasprintf("%s: %s", path, strerror(errno));
		return -1;
	}
	if (code == 404 || code == 410)
		return 0;
	if (code >= 200 && code < 300)
		return 1;
	if (code >= 0)
		*err = xasprintf("%s: HTTP %ld", url, code);
	return -1;
}

/* PUT the file path (or, path NULL, the n bytes at p) to url; 0 or -1 with *err */
static int
putobj(const char *url, const char *path, const void *p, size_t n, char **err)
{
	struct stat sb;
	FILE *f;
	long code;

	if (path)
		f = fopen(path, "rbe");
	else
		f = fmemopen((void *)p, n ? n : 1, "rb");
	if (!f || (path && fstat(fileno(f), &sb) < 0)) {
		*err = xasprintf("%s: %s", path ? path : "(manifest)", strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	code = request(&(struct req){.url = url, .method = "PUT", .up = f,
	                             .upsize = path ? (long long)sb.st_size : (long long)n}, err);
	fclose(f);
	if (code >= 200 && code < 300)
		return 0;
	if (code >= 0)
		*err = xasprintf("%s: HTTP %ld (the server must accept PUT)", url, code);
	return -1;
}

/* 1 when the server holds url (HEAD 2xx) and this run did not find it corrupt, 0 not,
   -1 with *err */
static int
has(const char *url, char **err)
{
	long code;

	if (strv_has(&suspect, url))
		return 0;
	code = request(&(struct req){.url = url, .method = "HEAD"}, err);
	if (code >= 200 && code < 300)
		return 1;
	if (code == 404 || code == 410)
		return 0;
	if (code >= 0)
		*err = xasprintf("%s: HTTP %ld", url, code);
	return -1;
}

/* SHA-256 hex of a file (fresh string), or NULL */
static char *
filehex(const char *path)
{
	unsigned char d[32];
	struct buf b = {0};

	if (sha256_file(path, d, NULL) < 0)
		return NULL;
	hexenc(&b, d, 32);
	return bufdetach(&b);
}

/* remove the private entry folder TMP/ab/KEY and TMP */
static void
rmtmp(const char *tmp, const char *ent)
{
	struct strv names = {0};
	size_t i;
	char *p;

	dir_files(ent, &names);
	for (i = 0; i < names.n; i++) {
		p = xasprintf("%s/%s", ent, names.v[i]);
		unlink(p);
		free(p);
	}
	strv_free(&names);
	for (i = 0; i < 4; i++) {
		static const char *const dot[] = {".kiln-sums", ".kiln-id", ".kiln-inputs", ".kiln-log"};

		p = xasprintf("%s/%s", ent, dot[i]);
		unlink(p);
		free(p);
	}
	rmdir(ent);
	p = xasprintf("%s/%.2s", tmp, ent + strlen(tmp) + 1);
	rmdir(p);
	free(p);
	rmdir(tmp);
}

/* the keys of signed manifests: set by kiln-stage run's options, else the environment */
static const char *trustedkeys, *signkey;

void
remote_setkeys(const char *trusted, const char *secf)
{
	trustedkeys = trusted;
	signkey = secf;
}

static const char *
trusted(void)
{
	const char *t = trustedkeys ? trustedkeys : getenv("KILN_CACHE_TRUSTED_KEYS");

	return t && *t ? t : NULL;
}

static const char *
secretkey(void)
{
	const char *k = signkey ? signkey : getenv("KILN_CACHE_SIGN_KEY");

	return k && *k ? k : NULL;
}

/* the most bytes any object may have: KILN_CACHE_MAX_OBJECT, else MAXOBJECT */
static uint64_t
objcap(void)
{
	const char *v = getenv("KILN_CACHE_MAX_OBJECT");
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return MAXOBJECT;
	n = strtoull(v, &end, 10);
	return *end || !n ? MAXOBJECT : (uint64_t)n;
}

/* with trusted keys, a manifest must carry a signature by one of them over its bytes
   before the SIG= lines, which are then dropped; 0, or -1 with a fresh *why */
static int
trustmanifest(struct buf *man, char **why)
{
	size_t body;
	int r;

	if (!trusted())
		return 0;
	r = sign_check(man->s ? man->s : "", man->len, trusted(), &body, why);
	if (r != 1)
		return -1;
	man->len = body;
	if (man->s)
		man->s[body] = 0;
	return 0;
}

/* the most bytes output line i may have: its declared size (SIZES="N N ..." of the
   manifest) capped by objcap, objcap when the manifest declares none; 0, or -1 when
   SIZES is malformed */
static int
objmax(const char *sizes, size_t i, uint64_t *max)
{
	const char *p = sizes;
	char *end;
	unsigned long long n;

	*max = objcap();
	if (!p)
		return 0;
	for (;; i--) {
		p += strspn(p, " ");
		errno = 0;
		n = strtoull(p, &end, 10);
		if (end == p || errno || *p == '-')
			return -1;
		if (i == 0) {
			if ((uint64_t)n < *max)
				*max = (uint64_t)n;
			return 0;
		}
		p = end;
	}
}

/* one restore from the remote stage cache: what is asked, where it goes, and what is
   wrong with the server's entry when it is a miss */
struct rrestore {
	const char *url;                /* the server */
	const struct stage *s;          /* the stage: its key and name */
	const struct cacheio *io;       /* where its outputs and its log go */
	char *tmp, *ent;                /* the private folder entry it downloads into */
	const char *sizes;              /* the manifest's SIZES line */
	char *bad;                      /* why the entry is no good (a miss), or NULL */
};

/* output i of the manifest, its line (len bytes): fetched by its digest into x->ent, at
   most its size, and checked right away. 0 fine, 1 corrupt (x->bad says why), -1 the
   server is down (*err) */
static int
fetchobj(struct rrestore *x, const char *line, size_t len, size_t i, char **err)
{
	char *hex = xstrndup(line, 64), *e2 = NULL, *got = NULL;
	char *fn = xasprintf("%s/%.*s", x->ent, (int)(len - 66), line + 66);
	char *burl = objurl(x->url, "cas", hex);
	uint64_t max;
	int ok = objmax(x->sizes, i, &max) == 0, r = ok ? getfile(burl, fn, max, &e2) : -1;

	if (!ok)
		x->bad = xstrdup("declares an output size that is not a number");
	else if (r == 1 && (!(got = filehex(fn)) || strcmp(got, hex) != 0)) {
		x->bad = xasprintf("%s does not match its digest (corrupt or truncated)", burl);
		strv_add(&suspect, burl, 0);
	} else if (r == 0)
		x->bad = xasprintf("names %s, which the server does not hold", burl);
	else if (r < 0 && (down || proc_gotsig)) {
		*err = e2;
		e2 = NULL;
		r = -2;
	} else if (r < 0) {
		x->bad = e2;
		e2 = NULL;
		strv_add(&suspect, burl, 0);
	}
	free(e2);
	free(got);
	free(hex);
	free(fn);
	free(burl);
	return r == -2 ? -1 : x->bad ? 1 : 0;
}

/* every output line of st.sums; 0, 1 corrupt (*bad), -1 down (*err) */
static int
fetchobjs(struct rrestore *x, const struct stamp *st, char **err)
{
	const char *line, *nl;
	size_t i = 0;
	int r;

	for (line = st->sums; *line; line = nl + 1, i++) {
		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line) - 1;
		if (nl - line < 67 || line[64] != ' ' || line[65] != ' ' || !ishexn(line, 64) ||
		    memchr(line + 66, '/', (size_t)(nl - line - 66)) || line[66] == '.') {
			x->bad = xasprintf("has a malformed output line '%.80s'", line);
			return 1;
		}
		if ((r = fetchobj(x, line, (size_t)(nl - line), i, err)) != 0)
			return r;
		if (!*nl)
			break;
	}
	return 0;
}

/* the log of the run that built it, if it is there and whole */
static void
fetchlog(const char *url, const char *ent, const struct kvfile *kv)
{
	const char *log = kv_get(kv, "LOG");
	char *lurl, *lf, *got = NULL, *e2 = NULL;

	if (!log || strlen(log) != 64 || !ishexn(log, 64))
		return;
	lurl = objurl(url, "cas", log);
	lf = xasprintf("%s/.kiln-log", ent);
	if (getfile(lurl, lf, objcap(), &e2) == 1)
		got = filehex(lf);
	if (!got || strcmp(got, log) != 0)
		unlink(lf);
	free(e2);
	free(got);
	free(lurl);
	free(lf);
}

/* write the entry's .kiln-id and .kiln-sums from the manifest; 0 or -1 with *err */
static int
writeentry(const char *ent, const struct stamp *st, char **err)
{
	char *f = xasprintf("%s/.kiln-id", ent), *t = xasprintf("%s\n", st->id);
	int r = writefile_atomic(f, t, strlen(t), 0644);

	if (r == 0) {
		free(f);
		f = xasprintf("%s/.kiln-sums", ent);
		r = writefile_atomic(f, st->sums, strlen(st->sums), 0644);
	}
	if (r < 0)
		*err = xasprintf("%s: %s", f, strerror(errno));
	free(f);
	free(t);
	return r;
}

/* GET ac/KEY into man (at most 4 MiB): the HTTP code, or -1/-2 with *err */
static long
getmanifest(const char *acurl, struct buf *man, char **err)
{
	struct sink k = {-1, man, 4 << 20, 0, 0};
	long code = request(&(struct req){.url = acurl, .method = "GET", .sink = &k}, err);

	if (code >= 300 && code != 404 && code != 410)
		*err = xasprintf("%s: HTTP %ld", acurl, code);
	if (code == -2)
		strv_add(&suspect, acurl, 0);
	return code;
}

void
remote_rmstale(const char *outdir)
{
	char *o = xstrdup(outdir);
	const char *slash;
	char *dir, *pre, *p, *end;
	struct strv names = {0};
	long pid;
	size_t i;

	while (strlen(o) > 1 && o[strlen(o) - 1] == '/')
		o[strlen(o) - 1] = 0;
	slash = strrchr(o, '/');
	dir = slash ? xstrndup(o, slash == o ? 1 : (size_t)(slash - o)) : xstrdup(".");
	pre = xasprintf("%s.remote.", slash ? slash + 1 : o);
	os_listdir(dir, &names);
	for (i = 0; i < names.n; i++) {
		if (!startswith(names.v[i], pre) || !isdig((unsigned char)names.v[i][strlen(pre)]))
			continue;
		errno = 0;
		pid = strtol(names.v[i] + strlen(pre), &end, 10);
		if (*end || errno || pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 ||
		    errno != ESRCH)
			continue;
		p = xasprintf("%s/%s", dir, names.v[i]);
		os_rmtree(p);
		free(p);
	}
	strv_free(&names);
	free(pre);
	free(dir);
	free(o);
}

/* the private entry TMP/ab/KEY beside outdir (fresh; *tmp too), emptied */
static char *
privateentry(const char *outdir, const char *key, char **tmp)
{
	char *o = xstrdup(outdir), *ent;

	while (strlen(o) > 1 && o[strlen(o) - 1] == '/')
		o[strlen(o) - 1] = 0;
	*tmp = xasprintf("%s.remote.%ld", o, (long)getpid());
	free(o);
	ent = cache_entry(*tmp, key);
	rmtmp(*tmp, ent);
	return ent;
}

/* fill the private entry from the manifest (man: its bytes, signature checked) and
   restore it: 1 restored, 0 corrupt (*bad), -1 with *err */
static int
restoreentry(struct rrestore *x, const struct buf *man, char **id, char **err)
{
	struct stamp st = {0};
	struct kvfile kv = {0};
	char *f = xasprintf("%s/.kiln-inputs", x->ent), *e2 = NULL;
	int r = -1;

	if (os_mkdirs(x->ent, 0777) < 0 || writefile_atomic(f, man->s ? man->s : "", man->len, 0644) < 0) {
		*err = xasprintf("%s: %s", f, strerror(errno));
		goto out;
	}
	/* the manifest must be kiln's, for this very key and stage */
	if (stamp_read(&st, f, &e2) != 1 || strcmp(st.key, x->s->key) != 0 ||
	    strcmp(st.stage, x->s->name) != 0 || !st.sums || kv_load(&kv, f, &e2) < 0) {
		x->bad = xasprintf("is not a kiln-stage manifest for %s (key %.16s)", x->s->name,
		                   x->s->key);
		r = 0;
		goto out;
	}
	x->sizes = kv_get(&kv, "SIZES");
	if ((r = fetchobjs(x, &st, err)) != 0) {
		r = r > 0 ? 0 : -1;
		goto out;
	}
	if (writeentry(x->ent, &st, err) < 0)
		goto out;
	fetchlog(x->url, x->ent, &kv);
	os_mkdirs(x->io->logdir, 0777);
	/* installs only what matches the digests, once more on the copies it makes */
	if ((r = cache_restore(x->tmp, x->s, x->io, id, &e2)) != 1) {
		x->bad = e2 ? e2 : xstrdup("vanished while it was restored");
		e2 = NULL;
		r = 0;
	}
out:
	kv_free(&kv);
	stamp_free(&st);
	free(e2);
	free(f);
	return r;
}

int
remote_restore(const char *url, const struct stage *s, const struct cacheio *io, char **id,
               char **err)
{
	struct rrestore x = {.url = url, .s = s, .io = io};
	const char *outdir = io->outdir;
	char *acurl = objurl(url, "ac", s->key), *e2 = NULL;
	struct buf man = {0};
	long code;
	int r = -1;

	*id = NULL;
	code = getmanifest(acurl, &man, err);
	if (code == 404 || code == 410)
		r = 0;
	if (code < 200 || code >= 300)
		goto out;
	if (trustmanifest(&man, &x.bad) < 0) {
		/* a miss, said in one line, not a suspect object: the server is fine */
		*err = xasprintf("%s: remote stage-cache manifest %s; ignored", acurl, x.bad);
		goto out;
	}
	x.ent = privateentry(outdir, s->key, &x.tmp);
	r = restoreentry(&x, &man, id, err);
	if (r == 0) {
		strv_add(&suspect, acurl, 0);
		*err = xasprintf("%s: remote stage-cache object %s; ignored", acurl, x.bad);
		r = -1;
	}
	if (r < 0 && dir_empty(outdir, &e2) < 0)
		free(e2);
	rmtmp(x.tmp, x.ent);
out:
	free(x.bad);
	free(x.tmp);
	free(x.ent);
	free(acurl);
	buffree(&man);
	return r;
}

/* SIZES="N N ...": each output's size, in the order of sums */
static void
putsizes(struct buf *man, const char *outdir, const char *sums)
{
	struct buf v = {0};
	const char *line, *nl;
	struct stat sb;
	char *p;

	for (line = sums; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		p = xasprintf("%s/%.*s", outdir, (int)(nl - line - 66), line + 66);
		bufprintf(&v, "%s%llu", v.len ? " " : "", stat(p, &sb) == 0 ? (unsigned long long)sb.st_size : 0ULL);
		free(p);
	}
	kv_put(man, "SIZES", v.s ? v.s : "");
	buffree(&v);
}

/* the files first, by digest: every output not yet on the server, then the log (a
   courtesy: without it the manifest is still whole); *loghex its digest or NULL */
static int
storefiles(const char *url, const struct cacheio *io, const char *sums, char **loghex, char **err)
{
	const char *outdir = io->outdir, *logpath = io->logpath;
	const char *line, *nl;
	char *u, *p;
	int h;

	for (line = sums; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		p = xasprintf("%.64s", line);
		u = objurl(url, "cas", p);
		free(p);
		p = xasprintf("%s/%.*s", outdir, (int)(nl - line - 66), line + 66);
		h = has(u, err);
		if (h == 0)
			h = putobj(u, p, NULL, 0, err);
		free(u);
		free(p);
		if (h < 0)
			return -1;
	}
	if (logpath && (*loghex = filehex(logpath))) {
		u = objurl(url, "cas", *loghex);
		if (has(u, err) == 0 && putobj(u, logpath, NULL, 0, err) < 0) {
			free(*err);
			free(*loghex);
			*loghex = NULL;
		}
		free(u);
		if (down)
			return -1;
	}
	return 0;
}

int
remote_store(const char *url, const struct stage *s, const struct cacheio *io,
             const char *id, char **err)
{
	const char *outdir = io->outdir;
	struct buf sums = {0}, man = {0};
	char *acurl = objurl(url, "ac", s->key), *loghex = NULL;
	int r = -1, h;

	if ((h = has(acurl, err)) != 0) {
		free(acurl);
		return h;
	}
	if (dir_sums(outdir, &sums, err) < 0 || storefiles(url, io, sums.s, &loghex, err) < 0)
		goto out;
	/* the manifest that names them last, signed with the team's key when there is one */
	stamp_format(&man, s, id, sums.s);
	if (loghex)
		bufprintf(&man, "LOG=\"%s\"\n", loghex);
	putsizes(&man, outdir, sums.s);
	if (secretkey() && sign_append(&man, secretkey(), err) < 0)
		goto out;
	if (putobj(acurl, NULL, man.s, man.len, err) < 0)
		goto out;
	r = 0;
out:
	free(loghex);
	free(acurl);
	buffree(&sums);
	buffree(&man);
	return r;
}

char *
remote_explain(const char *url, const char *key)
{
	char *u = objurl(url, "ac", key), *err = NULL, *why;
	int h = has(u, &err);

	if (h == 1)
		why = xasprintf("stage cache: object %s", u);
	else if (h == 0)
		why = xasprintf("stage cache: no object for this key on the server (%s)", u);
	else
		why = xasprintf("stage cache: %s", err);
	free(err);
	free(u);
	return why;
}

int
remote_has(const char *url, const char *key, char **err)
{
	char *u = objurl(url, "ac", key);
	int h = has(u, err);

	free(u);
	return h;
}
