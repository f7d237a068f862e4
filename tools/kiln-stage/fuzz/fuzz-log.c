/* libFuzzer target: a stage's log as kiln-stage run reads it, while the stage runs
   (progress.c's inner_parse of each line, and the line it formats) and after it failed
   (errscan.c's first real error and failsummary's safe tail). Any bytes: binary
   garbage, escape sequences (7-bit, raw 8-bit and UTF-8 C1), lines of any length, no
   final newline. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "errscan.h"
#include "fuzz/fuzzfile.h"
#include "json.h"
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
		/* what is shown holds no control byte: C0, DEL, C1 (UTF-8 C2 80-9F), and
		   nothing that is not UTF-8 (a raw 8-bit C1) */
		for (size_t i = 0; i < b.len; i++)
			if ((unsigned char)b.s[i] < 0x20 || b.s[i] == 0x7f ||
			    ((unsigned char)b.s[i] == 0xc2 && i + 1 < b.len && (unsigned char)b.s[i + 1] < 0xa0))
				__builtin_trap();
		if (utf8_badat(b.s ? b.s : "", b.len) != b.len)
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
