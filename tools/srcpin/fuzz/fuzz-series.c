/* libFuzzer target: patch series files and the patches they name (srcpin's series.c),
   and each patch's text as srcpin routes it to submodules and hands it to libgit2.
   The input is split at the first "\n==\n": the series file before it, the text of
   the patch files it may name ("0001.patch", "a.patch") after it. */
#include <git2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srcpin.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

static char dir[64];

static void
put(const char *name, const void *p, size_t n)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "wb");

	if (!f)
		abort();
	fwrite(p, 1, n, f);
	fclose(f);
	free(path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	char *subs[] = {"third_party/gloo"};
	struct buf out[2] = {{0}, {0}};
	const uint8_t *sep = n >= 4 ? memmem(p, n, "\n==\n", 4) : NULL;
	const uint8_t *patch = sep ? sep + 4 : (const uint8_t *)"";
	size_t pn = sep ? n - (size_t)(patch - p) : 0, k;
	struct series s;
	char *err = NULL, *path;
	git_diff *d;

	if (!dir[0]) {
		git_libgit2_init();
		snprintf(dir, sizeof dir, "/tmp/kiln-fuzz-series.%d", (int)getpid());
		mkdir(dir, 0755);
	}
	put("series", p, sep ? (size_t)(sep - p) : n);
	put("0001.patch", patch, pn);
	put("a.patch", patch, pn);
	path = xasprintf("%s/series", dir);
	if (series_load(&s, path, &err) == 0) {
		if (strlen(s.digest) != 64)
			abort();
		series_free(&s);
	} else if (!err || !strstr(err, "series")) {
		abort(); /* errors name the series file */
	}
	free(err);
	free(path);
	err = NULL;
	if (!memchr(patch, 0, pn) && patch_split((const char *)patch, pn, subs, 1, out, &err) == 0) {
		for (k = 0; k < 2; k++) {
			if (out[k].len && git_diff_from_buffer(&d, out[k].s, out[k].len) == 0)
				git_diff_free(d);
		}
	}
	free(err);
	buffree(&out[0]);
	buffree(&out[1]);
	return 0;
}
