/* GPU code containers inside ELF files: clang offload bundles (plain and compressed CCOB
   v1-v3), -fgpu-rdc bundle sections, and NVIDIA fatbins. Read-only and bounds-checked:
   every size and offset is checked against the bytes given; errors name the offset. */
#ifndef KILN_OFFLOAD_H
#define KILN_OFFLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "elffile.h"

/* what one entry carries */
enum offkind {
	OFF_HOST,      /* the host part of a bundle (usually empty) */
	OFF_AMDGCN,    /* an AMDGPU code object (ELF) */
	OFF_AMDGCN_BC, /* AMDGPU LLVM bitcode (-fgpu-rdc objects) */
	OFF_NV_SASS,   /* an NVIDIA cubin for one sm */
	OFF_NV_PTX,    /* NVIDIA PTX that the driver can JIT */
	OFF_OTHER      /* another triple or kind, kept by its id */
};

/* how a bundle is stored */
enum offfmt {
	OFFB_CLANG,    /* __CLANG_OFFLOAD_BUNDLE__ in .hip_fatbin (or a raw bundle file) */
	OFFB_CCOB,     /* compressed bundle (CCOB) in .hip_fatbin */
	OFFB_RDC,      /* __CLANG_OFFLOAD_BUNDLE__<id> sections of an -fgpu-rdc object */
	OFFB_NVFATBIN, /* an NVIDIA fatbin container in .nv_fatbin / __nv_relfatbin */
	OFFB_CODEOBJ,  /* a file that is itself one AMDGPU code object (.co, .hsaco) */
	OFFB_KPACK     /* a HIPK wrapper: its code lives in .kpack archives (filled by the
	                  caller, which reads the archives; see kpack.h) */
};

/* one entry of a bundle */
struct offentry {
	enum offkind kind;
	char id[160];     /* the bundle entry id as stored, or "sm_90"/"compute_90" for NVIDIA */
	char target[96];  /* processor and features: "gfx90a:xnack-", "gfx11-generic", "sm_90" */
	int cov;          /* AMDGPU code object version (2-6) from the code object, 0 unknown */
	int genericver;   /* AMDGPU generic version of a v6 generic code object, 0 none */
	uint64_t off;     /* payload offset: in the file, or in the decompressed bundle */
	uint64_t size;    /* payload size */
	int archive;      /* OFFB_KPACK: the caller's index of the archive holding it */
	int nofunc;       /* OFF_NV_SASS: an uncompressed cubin with no function symbol (nvcc's
	                     device-link stub of a whole-program build): nothing to load */
};

/* one bundle or fatbin container */
struct offbundle {
	enum offfmt fmt;
	char section[64];     /* the ELF section it was found in (truncated if longer) */
	uint64_t off, size;   /* where it lies in the file */
	int ccobver, method;  /* CCOB version (1-3) and method (0 zlib, 1 zstd); 0 otherwise */
	uint64_t rawsize;     /* decompressed size of a CCOB */
	size_t first, n;      /* its entries: l->e[first .. first+n) */
	uint32_t coindex;     /* OFFB_KPACK: the wrapper's co_index (the archive key's #N) */
};

/* everything found in one file */
struct offlist {
	struct offbundle *b;
	size_t nb, capb;
	struct offentry *e;
	size_t ne, cape;
	int jitlink;          /* NVIDIA code that links at run time: DT_NEEDED names
	                         libnvJitLink or libnvrtc */
	uint32_t *hipk;       /* co_index of each HIPK wrapper in .hipFatBinSegment */
	size_t nhipk;
	uint64_t refoff, refsize; /* the .rocm_kpack_ref section (file offset, size); 0 if none */
};

/* limits the parser keeps */
struct offopts {
	uint64_t maxraw;   /* largest decompressed CCOB accepted (0 = OFF_MAXRAW) */
};
#define OFF_MAXRAW ((uint64_t)4 << 30)

/* bytes to parse: p[0..n), which lie at offset base in the file (for messages and
   recorded offsets), in the section named sec */
struct offbytes {
	const unsigned char *p;
	size_t n;
	uint64_t base;
	const char *sec;
};

/* Parse an uncompressed clang offload bundle at in->p and append it and its entries to
   l. *end receives the bundle's length (end of its last entry). Returns 0, or -1 with
   *err set to a fresh message naming the offset. */
int off_bundle(const struct offbytes *in, struct offlist *l, uint64_t *end, char **err);

/* the fields of a CCOB header */
struct ccobhdr {
	int version, method;
	uint64_t total;    /* whole CCOB incl. header; 0 for v1 (not recorded) */
	uint64_t raw;      /* decompressed size */
	uint64_t hash;
	size_t hdrlen;
};
/* Read a CCOB header at in->p; returns 0, or -1 with *err set */
int off_ccobhdr(const struct offbytes *in, struct ccobhdr *h, char **err);
/* a CCOB decompressed: raw (h->raw bytes, fresh) and the CCOB's length in the file
   (header + compressed stream) */
struct ccobdata {
	unsigned char *raw;
	uint64_t used;
};
/* Decompress the CCOB at in->p (in->n = its total size, or the bytes available for v1)
   into out, refusing more than maxraw bytes or a stream whose size differs from the
   header. Returns 0, or -1 with *err set (out->raw NULL). */
int off_ccobinflate(const struct offbytes *in, const struct ccobhdr *h, uint64_t maxraw,
                    struct ccobdata *out, char **err);

/* Walk a .hip_fatbin section: bundles and CCOBs one after another, each starting on a
   4096-byte boundary, zero padded. Returns 0, or -1 with *err set. */
int off_hipfatbin(const struct offbytes *in, struct offlist *l, const struct offopts *o,
                  char **err);

/* Walk NVIDIA fatbin containers (magic 0xBA55ED50) laid one after another in in->p.
   Returns 0, or -1 with *err set. */
int off_nvfatbin(const struct offbytes *in, struct offlist *l, char **err);

/* Find every GPU code container of an ELF file (.hip_fatbin, __CLANG_OFFLOAD_BUNDLE__*
   sections, .nv_fatbin, __nv_relfatbin) and append them to l. Returns 0 (nothing found
   is not an error), or -1 with *err set. */
int off_scanelf(const struct elf *e, struct offlist *l, const struct offopts *o,
                char **err);

/* Read a file that is one AMDGPU code object (ELF64, e_machine EM_AMDGPU 0xe0): its
   target and features from e_flags, its code object version from EI_ABIVERSION, as one
   OFFB_CODEOBJ bundle of one entry. Returns 0, or -1 naming the bad header field. */
int off_codeobj(const unsigned char *p, size_t n, struct offlist *l, char **err);
/* The target id of AMDGPU e_flags for a code object of version cov (3 and up):
   "gfx90a:sramecc+:xnack-"; returns 0, or -1 for a machine value LLVM does not name. */
int off_amdgpu_target(uint32_t flags, int cov, char *buf, size_t len);

/* release the list's arrays and zero it */
void off_free(struct offlist *l);

/* the AMDGPU processor of a target id ("gfx90a" from "gfx90a:xnack-") into buf */
void off_processor(const char *target, char *buf, size_t len);
/* the setting of a feature in a target id: '+', '-', or 0 when not given */
int off_feature(const char *target, const char *feature);
/* a readable name of an entry kind */
const char *off_kindname(enum offkind k);

#endif
