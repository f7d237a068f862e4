/* patch series: reading and digesting a series, routing patch sections into submodules,
   checking every patch in memory before any file is written */
#include "srcpin.h"
#include "seriesdigest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "os.h"

/* Read the regular file at path (at most max bytes) into out. Opened without blocking, so
   a FIFO or a device is refused instead of waited on. Returns 0, or -1 with a message
   (caller frees) in *why. */
static int
readreg(const char *path, struct buf *out, size_t max, char **why)
{
	struct stat st;
	char tmp[65536];
	ssize_t k;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		*why = xstrdup(strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = xasprintf("is %s, not a regular file", os_ftype(st.st_mode));
		close(fd);
		return -1;
	}
	if ((size_t)st.st_size > max) {
		*why = xasprintf("larger than %zu MiB", max >> 20);
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	while ((k = read(fd, tmp, sizeof tmp)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 || out->len + (size_t)k > max) {
			*why = k < 0 ? xstrdup(strerror(errno)) : xasprintf("larger than %zu MiB", max >> 20);
			close(fd);
			return -1;
		}
		bufadd(out, tmp, (size_t)k);
	}
	close(fd);
	return 0;
}

void
series_free(struct series *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->p[i].path);
		free(s->p[i].name);
		buffree(&s->p[i].text);
	}
	free(s->p);
	free(s->path);
	memset(s, 0, sizeof *s);
}

int
series_load(struct series *s, const char *path, char **err)
{
	struct buf text = {0};
	struct sha256 h;
	char *dir, *slash, *line, *cur, *why = NULL;
	size_t cap = 0;
	int ln = 0;

	memset(s, 0, sizeof *s);
	s->path = xstrdup(path);
	if (readreg(path, &text, 16u << 20, &why) < 0) {
		*err = xasprintf("%s: %s", path, why);
		free(why);
		buffree(&text);
		series_free(s);
		return -1;
	}
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash)
		slash[1] = 0;
	else
		dir[0] = 0;
	seriesdigest_begin(&h, text.s, text.len);
	bufputc(&text, 0);
	for (cur = text.s; (line = series_next(&cur, &ln));) {
		char *name;
		struct patchfile *pf;

		if (strpbrk(line, " \t")) {
			*err = xasprintf("%s:%d: '%s': one patch file name per line (options such as -p are "
			                 "not supported: names lose one folder, as with git apply's -p1)", path, ln, line);
			goto fail;
		}
		if (!patchpath_ok(line)) {
			*err = xasprintf("%s:%d: '%s': patch names must be relative paths inside the "
			                 "series' folder", path, ln, line);
			goto fail;
		}
		name = xasprintf("%s%s", dir, line);
		s->p = xgrow(s->p, &cap, s->n + 1, sizeof *s->p);
		pf = &s->p[s->n];
		memset(pf, 0, sizeof *pf);
		pf->path = name;
		pf->name = xstrdup(line);
		pf->line = ln;
		s->n++;
		if (readreg(name, &pf->text, 256u << 20, &why) < 0) {
			*err = xasprintf("%s:%d: %s: %s", path, ln, name, why);
			free(why);
			goto fail;
		}
		seriesdigest_patch(&h, line, pf->text.s, pf->text.len);
	}
	seriesdigest_end(&h, s->digest);
	buffree(&text);
	free(dir);
	return 0;
fail:
	{
		unsigned char junk[32];
		sha256_final(&h, junk);
	}
	buffree(&text);
	free(dir);
	series_free(s); /* nothing half-loaded survives a failure */
	return -1;
}

/* a repository taking part in the series: its prefix, state and tree in progress */
struct part {
	char *prefix;          /* "" for the top, "third_party/gloo" for a submodule */
	git_repository *r;
	struct spstate s;
	git_oid tree;
	int changed;           /* the tree is no longer its commit's */
	int gone;              /* a submodule the series removed */
	struct buf relink;     /* gitlinks the series moved, added or removed: paths, NUL-ended */
};
struct parts {
	struct part *v;
	size_t n, cap;
};

