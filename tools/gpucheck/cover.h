/* gpucheck cover: the coverage rules, separate from printing so tests can call them */
#ifndef GPUCHECK_COVER_H
#define GPUCHECK_COVER_H

#include <stddef.h>

#include "gpucheck.h"

/* how an entry serves a device, best first */
enum how { COV_NATIVE, COV_GENERIC, COV_PTX, COV_NONE };

/* the rule by which an NVIDIA module runs, or does not need to (nvrule.c) */
enum nvrule { NVR_NONE, NVR_CUBIN, NVR_PTX, NVR_ARCH, NVR_FAMILY, NVR_STUB, NVR_RELOC, NVR_RELINK,
              NVR_GATED };
/* what an NVIDIA fatbin is to the runtime */
enum nvmod {
	NVM_MODULE,   /* a module of its own: loaded when one of its kernels is launched */
	NVM_STUB,     /* nvcc's device-link cubin without any function: never needed */
	NVM_RELOC,    /* -rdc: an object's relocatable code, input of the device link */
	NVM_LINKED    /* -rdc: the device-linked module */
};

/* what one file's bundles give one device */
struct fileverdict {
	size_t bundles;      /* bundles with code for the device's vendor */
	size_t native, generic, ptx, missing;
	size_t gated;        /* NVIDIA modules with only 'a'/'f' code of another arch */
	size_t bad[3];       /* the first bundles (indexes) with no usable entry */
	const char *via;     /* a generic or PTX target used, if any */
	/* set by cover_judge: the file's verdict under the rule for its kind */
	int covered;
	int warning;         /* not covered, but only warned about (an NVIDIA library) */
	int vendor;          /* an NVIDIA redistributable library */
	const char *rule;    /* the rule that decided, in words */
	char *why;           /* kpack: the archive picked, or what the loader misses
	                        (allocated; freed by cover_judge's next call on it) */
	unsigned char *mrule; /* NVIDIA: the enum nvrule of each bundle (allocated), or NULL */
	size_t stubs;        /* NVIDIA: device-link stubs and -rdc inputs, not judged */
};

/* "sm_86" / "compute_90" / "sm_90a": the number and suffix; returns 0 or -1 */
int nv_smnum(const char *t, unsigned *num, char *suffix);
/* How NVIDIA entry e serves dev (sm_90): as a cubin (COV_NATIVE), as PTX the driver
   compiles (COV_PTX) or not at all; *why receives the rule that decided */
enum how nv_entry(const struct offentry *e, const char *dev, enum nvrule *why);
/* what NVIDIA bundle b of l is to the runtime */
enum nvmod nv_module(const struct offlist *l, size_t b);
/* For an -rdc linked file whose linked cubin does not run on dev: COV_PTX if every
   relocatable module has PTX the driver can compile for dev (the runtime JIT-links
   them), else COV_NONE */
enum how nv_relink(const struct offlist *l, const char *dev);
/* the rule in words */
const char *nv_rulename(enum nvrule r);

/* true for sm_NN / compute_NN names */
int is_nvidia_target(const char *t);
/* How entry e serves device target dev (gfx1151, gfx90a:xnack+, sm_90): natively (same
   processor, features agreeing; for NVIDIA a cubin of the same major and no newer minor),
   through a generic target of its family (code object v6), as PTX the driver JITs, or
   not at all. xnack: the device runs with XNACK on (HSA_XNACK=1). */
enum how entry_covers(const struct offentry *e, const char *dev, int xnack);
/* the archives the kpack loader opens for one library and device, in its order */
struct kpplan {
	char arch[2][128];   /* what the HIP runtime asks for: the ISA, its generic target */
	size_t narch;
	int *ar;             /* the usable archives (indexes into the scanset's) */
	size_t nar;
	char *skipped;       /* the first archive skipped as bad, and why (allocated) */
	int override;        /* a non-empty ROCM_KPACK_PATH replaced the search paths */
	int disabled;        /* ROCM_KPACK_DISABLE */
};
/* Open the archives library f's loader opens for dev (and only those), in its order */
void kp_plan(struct scanset *s, const struct scanned *f, const char *dev, int xnack, struct kpplan *pl);
/* release a plan */
void kp_planfree(struct kpplan *pl);
/* How the kpack loader serves HIPK wrapper b of library f under plan pl: COV_NATIVE when
   an archive it tries holds the wrapper's kernel and it inflates right (the newer loader
   tries every archive listing a compatible target; s->kpfirst only the first), else
   COV_NONE; why (emptied first) receives the archive used, or what is missing or wrong. */
enum how kp_cover(struct scanset *s, const struct scanned *f, const struct kpplan *pl,
                  const struct offbundle *b, struct buf *why);
/* judge every bundle of one file for dev */
void cover_file(const struct offlist *l, const char *dev, int xnack, struct fileverdict *v);
/* one device being judged over every file: its target, whether it runs with XNACK on,
   and gok[] (one per library, -1 before a device's first file) */
struct judging {
	const char *dev;
	int xnack;
	signed char *gok;
};
/* Judge file k of s for j->dev under the rule its kind takes: AMD bundles each need code
   for it; a kpack'd library the archive the loader picks; code-object files of a kernel
   library one code object of their folder (the nearest "library" ancestor); NVIDIA code
   of your own a runnable module and no module that cannot run unless it is arch-gated
   ('a'/'f' for another GPU); an NVIDIA library one runnable module or a run-time linker
   (else a warning, never a failure). */
void cover_judge(struct scanset *s, size_t k, struct judging *j, struct fileverdict *v);
/* Give each code-object file its library (s->f[k].cog, s->cogname): the nearest folder
   named "library" above it, else its own folder. cover_judge needs it, and gok[] (one
   per library, -1 before a device's first file) to remember each library's verdict. */
void cover_groups(struct scanset *s);
/* release what cover_judge allocated in v */
void cover_free(struct fileverdict *v);
/* A processor of dev's ISA family (so the same wave size) whose code every relevant
   bundle of every file carries natively: the target HSA_OVERRIDE_GFX_VERSION can name.
   The family's first member is preferred. Returns 0 and fills proc, or -1. */
int cover_override(const struct scanset *s, const char *dev, char *proc, size_t len);

#endif
