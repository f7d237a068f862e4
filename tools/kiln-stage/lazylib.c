/* lazylib.c: libcurl and libarchive, opened the first time kiln-stage calls them.
 *
 * Only a remote stage cache (remote.c) and the SDK download and unpack (sdk.c) use them;
 * the verbs a stack build runs for every stage (env, run, kv, info, depfile, ...) use
 * neither. Linked, the two bring 40 shared libraries (libcurl's TLS, HTTP/2, SSH, LDAP,
 * Kerberos, IDN, PSL ...) that every kiln-stage process mapped and relocated at start:
 * 46 ms of CPU per process instead of 12 (170 instead of 90 under ASan, whose leak scan
 * at exit reads every library's data), and a stack build or the test suite starts
 * thousands of them.
 *
 * The functions below carry the libraries' own names and prototypes, so remote.c and
 * sdk.c call the API as documented. They are hidden (never in the dynamic symbol table),
 * so a library's calls to its own API can never land here. The sonames are the ABI
 * majors Debian ships: libcurl4's libcurl.so.4 (ABI 4 since curl 7.16, 2006) and
 * libarchive13's libarchive.so.13 (since libarchive 3.0, 2011).
 */
/* curl_easy_setopt is defined here: no type-checking macro in front of it */
#define CURL_DISABLE_TYPECHECK
#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>

#include "util.h"

#define HIDDEN __attribute__((visibility("hidden")))

struct lazylib {
	const char *soname;
	const char *pkg;       /* the Debian package that installs it */
	const char *why;       /* what needs it, for the error */
	void *h;
};

static struct lazylib lcurl = {"libcurl.so.4", "libcurl4",
                               "a remote stage cache and SDK downloads", NULL};
static struct lazylib larchive = {"libarchive.so.13", "libarchive13",
                                  "unpacking SDK tarballs", NULL};

/* the library's function NAME; dies when the library or the function is missing (as an
 * x-allocator does: the call cannot go on, and the message says what to install) */
static void *
lazysym(struct lazylib *l, const char *name)
{
	void *f;

	if (!l->h && !(l->h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL)))
		die("cannot load %s, needed for %s (the package %s installs it): %s", l->soname,
		    l->why, l->pkg, dlerror());
	if (!(f = dlsym(l->h, name)))
		die("%s has no %s: %s", l->soname, name, dlerror());
	return f;
}

