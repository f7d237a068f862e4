/* Ed25519 signatures over stage-cache manifests. The key format follows Nix's binary
   cache keys (nix-store --generate-binary-cache-key: "name:base64" for both halves, the
   public half listed in trusted-public-keys); the signature covers the manifest bytes
   before its first SIG= line, which hold the stage, its key and every output's digest. */
#include "sign.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "atomic.h"
#include "os.h"
#include "wheelpath.h"

#define KEYLEN 32
#define SIGLEN 64

/* standard base64 of n bytes (fresh) */
static char *
b64(const unsigned char *p, size_t n)
{
	char *s = xmalloc(4 * ((n + 2) / 3) + 1);

	EVP_EncodeBlock((unsigned char *)s, p, (int)n);
	return s;
}

/* decode standard base64 s into exactly want bytes; 0 or -1 */
static int
unb64(const char *s, size_t slen, unsigned char *out, size_t want)
{
	unsigned char tmp[128];
	int n, pad = 0;

	if (slen == 0 || slen % 4 || slen > 4 * sizeof tmp / 3)
		return -1;
	pad = (s[slen - 1] == '=') + (s[slen - 2] == '=');
	n = EVP_DecodeBlock(tmp, (const unsigned char *)s, (int)slen);
	if (n < 0 || (size_t)(n - pad) != want)
		return -1;
	memcpy(out, tmp, want);
	return 0;
}

/* is s (n bytes) a key name: 1 to 128 letters, digits, '.', '_' and '-' */
static int
keyname(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 128)
		return 0;
	for (i = 0; i < n; i++)
		if (!(isalnumc((unsigned char)s[i]) || (s[i] && strchr("._-", s[i]))))
			return 0;
	return 1;
}

/* split "NAME:BASE64" into name (fresh) and want raw bytes; -1 if malformed */
static int
parsekey(const char *s, size_t len, char **name, unsigned char *raw, size_t want)
{
	const char *c = memchr(s, ':', len);

	if (!c || !keyname(s, (size_t)(c - s)))
		return -1;
	if (unb64(c + 1, len - (size_t)(c + 1 - s), raw, want) < 0)
		return -1;
	*name = xstrndup(s, (size_t)(c - s));
	return 0;
}

int
sign_keygen(const char *name, const char *secf, const char *pubf, char **err)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	EVP_PKEY *k = NULL;
	unsigned char seed[KEYLEN], pub[KEYLEN];
	size_t sl = KEYLEN, pl = KEYLEN;
	char *s1, *s2, *line;
	int fd, r = -1;

	if (!keyname(name, strlen(name))) {
		*err = xasprintf("%.128s: a key name is 1 to 128 letters, digits, '.', '_' and '-'", name);
		return -1;
	}
	if (!c || EVP_PKEY_keygen_init(c) <= 0 || EVP_PKEY_keygen(c, &k) <= 0 ||
	    EVP_PKEY_get_raw_private_key(k, seed, &sl) <= 0 ||
	    EVP_PKEY_get_raw_public_key(k, pub, &pl) <= 0 || sl != KEYLEN || pl != KEYLEN) {
		*err = xstrdup("libcrypto cannot make an Ed25519 key");
		goto out;
	}
	s1 = b64(seed, KEYLEN);
	s2 = b64(pub, KEYLEN);
	line = xasprintf("%s:%s\n", name, s1);
	/* the secret never replaces a key someone may already trust */
	if ((fd = open(secf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0 ||
	    writeall(fd, line, strlen(line)) < 0 || close(fd) < 0)
		*err = xasprintf("%s: %s", secf, strerror(errno));
	else
		r = 0;
	free(line);
	line = xasprintf("%s:%s\n", name, s2);
	if (r == 0 && writefile_atomic(pubf, line, strlen(line), 0644) < 0) {
		*err = xasprintf("%s: %s", pubf, strerror(errno));
		r = -1;
	}
	OPENSSL_cleanse(seed, sizeof seed);
	OPENSSL_cleanse(s1, strlen(s1));
	free(line);
	free(s1);
	free(s2);
out:
	EVP_PKEY_free(k);
	EVP_PKEY_CTX_free(c);
	return r;
}

/* read the secret key file: a regular file, not readable by group or others */
static int
readsecret(const char *secf, char **name, unsigned char seed[KEYLEN], char **err)
{
	struct buf b = {0};
	struct stat st;
	int fd;

	if ((fd = os_openreg(secf, O_NOFOLLOW, &st, err)) < 0)
		return -1;
	close(fd);
	if (st.st_mode & 077) {
		*err = xasprintf("%s: the secret key is readable by others (chmod 600 it)", secf);
		return -1;
	}
	if (os_readreg(secf, O_NOFOLLOW, &b, 4096, err) < 0)
		return -1;
	bufrtrim(&b, " \t\r\n");
	if (!b.s || parsekey(b.s, b.len, name, seed, KEYLEN) < 0) {
		*err = xasprintf("%s: not a kiln-stage secret key (NAME:BASE64, from kiln-stage keygen)", secf);
		buffree(&b);
		return -1;
	}
	OPENSSL_cleanse(b.s, b.len);
	buffree(&b);
	return 0;
}

int
sign_append(struct buf *man, const char *secf, char **err)
{
	unsigned char seed[KEYLEN], sig[SIGLEN];
	size_t sl = SIGLEN;
	EVP_PKEY *k = NULL;
	EVP_MD_CTX *m = NULL;
	char *name = NULL, *s;
	int r = -1;

	if (readsecret(secf, &name, seed, err) < 0)
		return -1;
	k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, KEYLEN);
	OPENSSL_cleanse(seed, sizeof seed);
	if (!k || !(m = EVP_MD_CTX_new()) || EVP_DigestSignInit(m, NULL, NULL, NULL, k) <= 0 ||
	    EVP_DigestSign(m, sig, &sl, (const unsigned char *)(man->s ? man->s : ""), man->len) <= 0) {
		*err = xasprintf("%s: libcrypto cannot sign with this key", secf);
		goto out;
	}
	s = b64(sig, SIGLEN);
	bufprintf(man, "SIG=\"%s:%s\"\n", name, s);
	free(s);
	r = 0;
out:
	EVP_MD_CTX_free(m);
	EVP_PKEY_free(k);
	free(name);
	return r;
}

