/* checkouts: a work tree whose .git borrows the mirror's objects (alternates), its state
   file, pristine checks and submodules in their own mirrors */
#include "srcpin.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "kv.h"

static const char *
nz(const char *s)
{
	return s ? s : "";
}

static char *
statepath(git_repository *r)
{
	return xasprintf("%ssrcpin", git_repository_path(r));
}

int
state_load(git_repository *r, struct spstate *s)
{
	struct kvfile f = {0};
	char *p = statepath(r), *err = NULL;
	const char *v;
	int e;

	memset(s, 0, sizeof *s);
	e = kv_load(&f, p, &err);
	free(p);
	free(err);
	if (e < 0) {
		kv_free(&f);
		return -1;
	}
#define GET(field, key) s->field = xstrdup(nz(kv_get(&f, key)))
	GET(name, "NAME");
	GET(url, "URL");
	GET(commit, "COMMIT");
	GET(cache, "CACHE");
	GET(mirror, "MIRROR");
	GET(tree, "TREE");
	GET(series, "SERIES");
	GET(series_digest, "SERIES_DIGEST");
	GET(index, "INDEX");
#undef GET
	v = kv_get(&f, "SUBMODULES");
	s->submodules = v && strcmp(v, "yes") == 0;
	kv_free(&f);
	return 0;
}

/* KEY="value", quoted by kv.h's one writer */
static void
putkv(struct buf *b, const char *k, const char *v)
{
	kv_put(b, k, nz(v));
}

void
state_save(git_repository *r, const struct spstate *s)
{
	struct buf b = {0};
	char *p = statepath(r);

	bufputs(&b, "# srcpin checkout state; written by srcpin, read by 'srcpin state'\n");
	putkv(&b, "NAME", s->name);
	putkv(&b, "URL", s->url);
	putkv(&b, "COMMIT", s->commit);
	putkv(&b, "CACHE", s->cache);
	putkv(&b, "MIRROR", s->mirror);
	putkv(&b, "TREE", s->tree);
	putkv(&b, "SERIES", s->series);
	putkv(&b, "SERIES_DIGEST", s->series_digest);
	putkv(&b, "SUBMODULES", s->submodules ? "yes" : "no");
	putkv(&b, "INDEX", s->index);
	if (writefile_atomic(p, b.s, b.len, 0644) < 0)
		die("%s: cannot write:", p);
	buffree(&b);
	free(p);
}

void
state_free(struct spstate *s)
{
	free(s->name);
	free(s->url);
	free(s->commit);
	free(s->cache);
	free(s->mirror);
	free(s->tree);
	free(s->series);
	free(s->series_digest);
	free(s->index);
	memset(s, 0, sizeof *s);
}

static void
setstr(char **field, const char *v)
{
	free(*field);
	*field = xstrdup(nz(v));
}

git_repository *
tree_open(const char *dir, struct spstate *s)
{
	git_repository *r;
	struct stat st;

	if (stat(dir, &st) < 0)
		die("%s:", dir);
	if (git_repository_open_ext(&r, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		die("%s: not a srcpin checkout (no git folder)", dir);
	if (git_repository_is_bare(r) || state_load(r, s) < 0) {
		git_repository_free(r);
		die("%s: not a srcpin checkout (no srcpin state)", dir);
	}
	return r;
}

/* true if the folder has no entries */
static int
emptydir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int empty = 1;

	if (!d)
		die("%s:", dir);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			empty = 0;
			break;
		}
	closedir(d);
	return empty;
}

/* remove every entry of dir but the one named keep; a missing dir is nothing to do
   unless must */
static void
rmallbut(const char *dir, const char *keep, int must)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d) {
		if (must)
			die("%s:", dir);
		return;
	}
	while ((de = readdir(d))) {
		char *p;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, keep))
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (os_rmtree(p) < 0)
			die("%s: cannot remove:", p);
		free(p);
		fault("clear: an entry removed");
	}
	closedir(d);
}

/* remove every entry of a folder, keeping the folder; its .git last, and srcpin's state
   last in that: a clear killed half-way leaves a folder srcpin still knows as its own
   (or only an empty .git) */
static void
cleardir(const char *dir)
{
	char *g = xasprintf("%s/.git", dir);

	rmallbut(dir, ".git", 1);
	rmallbut(g, "srcpin", 0);
	if (os_rmtree(g) < 0)
		die("%s: cannot remove:", g);
	free(g);
}

