/* kiln-stage's model of one stage: its key inputs, chained key, stamp and stage cache */
#ifndef KILN_STAGE_H
#define KILN_STAGE_H

#include <sys/types.h>

#include "kv.h"
#include "proc.h"
#include "strv.h"
#include "util.h"

/* one input of a stage's key: a key-file line or a parent's output identity */
struct input {
	char *name, *value;
};

/* what a stage is run against, and what its stamp says */
struct stage {
	char *name;          /* torch.wheel */
	struct input *in;    /* key-file lines in file order, then PARENT_x lines */
	size_t nin, capin;
	char key[65];        /* chained key: SHA-256 hex of name and every input */
};

/* a stamp file: which key it was written for, the identity it hands to its children
   and the inputs it was built from */
struct stamp {
	char *stage;
	char key[65];
	char *id;
	struct input *in;
	size_t nin, capin;
	char *sums;          /* "SHA256  NAME" lines of the outputs it was written for, or NULL */
};

/* Load stage name's key file (so->key) and its parents' stamps (so->parents) and compute
   the chained key. A parent stamp that is missing or malformed is an error. Returns 0,
   or -1 with a one-line message in *err (caller frees). */
struct stageopts;
int stage_load(struct stage *s, const char *name, const struct stageopts *so, char **err);
/* release a stage */
void stage_free(struct stage *s);

/* Read a stamp. Returns 1 if read, 0 if it does not exist, -1 with *err if it exists
   but cannot be read or is not a stamp. */
int stamp_read(struct stamp *st, const char *path, char **err);
/* release a stamp */
void stamp_free(struct stamp *st);
/* the text of the stamp for stage s with output identity id and the digests of its
   outputs (dir_sums text; may be NULL) */
void stamp_format(struct buf *b, const struct stage *s, const char *id, const char *sums);

/* Why the stamp does not match the stage, in words ("input REF changed: v1 -> v2",
   "parent torch.patch changed", "no stamp yet"); at most max reasons joined with "; ".
   st may be NULL (no stamp). Returns a fresh string. */
char *stage_explain(const struct stage *s, const struct stamp *st, int max);

/* Output identity computed from the parents' identities and the named key inputs
   (names: comma-separated list; may be empty). Fresh 64-hex string. */
char *stage_idfrom(const struct stage *s, const char *names);

/* the options run, verify and explain share */
struct stageopts {
	const char *key, *stamp, *logdir, *out;
	char **parents;
	size_t np, cap;
};
/* --key=, --stamp=, --parent=, --logdir=, --out=: 1 when a is one of them (taken into o) */
int stage_opt(struct stageopts *o, char *a);

/* The stage-cache entry folder for a chained key: DIR/ab/abcdef... (fresh string) */
char *cache_entry(const char *cachedir, const char *key);
/* where a stage's files are, for the stage caches (a folder: cache_*, a server: remote_*) */
struct cacheio {
	const char *outdir;    /* its output folder */
	const char *logpath;   /* storing: its log, or NULL */
	const char *logdir;    /* restoring: where the stored log goes as NAME.log, or NULL */
};
/* Store private copies (reflink or copy, never links) of io->outdir's regular files in a
   new entry for s's key, with their digests (.kiln-sums), the id (.kiln-id), the stage's
   inputs in stamp form (.kiln-inputs) and io->logpath (.kiln-log), atomically (temp
   folder + rename). An existing entry is kept. 0, or -1 with *err. */
int cache_store(const char *cachedir, const struct stage *s, const struct cacheio *io,
                const char *id, char **err);
/* If an entry for s's key exists, empty io->outdir and fill it with private copies of
   the entry's files, each checked against its recorded digest; *id gets the stored
   identity and io->logdir/NAME.log the stored log. An entry that is incomplete or whose
   content does not match its digests is removed, io->outdir is left empty, and -1
   returned with *err saying why. Returns 1 restored, 0 no entry, -1 with *err. */
int cache_restore(const char *cachedir, const struct stage *s, const struct cacheio *io,
                  char **id, char **err);
/* One line on the cache lookup for s: the entry's path when it exists, else which
   stored entry of the same stage is nearest and how its inputs differ (fresh string). */
char *cache_explain(const char *cachedir, const struct stage *s);

/* A private copy of the regular file src as the new file dst (FICLONE where the file
   system shares blocks, else bytes; never a link; neither end may be a symlink).
   0, or -1 with errno. */
int copyfile(const char *src, const char *dst);
/* Open LOGDIR/NAME.log for writing (truncated) in *path: refused when logdir is not a
   real folder or the log is a symbolic link or not a regular file. Returns the fd, or
   -1 with *err naming the path. */
int log_open(const char *logdir, const char *name, char **path, char **err);
/* the names of the regular files of dir not starting with '.', sorted by bytes; 0 or -1 */
int dir_files(const char *dir, struct strv *names);
/* append "SHA256  NAME" lines for dir_files(dir); 0, or -1 with *err */
int dir_sums(const char *dir, struct buf *sums, char **err);

/* Remove every regular file in dir and create dir if missing. Returns 0, or -1 with *err. */
int dir_empty(const char *dir, char **err);
/* number of regular files in dir (0 if it does not exist) */
int dir_count(const char *dir);

/* how stage_spawn runs a stage's command: what its environment says */
struct progress;
struct spawnopt {
	const char *logpath;     /* its log: KILN_STAGE_LOG */
	const char *out;         /* KILN_STAGE_OUT (made absolute); none when NULL */
	const char *note;        /* KILN_STAGE_NOTE (removed first); none when NULL */
	int verify;              /* KILN_STAGE_VERIFY=1; none when 0 */
	struct progress *prog;   /* its output feeds progress_tick as it comes, and
	                            KILN_STAGE_NINJALOG names where the step may leave its
	                            inner build's .ninja_log; NULL: neither */
};
/* Run argv as the stage's command (lib/proc's proc_tofd: its own process group, to which
   the signals proc_forward catches go; stdin /dev/null, stdout and stderr into logfd),
   with KILN_STAGE, KILN_STAGE_KEY and what o says in its environment. Returns 0 with how
   it ended in res, or -1 with errno set if no child could be made. */
int stage_spawn(char **argv, int logfd, const struct stage *s, const struct spawnopt *o,
                struct procres *res);

#endif
