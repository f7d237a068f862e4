/* libFuzzer target: PEP 427 wheel file names and PEP 425 tag sets (wheelname.h) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wheelname.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct wheelname w;
	struct tagset ts;
	struct buf b = {0};
	const char *why;
	char *s;

	if (memchr(p, 0, n))
		return 0;
	s = xstrndup((const char *)p, n);
	if (wheelname_parse(&w, s, 1, &why) == 0) {
		struct buf c = {0};

		canonname(&b, w.rawname, strlen(w.rawname));
		canonname(&c, b.s, b.len);
		if (strcmp(b.s, c.s) != 0)
			abort(); /* canonicalizing is idempotent */
		buffree(&c);
		wheelname_free(&w);
	}
	if (wheeltags_parse(s, 0, &ts, &why) == 0) {
		free(ts.tags);
		free(ts.mem);
	}
	free(s);
	buffree(&b);
	return 0;
}
