/* stage keys, stamps and the stage cache */
#include "stage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "hash.h"

static void
addinput(struct input **v, size_t *n, size_t *cap, const char *name, const char *value)
{
	*v = xgrow(*v, cap, *n + 1, sizeof **v);
	(*v)[*n].name = xstrdup(name);
	(*v)[*n].value = xstrdup(value);
	(*n)++;
}

static void
freeinputs(struct input *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

/* PARENT_ + stage name with '.' as "__" and every other character outside
   [A-Za-z0-9_] as '_' (a key-file name); parentname reverses the "__" */
static char *
parentkey(const char *stage)
{
	struct buf b = {0};
	const char *p;

	bufputs(&b, "PARENT_");
	for (p = stage; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '_')
			bufputc(&b, *p);
		else if (*p == '.')
			bufputs(&b, "__");
		else
			bufputc(&b, '_');
	}
	return bufdetach(&b);
}

/* the stage name in a PARENT_ key, for messages (fresh string) */
static char *
parentname(const char *key)
{
	struct buf b = {0};
	const char *p;

	for (p = key + 7; *p; p++) {
		if (p[0] == '_' && p[1] == '_') {
			bufputc(&b, '.');
			p++;
		} else {
			bufputc(&b, *p);
		}
	}
	return bufdetach(&b);
}

static int
ishex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == 0;
}

int
stamp_read(struct stamp *st, const char *path, char **err)
{
	struct kvfile f;
	const char *v;
	size_t i;

	memset(st, 0, sizeof *st);
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (kv_load(&f, path, err) < 0) {
		kv_free(&f);
		return -1;
	}
	v = kv_get(&f, "KILN_STAMP");
	if (!v || strcmp(v, "1") != 0 || !kv_get(&f, "STAGE") || !kv_get(&f, "ID") ||
	    !(v = kv_get(&f, "KEY")) || !ishex64(v)) {
		*err = xasprintf("%s: not a kiln-stage stamp (no KILN_STAMP=1, STAGE, KEY or ID)", path);
		kv_free(&f);
		return -1;
	}
	memcpy(st->key, v, 65);
	st->stage = xstrdup(kv_get(&f, "STAGE"));
	st->id = xstrdup(kv_get(&f, "ID"));
	for (i = 0; i < f.n; i++)
		if (startswith(f.v[i].key, "IN_"))
			addinput(&st->in, &st->nin, &st->capin, f.v[i].key + 3, f.v[i].value);
	kv_free(&f);
	return 1;
}

void
stamp_free(struct stamp *st)
{
	free(st->stage);
	free(st->id);
	freeinputs(st->in, st->nin);
	memset(st, 0, sizeof *st);
}

/* append KEY="value" with \ " $ ` escaped, as kv.h and sh both read it */
static void
putkv(struct buf *b, const char *k, const char *v)
{
	bufprintf(b, "%s=\"", k);
	for (; *v; v++) {
		if (*v == '\n') {
			bufputs(b, " ");
			continue;
		}
		if (strchr("\\\"$`", *v))
			bufputc(b, '\\');
		bufputc(b, *v);
	}
	bufputs(b, "\"\n");
}

void
stamp_format(struct buf *b, const struct stage *s, const char *id)
{
	struct buf k = {0};
	size_t i;

	bufputs(b, "# kiln-stage stamp: the stage ran for this key; written last\n");
	bufputs(b, "KILN_STAMP=1\n");
	putkv(b, "STAGE", s->name);
	putkv(b, "KEY", s->key);
	putkv(b, "ID", id);
	for (i = 0; i < s->nin; i++) {
		bufreset(&k);
		bufprintf(&k, "IN_%s", s->in[i].name);
		putkv(b, k.s, s->in[i].value);
	}
	buffree(&k);
}

int
stage_load(struct stage *s, const char *name, const char *keyfile, char *const *parents,
           size_t nparents, char **err)
{
	struct kvfile f;
	struct stamp st;
	struct sha256 h;
	struct buf hex = {0};
	unsigned char d[32];
	size_t i;
	char *pk;
	int r;

	memset(s, 0, sizeof *s);
	s->name = xstrdup(name);
	if (kv_load(&f, keyfile, err) < 0) {
		kv_free(&f);
		return -1;
	}
	for (i = 0; i < f.n; i++)
		addinput(&s->in, &s->nin, &s->capin, f.v[i].key, f.v[i].value);
	kv_free(&f);
	for (i = 0; i < nparents; i++) {
		r = stamp_read(&st, parents[i], err);
		if (r == 0) {
			*err = xasprintf("%s: parent stamp missing (run its stage first)", parents[i]);
			return -1;
		}
		if (r < 0)
			return -1;
		pk = parentkey(st.stage);
		addinput(&s->in, &s->nin, &s->capin, pk, st.id);
		free(pk);
		stamp_free(&st);
	}
	/* the chained key: name, then every input as NUL-separated name and value */
	sha256_init(&h);
	sha256_update(&h, "kiln-stage 1", 13);
	sha256_update(&h, name, strlen(name) + 1);
	for (i = 0; i < s->nin; i++) {
		sha256_update(&h, s->in[i].name, strlen(s->in[i].name) + 1);
		sha256_update(&h, s->in[i].value, strlen(s->in[i].value) + 1);
	}
	sha256_final(&h, d);
	hexenc(&hex, d, 32);
	memcpy(s->key, hex.s, 65);
	buffree(&hex);
	return 0;
}

