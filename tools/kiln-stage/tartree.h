/* the tree an archive declares, kept as names: what each member is (a folder, a file or a
   link and its target), so that every link is resolved as the kernel will resolve it in
   the unpacked folder, through the links made before it, before any link is made */
#ifndef KILN_TARTREE_H
#define KILN_TARTREE_H

#include <stddef.h>

enum { TT_DIR, TT_FILE, TT_LINK };

/* the longest link target a link can hold (PATH_MAX - 1 on Linux) */
#define TT_MAXTARGET 4095
/* the most bytes of names and targets a tree keeps (the memory an archive may claim) */
#define TT_MAXBYTES ((size_t)64 << 20)

struct ttnode {
	char *name;      /* normalized: no empty, "." or ".." parts, no leading or trailing '/' */
	char *target;    /* TT_LINK: the target as written */
	int kind;
};

struct tartree {
	struct ttnode *v;
	size_t n, cap;
	size_t bytes;    /* names and targets kept */
	int sorted;
};

/* add a member (name relative, with no ".." part; target for TT_LINK). Returns 0, or -1
   with a fresh reason in *why: a target that is absolute, empty or longer than
   TT_MAXTARGET, or the names passing TT_MAXBYTES */
int tt_add(struct tartree *t, const char *name, int kind, const char *target, char **why);

/* check the whole tree: no member lies inside a link, and every link, followed through
   the links before and after it (at most 40 of them), stays inside the tree and ends at
   a file, a folder or nothing. Returns 0, or -1 with a fresh reason naming the member */
int tt_check(struct tartree *t, char **why);

/* resolve name's link target as the kernel would: 0 with the tree-relative path it ends
   at in *res (fresh; "" for the top), 1 when it ends at nothing (a missing part, or a
   file used as a folder), -1 with a fresh reason in *why (it leaves the tree, or loops) */
int tt_resolve(struct tartree *t, const char *name, char **res, char **why);

void tt_free(struct tartree *t);

#endif
