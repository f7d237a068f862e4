/* KEY=VALUE files: env profiles (env/arch/NAME.env), pin files (env/versions.env) */
#ifndef KILN_KV_H
#define KILN_KV_H

#include <stddef.h>

/* one assignment, with where it came from */
struct kvpair {
	char *key, *value;
	int line;
};

/* all assignments of one file, in file order */
struct kvfile {
	char *path;
	struct kvpair *v;
	size_t n, cap;
};

/* Parse path. Accepted lines: blank, '#' comments, KEY=VALUE, and 'export KEY=VALUE';
   KEY is [A-Za-z_][A-Za-z0-9_]*; VALUE may be "double" or 'single' quoted as in sh
   (no expansion). Returns 0, or -1 with a one-line message "path:line: what is wrong"
   (or "path: strerror") in err (caller frees). */
int kv_load(struct kvfile *f, const char *path, char **err);
/* (kv_load refuses a FIFO, device or folder: "path: is a FIFO, not a regular file") */
/* parse text already in memory; name is used in messages */
int kv_parse(struct kvfile *f, const char *name, const char *text, size_t len, char **err);
/* the value of the last assignment of key, or NULL */
const char *kv_get(const struct kvfile *f, const char *key);
/* append the line KEY="VALUE" that kv_parse reads back as value: \ " $ ` escaped, a
   newline (which no value can hold) written as a space. The one writer of these files. */
struct buf;
void kv_put(struct buf *b, const char *key, const char *value);
/* release everything */
void kv_free(struct kvfile *f);

#endif
