/* the cache of interpreters' answers: one file per interpreter path under
   $XDG_CACHE_HOME/kiln/wheelpick (or ~/.cache/kiln/wheelpick) */
#ifndef WHEELPICK_PYCACHE_H
#define WHEELPICK_PYCACHE_H

#include "util.h"

/* a cache entry: its file, and the signature of the interpreter it is valid for */
struct pycache {
	char *file;
	char *sig;
};

/* the entry of the interpreter file abspath asked with query text q: its file is named by
   the path and this machine's glibc, its signature is the real file's identity, size and
   times and q; 0, or -1 when the answer must not be cached (not an ELF file: a script such
   as a pyenv shim may run another Python in each folder; no cache folder) */
int pycache_open(struct pycache *c, const char *abspath, const char *q);
/* 0 when the entry holds an answer for this signature (into out, KEY=VALUE lines), else -1
   (none, or one for an interpreter file since changed: asked again) */
int pycache_read(const struct pycache *c, struct buf *out);
/* store the answer for abspath, replacing the entry's old one; then remove the entries of
   interpreters that are gone (a removed venv, a test's), so that the folder holds one
   file per interpreter there is, and the files the older layout (kiln/wheelpick-python-*)
   left for interpreters that are gone. Errors are ignored: a cache that cannot be written
   only costs the next run a question. */
void pycache_write(const struct pycache *c, const char *abspath, const struct buf *answer);
/* release the entry's strings */
void pycache_free(struct pycache *c);

#endif
