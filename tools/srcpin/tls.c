/* The CA certificates, loaded only when srcpin contacts a remote. A libgit2 built on mbedTLS
   (Debian's) parses the whole CA bundle inside git_libgit2_init: about 3 ms of CPU in every
   srcpin run, though most runs never leave the machine (checkouts, state, patches, fetches
   from a local mirror). libgit2 reads the bundle through mbedtls_x509_crt_parse_file, and
   a definition in the program comes before the library's, so srcpin defines it: during
   init it only notes the file; tls_load loads it for real (through mbedTLS's own function)
   before the first remote fetch. With a libgit2 built on OpenSSL nothing calls it. */
#include "srcpin.h"

#include <dlfcn.h>
#include <string.h>

/* mbedTLS's prototype, with its certificate chain type left opaque */
int mbedtls_x509_crt_parse_file(void *chain, const char *path);

static char deferred[4096];   /* the bundle libgit2 asked for at init, or "" */
static int initing;           /* inside tls_init's git_libgit2_init */

/* mbedTLS's function as libgit2 sees it: put off during tls_init, passed through else */
int
mbedtls_x509_crt_parse_file(void *chain, const char *path)
{
	int (*real)(void *, const char *);

	if (initing && path && strlen(path) < sizeof deferred) {
		strcpy(deferred, path);
		return -0x2900;   /* MBEDTLS_ERR_X509_FILE_IO_ERROR: libgit2 goes on without them */
	}
	*(void **)&real = dlsym(RTLD_NEXT, "mbedtls_x509_crt_parse_file");
	return real ? real(chain, path) : -0x2900;
}

void
tls_init(void)
{
	initing = 1;
	git_libgit2_init();
	initing = 0;
	git_error_clear();   /* the put-off load left its error */
}

void
tls_load(void)
{
	if (!*deferred)
		return;
	if (git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, deferred, NULL) < 0)
		warn("%s: cannot load the CA certificates: %s", deferred, gitmsg());
	deferred[0] = 0;
}