static int
gatherlink(const char *root, const git_tree_entry *e, void *payload)
{
	struct buf *b = payload;

	if (git_tree_entry_filemode(e) == GIT_FILEMODE_COMMIT)
		bufprintf(b, "%s%s%c", root, git_tree_entry_name(e), 0);
	return 0;
}

/* add r (state s) at prefix, and its checked-out submodules recursively */
static void
gather(struct parts *ps, git_repository *r, struct spstate *s, const char *prefix)
{
	struct part *pt;
	git_tree *t;
	struct buf links = {0};
	size_t me;

	ps->v = xgrow(ps->v, &ps->cap, ps->n + 1, sizeof *ps->v);
	me = ps->n++;
	pt = &ps->v[me];
	memset(pt, 0, sizeof *pt);
	pt->prefix = xstrdup(prefix);
	pt->r = r;
	pt->s = *s;
	{
		/* the series applies to the pinned commit's tree, whatever the files are now */
		git_oid cid;
		git_commit *c;
		if (git_oid_fromstr(&cid, s->commit) < 0 || git_commit_lookup(&c, r, &cid) < 0)
			dien(EXIT_USAGE, "%s: %s: no finished checkout here; run srcpin checkout again",
			     s->name, git_repository_workdir(r));
		git_oid_cpy(&pt->tree, git_commit_tree_id(c));
		git_commit_free(c);
	}
	if (!s->submodules)
		return;
	if (git_tree_lookup(&t, r, &pt->tree) < 0)
		die("%s: tree %s cannot be read: %s", s->name, s->tree, gitmsg());
	git_tree_walk(t, GIT_TREEWALK_PRE, gatherlink, &links);
	git_tree_free(t);
	for (size_t off = 0; off < links.len; off += strlen(links.s + off) + 1) {
		const char *lp = links.s + off;
		char *dir = xasprintf("%s%s", git_repository_workdir(r), lp);
		char *np = *prefix ? xasprintf("%s/%s", prefix, lp) : xstrdup(lp);
		git_repository *sr;
		struct spstate ss;
		if (git_repository_open_ext(&sr, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0 ||
		    state_load(sr, &ss) < 0)
			die("%s: submodule %s is not checked out; run srcpin checkout --submodules", s->name,
			    np);
		ss.submodules = 1;
		gather(ps, sr, &ss, np);
		free(dir);
		free(np);
	}
	buffree(&links);
}

/* where apply stands, for the error message (copies: libgit2 frees its own on failure) */
struct where {
	char *file;
	char hunkhdr[128];
	int hunk;
};

static int
delta_cb(const git_diff_delta *d, void *payload)
{
	struct where *w = payload;
	const char *f = d->new_file.path ? d->new_file.path : d->old_file.path;

	free(w->file);
	w->file = xstrdup(f ? f : "?");
	w->hunk = 0;
	w->hunkhdr[0] = 0;
	if ((d->old_file.path && !patchpath_ok(d->old_file.path)) ||
	    (d->new_file.path && !patchpath_ok(d->new_file.path)))
		return -1;
	return 0;
}

static int
hunk_cb(const git_diff_hunk *h, void *payload)
{
	struct where *w = payload;
	size_t n = h->header_len;

	w->hunk++;
	while (n && (h->header[n - 1] == '\n' || h->header[n - 1] == '\r'))
		n--;
	if (n >= sizeof w->hunkhdr)
		n = sizeof w->hunkhdr - 1;
	memcpy(w->hunkhdr, h->header, n);
	w->hunkhdr[n] = 0;
	return 0;
}

void
plan_free(struct spplan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->prefix[i]);
		buffree(&p->relink[i]);
	}
	free(p->prefix);
	free(p->tree);
	free(p->changed);
	free(p->gone);
	free(p->relink);
	memset(p, 0, sizeof *p);
}

/* the parts, the patch split and the patch file in flight, reachable for leak checkers
   when a patch fails and the process exits */
static struct parts gparts;
static struct buf *gout;
static struct linkmoves gmoves;
static struct where gwhere;