/* does the signature (base64 in s) over msg verify with the raw public key pub */
static int
verifies(const unsigned char pub[KEYLEN], const char *s, size_t slen, const char *msg, size_t n)
{
	unsigned char sig[SIGLEN];
	EVP_PKEY *k;
	EVP_MD_CTX *m = NULL;
	int ok = 0;

	if (unb64(s, slen, sig, SIGLEN) < 0)
		return 0;
	if ((k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, KEYLEN)) &&
	    (m = EVP_MD_CTX_new()) && EVP_DigestVerifyInit(m, NULL, NULL, NULL, k) > 0)
		ok = EVP_DigestVerify(m, sig, SIGLEN, (const unsigned char *)msg, n) == 1;
	EVP_MD_CTX_free(m);
	EVP_PKEY_free(k);
	return ok;
}

/* the trusted key called name (raw into pub): 1 found, 0 not, -1 list malformed */
static int
trustedkey(const char *trusted, const char *name, unsigned char pub[KEYLEN])
{
	const char *p = trusted;
	size_t n;
	char *kn;
	int found = 0;

	for (; *p; p += n) {
		p += strspn(p, " ,\t");
		if (!(n = strcspn(p, " ,\t")))
			break;
		if (parsekey(p, n, &kn, pub, KEYLEN) < 0)
			return -1;
		found = !strcmp(kn, name);
		free(kn);
		if (found)
			return 1;
	}
	return 0;
}

char *
sign_checklist(const char *trusted)
{
	unsigned char pub[KEYLEN];
	struct buf e = {0};
	char *m;

	/* an empty list would trust nothing and so restore unsigned manifests (trusted()
	   reads "" as no list): never what someone who wrote the option meant */
	if (!trusted[strspn(trusted, " ,\t")])
		return xstrdup("names no key: an empty list would restore unsigned manifests; give "
		               "NAME:BASE64 public keys (from kiln-stage keygen), or leave the option out");
	if (trustedkey(trusted, "\n", pub) == 0)
		return NULL;
	wheelpath_escape(&e, trusted);
	bufputc(&e, 0);
	m = xasprintf("'%.200s' is not a list of NAME:BASE64 public keys (from kiln-stage keygen)", e.s);
	buffree(&e);
	return m;
}

int
sign_check(const char *man, size_t len, const char *trusted, size_t *signedlen, char **why)
{
	const char *p = man, *end = man + len, *nl, *v, *c;
	unsigned char pub[KEYLEN];
	size_t body = len;
	char *name, *untrusted = NULL;
	int t, nsig = 0;

	/* the signed part ends where the first SIG= line starts */
	for (p = man; p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			nl = end;
		if ((size_t)(nl - p) > 4 && !strncmp(p, "SIG=", 4)) {
			body = (size_t)(p - man);
			break;
		}
	}
	*signedlen = body;
	for (p = man + body; p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			nl = end;
		if (nl == p)
			continue;
		if ((size_t)(nl - p) < 8 || strncmp(p, "SIG=\"", 5) || nl[-1] != '"') {
			*why = xstrdup("has a line after its signatures that is not one");
			free(untrusted);
			return 0;
		}
		nsig++;
		v = p + 5;
		if (!(c = memchr(v, ':', (size_t)(nl - 1 - v))) || !keyname(v, (size_t)(c - v))) {
			/* not NAME:BASE64: a miss like any untrusted signature, said so */
			if (!untrusted)
				untrusted = xstrdup("a signature line that is not NAME:BASE64");
			continue;
		}
		name = xstrndup(v, (size_t)(c - v));
		if ((t = trustedkey(trusted, name, pub)) < 0) {
			*why = sign_checklist(trusted);
			free(name);
			free(untrusted);
			return -1;
		}
		if (t == 1 && verifies(pub, c + 1, (size_t)(nl - 1 - (c + 1)), man, body)) {
			free(name);
			free(untrusted);
			return 1;
		}
		if (!untrusted)
			untrusted = xasprintf("%s'%s'", t ? "a bad signature from the trusted key " : "a signature by ", name);
		free(name);
	}
	if (!nsig)
		*why = xstrdup("is not signed, and only manifests a trusted key signed are restored "
		               "(KILN_CACHE_TRUSTED_KEYS)");
	else
		*why = xasprintf("has %s%s, and only manifests a trusted key signed are restored", untrusted,
		                 startswith(untrusted, "a signature by ") ? ", a key not in KILN_CACHE_TRUSTED_KEYS" : "");
	free(untrusted);
	return 0;
}
