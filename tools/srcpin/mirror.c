/* bare mirrors in the cache: where they live, fetching only what is missing, refs */
#include "srcpin.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "atomic.h"
#include "hash.h"

const char *
gitmsg(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown error";
}

char *
mirror_path(const struct spopts *o, const char *name)
{
	return xasprintf("%s/%s.git", o->cache, name);
}

/* the last path component of a URL, without .git (e.g. "vision") */
static char *
urlbase(const char *url)
{
	size_t n = strlen(url);
	const char *b;

	while (n && url[n - 1] == '/')
		n--;
	if (n > 4 && strncmp(url + n - 4, ".git", 4) == 0)
		n -= 4;
	for (b = url + n; b > url && b[-1] != '/' && b[-1] != ':'; b--)
		;
	return xstrndup(b, (size_t)(url + n - b));
}

char *
mirror_path_url(const struct spopts *o, const char *url)
{
	unsigned char d[32];
	struct buf h = {0};
	char *base = urlbase(url), *p, *s;

	for (s = base; *s; s++)
		if (!(*s == '-' || *s == '_' || *s == '.' || (*s >= '0' && *s <= '9') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			*s = '_';
	sha256_buf(url, strlen(url), d);
	hexenc(&h, d, 4);
	p = xasprintf("%s/modules/%s-%s.git", o->cache, *base ? base : "repo", h.s);
	buffree(&h);
	free(base);
	return p;
}

char *
fetch_url(const struct spopts *o, const char *label, const char *url)
{
	const char *best = NULL, *rest, *path;
	size_t bestn = 0, i, n;
	char *u, *hostpath, *base, *cand[8], *found = NULL;
	int named;
	struct buf tried = {0};

	for (i = 0; i < o->nrewrite; i++) {
		const char *eq = strchr(o->rewrite[i], '=');
		n = (size_t)(eq - o->rewrite[i]);
		if (n >= bestn && strncmp(url, o->rewrite[i], n) == 0) {
			best = o->rewrite[i];
			bestn = n;
		}
	}
	u = best ? xasprintf("%s%s", strchr(best, '=') + 1, url + bestn) : xstrdup(url);
	if (!o->mirror)
		return u;

	/* host/owner/repo from scheme://[user@]host[:port]/owner/repo[.git] or user@host:path */
	rest = strstr(u, "://");
	rest = rest ? rest + 3 : u;
	if ((path = strchr(rest, '@')) && path < strchr(rest, '/'))
		rest = path + 1;
	hostpath = xstrdup(rest);
	for (char *c = hostpath; *c && *c != '/'; c++)
		if (*c == ':') { /* scp-like user@host:path, or host:port/ */
			char *sl = strchr(c, '/');
			if (c[1] >= '0' && c[1] <= '9' && sl)
				memmove(c, sl, strlen(sl) + 1);
			else
				*c = '/';
			break;
		}
	n = strlen(hostpath);
	while (n && hostpath[n - 1] == '/')
		hostpath[--n] = 0;
	if (n > 4 && strcmp(hostpath + n - 4, ".git") == 0)
		hostpath[n -= 4] = 0;
	base = urlbase(hostpath);
	path = strchr(hostpath, '/');
	path = path ? path + 1 : hostpath;
	/* a pin's own name first (DIR/torch.git for pytorch/pytorch), then by URL */
	named = !strchr(label, '/');
	cand[0] = named ? xasprintf("%s/%s.git", o->mirror, label) : NULL;
	cand[1] = named ? xasprintf("%s/%s", o->mirror, label) : NULL;
	cand[2] = xasprintf("%s/%s.git", o->mirror, hostpath);
	cand[3] = xasprintf("%s/%s", o->mirror, hostpath);
	cand[4] = xasprintf("%s/%s.git", o->mirror, path);
	cand[5] = xasprintf("%s/%s", o->mirror, path);
	cand[6] = xasprintf("%s/%s.git", o->mirror, base);
	cand[7] = xasprintf("%s/%s", o->mirror, base);
	for (i = 0; i < 8; i++) {
		if (!cand[i])
			continue;
		if (!found && os_isdir(cand[i]))
			found = os_abspath(cand[i], NULL);
		{
			size_t j = 0;
			while (j < i && (!cand[j] || strcmp(cand[j], cand[i]) != 0))
				j++;
			if (j == i)
				bufprintf(&tried, "%s%s", tried.len ? ", " : "", cand[i]);
		}
	}
	if (!found)
		die("%s: %s: no mirror in %s (looked for %s)", label, url, o->mirror, tried.s);
	for (i = 0; i < 8; i++)
		free(cand[i]);
	buffree(&tried);
	free(base);
	free(hostpath);
	free(u);
	return found;
}

git_repository *
mirror_open(const char *dir)
{
	git_repository *r;

	if (git_repository_open_ext(&r, dir, GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE,
	                            NULL) < 0)
		return NULL;
	return r;
}

char *
mirror_url(git_repository *r)
{
	git_config *c;
	git_buf b = {0};
	char *u = NULL;

	if (git_repository_config_snapshot(&c, r) < 0)
		return NULL;
	if (git_config_get_string_buf(&b, c, "srcpin.url") == 0)
		u = xstrdup(b.ptr);
	git_buf_dispose(&b);
	git_config_free(c);
	return u;
}

static int
ishex(const char *s, size_t min, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f') ||
		      (s[n] >= 'A' && s[n] <= 'F')))
			return 0;
	return n >= min && n <= max;
}