/* "prefix/" for messages about a part's files ("" for the top) */
static const char *
slash(const struct part *pt)
{
	return *pt->prefix ? "/" : "";
}

/* The symlink at path (in the folder dir below the checkout) points to target: true if
   following it stays inside the checkout (a relative target whose ".." never climbs
   above the checkout's top). */
static int
linkinside(const char *dir, const char *path, const char *target, size_t tlen)
{
	long depth = 0;
	const char *c, *e = target + tlen;

	if (!tlen || *target == '/' || memchr(target, 0, tlen))
		return 0;
	for (c = dir; *c; c++)
		depth += *c == '/' || c == dir;
	for (c = path; (c = strchr(c, '/')); c++)
		depth++;
	for (c = target; c < e;) {
		const char *s = memchr(c, '/', (size_t)(e - c));
		size_t n = s ? (size_t)(s - c) : (size_t)(e - c);
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			if (--depth < 0)
				return 0;
		} else if (n && !(n == 1 && c[0] == '.'))
			depth++;
		c += n + (s != NULL);
	}
	return 1;
}

/* refuse symlinks the patch made or retargeted that point outside the checkout, unless
   the user allowed them */
static void
checklinks(const struct spopts *o, const struct part *pt, git_diff *d, const struct patchfile *pf)
{
	git_tree *t;

	if (o->allow_outside_links)
		return;
	if (git_tree_lookup(&t, pt->r, &pt->tree) < 0)
		die("%s: tree cannot be read: %s", pt->s.name, gitmsg());
	for (size_t j = 0; j < git_diff_num_deltas(d); j++) {
		const git_diff_delta *dl = git_diff_get_delta(d, j);
		git_tree_entry *e;
		git_blob *b;
		if (dl->status == GIT_DELTA_DELETED || dl->new_file.mode != GIT_FILEMODE_LINK ||
		    !dl->new_file.path)
			continue;
		if (git_tree_entry_bypath(&e, t, dl->new_file.path) < 0)
			continue;
		if (git_tree_entry_filemode(e) == GIT_FILEMODE_LINK &&
		    git_blob_lookup(&b, pt->r, git_tree_entry_id(e)) == 0) {
			const char *tg = git_blob_rawcontent(b);
			size_t n = (size_t)git_blob_rawsize(b);
			if (!linkinside(pt->prefix, dl->new_file.path, tg, n))
				dien(EXIT_USAGE, "%s: %s%s%s: symlink to '%.*s' points outside the source tree; "
				     "refused (--allow-outside-symlinks allows it)", pf->path, pt->prefix,
				     slash(pt), dl->new_file.path, (int)(n > 200 ? 200 : n), tg);
			git_blob_free(b);
		}
		git_tree_entry_free(e);
	}
	git_tree_free(t);
}

/* the part at prefix, or NULL */
static struct part *
partat(struct parts *ps, const char *prefix)
{
	for (size_t i = 0; i < ps->n; i++)
		if (strcmp(ps->v[i].prefix, prefix) == 0)
			return &ps->v[i];
	return NULL;
}

/* the gitlink changes of one patch file */
struct patchmoves {
	const struct linkmoves *mv;
	const struct patchfile *pf;
};

/* apply the gitlink changes pm of one patch to part pt (index k of the split): the tree
   entry moves, and a checked-out submodule's series continues on its new commit */
