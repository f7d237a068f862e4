/* libFuzzer target: zip central directory, ZIP64 records and local headers as fatwheel
   and wheelpick read them (zip.h), and every member's content through its CRC check */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

static int
sink(void *ctx, const void *p, size_t n)
{
	uint64_t *total = ctx;

	(void)p;
	*total += n;
	return *total > (64u << 20); /* bound the work per input */
}

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	static char path[64];
	struct zipin z;
	uint64_t total = 0;
	char err[512];
	FILE *f;
	size_t i;

	if (!path[0])
		snprintf(path, sizeof path, "/tmp/kiln-fuzz-zip.%d", (int)getpid());
	f = fopen(path, "wb");
	if (!f)
		abort();
	fwrite(p, 1, n, f);
	fclose(f);
	if (zip_open(&z, path, err, sizeof err) == 0) {
		for (i = 0; i < z.n; i++) {
			if (!zip_safename(z.e[i].name))
				abort(); /* zip_open must refuse unsafe names */
			if (zip_read(&z, &z.e[i], sink, &total, err, sizeof err) > 0)
				break;
		}
		zip_close(&z);
	}
	return 0;
}
