/* libFuzzer target: a .kpack archive through kpack_read (header, msgpack table, blobs
   and zstd frames). An accepted archive's entries must name a key and arch, and their
   ordinals and sizes must be what the table said; nothing may crash or leak, and memory
   stays bounded (the msgpack bounds walk runs before msgpack-c allocates). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct kpack k;
	char err[512];
	size_t i;

	if (kpack_read(p, n, 1 << 20, &k, err, sizeof err) < 0) {
		if (!memchr(err, 0, sizeof err) || !err[0])
			abort();
		return 0;
	}
	for (i = 0; i < k.ne; i++) {
		if (!k.e[i].key || !k.e[i].arch)
			abort();
		if (kpack_find(&k, k.e[i].key, k.e[i].arch) == NULL)
			abort();
	}
	kpack_free(&k);
	return 0;
}
