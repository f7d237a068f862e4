/* fetching from a repository on this machine without a git transport, and fetch progress */
#include "srcpin.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"

static double
since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

int
progress_cb(const git_indexer_progress *st, void *payload)
{
	struct prog *p = payload;
	struct timespec now;
	double mib = (double)st->received_bytes / (1024.0 * 1024.0), t;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (p->shown && since(&p->last, &now) < 0.1 && st->received_objects != st->total_objects)
		return 0;
	p->last = now;
	t = since(&p->t0, &now);
	fprintf(stderr, "\r%s: %u/%u objects, %.1f MiB, %.1f MiB/s   ", p->label,
	        st->received_objects, st->total_objects, mib, t > 0 ? mib / t : 0.0);
	p->shown = 1;
	return 0;
}


/* link (or copy) one file; returns 0 or -1 */
static int
linkorcopy(const char *from, const char *to)
{
	struct buf b = {0};
	int e;

	if (link(from, to) == 0 || errno == EEXIST)
		return 0;
	if (readfile(from, &b, 0) < 0)
		return -1;
	e = writefile_atomic(to, b.s ? b.s : "", b.len, 0444);
	buffree(&b);
	return e;
}

/* Remove every object file a failed seed left in the objects folder dd of a new mirror:
   a partial set (a commit without its blobs) would make the packing fallback believe
   everything reachable from that commit is already there. */
static void
unseed(const char *dd)
{
	struct dirent *de;
	DIR *d = opendir(dd);

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		char *sub;

		if (!(strcmp(n, "pack") == 0 ||
		      (strlen(n) == 2 && isxdigit((unsigned char)n[0]) && isxdigit((unsigned char)n[1]))))
			continue;
		sub = xasprintf("%s/%s", dd, n);
		os_rmtree(sub);
		if (strcmp(n, "pack") == 0)
			mkdir(sub, 0777);
		free(sub);
	}
	closedir(d);
}

/* Seed an empty mirror with every object file of a local repository (hard links where the
   file system allows, as git clone --local does): a first fetch from a local copy then
   costs no pack building. Returns 0, or -1 with nothing seeded left behind (the caller
   then falls back to packing). */
static int
seed_local(git_repository *src, git_repository *dst)
{
	char *sd = xasprintf("%sobjects", git_repository_path(src));
	char *dd = xasprintf("%sobjects", git_repository_path(dst));
	DIR *d, *d2;
	struct dirent *de, *de2;
	int e = 0;

	if (!(d = opendir(sd))) {
		free(sd), free(dd);
		return -1;
	}
	while (e == 0 && (de = readdir(d))) {
		const char *n = de->d_name;
		char *sub, *dsub;
		if (!(strcmp(n, "pack") == 0 ||
		      (strlen(n) == 2 && isxdigit((unsigned char)n[0]) && isxdigit((unsigned char)n[1]))))
			continue;
		sub = xasprintf("%s/%s", sd, n);
		dsub = xasprintf("%s/%s", dd, n);
		if ((d2 = opendir(sub))) {
			mkdir(dsub, 0777);
			while (e == 0 && (de2 = readdir(d2))) {
				char *f, *t;
				if (de2->d_name[0] == '.' ||
				    (strcmp(n, "pack") == 0 && !endswith(de2->d_name, ".pack") &&
				     !endswith(de2->d_name, ".idx")))
					continue;
				f = xasprintf("%s/%s", sub, de2->d_name);
				t = xasprintf("%s/%s", dsub, de2->d_name);
				e = linkorcopy(f, t);
				fault("fetch: an object file seeded");
				free(f);
				free(t);
			}
			closedir(d2);
		}
		free(sub);
		free(dsub);
	}
	closedir(d);
	if (e != 0)
		unseed(dd);
	free(sd);
	free(dd);
	return e;
}

/* a fetch URL that names a repository on this machine: its path, or NULL */
char *
localpath(const char *u)
{
	if (startswith(u, "file://"))
		return xstrdup(u + 7);
	if (u[0] == '/' || (!strstr(u, "://") && os_isdir(u)))
		return os_abspath(u, NULL);
	return NULL;
}

/* the pack stream from git_packbuilder_foreach into the mirror's object store */
struct packsink {
	git_odb_writepack *wp;
	git_indexer_progress st;
	struct prog *p;
};

