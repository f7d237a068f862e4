/* libFuzzer target: a compressed offload bundle (CCOB v1-v3, zlib or zstd) header and
   stream, with a small output cap so lying sizes and bombs are refused (offload.h) */
#include <stdint.h>
#include <stdlib.h>

#include "fuzzfile.h"
#include "offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct offbytes in = {p, n, 0, ".hip_fatbin"};
	struct ccobhdr h;
	struct ccobdata out = {0};
	char *err = NULL;
	int r;

	fuzz_err(r = off_ccobhdr(&in, &h, &err), &err);
	if (r < 0)
		return 0;
	fuzz_err(r = off_ccobinflate(&in, &h, 1 << 20, &out, &err), &err);
	if (r == 0) {
		if (out.used > n || h.raw > (1 << 20))
			abort();
		if (h.raw)
			(void)*(volatile unsigned char *)&out.raw[h.raw - 1];
	}
	free(out.raw);
	return 0;
}
