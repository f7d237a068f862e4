/* hipify-wrap's state, paths, and the input listing */
#include <stdlib.h>

#include "hw.h"
#include "util.h"

struct hw g;
const char *const projname[] = {"generic", "torch", "vision"};

char *
spath(const char *name)
{
	return xasprintf("%s/%s", g.state, name);
}

char *
tpath(const char *rel)
{
	return xasprintf("%s/%s", g.srcdir, rel);
}

/* the files that are hipify's inputs now: tracked files (git) or everything (walk) */
void
inputs(struct flist *l, const struct flist *also)
{
	char *err = NULL;
	size_t i;

	if (g.git) {
		for (i = 0; i < g.tracked.n; i++)
			flist_add(l, g.tracked.v[i].path);
		for (i = 0; also && i < also->n; i++)
			if (also->v[i].kind == F_OUTPUT)
				flist_add(l, also->v[i].path);
		flist_sort(l);
	} else if (tree_walk(g.srcdir, g.statename, l, &err) < 0) {
		dien(EXIT_USAGE, "%s", err);
	}
}

void
hashlist(struct flist *l, const struct flist *cache)
{
	char *err = NULL;

	if (tree_hash(g.srcdir, l, cache, &err) < 0)
		dien(EXIT_USAGE, "%s", err);
}