static int
packsink_cb(void *buf, size_t size, void *payload)
{
	struct packsink *k = payload;

	return k->wp->append(k->wp, buf, size, &k->st);
}

/* true if the ref is one a mirror keeps */
static int
keptref(const char *name)
{
	return (startswith(name, "refs/heads/") || startswith(name, "refs/tags/")) &&
	       !endswith(name, "^{}");
}

/* Fetch from a repository on this machine without a transport: pack exactly the objects
   the mirror lacks (history behind the mirror's refs is hidden), then set the refs as the
   source has them (pruning the rest). extra: a commit id to fetch besides the refs. */
/* the refs a fetch takes (names and ids) */
struct refset {
	char **names;
	git_oid *ids;
	size_t n, cap, cap2;
};

/* a mirror with no refs yet starts from the source's object files (*dodb reopened) */
static int
seedempty(git_repository *src, git_repository *r, git_odb **dodb)
{
	git_reference_iterator *ri;
	git_reference *rr;
	int empty = 1, e;

	if (git_reference_iterator_new(&ri, r) == 0) {
		if (git_reference_next(&rr, ri) == 0) {
			empty = 0;
			git_reference_free(rr);
		}
		git_reference_iterator_free(ri);
	}
	if (!empty || seed_local(src, r) != 0)
		return 0;
	fault("fetch: objects seeded");
	git_odb_free(*dodb);
	*dodb = NULL;
	if ((e = git_repository_odb(dodb, r)) < 0 || (e = git_odb_refresh(*dodb)) < 0)
		return e;
	return 0;
}

