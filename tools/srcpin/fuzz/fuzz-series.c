/* libFuzzer target: patch series files and the patches they name (srcpin's series.c),
   and each patch's text as srcpin's splitter (split.c) routes it to submodules and hands
   it to libgit2: no path libgit2 reads from what the splitter passes on, and no submodule
   move, may leave the tree.
   The input is split at the first "\n==\n": the series file before it, the text of
   the patch files it may name ("0001.patch", "a.patch") after it. */
#include <git2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/fuzzfile.h"
#include "srcpin.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);
const char *__lsan_default_suppressions(void);

/* libgit2 1.5.1's patch parser leaks on some malformed headers (srcpin exits on those) */
const char *
__lsan_default_suppressions(void)
{
	return "leak:libgit2.so\n";
}

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	char *subs[] = {"third_party/gloo"};
	struct buf out[2] = {{0}, {0}};
	struct linkmoves mv = {0};
	const uint8_t *sep = n >= 4 ? memmem(p, n, "\n==\n", 4) : NULL;
	const uint8_t *patch = sep ? sep + 4 : (const uint8_t *)"";
	size_t pn = sep ? n - (size_t)(patch - p) : 0, k;
	struct series s;
	char *err = NULL, *path;
	git_diff *d;

	const char *dir = fuzz_dir("series");
	static int inited;

	if (!inited) {
		inited = 1;
		git_libgit2_init();
	}
	fuzz_put(dir, "series", p, sep ? (size_t)(sep - p) : n);
	fuzz_put(dir, "0001.patch", patch, pn);
	fuzz_put(dir, "a.patch", patch, pn);
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
	if (!memchr(patch, 0, pn) &&
	    patch_split((const char *)patch, pn, &(struct splitspec){subs, 1, NULL},
	                &(struct splitout){out, &mv}, &err) == 0) {
		for (k = 0; k < 2; k++) {
			if (out[k].len && git_diff_from_buffer(&d, out[k].s, out[k].len) == 0) {
				/* what the splitter passes on names no path outside the tree */
				for (size_t j = 0; j < git_diff_num_deltas(d); j++) {
					const git_diff_delta *dl = git_diff_get_delta(d, j);
					if ((dl->old_file.path && !patchpath_ok(dl->old_file.path)) ||
					    (dl->new_file.path && !patchpath_ok(dl->new_file.path)))
						abort();
				}
				git_diff_free(d);
			}
		}
		for (k = 0; k < mv.n; k++)
			if (!patchpath_ok(mv.v[k].path) || mv.v[k].repo > 1 ||
			    (!*mv.v[k].from && !*mv.v[k].to))
				abort();
	}
	free(err);
	buffree(&out[0]);
	buffree(&out[1]);
	linkmoves_free(&mv);
	return 0;
}
