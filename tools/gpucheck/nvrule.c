/* NVIDIA modules: which of a file's fatbins the CUDA runtime loads, and by which rule an
   entry runs on a GPU. The rules, from NVIDIA's documentation:
   - CUDA Programming Guide, "Compute Capability and Streaming Multiprocessor Versions"
     and "Binary Compatibility" (docs.nvidia.com/cuda/cuda-programming-guide,
     01-introduction/cuda-platform): a cubin for X.y runs on X.z with z >= y, never on
     another major;
   - the same, "PTX Compatibility" and "Just-in-Time Compilation": PTX for compute_XY is
     compiled by the driver at load time for any GPU of compute capability >= X.Y;
   - nvcc's "GPU Feature List" (docs.nvidia.com/cuda/cuda-compiler-driver-nvcc, CUDA
     12.9+): arch-specific targets ("sm_90a", "compute_90a") run only on exactly that
     compute capability; family-specific ones ("sm_100f", CUDA 12.9) on the GPUs of the
     same major whose minor is not lower.
   What nvcc writes, seen with nvcc 13.0 (-dryrun and the fatbins themselves):
   - every link by nvcc runs `nvlink --register-link-binaries` and embeds its cubin as a
     fatbin of its own; without -rdc that cubin holds no function (a stub): nothing in it
     is ever needed, and the object's own fatbin (cubin + PTX) is what loads;
   - with -rdc the objects' fatbins go to __nv_relfatbin (relocatable cubins and PTX, the
     device linker's input) and the device-linked cubin to .nv_fatbin: that one holds the
     kernels, for the sm the link named; for another GPU the runtime JIT-links the
     objects' PTX (tests/real/gpu-oracle.sh launches both shapes on the GPU). */
#include "gpucheck.h"
#include "cover.h"

#include <stdlib.h>
#include <string.h>

/* "sm_86" / "compute_90" / "sm_90a": the number and suffix; returns 0 or -1 */
int
nv_smnum(const char *t, unsigned *num, char *suffix)
{
	const char *p;
	char *end;

	if (startswith(t, "sm_"))
		p = t + 3;
	else if (startswith(t, "compute_"))
		p = t + 8;
	else
		return -1;
	*num = (unsigned)strtoul(p, &end, 10);
	if (end == p)
		return -1;
	*suffix = *end;
	return 0;
}

enum how
nv_entry(const struct offentry *e, const char *dev, enum nvrule *why)
{
	unsigned dn, en;
	char ds, es;
	int same = 0;

	*why = NVR_NONE;
	if (nv_smnum(dev, &dn, &ds) < 0 || nv_smnum(e->target, &en, &es) < 0 ||
	    (e->kind != OFF_NV_SASS && e->kind != OFF_NV_PTX))
		return COV_NONE;
	if (es == 'a') {
		*why = NVR_ARCH;
		same = en == dn;
	} else if (es == 'f' || e->kind == OFF_NV_SASS) {
		*why = es == 'f' ? NVR_FAMILY : NVR_CUBIN;
		same = en / 10 == dn / 10 && en <= dn;
	} else {
		*why = NVR_PTX;
		same = en <= dn;
	}
	if (!same) {
		*why = NVR_NONE;
		return COV_NONE;
	}
	return e->kind == OFF_NV_SASS ? COV_NATIVE : COV_PTX;
}

/* true if bundle b has an NVIDIA entry */
static int
nvbundle(const struct offlist *l, size_t b)
{
	size_t j;

	for (j = l->b[b].first; j < l->b[b].first + l->b[b].n; j++)
		if (l->e[j].kind == OFF_NV_SASS || l->e[j].kind == OFF_NV_PTX)
			return 1;
	return 0;
}

/* true if the file was device-linked with -rdc: relocatable modules beside linked ones */
static int
rdclinked(const struct offlist *l)
{
	size_t i;
	int rel = 0, lnk = 0;

	for (i = 0; i < l->nb; i++) {
		if (l->b[i].fmt != OFFB_NVFATBIN || !nvbundle(l, i))
			continue;
		if (strcmp(l->b[i].section, "__nv_relfatbin") == 0)
			rel = 1;
		else
			lnk = 1;
	}
	return rel && lnk;
}

enum nvmod
nv_module(const struct offlist *l, size_t b)
{
	size_t j;
	int stub = 1;

	for (j = l->b[b].first; j < l->b[b].first + l->b[b].n; j++) {
		if (l->e[j].kind == OFF_NV_PTX || (l->e[j].kind == OFF_NV_SASS && !l->e[j].nofunc))
			stub = 0;
	}
	if (stub)
		return NVM_STUB;
	if (rdclinked(l))
		return strcmp(l->b[b].section, "__nv_relfatbin") == 0 ? NVM_RELOC : NVM_LINKED;
	return NVM_MODULE;
}

enum how
nv_relink(const struct offlist *l, const char *dev)
{
	size_t i, j;
	enum nvrule r;
	int any = 0, ok;

	for (i = 0; i < l->nb; i++) {
		if (nv_module(l, i) != NVM_RELOC)
			continue;
		ok = 0;
		for (j = l->b[i].first; j < l->b[i].first + l->b[i].n && !ok; j++)
			ok = l->e[j].kind == OFF_NV_PTX && nv_entry(&l->e[j], dev, &r) == COV_PTX;
		if (!ok)
			return COV_NONE;
		any = 1;
	}
	return any ? COV_PTX : COV_NONE;
}

const char *
nv_rulename(enum nvrule r)
{
	switch (r) {
	case NVR_CUBIN: return "cubin: same major, minor not above the GPU's";
	case NVR_PTX: return "PTX: the driver JIT-compiles it for this or a newer GPU";
	case NVR_ARCH: return "arch-specific 'a': only on exactly its compute capability";
	case NVR_FAMILY: return "family-specific 'f': same major, minor not above the GPU's";
	case NVR_STUB: return "device-link stub: a cubin with no function, never needed";
	case NVR_RELOC: return "-rdc object code: the device linker's input, not loaded itself";
	case NVR_RELINK: return "-rdc: the linked cubin does not run; the runtime JIT-links the objects' PTX";
	case NVR_GATED: return "arch-specific for another GPU: never loaded here";
	default: return "no cubin or PTX for this GPU";
	}
}
