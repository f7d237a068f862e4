/* --check and Requires-Python: read a wheel with the zip reader of tools/lib, which
   refuses what pip cannot install safely (see check.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "check.h"
#include "hash.h"
#include "os.h"
#include "wheelpath.h"
#include "zip.h"

#define MAXMETA (256u << 20) /* largest WHEEL / METADATA / RECORD read into memory */

/* one member of the zip */
struct member {
	char *name;
	char *b64;      /* urlsafe base64 SHA-256 of the content, no padding */
	uint64_t size;
	int listed;     /* named by a RECORD row */
};

static int
bymember(const void *a, const void *b)
{
	return strcmp(((const struct member *)a)->name, ((const struct member *)b)->name);
}

static struct member *
findmember(struct member *m, size_t n, const char *name)
{
	struct member key = { 0 };

	key.name = (char *)name;
	return bsearch(&key, m, n, sizeof *m, bymember);
}

/* the value of header key in an email-style text (first occurrence, before the body) */
static char *
header(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *p = text;

	while (p && *p && *p != '\n' && !(*p == '\r' && p[1] == '\n')) {
		const char *e = strchr(p, '\n');
		size_t ll = e ? (size_t)(e - p) : strlen(p);
		if (ll > kl && !strncasecmp(p, key, kl) && p[kl] == ':') {
			const char *v = p + kl + 1;
			size_t vl = ll - kl - 1;
			while (vl && (*v == ' ' || *v == '\t')) {
				v++;
				vl--;
			}
			while (vl && (v[vl - 1] == '\r' || v[vl - 1] == ' ' || v[vl - 1] == '\t'))
				vl--;
			return xstrndup(v, vl);
		}
		p = e ? e + 1 : NULL;
	}
	return NULL;
}

/* read one CSV field at *p (RFC 4180 quoting); returns it, *p past the separator */
static char *
csvfield(const char **p, int *eol)
{
	struct buf b = { 0 };
	const char *s = *p;

	bufputs(&b, "");
	if (*s == '"') {
		s++;
		while (*s) {
			if (*s == '"' && s[1] == '"') {
				bufputc(&b, '"');
				s += 2;
			} else if (*s == '"') {
				s++;
				break;
			} else {
				bufputc(&b, *s++);
			}
		}
	}
	while (*s && *s != ',' && *s != '\n' && *s != '\r')
		bufputc(&b, *s++);
	if (*s == '\r')
		s++;
	*eol = *s != ',';
	if (*s)
		s++;
	*p = s;
	return bufdetach(&b);
}

/* check RECORD against the members; returns 0 or 1 with *err */
static int
checkrecord(const char *rec, const char *recname, struct member *m, size_t nm, char **err)
{
	const char *p = rec;
	int line = 0;
	size_t k;

	while (*p) {
		char *f[3] = { NULL, NULL, NULL }, *end;
		int eol = 0, nf = 0, bad = 0;
		struct member *mb;

		line++;
		while (!eol && *p) {
			char *x = csvfield(&p, &eol);
			if (nf < 3)
				f[nf] = x;
			else
				free(x);
			nf++;
		}
		if (nf == 1 && !*f[0]) {
			free(f[0]);
			continue;
		}
		if (nf != 3) {
			*err = xasprintf("%s line %d: want 3 fields (path,hash,size), found %d", recname,
			                 line, nf);
			bad = 1;
		} else if (!(mb = findmember(m, nm, f[0]))) {
			*err = xasprintf("%s line %d: lists %s, which is not in the wheel", recname, line,
			                 f[0]);
			bad = 1;
		} else {
			mb->listed = 1;
			if (!*f[1] && !*f[2] &&
			    (!strcmp(f[0], recname) || endswith(f[0], ".jws") || endswith(f[0], ".p7s"))) {
				/* RECORD and its signatures carry no hash */
			} else if (!startswith(f[1], "sha256=")) {
				*err = xasprintf("%s line %d: %s: hash '%s' is not sha256=...", recname, line,
				                 f[0], f[1]);
				bad = 1;
			} else if (strcmp(f[1] + 7, mb->b64)) {
				*err = xasprintf("%s: sha256 mismatch (RECORD says %s, the content hashes to %s)",
				                 f[0], f[1] + 7, mb->b64);
				bad = 1;
			} else {
				errno = 0;
				unsigned long long sz = strtoull(f[2], &end, 10);
				if (!*f[2] || *end || errno) {
					*err = xasprintf("%s line %d: %s: size '%s' is not a number", recname, line,
					                 f[0], f[2]);
					bad = 1;
				} else if (sz != mb->size) {
					*err = xasprintf("%s: size mismatch (RECORD says %llu, the member has %llu bytes)",
					                 f[0], sz, (unsigned long long)mb->size);
					bad = 1;
				}
			}
		}
		free(f[0]);
		free(f[1]);
		free(f[2]);
		if (bad)
			return 1;
	}
	for (k = 0; k < nm; k++)
		if (!m[k].listed) {
			*err = xasprintf("%s is in the wheel but not listed in %s", m[k].name, recname);
			return 1;
		}
	return 0;
}