/* peel a reference name to a commit */
static int
peelref(git_repository *r, const char *name, git_oid *out)
{
	git_reference *ref;
	git_object *obj;
	int e;

	if ((e = git_reference_lookup(&ref, r, name)) < 0)
		return e;
	e = git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT);
	git_reference_free(ref);
	if (e < 0)
		return GIT_ERROR;   /* the ref is there but its objects are not: a damaged mirror */
	git_oid_cpy(out, git_object_id(obj));
	git_object_free(obj);
	return 0;
}

int
resolve_ref(git_repository *r, const char *ref, git_oid *out, int *kind)
{
	char name[1024];
	git_object *obj;
	git_odb *odb;
	int e, have;

	*kind = 's';
	if (ishex(ref, GIT_OID_HEXSZ, GIT_OID_HEXSZ)) {
		if (git_oid_fromstr(out, ref) < 0 || git_repository_odb(&odb, r) < 0)
			return -1;
		have = git_odb_exists(odb, out);
		git_odb_free(odb);
		return have ? 0 : GIT_ENOTFOUND;
	}
	if (strlen(ref) < sizeof name - 16) {
		snprintf(name, sizeof name, "refs/tags/%s", ref);
		*kind = 't';
		if ((e = peelref(r, name, out)) != GIT_ENOTFOUND)
			return e;
		snprintf(name, sizeof name, "refs/heads/%s", ref);
		*kind = 'b';
		if ((e = peelref(r, name, out)) != GIT_ENOTFOUND)
			return e;
		*kind = 'r';
		if (startswith(ref, "refs/") && (e = peelref(r, ref, out)) != GIT_ENOTFOUND)
			return e;
	}
	if (ishex(ref, 4, GIT_OID_HEXSZ - 1)) {
		git_oid p;
		*kind = 's';
		if (git_oid_fromstrn(&p, ref, strlen(ref)) < 0)
			return -1;
		e = git_object_lookup_prefix(&obj, r, &p, strlen(ref), GIT_OBJECT_ANY);
		if (e < 0)
			return e;
		if (git_object_type(obj) != GIT_OBJECT_COMMIT) {
			git_object *c;
			e = git_object_peel(&c, obj, GIT_OBJECT_COMMIT);
			git_object_free(obj);
			if (e < 0)
				return GIT_ENOTFOUND;
			obj = c;
		}
		git_oid_cpy(out, git_object_id(obj));
		git_object_free(obj);
		return 0;
	}
	return GIT_ENOTFOUND;
}

