/* hipify-wrap's shared state and the functions its modules give each other */
#ifndef HW_HW_H
#define HW_HW_H

#include <stddef.h>

#include "kv.h"
#include "tree.h"
#include "util.h"

#define nelem(a) (sizeof(a) / sizeof((a)[0]))

/* the presets */
enum { P_GENERIC, P_TORCH, P_VISION };
extern const char *const projname[];

/* what restoring the pristine tree does to a file of the manifest (fent.act) */
enum { A_NONE, A_STASH, A_RESTORE };
/* what the tree is, compared with the manifest */
enum { T_CLEAN, T_INPUTS, T_DIRTY };

/* a file moved aside while the tree is restored, put back if hipify remakes its bytes */
struct stash {
	char *path, *at;
	unsigned char hash[32];
};

/* everything one run knows; global so nothing is lost before exit */
struct hw {
	char *srcdir;         /* realpath of SRCDIR */
	char *state;          /* state folder */
	const char *statename; /* its name when it lies at the top of srcdir (walk skips it) */
	char *logpath;
	const char *self;     /* this executable, to find envclean and srcpin beside it */
	int project, reset, json, progress;
	int undo;             /* --undo: restore the pristine tree, keep hipify's outputs aside */
	char *python, *pyid;  /* realpath of the interpreter and its size:mtime */
	char **cmd;           /* the command that runs hipify */
	int ncmd;
	const char **scripts; /* files whose content is part of the key */
	int nscripts;
	const char *series;   /* --series for a srcpin reset */
	int git;              /* srcdir is a git work tree: inputs are the tracked files */
	struct flist tracked, man, cur, pre, prewalk, post;
	struct kvfile stamp;
	int havestamp;
	struct stash *st;
	size_t nst, cst;
	char *pin_name, *pin_commit, *pin_series; /* srcpin state, when pinned */
	int pinned;
	char *hipdir;         /* torch's hipify folder that the key digests */
	struct buf keytxt;    /* the key's lines, readable, for the stamp */
};
extern struct hw g;

/* hw.c */
/* a path in the state folder / in the source tree (fresh allocations) */
char *spath(const char *name);
char *tpath(const char *rel);
/* add the files that are hipify's inputs now to l: the tracked files (git) plus the
   outputs of also (may be NULL), or every file of the walk */
void inputs(struct flist *l, const struct flist *also);
/* stat and hash l (cache: an earlier listing); exits 2 on an unreadable file */
void hashlist(struct flist *l, const struct flist *cache);
/* the git index's identity as text (a fresh allocation), NULL when there is none */
char *indexid(void);
/* fill g.tracked from the manifest when the stamp vouches that the git index and the
   tracked set are unchanged (returns 1), else 0: libgit2 must read the index */
int tracked_from_stamp(void);

/* key.c */
/* the key as hex into out: the settings plus source, the digest of the pristine inputs;
   fills g.keytxt with the readable lines */
void makekey(const char *source, char out[65]);
/* digest of a list of inputs (every path with its content digest) as hex */
void sourcedigest(const struct flist *l, char out[65]);
/* ask srcpin whether srcdir is one of its checkouts; sets g.pinned and g.pin_* */
void srcpinstate(void);
/* restore the pinned pristine tree with srcpin checkout --force (and srcpin patch
   --series); exits 1 when srcpin fails */
void srcpinreset(void);
/* write the stamp (key, source, interpreter, readable key lines) atomically */
void writestamp(const char *key, const char *source);

/* journal.c */
/* remove a folder and everything in it (hipify-wrap's own state folders only) */
void rmtree(const char *p);
/* copy the originals of l into the journal folder dir (content-addressed) */
void journal_copy(const struct flist *l, const char *dir);
/* Compare the tree (g.cur) with what hipify-wrap made (g.man) and set each manifest
   entry's act. Returns T_CLEAN, T_INPUTS or T_DIRTY with the first reason in *why. */
int classify(char **why, int force);
/* carry out the acts classify chose: move hipify's files aside, put originals back */
void undo(void);
/* bring the tree back to the snapshot pre (walk: the files that existed before) from
   the journal dir; returns 0, or -1 after warning about what could not be restored */
int rollback(const struct flist *pre, const struct flist *walk, const char *dir);
/* put stashed files back where hipify remade the same bytes (g.post); drop the rest */
void unstash(void);
/* keep the stash and its list for the next run; returns 0, or -1 with errno set */
int stash_save(void);
/* take up the stash an earlier run kept (its files join g.st); returns how many */
size_t stash_load(void);

#endif