void
stage_free(struct stage *s)
{
	free(s->name);
	freeinputs(s->in, s->nin);
	memset(s, 0, sizeof *s);
}

static const char *
findin(const struct input *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return v[i].value;
	return NULL;
}

/* a value short enough for one line */
static void
putshort(struct buf *b, const char *v)
{
	size_t n = strlen(v);

	if (n > 40)
		bufprintf(b, "%.16s...%s", v, v + n - 12);
	else
		bufputs(b, *v ? v : "(empty)");
}

char *
stage_explain(const struct stage *s, const struct stamp *st, int max)
{
	struct buf b = {0};
	const char *old;
	int n = 0;
	size_t i;

	if (!st)
		return xstrdup("no stamp yet (never built, or the last run did not finish)");
	if (strcmp(st->key, s->key) == 0)
		return xstrdup("up to date");
	for (i = 0; i < s->nin && n < max; i++) {
		old = findin(st->in, st->nin, s->in[i].name);
		if (old && strcmp(old, s->in[i].value) == 0)
			continue;
		if (n++)
			bufputs(&b, "; ");
		if (startswith(s->in[i].name, "PARENT_")) {
			char *pn = parentname(s->in[i].name);

			bufprintf(&b, "parent %s %s", pn, old ? "changed" : "is new");
			free(pn);
			continue;
		}
		if (!old) {
			bufprintf(&b, "new input %s=", s->in[i].name);
			putshort(&b, s->in[i].value);
			continue;
		}
		bufprintf(&b, "input %s changed: ", s->in[i].name);
		putshort(&b, old);
		bufputs(&b, " -> ");
		putshort(&b, s->in[i].value);
	}
	for (i = 0; i < st->nin && n < max; i++) {
		if (findin(s->in, s->nin, st->in[i].name))
			continue;
		if (n++)
			bufputs(&b, "; ");
		bufprintf(&b, "input %s was removed", st->in[i].name);
	}
	if (n == 0)
		bufputs(&b, "the key's form changed (same inputs)");
	return bufdetach(&b);
}

char *
stage_idfrom(const struct stage *s, const char *names)
{
	struct sha256 h;
	struct buf hex = {0}, want = {0};
	unsigned char d[32];
	size_t i;

	bufprintf(&want, ",%s,", names ? names : "");
	sha256_init(&h);
	sha256_update(&h, "kiln-id 1", 10);
	for (i = 0; i < s->nin; i++) {
		struct buf k = {0};
		int take;

		bufprintf(&k, ",%s,", s->in[i].name);
		take = startswith(s->in[i].name, "PARENT_") || strstr(want.s, k.s) != NULL;
		buffree(&k);
		if (!take)
			continue;
		sha256_update(&h, s->in[i].name, strlen(s->in[i].name) + 1);
		sha256_update(&h, s->in[i].value, strlen(s->in[i].value) + 1);
	}
	sha256_final(&h, d);
	hexenc(&hex, d, 32);
	buffree(&want);
	return bufdetach(&hex);
}

int
mkdirs(const char *path)
{
	char *p = xstrdup(path), *q;
	int r = 0;

	for (q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = 0;
		if (mkdir(p, 0777) < 0 && errno != EEXIST)
			r = -1;
		*q = '/';
		if (r < 0)
			break;
	}
	if (r == 0 && mkdir(p, 0777) < 0 && errno != EEXIST)
		r = -1;
	free(p);
	return r;
}

