/* libFuzzer target: a .kpack archive through kpack_read (header, msgpack table, zstd
   frame index) and kpack_check of every entry (its blob, or its zstd frame inflated once,
   streamed). An accepted archive's entries must name a key and arch, and their ordinals
   and sizes must be what the table said; a fetch that fails says why, and asking again
   gives the same answer; nothing may crash or leak, and memory stays bounded (the msgpack
   bounds walk runs before msgpack-c allocates; frames go through a fixed buffer). */
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
	/* fetch every entry as the loader would: each frame inflated once, streamed, within
	   1 MiB; a failure says why, and a second fetch gives the same answer from the cache */
	for (i = 0; i < k.ne; i++) {
		int r = kpack_check(&k, p, n, &k.e[i], 1 << 20, err, sizeof err);

		if (r < 0 && (!memchr(err, 0, sizeof err) || !err[0]))
			abort();
		if (kpack_check(&k, NULL, 0, &k.e[i], 1 << 20, err, sizeof err) != r)
			abort();
	}
	kpack_free(&k);
	return 0;
}