static void
applymoves(const struct spopts *o, struct parts *ps, struct part *pt, size_t k,
           const struct patchmoves *pm)
{
	const struct linkmoves *mv = pm->mv;
	const struct patchfile *pf = pm->pf;
	git_tree *t = NULL;
	git_index *idx = NULL;

	for (size_t i = 0; i < mv->n; i++) {
		const struct linkmove *m = &mv->v[i];
		const git_index_entry *e;
		char have[GIT_OID_HEXSZ + 1] = "";
		char *sp;
		struct part *sub;
		if (m->repo != k)
			continue;
		if (!idx) {
			if (git_tree_lookup(&t, pt->r, &pt->tree) < 0 || git_index_new(&idx) < 0 ||
			    git_index_read_tree(idx, t) < 0)
				die("%s: tree cannot be read: %s", pt->s.name, gitmsg());
		}
		e = git_index_get_bypath(idx, m->path, 0);
		if (e && e->mode == GIT_FILEMODE_COMMIT)
			git_oid_tostr(have, sizeof have, &e->id);
		if (*m->from ? strcmp(have, m->from) != 0 : e != NULL)
			dien(EXIT_PROBLEM, "%s: %s%s%s: submodule hunk (Subproject commit %.12s -> %.12s) does "
			     "not apply to %s (%s)", pf->path, pt->prefix, slash(pt), m->path,
			     *m->from ? m->from : "none", *m->to ? m->to : "none", pt->s.commit,
			     *have ? "it is at another commit" : e ? "it is not a submodule there" :
			     "no submodule there");
		if (*m->to) {
			git_index_entry ne;
			memset(&ne, 0, sizeof ne);
			ne.mode = GIT_FILEMODE_COMMIT;
			ne.path = m->path;
			if (git_oid_fromstr(&ne.id, m->to) < 0 || git_index_add(idx, &ne) < 0)
				die("%s: %s: cannot record the submodule: %s", pf->path, m->path, gitmsg());
		} else if (git_index_remove_bypath(idx, m->path) < 0)
			die("%s: %s: cannot remove the submodule: %s", pf->path, m->path, gitmsg());
		bufadd(&pt->relink, m->path, strlen(m->path) + 1);
		/* a checked-out submodule that moves: later patches inside it apply to the new commit */
		sp = *pt->prefix ? xasprintf("%s/%s", pt->prefix, m->path) : xstrdup(m->path);
		if ((sub = partat(ps, sp)) && !sub->gone) {
			git_oid to;
			git_commit *c;
			if (!*m->to) {
				sub->gone = 1;
			} else {
				git_oid_fromstr(&to, m->to);
				mirror_need(o, sub->s.name, sub->s.mirror, sub->s.url, &to);
				if (git_commit_lookup(&c, sub->r, &to) < 0)
					die("%s: commit %s cannot be read from the mirror %s: %s", sub->s.name,
					    m->to, sub->s.mirror, gitmsg());
				git_oid_cpy(&sub->tree, git_commit_tree_id(c));
				git_commit_free(c);
				sub->changed = 0;
			}
		}
		free(sp);
	}
	if (idx) {
		if (git_index_write_tree_to(&pt->tree, idx, pt->r) < 0)
			die("%s: cannot store the patched tree: %s", pt->s.name, gitmsg());
		pt->changed = 1;
		git_index_free(idx);
		git_tree_free(t);
	}
}

/* true if the deletion j of d (a text or binary delete) removes exactly the bytes of blob
   b, as git apply demands: the hunks' old lines for text, the index line's id for binary */
static int
delmatches(git_diff *d, size_t j, git_blob *b)
{
	const git_diff_delta *dl = git_diff_get_delta(d, j);
	git_patch *p;
	struct buf pre = {0};
	int ok;

	if (dl->flags & GIT_DIFF_FLAG_BINARY)
		return !dl->old_file.id_abbrev ||
		       git_oid_ncmp(&dl->old_file.id, git_blob_id(b), dl->old_file.id_abbrev) == 0;
	if (git_patch_from_diff(&p, d, j) < 0)
		return 1;   /* libgit2 reports it */
	for (size_t h = 0; h < git_patch_num_hunks(p); h++) {
		int nl = git_patch_num_lines_in_hunk(p, h);
		for (int l = 0; l < nl; l++) {
			const git_diff_line *ln;
			if (git_patch_get_line_in_hunk(&ln, p, h, (size_t)l) < 0)
				continue;
			if (ln->origin == GIT_DIFF_LINE_DELETION || ln->origin == GIT_DIFF_LINE_CONTEXT)
				bufadd(&pre, ln->content, ln->content_len);
			else if ((ln->origin == GIT_DIFF_LINE_DEL_EOFNL ||
			          ln->origin == GIT_DIFF_LINE_CONTEXT_EOFNL) && pre.len &&
			         pre.s[pre.len - 1] == '\n')
				pre.len--;
		}
	}
	ok = pre.len == (size_t)git_blob_rawsize(b) &&
	     (!pre.len || memcmp(pre.s, git_blob_rawcontent(b), pre.len) == 0);
	buffree(&pre);
	git_patch_free(p);
	return ok;
}

