/* the one ROCm probe: what kiln knows of a ROCm installation in a folder (its layout, its
   version, where its parts are), for configure (kiln-stage rocm-probe), the generator and
   the stage steps (ninja/steps/lib/rocm.sh) alike */
#ifndef KILN_STAGE_ROCMPROBE_H
#define KILN_STAGE_ROCMPROBE_H

#include "util.h"

/* a ROCm folder, probed; every path is fresh (or NULL: not there) */
struct rocmprobe {
	int found;           /* bin/hipcc or llvm/bin/clang is there: a ROCm */
	const char *layout;  /* in words: "/opt/rocm's layout", "TheRock's layout", ... */
	char *hipcc;         /* DIR/bin/hipcc */
	char *clang;         /* DIR/llvm/bin/clang (/opt/rocm, TheRock) */
	char *libdir;        /* the folder of the HIP runtime (libamdhip64.so) */
	char *cmakedir;      /* the folder of HIP's CMake config (hip-config.cmake) */
	char *devlib;        /* the folder of the device libraries (ockl.bc) */
	char *version;       /* .info/version, TheRock's manifest, or HIP's CMake version */
};

/* probe dir into r; returns 0 when it is a ROCm (r->found), else -1 (r still filled with
   what is there) */
int rocm_probe(const char *dir, struct rocmprobe *r);
/* the device libraries the HIP compiler cc (NULL: r->clang) compiles against with
   ROCM_PATH=dir: dir/amdgcn/bitcode when they are there (clang's own choice), else those
   in cc's resource folder (cc -print-resource-dir: amdgcn/bitcode, lib/amdgcn/bitcode:
   a distribution's clang), else r->devlib; fresh, or NULL when there are none */
char *rocm_ccdevlib(const char *dir, const struct rocmprobe *r, const char *cc);
/* the probe in one line, as configure says it ("ROCm 6.4.1, /opt/rocm's layout: hipcc
   ..., HIP runtime in ..., HIP CMake config ..., device libraries ..."), appended to b */
void rocm_describe(const char *dir, const struct rocmprobe *r, struct buf *b);
/* free what r holds */
void rocm_probefree(struct rocmprobe *r);
/* kiln-stage rocm-probe [--json | --get=NAME] DIR */
int rocmprobe_main(int argc, char **argv);

#endif
