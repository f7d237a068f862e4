/* srcpin's modules: mirrors (mirror.c), local fetches (local.c), checkouts and their state (tree.c),
   the quick pristine check and tree switch (fast.c), patch series (series.c), the CA
   certificates loaded only for a remote (tls.c), the test hook that stops it at a step
   (fault.c) */
#ifndef KILN_SRCPIN_H
#define KILN_SRCPIN_H

#include <time.h>

#include <git2.h>
/* libgit2 1.8 moved git_error_set_str and git_error_clear to sys/errors.h (Debian 13's
   and sid's 1.9; Debian 12's 1.5 has them in errors.h, and no sys/errors.h) */
#if defined(__has_include)
#if __has_include(<git2/sys/errors.h>)
#include <git2/sys/errors.h>
#endif
#endif

#include "os.h"
#include "util.h"

/* exit statuses beyond util.h's: verification failed is EXIT_PROBLEM (1) */

/* options shared by the verbs */
struct spopts {
	const char *cache;     /* mirror cache folder (default build/git) */
	const char *mirror;    /* --mirror=DIR: fetch every URL from local mirrors here */
	char **rewrite;        /* --rewrite=FROM=TO rules, "FROM=TO" each */
	size_t nrewrite;
	int offline;           /* never contact a remote */
	int update;            /* fetch even when a tag or sha is already present */
	int progress;          /* print fetch progress (stderr is a terminal) */
	int allow_local_subs;  /* --allow-local-submodules: .gitmodules may name a path here */
	int allow_outside_links; /* --allow-outside-symlinks: a patch may link out of the tree */
};

/* ---- mirror.c ---- */

/* the folder of NAME's bare mirror in the cache (caller frees) */
char *mirror_path(const struct spopts *o, const char *name);
/* the folder of a submodule URL's bare mirror in the cache (caller frees) */
char *mirror_path_url(const struct spopts *o, const char *url);
/* the URL srcpin really fetches from for url: --rewrite rules (longest FROM wins),
   then --mirror=DIR candidates; dies (exit 2) naming label and url when --mirror has
   no copy. Caller frees. */
char *fetch_url(const struct spopts *o, const char *label, const char *url);
/* a mirror: its label in messages, its folder, the URL it is fetched from */
struct spmirror {
	const char *label;
	const char *dir;
	const char *url;
};
/* Make the mirror at dir hold ref of url (fetching only when the ref is a branch, is
   missing, or o->update), and resolve ref to a commit. A missing or broken mirror is
   built afresh beside it and renamed into place only when complete. Dies with exit 2
   naming label, url and ref when the ref does not exist (listing close matches) or the
   fetch fails. */
void mirror_fetch(const struct spopts *o, const struct spmirror *m, const char *ref, git_oid *out);
/* Make sure commit id is in the mirror at dir (fetching url if it is not). Dies with exit 2
   if it cannot be had. */
void mirror_need(const struct spopts *o, const char *label, const char *dir, const char *url,
                 const git_oid *id);
/* open a mirror; returns NULL if dir is not a readable bare repository */
git_repository *mirror_open(const char *dir);
/* the URL recorded in a mirror (srcpin.url), or NULL; caller frees */
char *mirror_url(git_repository *r);
/* Resolve ref (40-hex sha, tag, branch, refs/..., short sha) in r. Returns 0 and the commit,
   GIT_ENOTFOUND, GIT_EAMBIGUOUS, or another libgit2 error. *kind is set to 's' for a sha,
   't' for a tag, 'b' for a branch, 'r' for another ref. */
int resolve_ref(git_repository *r, const char *ref, git_oid *out, int *kind);
/* the refs of r (short names) closest to ref, ", "-separated, or "" (caller frees) */
char *close_refs(git_repository *r, const char *ref);
/* the last libgit2 error message, or "unknown error" */
const char *gitmsg(void);

/* ---- fault.c ---- */

/* A step srcpin has just finished (what a crash or kill -9 could follow). For tests only:
   with SRCPIN_FAULT_AFTER=N in the environment, srcpin kills itself (SIGKILL) right after
   the N-th step it passes; with SRCPIN_FAULT_AFTER=list it names each step on stderr
   ("srcpin: fault point N: STEP") and goes on. Without it, nothing. */
void fault(const char *step);

/* ---- tls.c ---- */

/* git_libgit2_init, with the CA certificates put off until tls_load */
void tls_init(void);
/* load the CA certificates libgit2 put off at init (before contacting a remote) */
void tls_load(void);

/* ---- local.c ---- */