/* Check what libgit2 1.5.1 does not before it applies the deltas of d to tree t, in order
   (a path deleted earlier in the patch may be added again): a file change aimed at a
   submodule (libgit2 would look the commit up as a blob and, failing, free a pointer it
   never set), a new file over an existing one, and a deletion of other content than the
   file's. Dies with exit 1 naming the patch and file. */
static void
precheck(const struct part *pt, git_diff *d, git_tree *t, const struct patchfile *pf)
{
	struct buf gone = {0};   /* paths removed by earlier deltas, NUL-ended */

	for (size_t j = 0; j < git_diff_num_deltas(d); j++) {
		const git_diff_delta *dl = git_diff_get_delta(d, j);
		const char *f = dl->new_file.path ? dl->new_file.path : dl->old_file.path;
		git_tree_entry *e;
		if ((dl->old_file.path && !patchpath_ok(dl->old_file.path)) ||
		    (dl->new_file.path && !patchpath_ok(dl->new_file.path)) || !f)
			dien(EXIT_USAGE, "%s: %s%s%s: path escapes the source tree; refused", pf->path,
			     pt->prefix, slash(pt), f ? f : "?");
		if (dl->status != GIT_DELTA_ADDED && dl->old_file.path &&
		    git_tree_entry_bypath(&e, t, dl->old_file.path) == 0) {
			int sub = git_tree_entry_filemode(e) == GIT_FILEMODE_COMMIT, same = 1;
			git_blob *b;
			if (!sub && dl->status == GIT_DELTA_DELETED &&
			    git_blob_lookup(&b, pt->r, git_tree_entry_id(e)) == 0) {
				same = delmatches(d, j, b);
				git_blob_free(b);
			}
			git_tree_entry_free(e);
			if (sub)
				dien(EXIT_PROBLEM, "%s: %s%s%s: is a submodule in %s; the patch changes it as a "
				     "file", pf->path, pt->prefix, slash(pt), dl->old_file.path, pt->s.commit);
			if (!same)
				dien(EXIT_PROBLEM, "%s: %s%s%s: hunk 1 deletes other content than the file has "
				     "in %s", pf->path, pt->prefix, slash(pt), dl->old_file.path, pt->s.commit);
		}
		if ((dl->status == GIT_DELTA_ADDED || dl->status == GIT_DELTA_RENAMED ||
		     dl->status == GIT_DELTA_COPIED) && dl->new_file.path &&
		    git_tree_entry_bypath(&e, t, dl->new_file.path) == 0) {
			/* a folder there is fine when the patch deletes its files (libgit2 checks that) */
			int again = git_tree_entry_type(e) == GIT_OBJECT_TREE;
			git_tree_entry_free(e);
			for (size_t off = 0; !again && off < gone.len; off += strlen(gone.s + off) + 1)
				again = strcmp(gone.s + off, dl->new_file.path) == 0;
			if (!again)
				dien(EXIT_PROBLEM, "%s: %s%s%s: already exists in %s; the patch adds it",
				     pf->path, pt->prefix, slash(pt), dl->new_file.path, pt->s.commit);
		}
		if ((dl->status == GIT_DELTA_DELETED || dl->status == GIT_DELTA_RENAMED) &&
		    dl->old_file.path)
			bufadd(&gone, dl->old_file.path, strlen(dl->old_file.path) + 1);
	}
	buffree(&gone);
}

