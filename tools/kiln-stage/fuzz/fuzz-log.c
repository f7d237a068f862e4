/* libFuzzer target: a stage's log as kiln-stage run reads it, while the stage runs
   (progress.c's inner_parse of each line, and the line it formats) and after it failed
   (errscan.c's first real error and failsummary's safe tail). Any bytes: binary
   garbage, escape sequences, lines of any length, no final newline. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "errscan.h"
#include "fuzz/fuzzfile.h"
#include "progress.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	const char *s = (const char *)p, *e = s + n, *nl;
	struct inner in = {0};
	struct errfound ef;
	struct buf b = {0};
	char *path;
	FILE *null;

	for (; s < e; s = nl + 1) {
		if (!(nl = memchr(s, '\n', (size_t)(e - s))))
			nl = e;
		inner_parse(&in, s, (size_t)(nl - s));
		bufreset(&b);
		inner_format(&in, &b);
		/* what is shown holds no control byte */
		for (size_t i = 0; i < b.len; i++)
			if ((unsigned char)b.s[i] < 0x20 || b.s[i] == 0x7f)
				__builtin_trap();
	}
	buffree(&b);
	fuzz_put(fuzz_dir("log"), "stage.log", p, n);
	path = xasprintf("%s/stage.log", fuzz_dir("log"));
	if (errscan(path, &ef) == 1 && (!ef.text || strchr(ef.text, '\033')))
		__builtin_trap();
	errfound_free(&ef);
	if ((null = fopen("/dev/null", "w"))) {
		failsummary(null, "fuzz", path, 30);
		fclose(null);
	}
	free(path);
	return 0;
}
