/* the target interpreter: what it is, and the wheel tags it accepts in priority order */
#ifndef WHEELPICK_TARGET_H
#define WHEELPICK_TARGET_H

#include <stddef.h>

#include "strv.h"
#include "wheelname.h"

/* where linux_<arch> goes among the Linux platforms */
enum tagorder {
	ORDER_PIP,        /* pip <= 26.2 (packaging <= 26.2): manylinux, musllinux, linux last */
	ORDER_PACKAGING,  /* packaging 26.3 sys_tags: linux_<arch> first */
};

/* what is known of the target interpreter */
struct target {
	char *python;      /* the interpreter as the user named it (NULL: none was run) */
	char *executable;  /* its sys.executable */
	char *impl;        /* short name: cp, pp, ... */
	int major, minor;  /* Python version; minor < 0 when only the major is known */
	char *nodot;       /* py_version_nodot ("313") */
	char *full;        /* "3.13.1" when an interpreter was asked */
	struct strv abis;  /* ABI tags, best first (cp313, or cp313d then cp313 ...) */
	struct strv plats; /* platform tags, best first */
	char *sysplat;     /* sysconfig.get_platform(), normalized ("linux_x86_64") */
	char *libc;        /* "glibc 2.36", "musl 1.2.4" or NULL */
	int threaded;      /* free-threaded build (abi ends in t) */
	enum tagorder order;
	struct strv tags;  /* every supported "py-abi-plat", best first */
	/* a hash index of tags: tag string -> rank */
	size_t *hidx;      /* open addressing over tags.v, (size_t)-1 empty */
	size_t hcap;
};

/* target.c: tag generation */

/* CPython tags as packaging's cpython_tags(version, abis, platforms) yields them */
void tags_cpython(struct strv *out, int major, int minor, const struct strv *abis,
                  const struct strv *plats);
/* packaging's compatible_tags(version, interpreter, platforms); interp may be NULL */
void tags_compatible(struct strv *out, int major, int minor, const char *interp,
                     const struct strv *plats);
/* packaging's generic_tags(interpreter, abis, platforms) ("none" added if missing) */
void tags_generic(struct strv *out, const char *interp, const struct strv *abis,
                  const struct strv *plats);
/* manylinux platforms for glibc major.minor and arch, newest first, with the legacy
   aliases (manylinux2014, manylinux2010, manylinux1) after their glibc version */
void plats_manylinux(struct strv *out, const char *arch, int major, int minor);
/* musllinux_major_minor.._major_0 for arch */
void plats_musllinux(struct strv *out, const char *arch, int major, int minor);
/* the C library versions of an interpreter: glibc and musl major.minor (major 0: none) */
struct libcver {
	int gmaj, gmin;
	int mmaj, mmin;
};
/* The Linux platform list for sysconfig platform linux_ARCH (normalized), a 32-bit
   interpreter (bits == 32), the C library versions lv, in the order. */
void plats_linux(struct strv *out, const char *sysplat, int bits, const struct libcver *lv,
                 enum tagorder order);
/* Expand one --platform value: manylinux_X_Y_ARCH (and manylinux2014/2010/1) gives every
   older manylinux of that arch, musllinux_X_Y_ARCH every older musllinux; others as is */
void plats_expand(struct strv *out, const char *plat);

/* query.c: asking the interpreter and this machine */

/* Ask the interpreter once (or read a cached answer keyed by its file; nocache skips
   the cache) and fill t (impl, version, abis, platforms). Returns 0, or -1 with a
   message in *err (caller frees). */
int target_query(struct target *t, const char *python, int nocache, char **err);
/* Fill the platforms from this machine (uname, glibc or musl) without a Python */
void target_localplats(struct target *t);
/* target.c again: the target's tag list */

/* Derive t->abis from an ABI list given by the user ("cp313" or "cp313t,abi3") */
void target_setabis(struct target *t, const char *list);
/* Compute t->tags (and the index) from what t holds */
void target_tags(struct target *t);
/* the rank (0 = best) of py-abi-plat, or -1 when the target does not accept it */
long target_rank(const struct target *t, const char *py, const char *abi, const char *plat);
/* release everything */
void target_free(struct target *t);

#endif
