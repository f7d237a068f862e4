/* libFuzzer target: PEP 440 versions and specifiers (pep440.h). The input is split at
   the first newline: a version before it, a specifier set after it. A version that
   parses must print in a normal form that parses back to an equal version. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pep440.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	const char *s = (const char *)p, *nl = memchr(p, '\n', n), *why;
	size_t vn = nl ? (size_t)(nl - s) : n, at;
	struct pep440 v, w;
	struct pep440_specset ss;
	struct buf b = {0};
	char *spec;
	int okv;

	okv = pep440_parse(&v, s, vn) == 0;
	if (okv) {
		pep440_str(&b, &v);
		if (pep440_parses(&w, b.s) != 0 || pep440_cmp(&v, &w) != 0)
			abort(); /* the normal form must round-trip */
		pep440_free(&w);
		bufreset(&b);
		pep440_public(&b, &v);
		pep440_base(&b, &v);
		pep440_local(&b, &v);
	}
	if (nl) {
		spec = xstrndup(nl + 1, n - vn - 1);
		if (!memchr(nl + 1, 0, n - vn - 1) &&
		    pep440_specset_parse(&ss, spec, &why, &at) == 0) {
			if (okv)
				pep440_specset_contains(&ss, &v, s);
			pep440_specset_pre(&ss);
			pep440_specset_free(&ss);
		}
		free(spec);
	}
	if (okv)
		pep440_free(&v);
	buffree(&b);
	return 0;
}
