/* libFuzzer target: a compressed offload bundle (CCOB v1-v3, zlib or zstd) header and
   stream, with a small output cap so lying sizes and bombs are refused (offload.h) */
#include <stdint.h>
#include <stdlib.h>

#include "offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct ccobhdr h;
	unsigned char *out = NULL;
	uint64_t used = 0;
	char err[256];

	if (off_ccobhdr(p, n, 0, &h, err, sizeof err) < 0)
		return 0;
	if (off_ccobinflate(p, n, 0, &h, 1 << 20, &out, &used, err, sizeof err) == 0) {
		if (used > n || h.raw > (1 << 20))
			abort();
		if (h.raw)
			(void)*(volatile unsigned char *)&out[h.raw - 1];
	}
	free(out);
	return 0;
}
