/* the GPU targets kiln knows: one table for configure's --arch, the stack graph and
   gpucheck's coverage and override rules */
#ifndef KILN_ARCH_H
#define KILN_ARCH_H

#include <stddef.h>

/* what a target compiles for */
enum backend { BACKEND_NONE, BACKEND_GFX, BACKEND_CUDA, BACKEND_CPU };

/* one AMD target: a processor, or a generic target that a whole family runs */
struct arch {
	const char *name;     /* gfx1151, gfx11-generic */
	const char *family;   /* gfx11: processors of one family share an ISA */
	const char *generic;  /* the family's generic target, or NULL (none exists) */
	int wave;             /* wavefront size: 64 or 32 */
	int isgeneric;        /* this row is the generic target itself */
	int build;            /* --arch may name it (0: known to gpucheck, not built for) */
};

/* the table, in order: every row */
extern const struct arch arch_table[];
extern const size_t arch_count;

/* the row of an AMD target name (a processor or a generic target), or NULL */
const struct arch *arch_find(const char *name);
/* the row of an AMD processor (gfx1151; not a generic target), or NULL */
const struct arch *arch_proc(const char *name);
/* the processors of one family in table order: the first after prev (NULL: the
   family's first, its base ISA), or NULL after the last */
const struct arch *arch_member(const char *family, const struct arch *prev);
/* the backend of a --arch word: gfx for a table name kiln builds for, cuda for
   sm_NN[a|f], cpu for "cpu", BACKEND_NONE for anything else (native is the caller's
   business) */
enum backend arch_backend(const char *name);
/* "gfx", "cuda", "cpu" (what env/arch/NAME.env and the key files call it) */
const char *backend_name(enum backend b);

/* Edit distance with transpositions between a and b (optimal string alignment). */
int editdist(const char *a, const char *b);
/* the closest of the n words to w (NULL entries skipped), at most maxd edits away,
   or NULL: the did-you-mean of every error about a name */
const char *closest(const char *w, const char *const *words, size_t n, int maxd);

#endif
