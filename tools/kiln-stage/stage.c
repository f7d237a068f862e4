/* stage keys, stamps and the stage cache */
#include "stage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fs.h>
#include <sys/ioctl.h>

#include "atomic.h"
#include "envv.h"
#include "os.h"
#include "progress.h"
#include "hash.h"
#include "strv.h"

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
	struct buf sums = {0};
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
	for (i = 0; i < f.n; i++) {
		if (startswith(f.v[i].key, "IN_"))
			addinput(&st->in, &st->nin, &st->capin, f.v[i].key + 3, f.v[i].value);
		else if (startswith(f.v[i].key, "OUT_"))
			bufprintf(&sums, "%s\n", f.v[i].value);
	}
	st->sums = sums.s ? bufdetach(&sums) : NULL;
	kv_free(&f);
	return 1;
}

void
stamp_free(struct stamp *st)
{
	free(st->stage);
	free(st->id);
	free(st->sums);
	freeinputs(st->in, st->nin);
	memset(st, 0, sizeof *st);
}

void
stamp_format(struct buf *b, const struct stage *s, const char *id, const char *sums)
{
	struct buf k = {0};
	const char *p, *nl;
	size_t i, n = 0;

	bufputs(b, "# kiln-stage stamp: the stage ran for this key; written last\n");
	bufputs(b, "KILN_STAMP=1\n");
	kv_put(b, "STAGE", s->name);
	kv_put(b, "KEY", s->key);
	kv_put(b, "ID", id);
	for (i = 0; i < s->nin; i++) {
		bufreset(&k);
		bufprintf(&k, "IN_%s", s->in[i].name);
		kv_put(b, k.s, s->in[i].value);
	}
	for (p = sums; p && *p; p = nl + 1) {
		char *line;

		if (!(nl = strchr(p, '\n')))
			nl = p + strlen(p) - 1;
		line = xstrndup(p, (size_t)(nl - p + (*nl != '\n')));
		bufreset(&k);
		bufprintf(&k, "OUT_%zu", n++);
		kv_put(b, k.s, line);
		free(line);
	}
	buffree(&k);
}