/* compare the WHEEL file's tags and build with the file name */
static int
checkwheelfile(const char *text, const char *dist, const struct wheelname *w, char **err)
{
	const char *p = text;
	char *wv = header(text, "Wheel-Version"), *build = header(text, "Build");
	struct strset { char **v; size_t n, cap; } got = { 0 };
	size_t k, j;
	int r = 0;

	if (!wv) {
		*err = xasprintf("%s/WHEEL has no Wheel-Version", dist);
		r = 1;
		goto out;
	}
	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t ll = e ? (size_t)(e - p) : strlen(p);
		if (ll > 4 && !strncasecmp(p, "Tag:", 4)) {
			char *v = header(p, "Tag");
			struct tagset ts;
			const char *why;
			if (v && wheeltags_parse(v, 0, &ts, &why) == 0) {
				const struct wheeltag *t = ts.tags;
				for (k = 0; k < ts.ntags; k++) {
					got.v = xgrow(got.v, &got.cap, got.n + 1, sizeof *got.v);
					got.v[got.n++] = xasprintf("%s-%s-%s", t[k].py, t[k].abi, t[k].plat);
				}
				free(ts.tags);
				free(ts.mem);
			} else {
				*err = xasprintf("%s/WHEEL: bad Tag '%s': %s", dist, v ? v : "", why);
				free(v);
				r = 1;
				goto out;
			}
			free(v);
		}
		p = e ? e + 1 : NULL;
	}
	/* every tag of the name is in WHEEL and every WHEEL tag is in the name */
	for (k = 0; k < w->ntags && !r; k++) {
		char *s = xasprintf("%s-%s-%s", w->tags[k].py, w->tags[k].abi, w->tags[k].plat);
		for (j = 0; j < got.n && strcmp(got.v[j], s); j++)
			;
		if (j == got.n) {
			*err = xasprintf("%s/WHEEL does not list the tag %s of the file name", dist, s);
			r = 1;
		}
		free(s);
	}
	for (j = 0; j < got.n && !r; j++) {
		for (k = 0; k < w->ntags; k++) {
			char *s = xasprintf("%s-%s-%s", w->tags[k].py, w->tags[k].abi, w->tags[k].plat);
			int same = !strcmp(got.v[j], s);
			free(s);
			if (same)
				break;
		}
		if (k == w->ntags) {
			*err = xasprintf("%s/WHEEL has the tag %s, which the file name lacks", dist,
			                 got.v[j]);
			r = 1;
		}
	}
	if (!r && (build || w->hasbuild)) {
		char *want = w->hasbuild ? xasprintf("%llu%s", (unsigned long long)w->buildnum,
		                                     w->buildrest) : xstrdup("");
		if (!build || strcmp(build, want)) {
			*err = xasprintf("%s/WHEEL Build '%s' differs from the file name's build tag '%s'",
			                 dist, build ? build : "", want);
			r = 1;
		}
		free(want);
	}
out:
	for (k = 0; k < got.n; k++)
		free(got.v[k]);
	free(got.v);
	free(wv);
	free(build);
	return r;
}

/* open path for reading without blocking; 0, or 2 with *err (missing, a FIFO ...) */
static int
regular(const char *path, char **err)
{
	struct stat st;
	int fd;

	/* O_NONBLOCK: a FIFO named *.whl would otherwise wait for a writer forever */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		*err = xasprintf("cannot open: %s", strerror(errno));
		return 2;
	}
	if (fstat(fd, &st) < 0) {
		*err = xasprintf("cannot stat: %s", strerror(errno));
		close(fd);
		return 2;
	}
	if (!S_ISREG(st.st_mode)) {
		*err = xasprintf("is %s, not a wheel file", os_ftype(st.st_mode));
		close(fd);
		return 2;
	}
	close(fd);
	return 0;
}

struct sink {
	struct sha256 h;
	int hash;              /* h is in use */
	uint64_t size;
	struct buf *keep;      /* content kept (WHEEL, METADATA, RECORD), or NULL */
};

