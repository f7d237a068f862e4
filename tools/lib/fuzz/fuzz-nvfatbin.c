/* libFuzzer target: NVIDIA fatbin containers (magic 0xBA55ED50) as in .nv_fatbin */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct offlist l = {0};
	char err[256];
	size_t i;

	if (off_nvfatbin(p, n, 0, ".nv_fatbin", &l, err, sizeof err) == 0)
		for (i = 0; i < l.ne; i++)
			if (l.e[i].off > n || l.e[i].size > n - l.e[i].off ||
			    !memchr(l.e[i].target, 0, sizeof l.e[i].target))
				abort();
	off_free(&l);
	return 0;
}
