/* SHA-256 through libcrypto's EVP interface */
#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

void
sha256_init(struct sha256 *h)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	if (!c || !EVP_DigestInit_ex(c, EVP_sha256(), NULL))
		die("libcrypto: cannot start SHA-256");
	h->ctx = c;
}

void
sha256_update(struct sha256 *h, const void *p, size_t n)
{
	if (n && !EVP_DigestUpdate(h->ctx, p, n))
		die("libcrypto: SHA-256 update failed");
}

void
sha256_final(struct sha256 *h, unsigned char out[32])
{
	unsigned int n = 32;

	if (!EVP_DigestFinal_ex(h->ctx, out, &n))
		die("libcrypto: SHA-256 final failed");
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
}

void
sha256_buf(const void *p, size_t n, unsigned char out[32])
{
	unsigned int len = 32;

	if (!EVP_Digest(p, n, out, &len, EVP_sha256(), NULL))
		die("libcrypto: SHA-256 failed");
}

int
sha256_file(const char *path, unsigned char out[32], uint64_t *size)
{
	static unsigned char tmp[1 << 17];
	struct sha256 h;
	uint64_t total = 0;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	sha256_init(&h);
	for (;;) {
		n = read(fd, tmp, sizeof tmp);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			sha256_final(&h, out);
			close(fd);
			errno = err;
			return -1;
		}
		if (n == 0)
			break;
		sha256_update(&h, tmp, (size_t)n);
		total += (uint64_t)n;
	}
	close(fd);
	sha256_final(&h, out);
	if (size)
		*size = total;
	return 0;
}

void
hexenc(struct buf *b, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		bufputc(b, hex[p[i] >> 4]);
		bufputc(b, hex[p[i] & 15]);
	}
}

void
b64url(struct buf *b, const unsigned char *p, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t i;
	uint32_t v;

	for (i = 0; i + 2 < n; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		bufputc(b, tab[v >> 18 & 63]);
		bufputc(b, tab[v >> 12 & 63]);
		bufputc(b, tab[v >> 6 & 63]);
		bufputc(b, tab[v & 63]);
	}
	if (n - i == 1) {
		v = (uint32_t)p[i] << 16;
		bufputc(b, tab[v >> 18 & 63]);
		bufputc(b, tab[v >> 12 & 63]);
	} else if (n - i == 2) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		bufputc(b, tab[v >> 18 & 63]);
		bufputc(b, tab[v >> 12 & 63]);
		bufputc(b, tab[v >> 6 & 63]);
	}
}

int
ishexn(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}