/* true if dir holds nothing but a .git with no commit and no refs: what a killed first
   checkout leaves between creating the git folder and marking it srcpin's */
static int
bareinit(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	git_repository *r;
	int only = 1, empty = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, ".git"))
			only = 0;
	closedir(d);
	if (!only)
		return 0;
	{
		/* killed inside git init: a .git folder without HEAD yet */
		char *head = xasprintf("%s/.git/HEAD", dir);
		struct stat st;
		int half = lstat(head, &st) < 0 && errno == ENOENT;
		free(head);
		if (half)
			return 1;
	}
	if (git_repository_open_ext(&r, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		return 0;
	empty = git_repository_is_empty(r) == 1;
	git_repository_free(r);
	return empty;
}

/* point gitdir's object store at the mirror's (written only when it changes) */
static void
alternates(const char *gitdir, const char *mirror)
{
	char *info = xasprintf("%s/objects/info", gitdir);
	char *alt = xasprintf("%s/alternates", info);
	char *line = xasprintf("%s/objects\n", mirror);

	if (os_mkdirs(info, 0777) < 0)
		die("%s:", info);
	if (writefile_ifchanged(alt, line, strlen(line), 0644) < 0)
		die("%s: cannot write:", alt);
	free(info);
	free(alt);
	free(line);
}

/* Take srcpin's lock on the checkout folder dir (a flock on the folder itself, held until
   the process exits: a second srcpin on the same checkout waits for it). Returns 1, or 0
   where the file system has no such lock (NFS emulates flock with locks a folder opened
   for reading cannot hold): srcpin then goes on without it. */
static int
holdlock(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		die("%s:", dir);
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			close(fd);
			return 0;
		}
	return 1;   /* fd stays open: the lock lasts as long as this run */
}

/* remove the lock files of git's own (HEAD.lock, index.lock) in the git folder gd: under
   srcpin's lock they are what a killed srcpin left */
static void
dropstale(const char *gd)
{
	static const char *const stale[] = {"HEAD.lock", "index.lock"};

	for (size_t i = 0; i < sizeof stale / sizeof stale[0]; i++) {
		char *p = xasprintf("%s/%s", gd, stale[i]);
		if (unlink(p) == 0)
			warn("%s: removed (left by a killed checkout)", p);
		free(p);
	}
}

/* the mark in a checkout's git folder that says srcpin is replacing the folder's contents */
#define REPLACING "srcpin-replacing"

/* true if the srcpin state at sp records another mirror than mirror: srcpin's folder, but
   of another repository, whose objects go with the old mirror */
static int
othermirror(const char *sp, const char *mirror)
{
	struct kvfile f = {0};
	char *err = NULL;
	const char *was = NULL;
	int other;

	if (kv_load(&f, sp, &err) == 0)
		was = kv_get(&f, "MIRROR");
	other = was && *was && strcmp(was, mirror) != 0;
	kv_free(&f);
	free(err);
	return other;
}

/* Empty the top checkout folder dir (git folder gd) for another repository. The folder is
   marked first (gd/srcpin-replacing, written and synced before anything is removed), and
   the mark goes only once the new checkout is marked srcpin's (checkout_repo): a run killed
   at any instant in between leaves the mark, and the next checkout finishes the job
   instead of refusing a folder that is no longer srcpin's nor empty. */