static int
sinkchunk(void *ctx, const void *p, size_t n)
{
	struct sink *k = ctx;

	if (k->hash)
		sha256_update(&k->h, p, n);
	k->size += n;
	if (k->keep) {
		if (k->keep->len + n > MAXMETA)
			return 1;
		bufadd(k->keep, p, n);
	}
	return 0;
}

/* the NAME.dist-info folder a top-level member name is in (fresh), or NULL */
static char *
distof(const char *name)
{
	const char *slash = strchr(name, '/');

	if (slash && (size_t)(slash - name) > 10 && !strncmp(slash - 10, ".dist-info", 10))
		return xstrndup(name, (size_t)(slash - name));
	return NULL;
}

/* what wheel_check reads out of the zip */
struct wread {
	char *dist, *wheel, *meta, *rec;	/* the .dist-info folder, its three files */
	struct member *m;
	size_t nm, cap;
};

static void
wread_free(struct wread *wr)
{
	size_t k;

	for (k = 0; k < wr->nm; k++) {
		free(wr->m[k].name);
		free(wr->m[k].b64);
	}
	free(wr->m);
	free(wr->dist);
	free(wr->wheel);
	free(wr->meta);
	free(wr->rec);
}

/* name's .dist-info folder; whether it is WHEEL, METADATA or RECORD there (*keep); -1 with
   *err when it is a second .dist-info folder */
static int
distmember(struct wread *wr, const char *name, int *keep, char **err)
{
	char *top = distof(name);
	const char *rest;

	*keep = 0;
	if (!top)
		return 0;
	rest = name + strlen(top) + 1;
	if (!wr->dist) {
		wr->dist = top;
	} else if (strcmp(wr->dist, top)) {
		*err = xasprintf("more than one .dist-info folder (%s, %s)", wr->dist, top);
		free(top);
		return -1;
	} else {
		free(top);
	}
	*keep = !strcmp(rest, "WHEEL") || !strcmp(rest, "METADATA") || !strcmp(rest, "RECORD");
	return 0;
}

/* inflate member e (its size and CRC-32 must be what the archive says, as pip's zipfile
   checks when it installs it): its hash and size into wr's list, the three metadata files
   kept; 0, or -1 with *err */
static int
readmember(struct zipin *z, const struct zipent *e, struct wread *wr, int keep, char **err)
{
	struct sink sk;
	unsigned char d[32];
	struct buf content = { 0 }, hb = { 0 };
	char *zerr = NULL, **to;
	int rr;

	sha256_init(&sk.h);
	sk.hash = 1;
	sk.size = 0;
	sk.keep = keep ? &content : NULL;
	rr = zip_read(z, e, sinkchunk, &sk, &zerr);
	sha256_final(&sk.h, d);
	if (rr) {
		*err = rr > 0 ? xasprintf("%s is over %u MiB", e->name, MAXMETA >> 20) :
		       xasprintf("not a valid zip: %s", zerr);
		free(zerr);
		buffree(&content);
		return -1;
	}
	if (keep) {
		const char *rest = e->name + strlen(wr->dist) + 1;
		to = !strcmp(rest, "WHEEL") ? &wr->wheel : !strcmp(rest, "METADATA") ? &wr->meta : &wr->rec;
		bufputs(&content, "");
		free(*to);
		*to = bufdetach(&content);
	}
	buffree(&content);
	wr->m = xgrow(wr->m, &wr->cap, wr->nm + 1, sizeof *wr->m);
	b64url(&hb, d, 32);
	wr->m[wr->nm].name = xstrdup(e->name);
	wr->m[wr->nm].b64 = bufdetach(&hb);
	wr->m[wr->nm].size = sk.size;
	wr->m[wr->nm].listed = 0;
	wr->nm++;
	return 0;
}

/* every member, then: one .dist-info folder, no member twice; 0 or -1 with *err */
static int
readmembers(struct zipin *z, struct wread *wr, char **err)
{
	size_t k;
	int keep;

	for (k = 0; k < z->n; k++) {
		if (distmember(wr, z->e[k].name, &keep, err) < 0)
			return -1;
		if (!endswith(z->e[k].name, "/") && readmember(z, &z->e[k], wr, keep, err) < 0)
			return -1;
	}
	if (!wr->dist) {
		*err = xasprintf("no .dist-info folder");
		return -1;
	}
	qsort(wr->m, wr->nm, sizeof *wr->m, bymember);
	for (k = 1; k < wr->nm; k++)
		if (!strcmp(wr->m[k - 1].name, wr->m[k].name)) {
			*err = xasprintf("the member %s is in the zip twice", wr->m[k].name);
			return -1;
		}
	return 0;
}

