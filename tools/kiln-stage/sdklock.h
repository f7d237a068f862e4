/* the digest lock of SDK downloads (trust on first use): a tarball pinned by URL alone
   is hashed the first time it is fetched, its sha256 written to the lock file
   (build/rocm.lock), and every later fetch of that URL must give the same bytes */
#ifndef KILN_STAGE_SDKLOCK_H
#define KILN_STAGE_SDKLOCK_H

/* the sha256 lock holds for url: 1 with hex[65] filled, 0 when the URL is not locked
   (or the lock file does not exist), -1 with a one-line "FILE:LINE: ..." in *err for a
   malformed lock file (caller frees) */
int sdklock_get(const char *lock, const char *url, char hex[65], char **err);
/* add url at sha256 hex to the lock file, atomically (a line for url already there is
   replaced); returns 0, or -1 with the reason in *err (caller frees) */
int sdklock_put(const char *lock, const char *url, const char *hex, char **err);
/* check the digest got of url against the lock: locked and equal, 0; not locked, the
   digest is locked now and the one line saying so printed on stderr, 0; locked at
   another digest, 1 with the refusal in *err; a bad lock file, -1 with *err */
int sdklock_check(const char *lock, const char *url, const char *got, char **err);
/* kiln-stage sdklock LOCK URL [FILE | --sha256=HEX]: without FILE, print the locked
   sha256 of URL (nothing if none); with FILE (or the digest given), check its sha256
   against the lock (trust on first use) and print it. 0 ok, 1 a changed tarball, 2
   usage or a bad lock file */
int sdklock_main(int argc, char **argv);

#endif
