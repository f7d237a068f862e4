/* what a pinned vLLM tree says about its own build, read before hours of compiling: the
   GPU targets its CMakeLists.txt keeps, and the tools its build needs (the Rust frontend
   of vLLM >= 0.22, a cmake below 4). Read from a checkout (the vllm.check stage) or
   from a git mirror at the pinned commit (configure) through one reader. */
#ifndef KILN_STAGE_VLLM_H
#define KILN_STAGE_VLLM_H

#include <stddef.h>

#include "arch.h"

/* a tree: get(ctx, PATH) returns the text of the file PATH (relative to the tree's
   top), fresh, or NULL when it has none */
struct vtree {
	char *(*get)(void *ctx, const char *path);
	void *ctx;
	const char *name;   /* for messages: "vLLM v0.33.0" */
};

/* The --arch targets (arch, n of them, backend b) that the tree's CMakeLists.txt would
   drop. Returns NULL when it keeps every one (or b is cpu), else a fresh one-line
   message naming the first dropped target and the targets the tree supports, or saying
   that the tree has no supported-arch list kiln recognises. */
char *vllm_archcheck(const struct vtree *t, enum backend b, char *const *arch, size_t n);

/* The tools the tree's build needs that PATH (NULL: $PATH) lacks, for the requirement
   flavour (rocm, cuda, cpu). *needs (fresh) says in words what it needs. Returns NULL
   when nothing lacks, else a fresh one-line message naming each missing tool. */
char *vllm_toolcheck(const struct vtree *t, const char *flavour, const char *path, char **needs);

/* kiln-stage vllm-check: the verb (argv[0] is the verb) */
int vllmcheck_main(int argc, char **argv);

#endif