/* apply the libgit2 text of one patch to part pt */
static void
applytext(const struct spopts *o, struct part *pt, const struct buf *text,
          const struct patchfile *pf)
{
	git_apply_options ao;
	git_diff *d;
	git_tree *t;
	git_index *idx;
	struct where *w = &gwhere;

	git_apply_options_init(&ao, GIT_APPLY_OPTIONS_VERSION);
	if (git_diff_from_buffer(&d, text->s, text->len) < 0)
		dien(EXIT_USAGE, "%s: not a patch git can read: %s", pf->path, gitmsg());
	if (git_tree_lookup(&t, pt->r, &pt->tree) < 0)
		die("%s: tree cannot be read: %s", pt->s.name, gitmsg());
	precheck(pt, d, t, pf);
	ao.delta_cb = delta_cb;
	ao.hunk_cb = hunk_cb;
	ao.payload = w;
	if (git_apply_to_tree(&idx, pt->r, t, d, &ao) < 0) {
		const char *f = w->file ? w->file : "?";
		if (w->hunk)
			dien(EXIT_PROBLEM, "%s: %s%s%s: hunk %d (%s) does not apply to %s (%s)", pf->path,
			     pt->prefix, slash(pt), f, w->hunk, w->hunkhdr, pt->s.commit, gitmsg());
		dien(EXIT_PROBLEM, "%s: %s%s%s: does not apply to %s (%s)", pf->path, pt->prefix,
		     slash(pt), f, pt->s.commit, gitmsg());
	}
	if (git_index_write_tree_to(&pt->tree, idx, pt->r) < 0)
		die("%s: cannot store the patched tree: %s", pt->s.name, gitmsg());
	pt->changed = 1;
	git_index_free(idx);
	git_tree_free(t);
	checklinks(o, pt, d, pf);
	git_diff_free(d);
	free(w->file);
	w->file = NULL;
}

/* the mode of path in the tree part k of the split has now (patch_split numbers the top
   part nsub), or 0 */
static unsigned
partmode(size_t k, const char *path, void *arg)
{
	struct parts *ps = arg;
	struct part *pt = &ps->v[k + 1 == ps->n ? 0 : k + 1];
	git_tree *t;
	git_tree_entry *e;
	unsigned m = 0;

	if (git_tree_lookup(&t, pt->r, &pt->tree) < 0)
		return 0;
	if (git_tree_entry_bypath(&e, t, path) == 0) {
		m = (unsigned)git_tree_entry_filemode(e);
		git_tree_entry_free(e);
	}
	git_tree_free(t);
	return m == GIT_FILEMODE_BLOB || m == GIT_FILEMODE_BLOB_EXECUTABLE ? m : 0;
}

