/* libFuzzer target: a .hip_fatbin section (plain offload bundles and CCOB v1-v3,
   4096-aligned, zero padded), and the same bytes as one raw bundle (offload.h) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzfile.h"
#include "offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

/* every entry must lie inside what was parsed and carry NUL-terminated names */
static void
verify(const struct offlist *l)
{
	size_t i;

	for (i = 0; i < l->nb; i++)
		if (l->b[i].first + l->b[i].n > l->ne)
			abort();
	for (i = 0; i < l->ne; i++)
		if (!memchr(l->e[i].id, 0, sizeof l->e[i].id) ||
		    !memchr(l->e[i].target, 0, sizeof l->e[i].target))
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct offopts o = {.maxraw = 1 << 20}; /* a small cap: bombs must be refused */
	struct offlist l = {0};
	struct offbytes fat = {p, n, 0, ".hip_fatbin"}, raw = {p, n, 0, "raw"};
	char *err = NULL;
	uint64_t end;
	int r;

	fuzz_err(r = off_hipfatbin(&fat, &l, &o, &err), &err);
	if (r == 0)
		verify(&l);
	off_free(&l);
	fuzz_err(r = off_bundle(&raw, &l, &end, &err), &err);
	if (r == 0) {
		verify(&l);
		if (end > n)
			abort();
	}
	off_free(&l);
	return 0;
}
