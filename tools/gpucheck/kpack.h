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
#define KP_MAXREF 65536                   /* the loader parses at most 64 KiB of a
                                             .rocm_kpack_ref (loader.cpp, MAX_METADATA_SIZE) */

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
	uint64_t boff, bsize; /* scheme none: its blob as the table says */
};

/* an archive's table of contents, and what its zstd frames were found to hold */
struct kpack {
	int zstd;          /* compression: 1 zstd-per-kernel, 0 none */
	char **arch;       /* gfx_arches */
	size_t narch;
	struct kpentry *e; /* sorted by key, then arch */
	size_t ne;
	uint64_t tocoff;   /* where the table starts: blobs must end before it */
	uint32_t nframe;   /* zstd: the frames of the blob */
	uint64_t *foff;    /* each frame's offset in the file */
	uint32_t *fsz;     /* its compressed size */
	uint64_t *fwant;   /* the largest original_size an entry names it with */
	uint64_t *fgot;    /* what it inflated to once checked: bytes, or KP_UNCHECKED,
	                      KP_BADFRAME (not zstd, or more than fwant), KP_TRAILING */
	uint64_t maxraw;   /* the most bytes a frame may inflate to (kpack_read's maxraw) */
	void *zctx;        /* the zstd stream every frame of it goes through (one per archive) */
	unsigned char *zbuf; /* its fixed output buffer */
};
#define KP_UNCHECKED UINT64_MAX
#define KP_BADFRAME (UINT64_MAX - 1)
#define KP_TRAILING (UINT64_MAX - 2)

/* Parse a .rocm_kpack_ref section of n bytes (the first KP_MAXREF of them, as the loader
   reads it). A search path that is empty, absolute, or uses ".." anywhere but its first
   two components is refused; a path given twice is kept once, at its first place.
   Returns 0, or -1 with *err naming the field that is wrong. */
int kpack_ref(const unsigned char *p, size_t n, struct kpref *r, char **err);
/* release a reference */
void kpack_reffree(struct kpref *r);

/* Open an archive of n bytes as the loader's kpack_open does: header, table of contents,
   and the zstd blob's frame index (every frame inside the blob); no kernel is inflated.
   Returns 0, or -1 with *err naming the field and offset. maxraw is kept (k->maxraw) for
   kpack_check. */
int kpack_read(const unsigned char *p, size_t n, uint64_t maxraw, struct kpack *k, char **err);
/* Fetch entry e of k as the loader's kpack_get_kernel would, from the archive's bytes
   p[0..n): its ordinal names a blob inside the data (scheme none) or a zstd frame that
   inflates to exactly its original_size (at most k->maxraw bytes), nothing after it. Each
   frame is inflated once per archive, streamed into a fixed buffer (memory stays
   bounded whatever it claims), up to the largest size an entry names it with; p may be
   NULL once every frame was checked. Returns 0, or -1 with *err saying what is wrong. */
int kpack_check(struct kpack *k, const unsigned char *p, size_t n, const struct kpentry *e,
                char **err);
/* kpack_check every entry; the first failure's message. Returns 0 or -1. */
int kpack_checkall(struct kpack *k, const unsigned char *p, size_t n, char **err);
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
   Returns 0, or -1 with *err naming the offset. */
int kpack_mpcheck(const unsigned char *p, size_t n, int maxdepth, size_t *used, char **err);

#endif