void
series_check(const struct spopts *o, git_repository *r, struct spstate *s,
             const struct series *ser, struct spplan *plan)
{
	struct parts *ps = &gparts;
	char **subs;
	size_t nsub;

	memset(ps, 0, sizeof *ps);
	gather(ps, r, s, "");
	/* subs[k] is the prefix of part k+1; the top part is index nsub in patch_split */
	nsub = ps->n - 1;
	subs = xcalloc(nsub + 1, sizeof *subs);
	for (size_t k = 0; k < nsub; k++)
		subs[k] = ps->v[k + 1].prefix;
	for (size_t i = 0; i < ser->n; i++) {
		const struct patchfile *pf = &ser->p[i];
		char *err = NULL;
		int any = 0;
		gout = xcalloc(nsub + 1, sizeof *gout);
		memset(&gmoves, 0, sizeof gmoves);
		struct splitmode sm = {partmode, ps};
		struct splitspec sp = {subs, nsub, &sm};
		struct splitout so = {gout, &gmoves};
		if (patch_split(pf->text.s ? pf->text.s : "", pf->text.len, &sp, &so, &err) < 0)
			dien(EXIT_USAGE, "%s: %s", pf->path, err);
		for (size_t k = 0; k <= nsub; k++) {
			struct part *pt = &ps->v[k == nsub ? 0 : k + 1];
			int moves = 0;
			for (size_t j = 0; j < gmoves.n; j++)
				moves |= gmoves.v[j].repo == k;
			if (!gout[k].len && !moves)
				continue;
			any = 1;
			if (pt->gone)
				dien(EXIT_PROBLEM, "%s: %s: the series removed this submodule before", pf->path,
				     pt->prefix);
			if (gout[k].len)
				applytext(o, pt, &gout[k], pf);
			if (moves)
				applymoves(o, ps, pt, k, &(struct patchmoves){&gmoves, pf});
		}
		for (size_t k = 0; k <= nsub; k++)
			buffree(&gout[k]);
		free(gout);
		gout = NULL;
		linkmoves_free(&gmoves);
		if (!any)
			dien(EXIT_USAGE, "%s: no diff in it: neither a 'diff --git' section nor a "
			     "'--- '/'+++ '/'@@ -' header (listed at %s:%d)", pf->path, ser->path, pf->line);
	}
	plan->n = ps->n;
	plan->prefix = xcalloc(ps->n, sizeof *plan->prefix);
	plan->tree = xcalloc(ps->n, sizeof *plan->tree);
	plan->changed = xcalloc(ps->n, sizeof *plan->changed);
	plan->gone = xcalloc(ps->n, sizeof *plan->gone);
	plan->relink = xcalloc(ps->n, sizeof *plan->relink);
	for (size_t k = 0; k < ps->n; k++) {
		plan->prefix[k] = ps->v[k].prefix;
		git_oid_tostr(plan->tree[k], sizeof plan->tree[k], &ps->v[k].tree);
		plan->changed[k] = ps->v[k].changed;
		plan->gone[k] = ps->v[k].gone;
		plan->relink[k] = ps->v[k].relink;
		if (k) {
			state_free(&ps->v[k].s);
			git_repository_free(ps->v[k].r);
		}
	}
	free(ps->v);
	memset(ps, 0, sizeof *ps);
	free(subs);
}

void
series_write(const struct spopts *o, const char *dir, const struct spplan *plan,
             const struct series *ser)
{
	git_repository *top = NULL;
	struct spstate ts;

	/* parents before their submodules (a moved submodule is checked out at its new commit
	   before the series' patches inside it are written); the top state, with the series
	   digest that marks the work done, last */
	for (size_t k = 0; k < plan->n; k++) {
		char *wd = *plan->prefix[k] ? xasprintf("%s/%s", dir, plan->prefix[k]) : xstrdup(dir);
		struct spstate s;
		git_repository *r;
		git_tree *t;
		git_oid id;
		if (plan->gone[k]) {
			free(wd);
			continue;
		}
		r = tree_open(wd, &s);
		if (git_oid_fromstr(&id, plan->tree[k]) < 0 || git_tree_lookup(&t, r, &id) < 0)
			die("%s: tree cannot be read: %s", s.name, gitmsg());
		if (plan->changed[k]) {
			git_checkout_options co;
			git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
			co.checkout_strategy = GIT_CHECKOUT_FORCE;
			if (git_checkout_tree(r, (git_object *)t, &co) < 0)
				die("%s: %s: cannot write the patched files: %s", s.name, wd, gitmsg());
			fault("patch: patched files written");
		}
		{
			char ix[GIT_OID_HEXSZ + 1];
			index_sum(r, ix);
			free(s.index);
			s.index = xstrdup(ix);
		}
		if (s.submodules)
			for (size_t off = 0; off < plan->relink[k].len;
			     off += strlen(plan->relink[k].s + off) + 1)
				tree_relink(o, &(struct spco){s.name, r, s.url}, t, plan->relink[k].s + off);
		git_tree_free(t);
		free(s.tree);
		s.tree = xstrdup(plan->tree[k]);
		if (k == 0) {
			free(s.series);
			free(s.series_digest);
			s.series = os_abspath(ser->path, NULL);
			s.series_digest = xstrdup(ser->digest);
			top = r;
			ts = s;
		} else {
			state_save(r, &s);
			fault("patch: a submodule's state recorded");
			state_free(&s);
			git_repository_free(r);
		}
		free(wd);
	}
	if (top) {
		state_save(top, &ts);
		fault("patch: the series recorded");
		state_free(&ts);
		git_repository_free(top);
	}
}
