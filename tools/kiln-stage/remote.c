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
#include "strv.h"

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
	struct buf *b;    /* else append here, up to max bytes */
	size_t max;
	int over;
};

static size_t
onbody(char *p, size_t size, size_t n, void *arg)
{
	struct sink *k = arg;

	n *= size;
	if (k->fd >= 0)
		return writeall(k->fd, p, n) < 0 ? 0 : n;
	if (k->b->len + n > k->max) {
		k->over = 1;
		return 0;
	}
	bufadd(k->b, p, n);
	return n;
}

/* One request: GET (body to sink), HEAD (sink NULL, up NULL) or PUT (up: the body of
   upsize bytes). Returns the HTTP status, or -1 with *err when no answer came (the
   server is then taken as down for the rest of the run). */
static long
request(const char *url, const char *method, struct sink *sink, FILE *up, long long upsize,
        char **err)
{
	static int inited;
	char eb[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdr = NULL;
	const char *tok = getenv("KILN_CACHE_TOKEN");
	CURLcode rc;
	long code = -1;
	CURL *c;

	if (down) {
		*err = xstrdup(down);
		return -1;
	}
	if (!inited++ && curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		*err = xstrdup("libcurl cannot start");
		return -1;
	}
	if (!(c = curl_easy_init())) {
		*err = xstrdup("libcurl cannot start");
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
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
		char *h = xasprintf("Authorization: Bearer %s", tok);

		hdr = curl_slist_append(hdr, h);
		free(h);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	}
	if (!strcmp(method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(method, "PUT")) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READDATA, up);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)upsize);
	} else {
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, onbody);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
	}
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (rc == CURLE_WRITE_ERROR && sink && sink->over) {
		*err = xasprintf("%s: larger than a manifest can be", url);
		code = -2;
	} else if (rc != CURLE_OK && code >= 200 && code < 300) {
		/* an answer that broke off: a truncated object */
		*err = xasprintf("%s: %s", url, *eb ? eb : curl_easy_strerror(rc));
		code = -2;
	} else if (rc != CURLE_OK) {
		*err = xasprintf("%s: %s", url, *eb ? eb : curl_easy_strerror(rc));
		if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT ||
		    rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_SSL_CONNECT_ERROR ||
		    rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING)
		{
			down = xasprintf("the remote stage cache did not answer (%s)", *err);
			free(*err);
			*err = xstrdup(down);
		}
		code = -1;
	}
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	return code;
}