int
dir_empty(const char *dir, char **err)
{
	DIR *d;
	struct dirent *e;
	struct stat sb;
	char *p;

	if (mkdirs(dir) < 0) {
		*err = xasprintf("%s: cannot create: %s", dir, strerror(errno));
		return -1;
	}
	if (!(d = opendir(dir))) {
		*err = xasprintf("%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		p = xasprintf("%s/%s", dir, e->d_name);
		if (lstat(p, &sb) == 0 && !S_ISDIR(sb.st_mode) && unlink(p) < 0) {
			*err = xasprintf("%s: cannot remove: %s", p, strerror(errno));
			free(p);
			closedir(d);
			return -1;
		}
		free(p);
	}
	closedir(d);
	return 0;
}

int
dir_count(const char *dir)
{
	DIR *d;
	struct dirent *e;
	struct stat sb;
	char *p;
	int n = 0;

	if (!(d = opendir(dir)))
		return 0;
	while ((e = readdir(d))) {
		p = xasprintf("%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.' && stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
			n++;
		free(p);
	}
	closedir(d);
	return n;
}

/* hard link src to dst, or copy it when linking is not possible; 0 or -1 */
static int
linkorcopy(const char *src, const char *dst)
{
	char b[1 << 16];
	ssize_t n;
	int in, out, e;

	if (link(src, dst) == 0)
		return 0;
	if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if ((out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		e = errno;
		close(in);
		errno = e;
		return -1;
	}
	while ((n = read(in, b, sizeof b)) > 0)
		if (writeall(out, b, (size_t)n) < 0)
			break;
	e = errno;
	if (n != 0 || fsync(out) < 0) {
		close(in);
		close(out);
		unlink(dst);
		errno = n != 0 ? e : errno;
		return -1;
	}
	close(in);
	return close(out);
}

/* link or copy every regular file of from into to; 0 or -1 with *err */
static int
copyfiles(const char *from, const char *to, char **err)
{
	DIR *d;
	struct dirent *e;
	struct stat sb;
	char *s, *t;
	int r = 0;

	if (!(d = opendir(from))) {
		*err = xasprintf("%s: %s", from, strerror(errno));
		return -1;
	}
	while (r == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		s = xasprintf("%s/%s", from, e->d_name);
		t = xasprintf("%s/%s", to, e->d_name);
		if (stat(s, &sb) == 0 && S_ISREG(sb.st_mode) && linkorcopy(s, t) < 0) {
			*err = xasprintf("%s: cannot copy to %s: %s", s, to, strerror(errno));
			r = -1;
		}
		free(s);
		free(t);
	}
	closedir(d);
	return r;
}

char *
cache_entry(const char *cachedir, const char *key)
{
	return xasprintf("%s/%.2s/%s", cachedir, key, key);
}

/* remove a folder of plain files (a failed temp entry) */
static void
rmflat(const char *dir)
{
	char *err = NULL;
	struct stat sb;

	if (stat(dir, &sb) < 0)
		return;
	if (dir_empty(dir, &err) == 0)
		rmdir(dir);
	free(err);
}

int
cache_store(const char *cachedir, const char *key, const char *outdir, const char *id,
            char **err)
{
	char *ent = cache_entry(cachedir, key), *tmp, *idf;
	struct buf b = {0};
	struct stat sb;
	int r = -1;

	if (stat(ent, &sb) == 0) {
		free(ent);
		return 0;
	}
	tmp = xasprintf("%s.tmp.%ld", ent, (long)getpid());
	if (mkdirs(tmp) < 0) {
		*err = xasprintf("%s: cannot create: %s", tmp, strerror(errno));
		goto out;
	}
	if (copyfiles(outdir, tmp, err) < 0)
		goto out;
	idf = xasprintf("%s/.kiln-id", tmp);
	bufprintf(&b, "%s\n", id);
	if (writefile_atomic(idf, b.s, b.len, 0644) < 0) {
		*err = xasprintf("%s: %s", idf, strerror(errno));
		free(idf);
		goto out;
	}
	free(idf);
	if (rename(tmp, ent) < 0 && errno != EEXIST && errno != ENOTEMPTY) {
		*err = xasprintf("%s: cannot store: %s", ent, strerror(errno));
		goto out;
	}
	r = 0;
out:
	rmflat(tmp);
	free(tmp);
	free(ent);
	buffree(&b);
	return r;
}

int
cache_restore(const char *cachedir, const char *key, const char *outdir, char **id,
              char **err)
{
	char *ent = cache_entry(cachedir, key), *idf;
	struct buf b = {0};
	struct stat sb;
	int r = -1;

	*id = NULL;
	if (stat(ent, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		free(ent);
		return 0;
	}
	idf = xasprintf("%s/.kiln-id", ent);
	if (readfile(idf, &b, 1 << 16) < 0 || b.len == 0) {
		*err = xasprintf("%s: broken stage-cache entry (no .kiln-id); remove it", ent);
		goto out;
	}
	while (b.len && (b.s[b.len - 1] == '\n' || b.s[b.len - 1] == '\r'))
		b.s[--b.len] = 0;
	if (dir_empty(outdir, err) < 0 || copyfiles(ent, outdir, err) < 0)
		goto out;
	*id = bufdetach(&b);
	r = 1;
out:
	free(idf);
	free(ent);
	buffree(&b);
	return r;
}
