/* kiln-stage's model of one stage: its key inputs, chained key, stamp and stage cache */
#ifndef KILN_STAGE_H
#define KILN_STAGE_H

#include "kv.h"
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
};

/* Load the key file and the parents' stamps and compute the chained key. A parent
   stamp that is missing or malformed is an error. Returns 0, or -1 with a one-line
   message in *err (caller frees). */
int stage_load(struct stage *s, const char *name, const char *keyfile, char *const *parents,
               size_t nparents, char **err);
/* release a stage */
void stage_free(struct stage *s);

/* Read a stamp. Returns 1 if read, 0 if it does not exist, -1 with *err if it exists
   but cannot be read or is not a stamp. */
int stamp_read(struct stamp *st, const char *path, char **err);
/* release a stamp */
void stamp_free(struct stamp *st);
/* the text of the stamp for stage s with output identity id */
void stamp_format(struct buf *b, const struct stage *s, const char *id);

/* Why the stamp does not match the stage, in words ("input REF changed: v1 -> v2",
   "parent torch.patch changed", "no stamp yet"); at most max reasons joined with "; ".
   st may be NULL (no stamp). Returns a fresh string. */
char *stage_explain(const struct stage *s, const struct stamp *st, int max);

/* Output identity computed from the parents' identities and the named key inputs
   (names: comma-separated list; may be empty). Fresh 64-hex string. */
char *stage_idfrom(const struct stage *s, const char *names);

/* The stage-cache entry folder for a chained key: DIR/ab/abcdef... (fresh string) */
char *cache_entry(const char *cachedir, const char *key);
/* Copy (hard link where possible) every regular file of outdir plus the id into a new
   cache entry, atomically (temp folder + rename). Returns 0, or -1 with *err. */
int cache_store(const char *cachedir, const char *key, const char *outdir, const char *id,
                char **err);
/* If an entry exists, empty outdir and fill it from the entry; *id gets the stored
   identity. Returns 1 restored, 0 no entry, -1 with *err. */
int cache_restore(const char *cachedir, const char *key, const char *outdir, char **id,
                  char **err);

/* Remove every regular file in dir and create dir if missing. Returns 0, or -1 with *err. */
int dir_empty(const char *dir, char **err);
/* number of regular files in dir (0 if it does not exist) */
int dir_count(const char *dir);
/* mkdir -p; returns 0 or -1 with errno set */
int mkdirs(const char *path);

#endif
