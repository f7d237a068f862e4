/* libFuzzer target: a .rocm_kpack_ref section through kpack_ref. An accepted reference
   has a kernel name and at least one search path, none absolute and none climbing with
   ".." past its first two components; nothing may crash or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzzfile.h"
#include "kpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct kpref r;
	char *err = NULL;
	size_t i;
	int rc;

	fuzz_err(rc = kpack_ref(p, n, &r, &err), &err);
	if (rc < 0)
		return 0;
	if (!r.kernel || !*r.kernel || r.npath == 0)
		abort();
	for (i = 0; i < r.npath; i++)
		if (r.path[i][0] == '/' || strstr(r.path[i], "/../../../") || strncmp(r.path[i], "../../../", 9) == 0)
			abort();
	kpack_reffree(&r);
	return 0;
}