/* fetch progress on a terminal: objects, MiB, MiB/s (payload: struct prog) */
struct prog {
	const char *label;
	struct timespec t0, last;
	int shown;
};
int progress_cb(const git_indexer_progress *st, void *payload);
/* the path of a fetch URL that names a repository on this machine (file:// or a path),
   or NULL; caller frees */
char *localpath(const char *u);
/* Fetch from the repository at path into the mirror r without a transport: a mirror with
   no refs is seeded with the source's object files (hard links where possible); otherwise
   exactly the objects behind the source's heads and tags that r lacks are packed. Then
   r's heads and tags are set as the source has them (others pruned). extra: a commit id
   to fetch besides (kept as refs/srcpin/ID). Returns 0 or a libgit2 error (an unreadable
   source is reported as a network error). */
int fetch_local(const struct spopts *o, const char *label, git_repository *r, const char *path,
                const char *extra);

/* ---- tree.c ---- */

/* what srcpin records about a checkout, in GITDIR/srcpin */
struct spstate {
	char *name, *url, *commit, *cache, *mirror, *tree, *series, *series_digest;
	char *index;           /* checksum of the index srcpin wrote with tree */
	int submodules;
};
/* read the state of the repository r (or of dir); returns 0, or -1 if it has none */
int state_load(git_repository *r, struct spstate *s);
/* write it atomically; dies on I/O error */
void state_save(git_repository *r, const struct spstate *s);
/* release its strings */
void state_free(struct spstate *s);
/* open dir as a srcpin checkout (dies with exit 2 when it is not one) */
git_repository *tree_open(const char *dir, struct spstate *s);
/* a checkout to make: its name and URL (recorded in its state), the folder of its mirror,
   its folder, whether its submodules are checked out, whether a stranger's dir is taken */
struct spcheckout {
	const char *name;
	const char *url;
	const char *mirror;
	const char *dir;
	int submodules;
	int force;
};
/* Make dir exactly the tree of commit id of the mirror at mirror (submodules too when asked).
   Refuses a non-empty dir that srcpin did not make unless force. Returns 1 if anything was
   done, 0 if dir already was that pristine commit. */
int tree_checkout(const struct spopts *o, const struct spcheckout *w, const git_oid *id);
/* a checkout being worked on: its label in messages, its repository, its URL */
struct spco {
	const char *label;
	git_repository *r;
	const char *url;
};
/* Make the submodule at path of the checkout co->r (fetched from co->url) what tree t records: its
   commit checked out through its own mirror (recursively), or its folder removed when t
   has no submodule there. */
void tree_relink(const struct spopts *o, const struct spco *co, git_tree *t, const char *path);
/* call cb for every submodule checked out below the checkout r (state s), recursively,
   parents first: its path below the top (prefix/...) and its state */
void tree_submodules(git_repository *r, const struct spstate *s, const char *prefix,
                     void (*cb)(const char *path, const struct spstate *ss, void *arg), void *arg);
/* 1 if the checkout r (and its submodules, recursively, when recorded) is exactly its
   recorded tree: HEAD, index and files, nothing untracked or ignored; why gets the first
   difference when not NULL */
int tree_pristine(git_repository *r, const struct spstate *s, struct buf *why);

/* ---- fast.c ---- */

/* an index file read in place (fast.c) */
struct fastidx;
void fastidx_free(struct fastidx *x);
/* 1 if the work tree of r surely is its index, and the index the one srcpin wrote (its
   checksum is s->index): every file's stat data as the index records it and not racy,
   nothing else on disk (submodule folders are left to their own check). 0 when this
   cannot tell; the caller then compares contents. keep (may be NULL) gets the index read
   when the answer is 1 (caller frees), for fast_switch. */
int fast_pristine(git_repository *r, const struct spstate *s, struct fastidx **keep);
/* Move the work tree and index of r from tree ot, which they surely are (fast_pristine
   found it so and gave x, r's index), to tree t by writing only the files that differ (no
   scan of the work tree), through the checkout filters git would apply; the index is
   written from x and the written files, its checksum in sum. Returns 0, or -1 with
   nothing written when libgit2's checkout must do it (a submodule or a .gitattributes
   file changes). Dies on I/O error. */
int fast_switch(git_repository *r, struct fastidx *x, git_tree *ot, git_tree *t,
                char sum[GIT_OID_HEXSZ + 1]);
/* the checksum of r's index as it is on disk, hex ("" when there is none) */
void index_sum(git_repository *r, char out[GIT_OID_HEXSZ + 1]);
/* call cb for every gitlink of r's index file; -1 when the file cannot be read this way
   (the caller asks libgit2) */
int fast_links(git_repository *r, void (*cb)(const char *path, const git_oid *id, void *arg),
               void *arg);

/* ---- series.c ---- */