struct cand {
	char *name;
	size_t dist;
};

static int
candcmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return strcmp(x->name, y->name);
}

char *
close_refs(git_repository *r, const char *ref)
{
	git_strarray names = {0};
	struct cand *c = NULL;
	size_t n = 0, cap = 0, i, limit = strlen(ref) / 3 + 2;
	struct buf b = {0};

	bufputs(&b, "");
	if (git_reference_list(&names, r) < 0)
		return bufdetach(&b);
	for (i = 0; i < names.count; i++) {
		const char *s = names.strings[i];
		size_t d;
		if (startswith(s, "refs/tags/"))
			s += 10;
		else if (startswith(s, "refs/heads/"))
			s += 11;
		else
			continue;
		d = (size_t)editdist(ref, s);
		if (d > limit && !strstr(s, ref))
			continue;
		c = xgrow(c, &cap, n + 1, sizeof *c);
		c[n].name = xstrdup(s);
		c[n++].dist = d;
	}
	if (n)
		qsort(c, n, sizeof *c, candcmp);
	for (i = 0; i < n; i++) {
		if (i < 5)
			bufprintf(&b, "%s%s", i ? ", " : "", c[i].name);
		free(c[i].name);
	}
	free(c);
	git_strarray_dispose(&names);
	return bufdetach(&b);
}

static int
net_error(void)
{
	const git_error *e = git_error_last();

	return e && (e->klass == GIT_ERROR_NET || e->klass == GIT_ERROR_SSL ||
	             e->klass == GIT_ERROR_HTTP || e->klass == GIT_ERROR_SSH);
}

/* fetch heads and tags (and extra refspecs) from url into r; returns 0 or a libgit2 error */
static int
fetch_into(const struct spopts *o, const char *label, git_repository *r, const char *url,
           const char *extra)
{
	char *from = fetch_url(o, label, url);
	char *specs[3] = {"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", NULL};
	git_strarray sa = {specs, 2};
	git_fetch_options fo;
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	git_remote *rem;
	git_config *cfg;
	struct prog p = {label, {0, 0}, {0, 0}, 0};
	char *x = NULL;
	int e;

	if ((x = localpath(from))) {
		e = fetch_local(o, label, r, x, extra);
		free(x);
		x = NULL;
		goto setcfg;
	}
	if (extra) {
		x = xasprintf("%s:refs/srcpin/%s", extra, extra);
		specs[0] = x;
		sa.count = 1;
	}
	tls_load();
	if ((e = git_remote_create_anonymous(&rem, r, from)) < 0)
		goto out;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	fo.prune = extra ? GIT_FETCH_NO_PRUNE : GIT_FETCH_PRUNE;
	fo.update_fetchhead = 0;
	if (o->progress) {
		clock_gettime(CLOCK_MONOTONIC, &p.t0);
		fo.callbacks.transfer_progress = progress_cb;
		fo.callbacks.payload = &p;
	}
	e = git_remote_fetch(rem, &sa, &fo, NULL);
	if (p.shown)
		fputc('\n', stderr);
	git_remote_free(rem);
setcfg:
	if (e == 0 && git_repository_config(&cfg, r) == 0) {
		e = git_config_set_string(cfg, "srcpin.url", url);
		git_config_free(cfg);
	}
out:
	free(x);
	free(from);
	return e;
}

/* remove what killed earlier runs left beside the mirror: dir.tmp-* and dir.old-* */
static void
sweep(const char *dir)
{
	char *parent = xstrdup(dir), *slash = strrchr(parent, '/');
	const char *base = slash ? slash + 1 : parent;
	size_t bn = strlen(base);
	DIR *d;
	struct dirent *de;

	if (slash)
		*slash = 0;
	if (!(d = opendir(slash ? parent : "."))) {
		free(parent);
		return;
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, base, bn) == 0 &&
		    (startswith(de->d_name + bn, ".tmp-") || startswith(de->d_name + bn, ".old-"))) {
			char *p = xasprintf("%s/%s", slash ? parent : ".", de->d_name);
			os_rmtree(p);
			free(p);
		}
	}
	closedir(d);
	free(parent);
}

