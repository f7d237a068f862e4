/* libFuzzer target: NVIDIA fatbin containers (magic 0xBA55ED50) as in .nv_fatbin */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzfile.h"
#include "offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct offlist l = {0};
	struct offbytes in = {p, n, 0, ".nv_fatbin"};
	char *err = NULL;
	size_t i;
	int r;

	fuzz_err(r = off_nvfatbin(&in, &l, &err), &err);
	if (r == 0)
		for (i = 0; i < l.ne; i++)
			if (l.e[i].off > n || l.e[i].size > n - l.e[i].off ||
			    !memchr(l.e[i].target, 0, sizeof l.e[i].target))
				abort();
	off_free(&l);
	return 0;
}
