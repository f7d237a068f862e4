/* kiln-stage's remote stage cache: plain HTTP(S) GET/PUT/HEAD through libcurl */
#ifndef KILN_REMOTE_H
#define KILN_REMOTE_H

#include "stage.h"

/* 1 if s names a remote stage cache (http:// or https://), else 0 */
int remote_isurl(const char *s);
/* NULL if url may be used; else why not (credentials in the URL; fresh string) */
char *remote_checkurl(const char *url);
/* Fetch the object for s's key from the server at url into a private entry beside
   io->outdir and restore it with cache_restore (every file checked against its digest;
   the log into io->logdir). Returns 1 restored, 0 the server has no object for the key,
   -1 with *err saying why (server down or slow, HTTP error, corrupt or truncated object);
   on -1 io->outdir is empty. */
int remote_restore(const char *url, const struct stage *s, const struct cacheio *io, char **id,
                   char **err);
/* Upload io->outdir's files (content-addressed, cas/SHA256), io->logpath and then the
   manifest (ac/KEY) for s. Never fails the build: returns 0 stored, 1 already there, -1
   with *err. */
int remote_store(const char *url, const struct stage *s, const struct cacheio *io,
                 const char *id, char **err);
/* the keys of signed manifests (NULL: KILN_CACHE_TRUSTED_KEYS and KILN_CACHE_SIGN_KEY
   from the environment): with trusted keys ("NAME:BASE64 ..."), remote_restore takes
   only a manifest one of them signed, any other is a miss with one line saying why;
   with a secret key file, remote_store signs each manifest it stores */
void remote_setkeys(const char *trusted, const char *secf);
/* 1 if the server holds the manifest for key, 0 if not, -1 with *err */
int remote_has(const char *url, const char *key, char **err);
/* One line on the remote lookup for key: whether the server holds its manifest (HEAD),
   or why it could not say (fresh string). */
char *remote_explain(const char *url, const char *key);

/* remove the private folders OUTDIR.remote.PID beside outdir that a restore killed
   outright (SIGKILL, a power cut) left behind: only those whose process is gone
   (kill(PID, 0) answers no such process), so a restore running beside this one keeps
   its own. Quiet: what it cannot remove stays. */
void remote_rmstale(const char *outdir);

#endif