static void
replace(const char *dir, const char *gd)
{
	static const char note[] = "srcpin is replacing the contents of this folder; "
	                           "the next srcpin checkout finishes it\n";
	char *mk = xasprintf("%s/%s", gd, REPLACING);
	struct stat st;
	int fd;

	if (lstat(gd, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(gd) < 0)
		die("%s: cannot remove:", gd);
	if (mkdir(gd, 0777) < 0 && errno != EEXIST)
		die("%s: cannot create:", gd);
	if ((fd = open(mk, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0 ||
	    writeall(fd, note, sizeof note - 1) < 0 || fsync(fd) < 0 || close(fd) < 0)
		die("%s: cannot write:", mk);
	if ((fd = open(gd, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(fd);   /* the mark's name is on disk before the first removal */
		close(fd);
	}
	fault("replace: folder marked");
	rmallbut(dir, ".git", 1);
	rmallbut(gd, REPLACING, 1);
	free(mk);
}

/* Decide what the top checkout folder dir (git folder gd, state file sp) is to srcpin:
   returns 1 when it is srcpin's checkout of this mirror, 0 when it is (made) empty or
   holds only a fresh git folder; dies when it is a stranger's and not empty, unless force */
static int
claim(const char *dir, const char *gd, const char *sp, const char *mirror, int force)
{
	char *mk = xasprintf("%s/%s", gd, REPLACING);
	int replacing = access(mk, F_OK) == 0, ours = 0;

	free(mk);
	if (replacing)
		warn("%s: finishing the replacement a killed srcpin checkout began", dir);
	else if ((ours = access(sp, F_OK) == 0))
		replacing = othermirror(sp, mirror);
	else if (!emptydir(dir)) {
		if (bareinit(dir))
			os_rmtree(gd);   /* what a killed first checkout left: start again */
		else if (!force)
			die("%s: not a srcpin checkout and not empty; refusing to touch it "
			    "(--force replaces its contents)", dir);
		else
			replacing = 1;
	}
	if (replacing)
		replace(dir, gd);
	return ours && !replacing;
}

/* Open (creating when needed) the work tree dir with its git folder gitdir (NULL: dir/.git),
   borrowing objects from mirror. Dies when dir is not srcpin's and not empty, unless force. */
static git_repository *
prepare(const char *dir, const char *gitdir, const char *mirror, int force, int *fresh)
{
	git_repository_init_options io;
	git_repository_init_options_init(&io, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
	git_repository *r;
	struct stat st;
	char *gd = gitdir ? xstrdup(gitdir) : xasprintf("%s/.git", dir);
	char *sp = xasprintf("%s/srcpin", gd);
	int ours, locked;

	*fresh = 0;
	if (stat(dir, &st) < 0) {
		if (errno != ENOENT || os_mkdirs(dir, 0777) < 0)
			die("%s: cannot create:", dir);
	} else if (!S_ISDIR(st.st_mode))
		die("%s: not a folder", dir);
	locked = holdlock(dir);
	if (!gitdir)
		ours = claim(dir, gd, sp, mirror, force);
	else if (!(ours = access(sp, F_OK) == 0 && !othermirror(sp, mirror))) {
		/* a submodule: srcpin's own when its gitdir under srcpin's superproject records
		   this mirror; else both go (the superproject's state marks the work) */
		os_rmtree(gd);
		cleardir(dir);
	}
	if (!ours) {
		io.flags = GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_NO_DOTGIT_DIR;
		io.workdir_path = dir;
		if (git_repository_init_ext(&r, gd, &io) < 0)
			die("%s: cannot create a git folder: %s", dir, gitmsg());
		git_repository_free(r);
		*fresh = 1;
		fault("checkout: git folder made");
	}
	if (gitdir) {
		/* the work tree's .git file names its git folder */
		char *link = xasprintf("%s/.git", dir), *txt = xasprintf("gitdir: %s\n", gd);
		if (writefile_ifchanged(link, txt, strlen(txt), 0644) < 0)
			die("%s: cannot write:", link);
		free(link);
		free(txt);
	}
	if (locked)
		dropstale(gd);
	alternates(gd, mirror);
	fault("checkout: alternates written");
	if (git_repository_open_ext(&r, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		die("%s: cannot open its git folder %s: %s", dir, gd, gitmsg());
	free(gd);
	free(sp);
	return r;
}

/* one gitlink of a tree */
struct link {
	char *path;
	git_oid id;
};
struct links {
	struct link *v;
	size_t n, cap;
};

static int
linkcb(const char *root, const git_tree_entry *e, void *payload)
{
	struct links *l = payload;

	if (git_tree_entry_filemode(e) != GIT_FILEMODE_COMMIT)
		return 0;
	l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n].path = xasprintf("%s%s", root, git_tree_entry_name(e));
	git_oid_cpy(&l->v[l->n].id, git_tree_entry_id(e));
	l->n++;
	return 0;
}

/* the gitlinks (submodule commits) of tree; none without a .gitmodules (whose URLs a
   checkout needs anyway), so that most trees are not read whole */
static void
getlinks(git_tree *t, struct links *l)
{
	memset(l, 0, sizeof *l);
	if (!git_tree_entry_byname(t, ".gitmodules"))
		return;
	if (git_tree_walk(t, GIT_TREEWALK_PRE, linkcb, l) < 0)
		die("cannot walk tree: %s", gitmsg());
}

static void
addlink(const char *path, const git_oid *id, void *arg)
{
	struct links *l = arg;

	l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n].path = xstrdup(path);
	git_oid_cpy(&l->v[l->n].id, id);
	l->n++;
}

/* the gitlinks of r's index: those of the tree it was just made from, without reading
   every subtree of it */
static void
indexlinks(git_repository *r, struct links *l)
{
	git_index *idx;

	memset(l, 0, sizeof *l);
	if (fast_links(r, addlink, l) == 0)
		return;
	if (git_repository_index(&idx, r) < 0 || git_index_read(idx, 0) < 0)
		die("%s: cannot read the index: %s", git_repository_workdir(r), gitmsg());
	for (size_t i = 0; i < git_index_entrycount(idx); i++) {
		const git_index_entry *e = git_index_get_byindex(idx, i);
		if (e->mode == GIT_FILEMODE_COMMIT)
			addlink(e->path, &e->id, l);
	}
	git_index_free(idx);
}

static void
freelinks(struct links *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
}

/* a submodule URL as .gitmodules writes it, made absolute against the superproject's */
static char *
suburl(const char *parent, const char *u)
{
	char *b;
	size_t n;

	if (!startswith(u, "./") && !startswith(u, "../"))
		return xstrdup(u);
	b = xstrdup(parent);
	n = strlen(b);
	while (n && b[n - 1] == '/')
		b[--n] = 0;
	for (;;) {
		if (startswith(u, "./")) {
			u += 2;
		} else if (startswith(u, "../")) {
			char *s = strrchr(b, '/');
			char *c = strrchr(b, ':');
			if (c && (!s || c > s) && !strstr(b, "://"))
				s = c;
			if (s)
				*s = 0;
			u += 3;
		} else
			break;
	}
	{
		char *r = xasprintf("%s/%s", b, u);
		free(b);
		return r;
	}
}

/* a "submodule.NAME.path" entry of a config (libgit2 lowercases the section and the key) */
static int
issubpath(const char *name)
{
	size_t n = strlen(name);

	return n >= 15 && strncmp(name, "submodule.", 10) == 0 && strcmp(name + n - 5, ".path") == 0;
}

/* the URL .gitmodules (in tree) gives the submodule at path, or NULL */
static char *
modurl(git_repository *r, git_tree *t, const char *path)
{
	git_tree_entry *e;
	git_blob *b;
	git_config *c;
	git_config_iterator *it;
	git_config_entry *ce;
	char *tmp, *name = NULL, *url = NULL;

	if (git_tree_entry_bypath(&e, t, ".gitmodules") < 0)
		return NULL;
	if (git_blob_lookup(&b, r, git_tree_entry_id(e)) < 0) {
		git_tree_entry_free(e);
		return NULL;
	}
	git_tree_entry_free(e);
	tmp = xasprintf("%ssrcpin-gitmodules", git_repository_path(r));
	if (writefile_atomic(tmp, git_blob_rawcontent(b), (size_t)git_blob_rawsize(b), 0644) < 0)
		die("%s: cannot write:", tmp);
	git_blob_free(b);
	if (git_config_open_ondisk(&c, tmp) < 0)
		die("%s: .gitmodules cannot be read: %s", git_repository_workdir(r), gitmsg());
	/* every entry, the names matched here: libgit2's glob iterator compiles a regex, and
	 * Debian's libgit2 1.5.1 leaks its pcre2 match data (each checkout with submodules
	 * then ended in a leak report that LeakSanitizer had to symbolize) */
	if (git_config_iterator_new(&it, c) == 0) {
		while (git_config_next(&ce, it) == 0)
			if (!name && issubpath(ce->name) && strcmp(ce->value, path) == 0)
				name = xstrndup(ce->name + 10, strlen(ce->name) - 10 - 5);
		git_config_iterator_free(it);
	}
	if (name) {
		char *k = xasprintf("submodule.%s.url", name);
		git_buf v = {0};
		if (git_config_get_string_buf(&v, c, k) == 0)
			url = xstrdup(v.ptr);
		git_buf_dispose(&v);
		free(k);
	}
	git_config_free(c);
	unlink(tmp);
	free(tmp);
	free(name);
	return url;
}

/* what coprog is told */
struct coprog {
	const char *label;
	int show;              /* progress on a terminal */
};

/* checkout progress on a terminal; every file written is a step (fault.c) */
static void
coprog(const char *path, size_t done, size_t total, void *payload)
{
	const struct coprog *c = payload;

	if (path)
		fault("checkout: a file written");
	if (c->show && total > 200 && (done % 256 == 0 || done == total))
		fprintf(stderr, "\r%s: checkout %zu/%zu files%s", c->label, done, total,
		        done == total ? "\n" : "");
}

/* write tree t of commit id into r's work tree and index, HEAD detached at id */
static void
writetree(const struct spopts *o, git_repository *r, const char *label, git_object *target,
          const git_oid *head)
{
	git_checkout_options co;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);

	struct coprog cp = {label, o->progress};

	co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED |
	                       GIT_CHECKOUT_REMOVE_IGNORED;
	co.progress_cb = coprog;
	co.progress_payload = &cp;
	if (git_checkout_tree(r, target, &co) < 0)
		die("%s: %s: checkout failed: %s", label, git_repository_workdir(r), gitmsg());
	if (head && git_repository_set_head_detached(r, head) < 0)
		die("%s: %s: cannot set HEAD: %s", label, git_repository_workdir(r), gitmsg());
}

/* empty the folders of submodules that are not wanted */
static void
emptylinks(git_repository *r, const struct links *l)
{
	for (size_t i = 0; i < l->n; i++) {
		char *p = xasprintf("%s%s", git_repository_workdir(r), l->v[i].path);
		struct stat st;
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
			cleardir(p);
		free(p);
	}
}


/* a submodule URL as .gitmodules writes it that names a repository on this machine by
   itself (an absolute path or file://), not relative to its superproject's URL */
static int
localurl(const char *u)
{
	if (startswith(u, "./") || startswith(u, "../"))
		return 0;
	return u[0] == '/' || startswith(u, "file:") || (!strstr(u, "://") && !strchr(u, ':'));
}

static void checkout_repo(const struct spopts *o, const struct spco *co, const git_oid *id,
                          int submodules, struct spstate *s);

/* check out the gitlink l of tree t (of the checkout co), recursively */
static void
checkout_one(const struct spopts *o, const struct spco *co, git_tree *t, const struct link *l)
{
	const char *label = co->label, *url = co->url;
	git_repository *r = co->r;
	char *mu = modurl(r, t, l->path), *u, *mdir, *sub, *gd, *sl;
	char hex[GIT_OID_HEXSZ + 1];
	git_repository *sr;
	struct spstate ss = {0};
	int fresh;

	git_oid_tostr(hex, sizeof hex, &l->id);
	sl = xasprintf("%s/%s", label, l->path);
	if (!mu)
		die("%s: commit %s: .gitmodules has no URL for submodule path %s", label, hex, l->path);
	if (localurl(mu) && !o->allow_local_subs)
		die("%s: .gitmodules gives the URL '%s', a repository on this machine; refused "
		    "(--allow-local-submodules allows it)", sl, mu);
	u = suburl(url, mu);
	mdir = mirror_path_url(o, u);
	mirror_need(o, sl, mdir, u, &l->id);
	sub = xasprintf("%s%s", git_repository_workdir(r), l->path);
	gd = xasprintf("%smodules/%s", git_repository_path(r), l->path);
	sr = prepare(sub, gd, mdir, 1, &fresh);
	if (fresh || state_load(sr, &ss) < 0)
		memset(&ss, 0, sizeof ss);
	setstr(&ss.name, sl);
	setstr(&ss.url, u);
	setstr(&ss.cache, o->cache);
	setstr(&ss.mirror, mdir);
	checkout_repo(o, &(struct spco){sl, sr, u}, &l->id, 1, &ss);
	state_save(sr, &ss);
	state_free(&ss);
	git_repository_free(sr);
	free(mu);
	free(u);
	free(mdir);
	free(sub);
	free(gd);
	free(sl);
}

/* check out every gitlink of tree t (of the checkout co) */
static void
checkout_subs(const struct spopts *o, const struct spco *co, git_tree *t)
{
	struct links l;

	indexlinks(co->r, &l);   /* the index was just written from t */
	for (size_t i = 0; i < l.n; i++)
		checkout_one(o, co, t, &l.v[i]);
	freelinks(&l);
}

void
tree_relink(const struct spopts *o, const struct spco *co, git_tree *t, const char *path)
{
	git_repository *r = co->r;
	git_tree_entry *e = NULL;
	char *p, *gd;

	if (git_tree_entry_bypath(&e, t, path) == 0 && git_tree_entry_filemode(e) == GIT_FILEMODE_COMMIT) {
		struct link l;
		l.path = (char *)path;
		git_oid_cpy(&l.id, git_tree_entry_id(e));
		checkout_one(o, co, t, &l);
		git_tree_entry_free(e);
		return;
	}
	git_tree_entry_free(e);
	/* removed: its git folder and its files go; replaced by a file or folder of the tree
	   (which the checkout of t wrote): only its git folder and .git file go */
	gd = xasprintf("%smodules/%s", git_repository_path(r), path);
	os_rmtree(gd);
	free(gd);
	if (git_tree_entry_bypath(&e, t, path) == 0) {
		struct stat st;
		git_tree_entry_free(e);
		p = xasprintf("%s%s/.git", git_repository_workdir(r), path);
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
			unlink(p);
	} else
		p = xasprintf("%s%s", git_repository_workdir(r), path);
	if (!startswith(p + strlen(p) - 5, "/.git"))
		os_rmtree(p);
	free(p);
}

/* the commit a checkout goes to: commit c, its tree t, its id */
struct cotarget {
	git_commit *c;
	git_tree *t;
	const git_oid *id;
};

/* what a checkout surely is before it moves: its tree (hex) and its index x */
struct cobase {
	const char *tree;
	struct fastidx *x;
};

/* Move ck's work tree from the tree from->tree, which it surely is (its index from->x), to
   the commit to->c (tree to->t): only the paths the two trees differ in are written; there
   is nothing else to remove. The new index's checksum goes to sum, or "" when libgit2 wrote it. */
static void
incremental(const struct spopts *o, const struct spco *ck, const struct cotarget *to,
            const struct cobase *from, char sum[GIT_OID_HEXSZ + 1])
{
	git_repository *r = ck->r;
	const char *label = ck->label, *oldtree = from->tree;
	git_commit *c = to->c;
	git_tree *t = to->t;
	const git_oid *id = to->id;
	struct fastidx *x = from->x;
	git_checkout_options co;
	git_oid oid;
	git_tree *ot;
	git_diff *d;
	git_strarray ps = {0};
	struct coprog cp = {label, o->progress};
	size_t n;

	if (git_oid_fromstr(&oid, oldtree) < 0 || git_tree_lookup(&ot, r, &oid) < 0) {
		writetree(o, r, label, (git_object *)c, id);
		return;
	}
	sum[0] = 0;
	if (fast_switch(r, x, ot, t, sum) == 0) {
		if (git_repository_set_head_detached(r, id) < 0)
			die("%s: %s: cannot set HEAD: %s", label, git_repository_workdir(r), gitmsg());
		git_tree_free(ot);
		return;
	}
	if (git_diff_tree_to_tree(&d, r, ot, t, NULL) < 0)
		die("%s: %s: cannot compare trees: %s", label, git_repository_workdir(r), gitmsg());
	n = git_diff_num_deltas(d);
	ps.strings = xcalloc(2 * n + 1, sizeof *ps.strings);
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *dl = git_diff_get_delta(d, i);
		if (dl->old_file.path)
			ps.strings[ps.count++] = (char *)dl->old_file.path;
		if (dl->new_file.path && (!dl->old_file.path || strcmp(dl->old_file.path, dl->new_file.path)))
			ps.strings[ps.count++] = (char *)dl->new_file.path;
	}
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
	co.paths = ps;
	co.baseline = ot;
	co.progress_cb = coprog;
	co.progress_payload = &cp;
	if (ps.count && git_checkout_tree(r, (git_object *)c, &co) < 0)
		die("%s: %s: checkout failed: %s", label, git_repository_workdir(r), gitmsg());
	if (git_repository_set_head_detached(r, id) < 0)
		die("%s: %s: cannot set HEAD: %s", label, git_repository_workdir(r), gitmsg());
	free(ps.strings);
	git_diff_free(d);
	git_tree_free(ot);
}

/* make co's work tree exactly commit id, then its submodules (or empty their folders) */
static void
checkout_repo(const struct spopts *o, const struct spco *co, const git_oid *id, int submodules,
              struct spstate *s)
{
	const char *label = co->label;
	git_repository *r = co->r;
	char hex[GIT_OID_HEXSZ + 1], thex[GIT_OID_HEXSZ + 1];
	git_commit *c;
	git_tree *t;

	git_oid_tostr(hex, sizeof hex, id);
	if (git_commit_lookup(&c, r, id) < 0 || git_commit_tree(&t, c) < 0)
		die("%s: commit %s cannot be read from the mirror %s: %s", label, hex, s->mirror,
		    gitmsg());
	/* A new checkout is marked srcpin's before any file is written, so that an interrupted
	   first checkout is not refused as a stranger's folder next time. An existing one keeps
	   its old state meanwhile: HEAD, index and files are compared with it, so a half-done
	   checkout is never taken for pristine. */
	setstr(&s->series, "");
	setstr(&s->series_digest, "");
	{
		char *sp = statepath(r);
		if (access(sp, F_OK) < 0) {
			setstr(&s->commit, "");
			state_save(r, s);
			fault("checkout: marked srcpin's");
		}
		free(sp);
		/* srcpin's now: the mark of a replacement (prepare) has done its job */
		sp = xasprintf("%s%s", git_repository_path(r), REPLACING);
		if (unlink(sp) == 0)
			fault("checkout: replacement mark removed");
		free(sp);
	}
	{
		/* a tree that surely is its recorded one only needs what differs */
		git_oid hid;
		char ix[GIT_OID_HEXSZ + 1] = "";
		struct fastidx *x;
		if (s->tree && *s->tree && s->commit && *s->commit &&
		    git_reference_name_to_id(&hid, r, "HEAD") == 0 &&
		    strcmp(git_oid_tostr_s(&hid), s->commit) == 0 && fast_pristine(r, s, &x)) {
			incremental(o, co, &(struct cotarget){c, t, id}, &(struct cobase){s->tree, x}, ix);
			fastidx_free(x);
		} else
			writetree(o, r, label, (git_object *)c, id);
		fault("checkout: tree written");
		if (!*ix)
			index_sum(r, ix);
		setstr(&s->index, ix);
	}
	git_oid_tostr(thex, sizeof thex, git_tree_id(t));
	if (submodules)
		checkout_subs(o, &(struct spco){label, r, s->url}, t);
	else {
		struct links l;
		indexlinks(r, &l);
		emptylinks(r, &l);
		freelinks(&l);
	}
	setstr(&s->commit, hex);
	setstr(&s->tree, thex);
	s->submodules = submodules;
	git_tree_free(t);
	git_commit_free(c);
}

int
tree_checkout(const struct spopts *o, const struct spcheckout *w, const git_oid *id)
{
	const char *name = w->name, *url = w->url, *mirror = w->mirror;
	int submodules = w->submodules;
	git_repository *r;
	struct spstate s = {0};
	char hex[GIT_OID_HEXSZ + 1];
	int fresh, have;

	git_oid_tostr(hex, sizeof hex, id);
	r = prepare(w->dir, NULL, mirror, w->force, &fresh);
	have = !fresh && state_load(r, &s) == 0;
	if (have && strcmp(s.commit, hex) == 0 && !*s.series_digest && s.submodules == submodules &&
	    strcmp(s.mirror, mirror) == 0 && tree_pristine(r, &s, NULL)) {
		state_free(&s);
		git_repository_free(r);
		return 0;
	}
	if (!have || strcmp(s.mirror, mirror) != 0) {
		/* the old commit, tree and index stay as the baseline of an incremental checkout */
		state_free(&s);
		memset(&s, 0, sizeof s);
	}
	setstr(&s.name, name);
	setstr(&s.url, url);
	setstr(&s.cache, o->cache);
	setstr(&s.mirror, mirror);
	checkout_repo(o, &(struct spco){name, r, url}, id, submodules, &s);
	state_save(r, &s);
	state_free(&s);
	git_repository_free(r);
	return 1;
}

static const char *
deltaword(git_delta_t t)
{
	switch (t) {
	case GIT_DELTA_ADDED: return "missing";
	case GIT_DELTA_DELETED: return "not in the tree";
	case GIT_DELTA_MODIFIED: return "modified";
	case GIT_DELTA_RENAMED: return "renamed";
	case GIT_DELTA_TYPECHANGE: return "changed type";
	case GIT_DELTA_UNTRACKED: return "untracked";
	case GIT_DELTA_IGNORED: return "ignored";
	default: return "differs";
	}
}

int
tree_pristine(git_repository *r, const struct spstate *s, struct buf *why)
{
	git_diff_options dopt;
	git_diff_options_init(&dopt, GIT_DIFF_OPTIONS_VERSION);
	git_oid head, tid;
	git_tree *t;
	git_diff *d;
	size_t n;
	int ok = 1;

	if (!*s->commit) {
		if (why)
			bufprintf(why, "%s: checkout did not finish", s->name);
		return 0;
	}
	if (git_reference_name_to_id(&head, r, "HEAD") < 0 || strcmp(git_oid_tostr_s(&head), s->commit)) {
		if (why)
			bufprintf(why, "%s: HEAD is not %s", s->name, s->commit);
		return 0;
	}
	if (git_oid_fromstr(&tid, s->tree) < 0 || git_tree_lookup(&t, r, &tid) < 0) {
		if (why)
			bufprintf(why, "%s: tree %s cannot be read", s->name, s->tree);
		return 0;
	}
	if (!why && fast_pristine(r, s, NULL)) {
		n = 0;
		goto subs;
	}
	/* the tree against index + files: what git diff TREE and git status would both show */
	dopt.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_INCLUDE_IGNORED |
	             GIT_DIFF_INCLUDE_TYPECHANGE;
	dopt.ignore_submodules = GIT_SUBMODULE_IGNORE_ALL;
	if (git_diff_tree_to_workdir_with_index(&d, r, t, &dopt) < 0) {
		if (why)
			bufprintf(why, "%s: cannot compare: %s", s->name, gitmsg());
		git_tree_free(t);
		return 0;
	}
	n = git_diff_num_deltas(d);
	if (n) {
		const git_diff_delta *dl = git_diff_get_delta(d, 0);
		if (why) {
			bufprintf(why, "%s: %s %s", s->name, dl->new_file.path, deltaword(dl->status));
			if (n > 1)
				bufprintf(why, " (and %zu more)", n - 1);
		}
		ok = 0;
	}
	git_diff_free(d);
subs:
	if (ok && s->submodules) {
		/* the index is the tree here (no difference was found) */
		struct links l;
		indexlinks(r, &l);
		for (size_t i = 0; ok && i < l.n; i++) {
			char *sub = xasprintf("%s%s", git_repository_workdir(r), l.v[i].path);
			git_repository *sr;
			struct spstate ss;
			if (git_repository_open_ext(&sr, sub, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
				if (why)
					bufprintf(why, "%s: submodule %s is not checked out", s->name, l.v[i].path);
				ok = 0;
			} else {
				if (state_load(sr, &ss) < 0 || strcmp(ss.commit, git_oid_tostr_s(&l.v[i].id))) {
					if (why)
						bufprintf(why, "%s: submodule %s is not at %s", s->name, l.v[i].path,
						          git_oid_tostr_s(&l.v[i].id));
					ok = 0;
				} else
					ok = tree_pristine(sr, &ss, why);
				state_free(&ss);
				git_repository_free(sr);
			}
			free(sub);
		}
		freelinks(&l);
	}
	git_tree_free(t);
	return ok;
}

void
tree_submodules(git_repository *r, const struct spstate *s, const char *prefix,
                void (*cb)(const char *path, const struct spstate *ss, void *arg), void *arg)
{
	git_oid tid;
	git_tree *t;
	struct links l;

	if (!s->submodules || git_oid_fromstr(&tid, s->tree) < 0 || git_tree_lookup(&t, r, &tid) < 0)
		return;
	getlinks(t, &l);
	for (size_t i = 0; i < l.n; i++) {
		char *sub = xasprintf("%s%s", git_repository_workdir(r), l.v[i].path);
		char *np = *prefix ? xasprintf("%s/%s", prefix, l.v[i].path) : xstrdup(l.v[i].path);
		git_repository *sr;
		struct spstate ss;
		if (git_repository_open_ext(&sr, sub, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0) {
			if (state_load(sr, &ss) == 0) {
				cb(np, &ss, arg);
				ss.submodules = 1;
				tree_submodules(sr, &ss, np, cb, arg);
				state_free(&ss);
			}
			git_repository_free(sr);
		}
		free(sub);
		free(np);
	}
	freelinks(&l);
	git_tree_free(t);
}
