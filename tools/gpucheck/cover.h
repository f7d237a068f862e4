/* gpucheck cover: the coverage rules, separate from printing so tests can call them */
#ifndef GPUCHECK_COVER_H
#define GPUCHECK_COVER_H

#include <stddef.h>

#include "gpucheck.h"

/* how an entry serves a device, best first */
enum how { COV_NATIVE, COV_GENERIC, COV_PTX, COV_NONE };

/* what one file's bundles give one device */
struct fileverdict {
	size_t bundles;      /* bundles with code for the device's vendor */
	size_t native, generic, ptx, missing;
	size_t bad[3];       /* the first bundles (indexes) with no usable entry */
	const char *via;     /* a generic or PTX target used, if any */
};

/* true for sm_NN / compute_NN names */
int is_nvidia_target(const char *t);
/* How entry e serves device target dev (gfx1151, gfx90a:xnack+, sm_90): natively (same
   processor, features agreeing; for NVIDIA a cubin of the same major and no newer minor),
   through a generic target of its family (code object v6), as PTX the driver JITs, or
   not at all. xnack: the device runs with XNACK on (HSA_XNACK=1). */
enum how entry_covers(const struct offentry *e, const char *dev, int xnack);
/* judge every bundle of one file for dev */
void cover_file(const struct offlist *l, const char *dev, int xnack, struct fileverdict *v);
/* A processor of dev's ISA family (so the same wave size) whose code every relevant
   bundle of every file carries natively: the target HSA_OVERRIDE_GFX_VERSION can name.
   The family's first member is preferred. Returns 0 and fills proc, or -1. */
int cover_override(const struct scanset *s, const char *dev, char *proc, size_t len);

#endif
