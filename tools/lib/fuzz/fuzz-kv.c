/* libFuzzer target: KEY=VALUE profile and pin files (kv.h) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct kvfile f;
	char *err = NULL;
	size_t i;

	if (kv_parse(&f, "fuzz.env", (const char *)p, n, &err) == 0) {
		/* every parsed pair is a valid key with a value the getter finds */
		for (i = 0; i < f.n; i++)
			if (!f.v[i].key[0] || !kv_get(&f, f.v[i].key))
				abort();
	} else if (!err || strncmp(err, "fuzz.env:", 9) != 0) {
		abort(); /* every error names the file */
	}
	free(err);
	kv_free(&f);
	return 0;
}
