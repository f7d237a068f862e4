/* signed manifests of the remote stage cache: Ed25519 keys (OpenSSL's libcrypto) named
   like Nix's binary-cache keys, "NAME:BASE64"; the team's secret key signs each ac/KEY
   manifest it stores, and a reader restores only a manifest a trusted key signed */
#ifndef KILN_SIGN_H
#define KILN_SIGN_H

#include <stddef.h>

#include "util.h"

/* make a key pair: secf gets "NAME:BASE64(32-byte seed)" (mode 0600, created, never
   overwritten), pubf "NAME:BASE64(32-byte public key)"; 0, or -1 with *err */
int sign_keygen(const char *name, const char *secf, const char *pubf, char **err);

/* append SIG="NAME:BASE64(signature of the bytes of man so far)" with the secret key in
   secf; 0, or -1 with *err (a key file that is not one, or readable by others) */
int sign_append(struct buf *man, const char *secf, char **err);

/* check a manifest against trusted ("NAME:BASE64 ..." separated by spaces or commas):
   1 when a SIG line of a trusted key verifies over the bytes before the first SIG line
   (*signedlen is their count), 0 with *why when none does (unsigned, signed by a key not
   trusted, a bad signature), -1 with *why when trusted itself is malformed */
int sign_check(const char *man, size_t len, const char *trusted, size_t *signedlen, char **why);

/* is trusted a well-formed key list; NULL, or a fresh reason */
char *sign_checklist(const char *trusted);

#endif