/* what the source has: its kept direct refs */
static int
srcrefs(git_repository *src, struct refset *rs)
{
	git_reference_iterator *it;
	git_reference *ref;
	const char *nm;
	int e;

	if ((e = git_reference_iterator_new(&it, src)) < 0)
		return e;
	while (git_reference_next(&ref, it) == 0) {
		nm = git_reference_name(ref);
		if (keptref(nm) && git_reference_type(ref) == GIT_REFERENCE_DIRECT) {
			rs->names = xgrow(rs->names, &rs->cap, rs->n + 1, sizeof *rs->names);
			rs->ids = xgrow(rs->ids, &rs->cap2, rs->n + 1, sizeof *rs->ids);
			rs->names[rs->n] = xstrdup(nm);
			git_oid_cpy(&rs->ids[rs->n], git_reference_target(ref));
			rs->n++;
		}
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
	return 0;
}

/* hide from the walk what the mirror already has */
static int
hidehave(git_repository *r, git_odb *sodb, git_revwalk *w)
{
	git_reference_iterator *it;
	git_reference *ref;
	git_object *c;
	int e;

	if ((e = git_reference_iterator_new(&it, r)) < 0)
		return e;
	while (git_reference_next(&ref, it) == 0) {
		if (git_reference_peel(&c, ref, GIT_OBJECT_COMMIT) == 0) {
			if (git_odb_exists(sodb, git_object_id(c)))
				git_revwalk_hide(w, git_object_id(c));
			git_object_free(c);
		}
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
	return 0;
}

/* want id when the mirror lacks it: tags into the pack, a commit onto the walk, a tree
   or blob into the pack with what it holds */
static void
want(git_repository *src, git_odb *dodb, git_packbuilder *pb, git_revwalk *w, const git_oid *id)
{
	git_object *obj, *c, *t;

	if (git_odb_exists(dodb, id) || git_object_lookup(&obj, src, id, GIT_OBJECT_ANY) < 0)
		return;
	while (git_object_type(obj) == GIT_OBJECT_TAG) {
		git_packbuilder_insert(pb, git_object_id(obj), NULL);
		if (git_tag_target(&t, (git_tag *)obj) < 0)
			break;
		git_object_free(obj);
		obj = t;
	}
	if (git_object_type(obj) == GIT_OBJECT_COMMIT) {
		if (!git_odb_exists(dodb, git_object_id(obj)))
			git_revwalk_push(w, git_object_id(obj));
	} else if (git_object_peel(&c, obj, GIT_OBJECT_TREE) == 0 ||
	           git_object_peel(&c, obj, GIT_OBJECT_BLOB) == 0) {
		git_packbuilder_insert_recur(pb, git_object_id(c), NULL);
		git_object_free(c);
	}
	git_object_free(obj);
}

/* the pack of what the mirror lacks, written into its object store */
static int
writepack(const struct spopts *o, const char *label, git_odb *dodb, git_packbuilder *pb)
{
	struct prog p = {label, {0, 0}, {0, 0}, 0};
	struct packsink k = {0};
	int e;

	if (!git_packbuilder_object_count(pb))
		return 0;
	if (o->progress)
		clock_gettime(CLOCK_MONOTONIC, &p.t0);
	if ((e = git_odb_write_pack(&k.wp, dodb, o->progress ? progress_cb : NULL, &p)) < 0)
		return e;
	e = git_packbuilder_foreach(pb, packsink_cb, &k);
	if (e == 0)
		e = k.wp->commit(k.wp, &k.st);
	k.wp->free(k.wp);
	if (p.shown)
		fputc('\n', stderr);
	if (e == 0)
		fault("fetch: pack written");
	return e;
}

/* the refs as the source has them (and refs/srcpin/EXTRA), the mirror's other kept refs
   pruned */
static int
setrefs(git_repository *r, git_odb *dodb, const struct refset *rs, const char *extra)
{
	git_reference_iterator *it;
	git_reference *nr, *ref;
	git_oid id;
	const char *nm;
	char *en;
	size_t i;
	int e, keep;

	for (i = 0; i < rs->n; i++) {
		if ((e = git_reference_create(&nr, r, rs->names[i], &rs->ids[i], 1, "srcpin fetch")) < 0)
			return e;
		git_reference_free(nr);
		fault("fetch: a ref set");
	}
	if (extra) {
		en = xasprintf("refs/srcpin/%s", extra);
		if (git_oid_fromstr(&id, extra) == 0 && git_odb_exists(dodb, &id) &&
		    git_reference_create(&nr, r, en, &id, 1, "srcpin fetch") == 0)
			git_reference_free(nr);
		free(en);
	}
	if ((e = git_reference_iterator_new(&it, r)) < 0)
		return e;
	while (git_reference_next(&ref, it) == 0) {
		nm = git_reference_name(ref);
		keep = !keptref(nm);
		for (i = 0; !keep && i < rs->n; i++)
			keep = strcmp(nm, rs->names[i]) == 0;
		if (!keep)
			git_reference_delete(ref);
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
	return 0;
}

int
fetch_local(const struct spopts *o, const char *label, git_repository *r, const char *path,
            const char *extra)
{
	git_repository *src;
	git_revwalk *w = NULL;
	git_packbuilder *pb = NULL;
	git_odb *dodb = NULL, *sodb = NULL;
	struct refset rs = {0};
	git_oid id;
	size_t i;
	int e;

	if ((e = git_repository_open_ext(&src, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) < 0) {
		char *m = xasprintf("no git repository at %s: %s", path, gitmsg());
		git_error_set_str(GIT_ERROR_NET, m);   /* unreachable, as a network error would be */
		free(m);
		return e;
	}
	if ((e = git_repository_odb(&dodb, r)) < 0 || (e = git_repository_odb(&sodb, src)) < 0 ||
	    (e = git_revwalk_new(&w, src)) < 0 || (e = git_packbuilder_new(&pb, src)) < 0)
		goto out;
	git_packbuilder_set_threads(pb, 0);
	if ((e = seedempty(src, r, &dodb)) < 0 || (e = srcrefs(src, &rs)) < 0 ||
	    (e = hidehave(r, sodb, w)) < 0)
		goto out;
	/* want what it lacks: the refs' targets, and the extra commit */
	for (i = 0; i < rs.n; i++)
		want(src, dodb, pb, w, &rs.ids[i]);
	if (extra && git_oid_fromstr(&id, extra) == 0)
		want(src, dodb, pb, w, &id);
	if ((e = git_packbuilder_insert_walk(pb, w)) < 0 || (e = writepack(o, label, dodb, pb)) < 0)
		goto out;
	e = setrefs(r, dodb, &rs, extra);
out:
	for (i = 0; i < rs.n; i++)
		free(rs.names[i]);
	free(rs.names);
	free(rs.ids);
	git_packbuilder_free(pb);
	git_revwalk_free(w);
	git_odb_free(dodb);
	git_odb_free(sodb);
	git_repository_free(src);
	return e;
}