/* Build a mirror afresh in dir.tmp-PID from url and rename it over dir. Returns 0, or -1
   with the libgit2 error left for gitmsg (nothing at dir changes then). */
static int
fresh_mirror(const struct spopts *o, const char *label, const char *dir, const char *url)
{
	char *tmp = xasprintf("%s.tmp-%ld", dir, (long)getpid());
	char *old = xasprintf("%s.old-%ld", dir, (long)getpid());
	git_repository *r;
	int e;

	os_rmtree(tmp);
	if ((e = git_repository_init(&r, tmp, 1)) < 0)
		goto fail;
	fault("fetch: new mirror made");
	e = fetch_into(o, label, r, url, NULL);
	git_repository_free(r);
	if (e < 0)
		goto fail;
	fault("fetch: new mirror fetched");
	if (rename(dir, old) < 0 && errno != ENOENT) {
		git_error_set_str(GIT_ERROR_OS, strerror(errno));
		e = -1;
		goto fail;
	}
	if (rename(tmp, dir) < 0) {
		git_error_set_str(GIT_ERROR_OS, strerror(errno));
		rename(old, dir);
		e = -1;
		goto fail;
	}
	fault("fetch: new mirror in place");
	os_rmtree(old);
	free(tmp);
	free(old);
	return 0;
fail:
	{
		/* keep the message across the cleanup */
		char *m = xstrdup(gitmsg());
		os_rmtree(tmp);
		git_error_set_str(GIT_ERROR_NET, m);
		free(m);
	}
	free(tmp);
	free(old);
	return e < 0 ? e : -1;
}