/* one patch of a series */
struct patchfile {
	char *path;        /* as found on disk */
	char *name;        /* as written in the series */
	int line;          /* its line in the series */
	struct buf text;   /* its content */
};
struct series {
	char *path;
	struct patchfile *p;
	size_t n;
	char digest[65];   /* sha256 hex of the series and every patch */
};
/* Read a series file and every patch it names (relative to its folder). Returns 0, or -1
   with a one-line message in err (caller frees): "series:line: what is wrong"; s is then
   already released. */
int series_load(struct series *s, const char *path, char **err);
void series_free(struct series *s);
/* a path from a patch is safe inside a tree: relative, no '..' or '.git' component */
int patchpath_ok(const char *p);
/* a submodule a patch moves ("Subproject commit A" -> "B"), adds (from "") or removes
   (to "") */
struct linkmove {
	size_t repo;           /* which repository's tree holds it (as in patch_split's out) */
	char *path;            /* its path in that repository */
	char from[GIT_OID_HEXSZ + 1], to[GIT_OID_HEXSZ + 1];
};
struct linkmoves {
	struct linkmove *v;
	size_t n, cap;
};
void linkmoves_free(struct linkmoves *m);
/* the modes of the files a patch changes, for traditional diffs (which name none): mode
   gives the mode of path in repository repo (as patch_split numbers them), 0 if unknown */
struct splitmode {
	unsigned (*mode)(size_t repo, const char *path, void *arg);
	void *arg;
};
/* how patch_split splits: by the submodule prefixes subs[0..nsub) (folder paths, no
   trailing '/'), with the modes of sm (may be NULL) written into traditional sections */
struct splitspec {
	char *const *subs;
	size_t nsub;
	const struct splitmode *sm;
};
/* what patch_split gives: out[k] the text for repository k (nsub+1 bufs), mv the
   gitlink sections */
struct splitout {
	struct buf *out;
	struct linkmoves *mv;
};
/* Split the diff text of one patch into sections per repository: for each "diff --git"
   section, the longest prefix in sp->subs that holds its path chooses the repository
   (index nsub = the top one) and is stripped from the section's header paths (quoted
   paths are read and written as git quotes them). out->out[k] receives the text for
   repository k in the form libgit2 parses; gitlink sections are not in it but appended
   to out->mv. Returns 0, or -1 with a message in err (caller frees) for a path escaping
   the tree or a header that cannot be read. */
int patch_split(const char *text, size_t len, const struct splitspec *sp, struct splitout *out,
                char **err);
/* a C-quoted path ("a/caf\303\251") from the quote s (before end), unquoted (caller
   frees); *next is set after the closing quote. NULL when it is not well formed. */
char *cunquote(const char *s, const char *end, const char **next);

/* ---- trad.c ---- */

/* git apply's -p for the traditional headers of one patch: 1 until a header's names say
   otherwise (a name without '/' makes it 0), then fixed */
struct tradp {
	int p, known;
};
/* the file of one traditional header */
struct tradhdr {
	char *name;            /* its path, -p removed (caller frees) */
	int isnew, isdel;      /* "--- /dev/null" or the epoch's timestamp on one side */
};
/* 1 if the text at s (NUL-ended) starts a traditional header: a "--- " line, a "+++ "
   line, then "@@ -" (git apply's test) */
int trad_start(const char *s);
/* read the header at s (trad_start said yes) as git apply does; returns 0, or -1 when no
   file name can be read from it (h->name NULL) */
int trad_header(const char *s, struct tradp *tp, struct tradhdr *h);


/* what a series makes of a checkout: per repository (the top first), its folder below the
   checkout ("" for the top), the tree it gets and whether the series changes it */
struct spplan {
	char **prefix;
	char (*tree)[GIT_OID_HEXSZ + 1];
	int *changed;
	int *gone;             /* a submodule the series removes */
	struct buf *relink;    /* gitlinks whose commit the series changes: paths, NUL-ended */
	size_t n;
};
/* Apply every patch of the series, in order, in memory to the pinned commits of the checkout
   r (state s) and its submodules; nothing on disk changes except the objects of patched
   files and of submodule commits a patch moves to (fetched into their mirrors). Dies with
   exit 1 naming the patch, file and hunk that does not apply, exit 2 for a path escaping
   the tree or a symlink pointing out of it (unless o allows it). */
void series_check(const struct spopts *o, git_repository *r, struct spstate *s,
                  const struct series *ser, struct spplan *plan);
/* write the plan into the checkout at dir (which must be its pristine commit): patched
   files, submodules moved to their new commits; and record the series in its state, the
   top state last */
void series_write(const struct spopts *o, const char *dir, const struct spplan *plan,
                  const struct series *ser);
void plan_free(struct spplan *p);

#endif
