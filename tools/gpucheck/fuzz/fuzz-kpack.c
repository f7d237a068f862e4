/* libFuzzer target: a .kpack archive through kpack_read (header, msgpack table, zstd
   frame index) and kpack_check of every entry (its blob, or its zstd frame inflated once,
   streamed). An accepted archive's entries must name a key and arch, and their ordinals
   and sizes must be what the table said; a fetch that fails says why, and asking again
   gives the same answer; nothing may crash or leak, and memory stays bounded (the msgpack
   bounds walk runs before msgpack-c allocates; frames go through a fixed buffer). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzzfile.h"
#include "kpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct kpack k;
	char *err = NULL;
	size_t i;
	int r;

	fuzz_err(r = kpack_read(p, n, 1 << 20, &k, &err), &err);
	if (r < 0)
		return 0;
	for (i = 0; i < k.ne; i++) {
		if (!k.e[i].key || !k.e[i].arch)
			abort();
		if (kpack_find(&k, k.e[i].key, k.e[i].arch) == NULL)
			abort();
	}
	/* fetch every entry as the loader would: each frame inflated once, streamed, within
	   1 MiB; a failure says why, and a second fetch gives the same answer from the cache */
	for (i = 0; i < k.ne; i++) {
		r = kpack_check(&k, p, n, &k.e[i], &err);
		if (r < 0 && err && !err[0])
			abort();
		fuzz_err(r, &err);
		if (kpack_check(&k, NULL, 0, &k.e[i], &err) != r)
			abort();
		fuzz_err(r, &err);
	}
	kpack_free(&k);
	return 0;
}