/* take the cache lock of a mirror (released at exit); dies on I/O error */
static int
lockmirror(const char *dir)
{
	char *lk = xasprintf("%s.lock", dir), *parent = xstrdup(dir), *s = strrchr(parent, '/');
	int fd;

	if (s) {
		*s = 0;
		if (os_mkdirs(parent, 0777) < 0)
			die("%s: cannot create the cache folder:", parent);
	}
	if ((fd = open(lk, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) < 0)
		die("%s:", lk);
	if (flock(fd, LOCK_EX) < 0)
		die("%s: cannot lock:", lk);
	free(lk);
	free(parent);
	return fd;
}

/* the commit and its tree can be read (the mirror is not corrupt where it matters) */
static int
readable(git_repository *r, const git_oid *id)
{
	git_commit *c;
	git_tree *t;
	int e;

	if (git_commit_lookup(&c, r, id) < 0)
		return 0;
	e = git_commit_tree(&t, c);
	git_commit_free(c);
	if (e < 0)
		return 0;
	git_tree_free(t);
	return 1;
}

/* Refresh dir from url: incremental fetch, or a fresh mirror when it is missing or broken.
   Dies when url cannot be reached, unless soft: then returns -1 (the message left for
   gitmsg) with the mirror as it was. Returns 0. */
static int
refresh(const struct spopts *o, const struct spmirror *m, const char *ref, int broken, int soft)
{
	const char *label = m->label, *dir = m->dir, *url = m->url;
	git_repository *r = broken ? NULL : mirror_open(dir);
	int e = -1;

	if (o->offline)
		dien(EXIT_USAGE, "%s: %s: ref '%s' is not in the mirror %s and --offline forbids fetching",
		     label, url, ref, dir);
	if (r) {
		e = fetch_into(o, label, r, url, NULL);
		git_repository_free(r);
		if (e == 0)
			return 0;
		if (net_error() && soft)
			return -1;
		if (net_error())
			die("%s: %s: cannot fetch: %s", label, url, gitmsg());
		warn("%s: %s: mirror %s is damaged (%s); fetching it again", label, url, dir, gitmsg());
	} else if (broken || os_isdir(dir)) {
		warn("%s: %s: mirror %s is damaged; fetching it again", label, url, dir);
	}
	if (fresh_mirror(o, label, dir, url) < 0)
		die("%s: %s: cannot fetch: %s", label, url, gitmsg());
	return 0;
}

/* the tags of a mirror and the commits they name, as a fetch found them */
struct tagsnap {
	char **name;
	git_oid *id;
	size_t n, cap, cap2;
};

/* the tags of the mirror at dir now */
static void
tagsnap(const char *dir, struct tagsnap *t)
{
	git_repository *r = mirror_open(dir);
	git_reference_iterator *it;
	git_reference *ref;
	git_object *c;

	memset(t, 0, sizeof *t);
	if (!r)
		return;
	if (git_reference_iterator_glob_new(&it, r, "refs/tags/*") == 0) {
		while (git_reference_next(&ref, it) == 0) {
			if (git_reference_peel(&c, ref, GIT_OBJECT_COMMIT) == 0) {
				t->name = xgrow(t->name, &t->cap, t->n + 1, sizeof *t->name);
				t->id = xgrow(t->id, &t->cap2, t->n + 1, sizeof *t->id);
				t->name[t->n] = xstrdup(git_reference_name(ref) + 10);
				git_oid_cpy(&t->id[t->n++], git_object_id(c));
				git_object_free(c);
			}
			git_reference_free(ref);
		}
		git_reference_iterator_free(it);
	}
	git_repository_free(r);
}

/* say, one line each, which tags of the snapshot t now name another commit in the mirror
   at dir (a fetch follows upstream's tags: every pin on one of them changes); frees t */
static void
tagsmoved(const char *label, const char *url, const char *dir, struct tagsnap *t)
{
	git_repository *r = mirror_open(dir);

	for (size_t i = 0; i < t->n; i++) {
		char *full = xasprintf("refs/tags/%s", t->name[i]);
		git_oid now;
		if (r && peelref(r, full, &now) == 0 && !git_oid_equal(&now, &t->id[i])) {
			char was[GIT_OID_HEXSZ + 1];
			git_oid_tostr(was, sizeof was, &t->id[i]);
			warn("%s: %s: tag '%s' moved upstream: %s -> %s; following it", label, url,
			     t->name[i], was, git_oid_tostr_s(&now));
		}
		free(full);
		free(t->name[i]);
	}
	git_repository_free(r);
	free(t->name);
	free(t->id);
	memset(t, 0, sizeof *t);
}

/* The tag (or other named ref) ref resolved to the commit had in the mirror at dir: fetch
   again, since upstream may have moved it (nightly tags, re-tagged releases), and say so
   in one line when it did (its new commit in out); the commit of a tag upstream deleted is
   refused in one line. An upstream that cannot be reached leaves the mirror's commit, also
   said in one line. Returns 0 when out holds the answer, -1 when the caller resolves
   again (the mirror was damaged and fetched afresh). */
static int
followtag(const struct spopts *o, const struct spmirror *m, const char *ref, const git_oid *had,
          git_oid *out)
{
	const char *label = m->label, *dir = m->dir, *url = m->url;
	git_repository *r;
	char was[GIT_OID_HEXSZ + 1];
	int kind, e;

	struct tagsnap ts;

	git_oid_tostr(was, sizeof was, had);
	git_oid_cpy(out, had);
	tagsnap(dir, &ts);
	if (refresh(o, m, ref, 0, 1) < 0) {
		warn("%s: %s: cannot reach it to check whether tag '%s' moved (%s); using the "
		     "mirror's %s", label, url, ref, gitmsg(), was);
		tagsmoved(label, url, dir, &ts);   /* nothing moved: only frees */
		return 0;
	}
	tagsmoved(label, url, dir, &ts);
	if (!(r = mirror_open(dir)))
		return -1;
	e = resolve_ref(r, ref, out, &kind);
	if (e == GIT_ENOTFOUND) {
		git_repository_free(r);
		die("%s: %s: tag '%s' is gone upstream (the mirror had it at %s); pin another ref",
		    label, url, ref, was);
	}
	if (e < 0 || !readable(r, out)) {
		git_repository_free(r);
		return -1;
	}
	git_repository_free(r);
	return 0;
}

void
mirror_fetch(const struct spopts *o, const struct spmirror *m, const char *ref, git_oid *out)
{
	const char *label = m->label, *dir = m->dir, *url = m->url;
	git_repository *r;
	char *had;
	int kind = 0, e, fetched = 0, broken = 0, fd, present = 0;

	fd = lockmirror(dir);
	sweep(dir);
	r = mirror_open(dir);
	if (r) {
		present = 1;
		had = mirror_url(r);
		e = resolve_ref(r, ref, out, &kind);
		if (e == 0 && !readable(r, out))
			broken = 1;
		else if (e == 0 && kind != 'b' && !o->update && had && strcmp(had, url) == 0) {
			/* a commit is what it is; a tag is asked for again unless --offline */
			git_oid was;
			git_oid_cpy(&was, out);
			free(had);
			git_repository_free(r);
			if (kind == 's' || o->offline || followtag(o, m, ref, &was, out) == 0) {
				close(fd);
				return;
			}
			had = NULL;
			r = NULL;
			broken = 1;
		} else if (e < 0 && e != GIT_ENOTFOUND && e != GIT_EAMBIGUOUS)
			broken = 1;
		free(had);
		git_repository_free(r);
	} else if (os_isdir(dir))
		broken = 1;
	if (!(o->offline && !broken && present && kind == 'b')) {
		/* tags a fetch moves are said, whichever ref it was for */
		struct tagsnap ts;
		tagsnap(dir, &ts);
		refresh(o, m, ref, broken, 0);
		tagsmoved(label, url, dir, &ts);
		fetched = 1;
	}
	if (!(r = mirror_open(dir)))
		die("%s: %s: mirror %s cannot be opened: %s", label, url, dir, gitmsg());
	e = resolve_ref(r, ref, out, &kind);
	if (e == GIT_ENOTFOUND && kind == 's' && strlen(ref) == GIT_OID_HEXSZ && fetched &&
	    !o->offline) {
		/* a commit no branch or tag holds: ask for it by id */
		if (fetch_into(o, label, r, url, ref) == 0)
			e = resolve_ref(r, ref, out, &kind);
		else
			e = GIT_ENOTFOUND;
	}
	if (e == GIT_EAMBIGUOUS) {
		git_repository_free(r);
		die("%s: %s: ref '%s' is ambiguous in %s; give more digits", label, url, ref, dir);
	}
	if (e < 0) {
		static char *near;   /* static: still reachable at exit */
		near = close_refs(r, ref);
		git_repository_free(r);
		if (*near)
			die("%s: %s: ref '%s' not found; close matches: %s", label, url, ref, near);
		die("%s: %s: ref '%s' not found in %s", label, url, ref, dir);
	}
	if (!readable(r, out)) {
		git_repository_free(r);
		refresh(o, m, ref, 1, 0);
		if (!(r = mirror_open(dir)) || resolve_ref(r, ref, out, &kind) < 0 || !readable(r, out))
			die("%s: %s: ref '%s': commit cannot be read from %s: %s", label, url, ref, dir,
			    gitmsg());
	}
	git_repository_free(r);
	close(fd);
}

void
mirror_need(const struct spopts *o, const char *label, const char *dir, const char *url,
            const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof hex, id);
	{
		git_repository *r = mirror_open(dir);
		git_oid got;
		int kind;
		if (r && resolve_ref(r, hex, &got, &kind) == 0 && readable(r, &got)) {
			git_repository_free(r);
			return;
		}
		git_repository_free(r);
	}
	if (!url)
		die("%s: commit %s is not in the mirror %s, which records no URL; run srcpin fetch first",
		    label, hex, dir);
	{
		struct spopts o2 = *o;
		struct spmirror m = {label, dir, url};
		git_oid got;
		o2.update = 1;
		mirror_fetch(&o2, &m, hex, &got);
	}
}