int
stage_load(struct stage *s, const char *name, const struct stageopts *so, char **err)
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
	if (kv_load(&f, so->key, err) < 0) {
		kv_free(&f);
		return -1;
	}
	for (i = 0; i < f.n; i++)
		addinput(&s->in, &s->nin, &s->capin, f.v[i].key, f.v[i].value);
	kv_free(&f);
	for (i = 0; i < so->np; i++) {
		r = stamp_read(&st, so->parents[i], err);
		if (r == 0) {
			*err = xasprintf("%s: parent stamp missing (run its stage first)", so->parents[i]);
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
dir_empty(const char *dir, char **err)
{
	DIR *d;
	struct dirent *e;
	struct stat sb;
	char *p;

	if (os_mkdirs(dir, 0777) < 0) {
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


int
copyfile(const char *src, const char *dst)
{
	char b[1 << 16];
	ssize_t n = 0;
	int in, out, e;

	if ((in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0)
		return -1;
	if ((out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0) {
		e = errno;
		close(in);
		errno = e;
		return -1;
	}
	/* a reflink shares the blocks until one side is written: a private copy for free */
	if (ioctl(out, FICLONE, in) < 0) {
		while ((n = read(in, b, sizeof b)) > 0)
			if (writeall(out, b, (size_t)n) < 0)
				break;
	}
	e = errno;
	if (n != 0 || fsync(out) < 0) {
		e = n != 0 ? e : errno;
		close(in);
		close(out);
		unlink(dst);
		errno = e;
		return -1;
	}
	close(in);
	return close(out);
}

int
dir_files(const char *dir, struct strv *names)
{
	struct strv all = {0};
	struct stat sb;
	size_t i;
	char *p;

	if (os_listdir(dir, &all) < 0)
		return -1;
	for (i = 0; i < all.n; i++) {
		if (all.v[i][0] == '.')
			continue;
		p = xasprintf("%s/%s", dir, all.v[i]);
		if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode))
			strv_add(names, all.v[i], 0);
		free(p);
	}
	strv_free(&all);
	return 0;
}

int
dir_sums(const char *dir, struct buf *sums, char **err)
{
	struct strv names = {0};
	struct buf hex = {0};
	unsigned char d[32];
	size_t i;
	char *p;

	if (dir_files(dir, &names) < 0) {
		*err = xasprintf("%s: %s", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < names.n; i++) {
		p = xasprintf("%s/%s", dir, names.v[i]);
		if (sha256_file(p, d, NULL) < 0) {
			*err = xasprintf("%s: %s", p, strerror(errno));
			free(p);
			strv_free(&names);
			buffree(&hex);
			return -1;
		}
		free(p);
		bufreset(&hex);
		hexenc(&hex, d, 32);
		bufprintf(sums, "%s  %s\n", hex.s, names.v[i]);
	}
	strv_free(&names);
	buffree(&hex);
	return 0;
}

char *
cache_entry(const char *cachedir, const char *key)
{
	return xasprintf("%s/%.2s/%s", cachedir, key, key);
}

/* remove a folder of plain files (a temp or rejected entry) */
static void
rmflat(const char *dir)
{
	DIR *d;
	struct dirent *e;
	char *p;

	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		p = xasprintf("%s/%s", dir, e->d_name);
		unlink(p);
		free(p);
	}
	closedir(d);
	rmdir(dir);
}

int
log_open(const char *logdir, const char *name, char **path, char **err)
{
	struct stat sb;
	int fd;

	*path = xasprintf("%s/%s.log", logdir, name);
	if (lstat(logdir, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		*err = xasprintf("%s: the log folder is %s; refusing to write logs there", logdir,
		                 S_ISLNK(sb.st_mode) ? "a symbolic link" : "not a folder");
		return -1;
	}
	fd = open(*path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		if (fd < 0 && errno == ELOOP)
			*err = xasprintf("%s: is a symbolic link; refusing to write the log through it "
			                 "(remove it)", *path);
		else if (fd < 0)
			*err = xasprintf("%s: %s", *path, strerror(errno));
		else
			*err = xasprintf("%s: not a regular file; refusing to write the log there", *path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* write n bytes as the file dir/name in a fresh entry; 0 or -1 with *err */
static int
putfile(const char *dir, const char *name, const void *p, size_t n, char **err)
{
	char *f = xasprintf("%s/%s", dir, name);
	int r = writefile_atomic(f, p, n, 0644);

	if (r < 0)
		*err = xasprintf("%s: %s", f, strerror(errno));
	free(f);
	return r;
}

/* copies of outdir's regular files in the new folder tmp; 0, or -1 with *err */
static int
copyin(const char *outdir, const char *tmp, char **err)
{
	struct strv names = {0};
	char *a, *b;
	size_t i;
	int r = 0;

	if (dir_files(outdir, &names) < 0) {
		*err = xasprintf("%s: %s", outdir, strerror(errno));
		r = -1;
	}
	for (i = 0; i < names.n && r == 0; i++) {
		a = xasprintf("%s/%s", outdir, names.v[i]);
		b = xasprintf("%s/%s", tmp, names.v[i]);
		if ((r = copyfile(a, b)) < 0)
			*err = xasprintf("%s: cannot copy to %s: %s", a, tmp, strerror(errno));
		free(a);
		free(b);
	}
	strv_free(&names);
	return r;
}

/* the entry's records beside the copies in tmp: their digests (.kiln-sums, taken from the
   copies themselves), the id (.kiln-id), s's inputs (.kiln-inputs) and the log
   (.kiln-log, when logpath names one); 0, or -1 with *err */
static int
records(const char *tmp, const struct stage *s, const char *id, const char *logpath, char **err)
{
	struct buf t = {0};
	char *a;
	int r = -1;

	if (dir_sums(tmp, &t, err) < 0 || putfile(tmp, ".kiln-sums", t.s ? t.s : "", t.len, err) < 0)
		goto out;
	bufreset(&t);
	bufprintf(&t, "%s\n", id);
	if (putfile(tmp, ".kiln-id", t.s, t.len, err) < 0)
		goto out;
	bufreset(&t);
	stamp_format(&t, s, id, NULL);
	if (putfile(tmp, ".kiln-inputs", t.s, t.len, err) < 0)
		goto out;
	if (logpath) {
		a = xasprintf("%s/.kiln-log", tmp);
		if (copyfile(logpath, a) < 0 && errno != ENOENT) {
			*err = xasprintf("%s: cannot copy to %s: %s", logpath, tmp, strerror(errno));
			free(a);
			goto out;
		}
		free(a);
	}
	r = 0;
out:
	buffree(&t);
	return r;
}

int
cache_store(const char *cachedir, const struct stage *s, const struct cacheio *io,
            const char *id, char **err)
{
	char *ent = cache_entry(cachedir, s->key), *tmp, *a;
	struct stat sb;
	int r = -1;

	if (stat(ent, &sb) == 0) {
		free(ent);
		return 0;
	}
	tmp = xasprintf("%s.tmp.%ld", ent, (long)getpid());
	rmflat(tmp);
	if (os_mkdirs(tmp, 0777) < 0) {
		*err = xasprintf("%s: cannot create: %s", tmp, strerror(errno));
		goto out;
	}
	if (copyin(io->outdir, tmp, err) < 0 || records(tmp, s, id, io->logpath, err) < 0)
		goto out;
	a = xasprintf("%s/%.2s", cachedir, s->key);
	os_mkdirs(a, 0777);
	free(a);
	if (rename(tmp, ent) < 0 && errno != EEXIST && errno != ENOTEMPTY) {
		*err = xasprintf("%s: cannot store: %s", ent, strerror(errno));
		goto out;
	}
	r = 0;
out:
	rmflat(tmp);
	free(tmp);
	free(ent);
	return r;
}

/* move a rejected entry out of the way and remove it, so the rebuild can store anew */
static void
reject(const char *ent)
{
	char *aside = xasprintf("%s.bad.%ld", ent, (long)getpid());

	if (rename(ent, aside) == 0)
		rmflat(aside);
	free(aside);
}

/* the restored log: a header naming the entry, then the log of the run that built it */
static void
restorelog(const char *ent, const char *logdir, const char *name)
{
	char *src = xasprintf("%s/.kiln-log", ent), *path = NULL, *err = NULL;
	struct buf b = {0};
	int fd;

	if ((fd = log_open(logdir, name, &path, &err)) < 0) {
		warn("%s", err);
	} else {
		bufprintf(&b, "# kiln-stage %s: restored from the stage cache %s; the log of the run "
		          "that built it follows\n", name, ent);
		writeall(fd, b.s, b.len);
		bufreset(&b);
		if (readfile(src, &b, (size_t)1 << 30) == 0)
			writeall(fd, b.s, b.len);
		close(fd);
	}
	free(err);
	free(path);
	free(src);
	buffree(&b);
}

/* split .kiln-sums text into names and digests; 0, or -1 with a reason in *bad */
static int
parsesums(char *text, struct strv *names, struct strv *hexes, char **bad)
{
	char *line, *nl;

	for (line = text; line && *line; line = nl) {
		if ((nl = strchr(line, '\n')))
			*nl++ = 0;
		if (strlen(line) < 67 || line[64] != ' ' || line[65] != ' ' || strchr(line + 66, '/') ||
		    line[66] == '.') {
			*bad = xasprintf("malformed .kiln-sums line '%.80s'", line);
			return -1;
		}
		line[64] = 0;
		strv_add(hexes, line, 0);
		strv_add(names, line + 66, 0);
	}
	return 0;
}

/* entry ent's identity (*idb) and recorded digests (names, hexes), which must list the
   files it holds; NULL, or what is wrong with it (fresh) */
static char *
entryread(const char *ent, struct buf *idb, struct strv *names, struct strv *hexes)
{
	struct buf sums = {0};
	struct strv held = {0};
	char *f, *bad = NULL;

	f = xasprintf("%s/.kiln-id", ent);
	if (readfile(f, idb, 1 << 16) < 0 || idb->len == 0)
		bad = xstrdup("has no .kiln-id");
	free(f);
	f = xasprintf("%s/.kiln-sums", ent);
	if (!bad && readfile(f, &sums, 1 << 20) < 0)
		bad = xstrdup("has no recorded digests (.kiln-sums)");
	free(f);
	if (!bad && parsesums(sums.s, names, hexes, &bad) == 0) {
		if (names->n == 0)
			bad = xstrdup("records no output files");
		/* a file in the entry that its digests do not list is not part of the output */
		else if (dir_files(ent, &held) < 0 || held.n != names->n)
			bad = xasprintf("holds %zu files but records the digests of %zu", held.n, names->n);
	}
	buffree(&sums);
	strv_free(&held);
	return bad;
}

/* copy entry ent's files (names) into outdir; NULL, or what failed (fresh) */
static char *
copyout(const char *ent, const char *outdir, const struct strv *names)
{
	char *a, *b, *bad = NULL;
	size_t i;

	for (i = 0; i < names->n && !bad; i++) {
		a = xasprintf("%s/%s", ent, names->v[i]);
		b = xasprintf("%s/%s", outdir, names->v[i]);
		if (copyfile(a, b) < 0)
			bad = xasprintf("%s: %s", names->v[i], strerror(errno));
		free(a);
		free(b);
	}
	return bad;
}

/* the copies in outdir (what will be used) against the recorded digests: 0 (*bad set
   when one differs), or -1 with *err when outdir cannot be read */
static int
checkcopies(const char *outdir, const struct strv *names, const struct strv *hexes, char **bad,
            char **err)
{
	struct buf got = {0};
	struct strv gnames = {0}, ghexes = {0};
	size_t i, k;
	int r = 0;

	if (dir_sums(outdir, &got, err) < 0)
		r = -1;
	else if (parsesums(got.s, &gnames, &ghexes, bad) == 0)
		for (i = 0; i < gnames.n && !*bad; i++) {
			for (k = 0; k < names->n; k++)
				if (strcmp(names->v[k], gnames.v[i]) == 0)
					break;
			if (k == names->n || strcmp(hexes->v[k], ghexes.v[i]) != 0)
				*bad = xasprintf("%s does not match its recorded digest", gnames.v[i]);
		}
	buffree(&got);
	strv_free(&gnames);
	strv_free(&ghexes);
	return r;
}

int
cache_restore(const char *cachedir, const struct stage *s, const struct cacheio *io,
              char **id, char **err)
{
	const char *outdir = io->outdir;
	char *ent = cache_entry(cachedir, s->key), *bad = NULL;
	struct buf idb = {0};
	struct strv names = {0}, hexes = {0};
	struct stat sb;
	int r = -1;

	*id = NULL;
	if (stat(ent, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		free(ent);
		return 0;
	}
	if ((bad = entryread(ent, &idb, &names, &hexes)))
		goto corrupt;
	if (dir_empty(outdir, err) < 0)
		goto out;
	/* copy each listed file, then check the copies (what will be used) against the digests */
	if ((bad = copyout(ent, outdir, &names)))
		goto corrupt;
	if (checkcopies(outdir, &names, &hexes, &bad, err) < 0)
		goto out;
	if (bad)
		goto corrupt;
	bufrtrim(&idb, "\r\n");
	*id = bufdetach(&idb);
	if (io->logdir)
		restorelog(ent, io->logdir, s->name);
	r = 1;
	goto out;
corrupt:
	*err = xasprintf("%s: stage-cache entry %s; ignored and removed", ent, bad);
	free(bad);
	bad = NULL;
	reject(ent);
	dir_empty(outdir, &bad);
	free(bad);
out:
	free(ent);
	buffree(&idb);
	strv_free(&names);
	strv_free(&hexes);
	return r;
}

/* the number of reasons in an explanation ("a; b; c" -> 3) */
static int
nreasons(const char *why)
{
	int n = 1;

	for (; (why = strstr(why, "; ")); why += 2)
		n++;
	return n;
}

char *
cache_explain(const char *cachedir, const struct stage *s)
{
	char *ent = cache_entry(cachedir, s->key), *sub, *p, *why, *best = NULL, *bestent = NULL;
	DIR *d, *d2;
	struct dirent *e, *e2;
	struct stamp st;
	struct stat sb;
	char *err = NULL;
	int n = 0, bestn = 0;

	if (stat(ent, &sb) == 0) {
		why = xasprintf("stage cache: entry %s", ent);
		free(ent);
		return why;
	}
	free(ent);
	if (!(d = opendir(cachedir)))
		return xasprintf("stage cache: %s: %s", cachedir, strerror(errno));
	while ((e = readdir(d))) {
		if (strlen(e->d_name) != 2 || e->d_name[0] == '.')
			continue;
		sub = xasprintf("%s/%s", cachedir, e->d_name);
		if ((d2 = opendir(sub))) {
			while ((e2 = readdir(d2))) {
				if (strlen(e2->d_name) != 64)
					continue;
				p = xasprintf("%s/%s/.kiln-inputs", sub, e2->d_name);
				if (stamp_read(&st, p, &err) == 1 && strcmp(st.stage, s->name) == 0) {
					why = stage_explain(s, &st, 6);
					n++;
					if (!best || nreasons(why) < bestn) {
						free(best);
						free(bestent);
						best = why;
						bestn = nreasons(why);
						bestent = xasprintf("%s/%s", sub, e2->d_name);
					} else {
						free(why);
					}
				}
				stamp_free(&st);
				free(err);
				err = NULL;
				free(p);
			}
			closedir(d2);
		}
		free(sub);
	}
	closedir(d);
	if (!best)
		return xasprintf("stage cache: no entry for %s in %s", s->name, cachedir);
	why = xasprintf("stage cache: no entry for this key; the nearest of %d entries of %s "
	                "(%s) differs: %s", n, s->name, bestent, best);
	free(best);
	free(bestent);
	return why;
}

extern char **environ;

int
stage_spawn(char **argv, int logfd, const struct stage *s, const struct spawnopt *so,
            struct procres *res)
{
	struct envv env = {0};
	struct procopt o = {0};
	char *abs = NULL;
	int r;

	env_copy(&env, environ);
	env_set(&env, "KILN_STAGE", s->name);
	env_set(&env, "KILN_STAGE_KEY", s->key);
	env_set(&env, "KILN_STAGE_LOG", so->logpath);
	env_unset(&env, "KILN_STAGE_NOTE");
	if (so->note) {
		unlink(so->note);
		env_set(&env, "KILN_STAGE_NOTE", so->note);
	}
	env_unset(&env, "KILN_STAGE_OUT");
	if (so->out)
		env_set(&env, "KILN_STAGE_OUT", (abs = realpath(so->out, NULL)) ? abs : so->out);
	env_unset(&env, "KILN_STAGE_VERIFY");
	if (so->verify)
		env_set(&env, "KILN_STAGE_VERIFY", "1");
	o.envp = env.v;
	o.group = 1;
	if (so->prog) {
		/* the inner build's .ninja_log, if it leaves one, goes there for trace.json */
		env_set(&env, "KILN_STAGE_NINJALOG", so->prog->ninjalog);
		o.envp = env.v;
		o.tick = progress_tick;
		o.arg = so->prog;
		o.tickms = 1000;
	}
	r = proc_tofd(argv, logfd, &o, res);
	free(abs);
	env_free(&env);
	return r;
}

int
stage_opt(struct stageopts *o, char *a)
{
	if (startswith(a, "--key="))
		o->key = a + 6;
	else if (startswith(a, "--stamp="))
		o->stamp = a + 8;
	else if (startswith(a, "--parent=")) {
		o->parents = xgrow(o->parents, &o->cap, o->np + 1, sizeof *o->parents);
		o->parents[o->np++] = a + 9;
	} else if (startswith(a, "--logdir="))
		o->logdir = a + 9;
	else if (startswith(a, "--out="))
		o->out = a + 6;
	else
		return 0;
	return 1;
}