/* NAME-VERSION.dist-info agrees with the file name; 0 or -1 with *err */
static int
checkdistname(const char *dist, const struct wheelname *w, char **err)
{
	char *stem = xstrndup(dist, strlen(dist) - 10);
	const char *dash = strrchr(stem, '-');
	struct buf cn = { 0 };
	struct pep440 v;
	int ok = 0;

	if (dash) {
		canonname(&cn, stem, (size_t)(dash - stem));
		if (!strcmp(cn.s, w->name) && pep440_parses(&v, dash + 1) == 0) {
			ok = pep440_cmp(&v, &w->ver) == 0;
			pep440_free(&v);
		}
	}
	buffree(&cn);
	free(stem);
	if (!ok)
		*err = xasprintf("%s does not match the file name (%s %s)", dist, w->name, w->verstr);
	return ok ? 0 : -1;
}

/* METADATA's Name and Version are the file name's; 0 or -1 with *err */
static int
checkmetadata(const char *meta, const char *dist, const struct wheelname *w, char **err)
{
	char *name = header(meta, "Name"), *ver = header(meta, "Version");
	struct buf cn = { 0 };
	struct pep440 v;

	if (!name || !ver) {
		*err = xasprintf("%s/METADATA has no %s", dist, !name ? "Name" : "Version");
	} else {
		canonname(&cn, name, strlen(name));
		if (strcmp(cn.s, w->name)) {
			*err = xasprintf("%s/METADATA Name '%s' differs from the file name's '%s'", dist,
			                 name, w->rawname);
		} else if (pep440_parses(&v, ver) < 0) {
			*err = xasprintf("%s/METADATA Version '%s' is not a valid version", dist, ver);
		} else {
			if (pep440_cmp(&v, &w->ver))
				*err = xasprintf("%s/METADATA Version '%s' differs from the file name's '%s'",
				                 dist, ver, w->verstr);
			pep440_free(&v);
		}
	}
	buffree(&cn);
	free(name);
	free(ver);
	return *err ? -1 : 0;
}

int
wheel_check(const char *path, const struct wheelname *w, char **err)
{
	struct zipin z;
	struct wread wr = { 0 };
	char *zerr = NULL, *recname;
	int r = 1, zr;

	*err = NULL;
	if (regular(path, err))
		return 2;
	if ((zr = zip_open(&z, path, &zerr)) < 0) {
		/* a member path pip would write outside its folder, or two members that install
		   to one path: the input is hostile, not merely damaged */
		*err = zr == ZIP_EPATH ? zerr : xasprintf("not a valid zip: %s", zerr);
		if (zr != ZIP_EPATH)
			free(zerr);
		return zr == ZIP_EPATH ? 2 : 1;
	}
	if (readmembers(&z, &wr, err) < 0 || checkdistname(wr.dist, w, err) < 0)
		goto out;
	if (!wr.wheel || !wr.meta || !wr.rec) {
		*err = xasprintf("%s has no %s", wr.dist,
		                 !wr.wheel ? "WHEEL" : !wr.meta ? "METADATA" : "RECORD");
		goto out;
	}
	if (checkwheelfile(wr.wheel, wr.dist, w, err) || checkmetadata(wr.meta, wr.dist, w, err))
		goto out;
	recname = xasprintf("%s/RECORD", wr.dist);
	r = checkrecord(wr.rec, recname, wr.m, wr.nm, err);
	free(recname);
out:
	zip_close(&z);
	wread_free(&wr);
	return r;
}
int
wheel_requirespython(const char *path, char **out, char **err)
{
	struct zipin z;
	struct buf meta = { 0 };
	struct sink sk;
	char *zerr = NULL;
	size_t k;
	int r = 0;

	*out = NULL;
	*err = NULL;
	if (regular(path, err))
		return -1;
	if (zip_open(&z, path, err) < 0)
		return -1;
	for (k = 0; k < z.n; k++) {
		char *top = distof(z.e[k].name);
		int is = top && !strcmp(z.e[k].name + strlen(top) + 1, "METADATA");
		free(top);
		if (!is)
			continue;
		sk.hash = 0;
		sk.size = 0;
		sk.keep = &meta;
		if (zip_read(&z, &z.e[k], sinkchunk, &sk, &zerr) < 0) {
			*err = xasprintf("%s cannot be read: %s", z.e[k].name, zerr);
			free(zerr);
			r = -1;
			break;
		}
		bufputs(&meta, "");
		*out = header(meta.s, "Requires-Python");
		r = *out ? 1 : 0;
		break;
	}
	buffree(&meta);
	zip_close(&z);
	return r;
}
