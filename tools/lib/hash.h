/* SHA-256 (OpenSSL libcrypto) and its text forms */
#ifndef KILN_HASH_H
#define KILN_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* an incremental SHA-256 */
struct sha256 {
	void *ctx;
};
/* start a hash */
void sha256_init(struct sha256 *h);
/* feed n bytes */
void sha256_update(struct sha256 *h, const void *p, size_t n);
/* finish into out[32] and release the context */
void sha256_final(struct sha256 *h, unsigned char out[32]);
/* one-shot digest of a buffer */
void sha256_buf(const void *p, size_t n, unsigned char out[32]);
/* digest of a file's content; returns 0, or -1 with errno set */
int sha256_file(const char *path, unsigned char out[32], uint64_t *size);

/* append n bytes as lowercase hex */
void hexenc(struct buf *b, const unsigned char *p, size_t n);
/* append n bytes as urlsafe base64 without padding (wheel RECORD form) */
void b64url(struct buf *b, const unsigned char *p, size_t n);

/* whether the n bytes at s are all lowercase hex digits */
int ishexn(const char *s, size_t n);

#endif