/* GET url into the new file path; 1 got, 0 not there (404/410), -1 with *err */
static int
getfile(const char *url, const char *path, char **err)
{
	struct sink k = {0};
	long code;

	if ((k.fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0) {
		*err = xasprintf("%s: %s", path, strerror(errno));
		return -1;
	}
	code = request(url, "GET", &k, NULL, 0, err);
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
	code = request(url, "PUT", NULL, f, path ? (long long)sb.st_size : (long long)n, err);
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
	code = request(url, "HEAD", NULL, NULL, 0, err);
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

static int
ishex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
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

int
remote_restore(const char *url, const char *key, const char *name, const char *outdir,
               const char *logdir, char **id, char **err)
{
	char *tmp, *ent, *acurl, *f = NULL, *bad = NULL, *e2 = NULL, *o, *hex;
	struct buf man = {0}, t = {0};
	struct sink k = {-1, &man, 4 << 20, 0};
	struct stamp st = {0};
	struct kvfile kv = {0};
	const char *line, *nl, *log;
	long code;
	int r = -1;

	*id = NULL;
	acurl = objurl(url, "ac", key);
	code = request(acurl, "GET", &k, NULL, 0, err);
	if (code == 404 || code == 410) {
		free(acurl);
		buffree(&man);
		return 0;
	}
	if (code < 0 || code >= 300) {
		if (code >= 0)
			*err = xasprintf("%s: HTTP %ld", acurl, code);
		if (code == -2)
			strv_add(&suspect, acurl, 0);
		free(acurl);
		buffree(&man);
		return -1;
	}
	o = xstrdup(outdir);
	while (strlen(o) > 1 && o[strlen(o) - 1] == '/')
		o[strlen(o) - 1] = 0;
	tmp = xasprintf("%s.remote.%ld", o, (long)getpid());
	free(o);
	ent = cache_entry(tmp, key);
	rmtmp(tmp, ent);
	if (os_mkdirs(ent, 0777) < 0) {
		*err = xasprintf("%s: cannot create: %s", ent, strerror(errno));
		goto out;
	}
	f = xasprintf("%s/.kiln-inputs", ent);
	if (writefile_atomic(f, man.s ? man.s : "", man.len, 0644) < 0) {
		*err = xasprintf("%s: %s", f, strerror(errno));
		goto out;
	}
	/* the manifest must be kiln's, for this very key and stage */
	if (stamp_read(&st, f, &e2) != 1 || strcmp(st.key, key) != 0 || strcmp(st.stage, name) != 0 ||
	    !st.sums) {
		bad = xasprintf("is not a kiln-stage manifest for %s (key %.16s)", name, key);
		goto corrupt;
	}
	/* each output: fetched by its digest, checked right away */
	for (line = st.sums; *line; line = nl + 1) {
		char *fn, *got, *burl;

		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line) - 1;
		if (nl - line < 67 || line[64] != ' ' || line[65] != ' ' || !ishex(line, 64) ||
		    memchr(line + 66, '/', (size_t)(nl - line - 66)) || line[66] == '.') {
			bad = xasprintf("has a malformed output line '%.80s'", line);
			goto corrupt;
		}
		hex = xstrndup(line, 64);
		fn = xasprintf("%s/%.*s", ent, (int)(nl - line - 66), line + 66);
		burl = objurl(url, "cas", hex);
		r = getfile(burl, fn, &e2);
		got = r == 1 ? filehex(fn) : NULL;
		if (r == 0)
			bad = xasprintf("names %s, which the server does not hold", burl);
		else if (r == 1 && (!got || strcmp(got, hex) != 0)) {
			bad = xasprintf("%s does not match its digest (corrupt or truncated)", burl);
			strv_add(&suspect, burl, 0);
		} else if (r < 0 && !down) {
			bad = xasprintf("%s", e2);
			strv_add(&suspect, burl, 0);
		}
		r = r < 0 && down ? -2 : 0;
		free(got);
		free(hex);
		free(fn);
		free(burl);
		if (r == -2) {
			*err = e2;
			e2 = NULL;
			r = -1;
			goto out;
		}
		if (bad)
			goto corrupt;
		if (!*nl)
			break;
	}
	r = -1;
	bufprintf(&t, "%s\n", st.id);
	free(f);
	f = xasprintf("%s/.kiln-id", ent);
	if (writefile_atomic(f, t.s, t.len, 0644) < 0) {
		*err = xasprintf("%s: %s", f, strerror(errno));
		goto out;
	}
	free(f);
	f = xasprintf("%s/.kiln-sums", ent);
	if (writefile_atomic(f, st.sums, strlen(st.sums), 0644) < 0) {
		*err = xasprintf("%s: %s", f, strerror(errno));
		goto out;
	}
	/* the log of the run that built it, if it is there and whole */
	free(f);
	f = xasprintf("%s/.kiln-inputs", ent);
	if (kv_load(&kv, f, &e2) == 0 && (log = kv_get(&kv, "LOG")) && strlen(log) == 64 &&
	    ishex(log, 64)) {
		char *lurl = objurl(url, "cas", log), *lf = xasprintf("%s/.kiln-log", ent), *got = NULL;

		free(e2);
		e2 = NULL;
		if (getfile(lurl, lf, &e2) == 1)
			got = filehex(lf);
		if (!got || strcmp(got, log) != 0)
			unlink(lf);
		free(got);
		free(lurl);
		free(lf);
	}
	free(e2);
	e2 = NULL;
	os_mkdirs(logdir, 0777);
	/* installs only what matches the digests, once more on the copies it makes */
	r = cache_restore(tmp, key, outdir, logdir, name, id, &e2);
	if (r == 1)
		goto out;
	bad = e2 ? e2 : xstrdup("vanished while it was restored");
	e2 = NULL;
corrupt:
	strv_add(&suspect, acurl, 0);
	*err = xasprintf("%s: remote stage-cache object %s; ignored", acurl, bad);
	free(bad);
	r = -1;
	bad = NULL;
	if (dir_empty(outdir, &bad) < 0)
		free(bad);
out:
	rmtmp(tmp, ent);
	kv_free(&kv);
	stamp_free(&st);
	free(e2);
	free(f);
	free(tmp);
	free(ent);
	free(acurl);
	buffree(&man);
	buffree(&t);
	return r;
}

int
remote_store(const char *url, const struct stage *s, const char *outdir, const char *id,
             const char *logpath, char **err)
{
	struct buf sums = {0}, man = {0};
	char *acurl = objurl(url, "ac", s->key), *loghex = NULL, *u, *p;
	const char *line, *nl;
	int r = -1, h;

	if ((h = has(acurl, err)) != 0) {
		free(acurl);
		return h;
	}
	if (dir_sums(outdir, &sums, err) < 0)
		goto out;
	/* the files first, by digest; the manifest that names them last */
	for (line = sums.s; line && *line; line = nl + 1) {
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
			goto out;
	}
	if (logpath && (loghex = filehex(logpath))) {
		u = objurl(url, "cas", loghex);
		if (has(u, err) == 0 && putobj(u, logpath, NULL, 0, err) < 0) {
			/* the log is a courtesy: a manifest without one is still whole */
			free(*err);
			free(loghex);
			loghex = NULL;
		}
		free(u);
		if (down)
			goto out;
	}
	stamp_format(&man, s, id, sums.s);
	if (loghex)
		bufprintf(&man, "LOG=\"%s\"\n", loghex);
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
