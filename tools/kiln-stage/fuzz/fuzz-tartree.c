/* libFuzzer target: unpack's link resolution (tartree.c). The input is an archive's
   members, one a line: "D name" a folder, "F name" a file, "L name<TAB>target" a link.
   Whatever tt_check accepts must resolve, link by link, to a path inside the tree
   (relative, normalized: no empty, "." or ".." part) or to nothing; a refusal is one
   reason; nothing leaks or reads out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tartree.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

/* is r a normalized tree-relative path ("" for the top) */
static int
clean(const char *r)
{
	const char *s;
	size_t k;

	if (!*r)
		return 1;
	if (r[0] == '/' || r[strlen(r) - 1] == '/')
		return 0;
	for (s = r; *s; s += k + (s[k] == '/')) {
		k = strcspn(s, "/");
		if (k == 0 || (k == 1 && s[0] == '.') || (k == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
	}
	return 1;
}

/* add one "K name[\ttarget]" line; refusals are fine */
static void
addline(struct tartree *t, char *line)
{
	char *why = NULL, *tab;
	int kind;

	if (strlen(line) < 2 || line[1] != ' ')
		return;
	kind = line[0] == 'D' ? TT_DIR : line[0] == 'F' ? TT_FILE : line[0] == 'L' ? TT_LINK : -1;
	if (kind < 0)
		return;
	tab = strchr(line + 2, '\t');
	if (tab)
		*tab++ = 0;
	if (kind == TT_LINK && !tab)
		return;
	if (tt_add(t, line + 2, kind, kind == TT_LINK ? tab : NULL, &why) < 0) {
		if (!why || !*why)
			abort();
		free(why);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct tartree t = {0};
	char *s = xmalloc(n + 1), *line, *save = NULL, *why = NULL, *res;
	size_t i;
	int r;

	memcpy(s, p, n);
	s[n] = 0;
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		addline(&t, line);
	if (tt_check(&t, &why) < 0) {
		if (!why || !*why)
			abort();
		free(why);
	} else {
		for (i = 0; i < t.n; i++) {
			if (t.v[i].kind != TT_LINK)
				continue;
			why = NULL;
			r = tt_resolve(&t, t.v[i].name, &res, &why);
			if (r < 0 || (r == 0 && !clean(res)))
				abort();   /* accepted, yet it leaves the tree */
			if (r == 0)
				free(res);
		}
	}
	tt_free(&t);
	free(s);
	return 0;
}
