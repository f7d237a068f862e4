/* hipify-wrap's state, paths, and the input listing */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* the git index's identity (inode, size, mtime) as text, or NULL when there is none;
   git rewrites the index by rename, so a new index has a new identity */
char *
indexid(void)
{
	struct stat st;
	char *p = tpath(".git/index");
	int r = lstat(p, &st);

	free(p);
	if (r < 0 || !S_ISREG(st.st_mode))
		return NULL;
	return xasprintf("%llu:%llu:%lld.%09ld", (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
	                 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* The tracked files without libgit2: when the stamp says the git index is the one the
   manifest was made with (same identity) and that every tracked file was an input then
   (TRACKED equals the manifest's inputs and rewritten files), the tracked files are the
   manifest's non-output entries. Fills g.tracked and returns 1, else 0. */
int
tracked_from_stamp(void)
{
	const char *was = g.havestamp ? kv_get(&g.stamp, "GIT_INDEX") : NULL;
	const char *n = g.havestamp ? kv_get(&g.stamp, "TRACKED") : NULL;
	char *now, *end;
	unsigned long long want;
	size_t i, have = 0;
	int same;

	if (!was || !n || !*n)
		return 0;
	want = strtoull(n, &end, 10);
	if (*end)
		return 0;
	for (i = 0; i < g.man.n; i++)
		if (g.man.v[i].kind != F_OUTPUT)
			have++;
	if (have != want)
		return 0;
	now = indexid();
	same = now && strcmp(now, was) == 0;
	free(now);
	if (!same)
		return 0;
	for (i = 0; i < g.man.n; i++)
		if (g.man.v[i].kind != F_OUTPUT)
			flist_add(&g.tracked, g.man.v[i].path);
	flist_sort(&g.tracked);
	return 1;
}
