/* kpack: GPU code moved out of a library into .kpack archives (ROCm's TheRock, 2026).
   The format, as published in ROCm's rocm-systems shared/kpack/ (earlier ROCm/rocm-kpack):
   - the library's .hipFatBinSegment wrappers carry the magic HIPK instead of HIPF, and
     reserved1 holds the wrapper's co_index (python/rocm_kpack/elf/kpack_transform.py);
   - its .rocm_kpack_ref section is msgpack {"kernel_name": str, "kpack_search_paths":
     [str, ...]}, paths relative to the library's folder, "@GFXARCH@" standing for a target
     (runtime/src/loader.cpp, parse_hipk_metadata);
   - an archive is "KPAK", u32 version 1, u64 offset of a msgpack table of contents that
     runs to the end of the file: gfx_arches, compression_scheme ("none" with blobs
     [{offset, size}], or "zstd-per-kernel" with zstd_offset/zstd_size over a blob of u32
     count, then u32 size + one zstd frame per kernel), and toc {"<kernel>#<co_index>":
     {arch: {type, ordinal, original_size}}} (docs/multi_arch_packaging_with_kpack.md,
     runtime/src/toc_parser.cpp, compression.cpp).
   msgpack is read by msgpack-c after a bounds walk of our own (every count fits the bytes
   that follow, nesting at most KP_MAXDEPTH), so hostile input costs bounded memory. */
#ifndef KILN_KPACK_H
#define KILN_KPACK_H

#include <stddef.h>
#include <stdint.h>

#define KP_MAXDEPTH 16                    /* msgpack nesting accepted */
#define KP_MAXTOC ((uint64_t)64 << 20)    /* largest table of contents read */
#define KP_MAXOBJECTS ((uint64_t)2 << 20) /* msgpack objects in one table (msgpack-c holds
                                             24 bytes each: 48 MiB at most) */
#define KP_MAXTARGETS 16                  /* compatible targets of one ISA */

/* a library's reference to its archives */
struct kpref {
	char *kernel;      /* kernel_name: the archive key is kernel + "#" + co_index */
	char **path;       /* kpack_search_paths, as written */
	size_t npath;
};

/* one kernel of an archive */
struct kpentry {
	char *key;         /* "lib/libfoo.so#3" */
	char *arch;        /* "gfx90a:xnack-" */
	uint32_t ordinal;
	uint64_t size;     /* original_size */
};

/* an archive's table of contents */
struct kpack {
	int zstd;          /* compression: 1 zstd-per-kernel, 0 none */
	char **arch;       /* gfx_arches */
	size_t narch;
	struct kpentry *e; /* sorted by key, then arch */
	size_t ne;
};

/* Parse a .rocm_kpack_ref section of n bytes. A search path that is empty, absolute,
   or uses ".." anywhere but its first two components is refused. Returns 0, or -1
   with the field that is wrong in err. */
int kpack_ref(const unsigned char *p, size_t n, struct kpref *r, char *err, size_t errlen);
/* release a reference */
void kpack_reffree(struct kpref *r);

/* Read an archive of n bytes: header, table of contents, and every entry's bytes
   (a blob or a zstd frame) checked to lie inside the file; a zstd frame must declare
   (or, if it declares nothing, inflate to) exactly its original_size, at most maxraw
   bytes. Returns 0, or -1 naming the field and offset in err. */
int kpack_read(const unsigned char *p, size_t n, uint64_t maxraw, struct kpack *k,
               char *err, size_t errlen);
/* release an archive's table */
void kpack_free(struct kpack *k);
/* true if the archive lists arch among gfx_arches */
int kpack_hasarch(const struct kpack *k, const char *arch);
/* the entry of key for arch, or NULL */
const struct kpentry *kpack_find(const struct kpack *k, const char *key, const char *arch);

/* The targets an agent of ISA isa ("gfx90a:sramecc+:xnack-") loads, most specific first:
   the processor with every subset of its features, in the order the loader tries them
   (runtime/src/isa_target_match.h, for_each_compatible_target). Returns the count. */
size_t kpack_targets(const char *isa, char out[][96], size_t max);

/* Check that p[0..n) starts with one msgpack object whose every container count fits
   the bytes that follow, nested at most maxdepth deep, KP_MAXOBJECTS objects at most;
   *used receives its length.
   Returns 0, or -1 with the offset in err. */
int kpack_mpcheck(const unsigned char *p, size_t n, int maxdepth, size_t *used,
                  char *err, size_t errlen);

#endif