/* ret NAME(params) { return real NAME(args); }, the real one looked up once */
#define LAZY(lib, ret, name, params, args)                                      \
	HIDDEN ret name params;                                                 \
	HIDDEN ret name params                                                  \
	{                                                                       \
		static ret(*f) params;                                          \
		if (!f)                                                         \
			f = (ret(*) params)lazysym(&(lib), #name);              \
		return f args;                                                  \
	}

/* --- libcurl ---------------------------------------------------------------------- */
LAZY(lcurl, CURLcode, curl_global_init, (long flags), (flags))
LAZY(lcurl, void, curl_global_cleanup, (void), ())
LAZY(lcurl, CURL *, curl_easy_init, (void), ())
LAZY(lcurl, CURLcode, curl_easy_perform, (CURL *c), (c))
LAZY(lcurl, void, curl_easy_cleanup, (CURL *c), (c))
LAZY(lcurl, void, curl_easy_reset, (CURL *c), (c))
LAZY(lcurl, const char *, curl_easy_strerror, (CURLcode e), (e))
LAZY(lcurl, struct curl_slist *, curl_slist_append, (struct curl_slist *l, const char *s), (l, s))
LAZY(lcurl, void, curl_slist_free_all, (struct curl_slist *l), (l))
LAZY(lcurl, char *, curl_easy_unescape, (CURL *c, const char *s, int n, int *outn), (c, s, n, outn))
LAZY(lcurl, void, curl_free, (void *p), (p))

/* the variadic two: the argument's type follows from the option's number, as curl's
 * own setopt reads it (curl.h: CURLOPTTYPE_LONG, _OBJECTPOINT, _FUNCTIONPOINT, _OFF_T,
 * _BLOB); every CURLINFO argument is a pointer */
HIDDEN CURLcode curl_easy_setopt(CURL *c, CURLoption o, ...);
HIDDEN CURLcode
curl_easy_setopt(CURL *c, CURLoption o, ...)
{
	static CURLcode (*f)(CURL *, CURLoption, ...);
	va_list ap;
	CURLcode r;

	if (!f)
		f = (CURLcode(*)(CURL *, CURLoption, ...))lazysym(&lcurl, "curl_easy_setopt");
	va_start(ap, o);
	if (o < CURLOPTTYPE_OBJECTPOINT)
		r = f(c, o, va_arg(ap, long));
	else if (o < CURLOPTTYPE_FUNCTIONPOINT)
		r = f(c, o, va_arg(ap, void *));
	else if (o < CURLOPTTYPE_OFF_T)
		r = f(c, o, va_arg(ap, void (*)(void)));
	else if (o < CURLOPTTYPE_BLOB)
		r = f(c, o, va_arg(ap, curl_off_t));
	else
		r = f(c, o, va_arg(ap, void *));
	va_end(ap);
	return r;
}

HIDDEN CURLcode curl_easy_getinfo(CURL *c, CURLINFO i, ...);
HIDDEN CURLcode
curl_easy_getinfo(CURL *c, CURLINFO i, ...)
{
	static CURLcode (*f)(CURL *, CURLINFO, ...);
	va_list ap;
	void *p;

	if (!f)
		f = (CURLcode(*)(CURL *, CURLINFO, ...))lazysym(&lcurl, "curl_easy_getinfo");
	va_start(ap, i);
	p = va_arg(ap, void *);
	va_end(ap);
	return f(c, i, p);
}

/* --- libarchive ------------------------------------------------------------------- */
LAZY(larchive, struct archive *, archive_read_new, (void), ())
LAZY(larchive, int, archive_read_free, (struct archive *a), (a))
LAZY(larchive, int, archive_read_support_filter_all, (struct archive *a), (a))
LAZY(larchive, int, archive_read_support_format_tar, (struct archive *a), (a))
LAZY(larchive, int, archive_read_support_format_gnutar, (struct archive *a), (a))
LAZY(larchive, int, archive_read_open,
     (struct archive *a, void *d, archive_open_callback *o, archive_read_callback *r, archive_close_callback *c),
     (a, d, o, r, c))
LAZY(larchive, int, archive_read_next_header, (struct archive *a, struct archive_entry **e), (a, e))
LAZY(larchive, int, archive_read_data_block,
     (struct archive *a, const void **b, size_t *n, la_int64_t *off), (a, b, n, off))
LAZY(larchive, const char *, archive_error_string, (struct archive *a), (a))
LAZY(larchive, const char *, archive_entry_pathname, (struct archive_entry *e), (e))
LAZY(larchive, const char *, archive_entry_hardlink, (struct archive_entry *e), (e))
LAZY(larchive, const char *, archive_entry_symlink, (struct archive_entry *e), (e))
LAZY(larchive, __LA_MODE_T, archive_entry_filetype, (struct archive_entry *e), (e))
LAZY(larchive, __LA_MODE_T, archive_entry_perm, (struct archive_entry *e), (e))
LAZY(larchive, la_int64_t, archive_entry_size, (struct archive_entry *e), (e))
LAZY(larchive, int, archive_entry_size_is_set, (struct archive_entry *e), (e))

/* archive_set_error is variadic too (a printf format): formatted here, passed as "%s" */
HIDDEN void archive_set_error(struct archive *a, int err, const char *fmt, ...);
HIDDEN void
archive_set_error(struct archive *a, int err, const char *fmt, ...)
{
	static void (*f)(struct archive *, int, const char *, ...);
	char msg[512];
	va_list ap;

	if (!f)
		f = (void (*)(struct archive *, int, const char *, ...))lazysym(&larchive, "archive_set_error");
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	f(a, err, "%s", msg);
}
