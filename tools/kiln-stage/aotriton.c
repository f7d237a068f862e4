/* AOTriton and torch's attention kernels: which --arch targets AOTriton has kernels for,
   whether the pinned AOTriton lists them, and what torch's build is told.

   Facts this file encodes (read upstream):
   - torch includes cmake/External/aotriton.cmake only for USE_ROCM with
     USE_FLASH_ATTENTION or USE_MEM_EFF_ATTENTION (pytorch/pytorch CMakeLists.txt); that
     file takes a prebuilt install from the environment variable
     AOTRITON_INSTALLED_PREFIX, builds from source with AOTRITON_INSTALL_FROM_SOURCE
     (git clone of ROCm/aotriton), and otherwise downloads
     https://github.com/ROCm/aotriton/releases/download/VER/aotriton-VER-manylinux_2_28_ARCH-rocmX.Y-shared.tar.gz
     and one image pack per family, aotriton-VER-images-amd-FAMILY.tar.gz, FAMILY from its
     __AOTRITON_IMAGE_LIST: gfx90a, gfx942, gfx950, gfx110x, gfx115x, gfx120x, gfx1250
     (pytorch/pytorch cmake/External/aotriton.cmake, the 0.14 pin). Those families are
     every target AOTriton has ever had kernels for: an --arch outside them (gfx803,
     gfx900, gfx906, gfx908, gfx1030 ...) gets no flash or memory-efficient attention.
   - AOTriton's own list is AOTRITON_TARGET_ARCH in its CMakeLists.txt, a cache string
     since 0.10b (ROCm/aotriton CMakeLists.txt; 0.9b and older name trade names in
     TARGET_GPUS); aotriton_ARCHES in the pins says it for configure, and aotriton.build
     checks the tree's own line before compiling.
   - TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL is read at run time, not at build time
     (c10::utils::check_env in aten/src/ATen/native/transformers/cuda/sdp_utils.cpp), for
     the targets AOTriton's isArchExperimentallySupported names (ROCm/aotriton
     v3src/util.cc). */
#include "aotriton.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/* the image families of torch's aotriton.cmake: a name, or a prefix ending in x */
static const char *const families[] = {
	"gfx90a", "gfx942", "gfx950", "gfx110x", "gfx115x", "gfx120x", "gfx1250",
};

int
aot_family(const char *arch)
{
	size_t i, n, an = strcspn(arch, ":");

	for (i = 0; i < sizeof families / sizeof families[0]; i++) {
		n = strlen(families[i]);
		if (families[i][n - 1] == 'x' ? an == n && !strncmp(arch, families[i], n - 1)
		                              : an == n && !strncmp(arch, families[i], n))
			return 1;
	}
	return 0;
}

/* is arch (without its :feature) a word of list (separated by ';', ',' or blanks) */
static int
listed(const char *list, const char *arch)
{
	size_t an = strcspn(arch, ":"), n;
	const char *p;

	for (p = list; *p; p += n) {
		p += strspn(p, ";, \t");
		n = strcspn(p, ";, \t");
		if (n == an && n && !strncmp(p, arch, n))
			return 1;
	}
	return 0;
}

/* the --arch targets for which keep(arch) == want, joined by sep, fresh */
static char *
archesif(int (*keep)(const char *), int want, const char *sep)
{
	struct buf b = {0};
	size_t i;

	for (i = 0; i < cf.narch; i++)
		if (!keep(cf.arch[i]) == !want)
			bufprintf(&b, "%s%.*s", b.len ? sep : "", (int)strcspn(cf.arch[i], ":"), cf.arch[i]);
	return b.s ? bufdetach(&b) : xstrdup("");
}

/* aotriton is in the stack and built with CMake */
static int
aot_on(void)
{
	size_t i;

	for (i = 0; i < non; i++)
		if (!strcmp(on[i]->name, "aotriton"))
			return !strcmp(pin(on[i], "KIND"), "build") && !strcmp(pin(on[i], "BUILD"), "cmake");
	return 0;
}

/* torch is built here from source (its build is the one that would fetch AOTriton) */
static int
aot_torch(void)
{
	const struct component *t = comp_find("torch");

	return non && on[0] == t && !strcmp(pin(t, "KIND"), "build");
}

/* with aotriton on: every --arch in AOTriton's families must be in the pinned list */
static void
aot_checkpin(const struct component *a)
{
	const char *list = pin(a, "ARCHES");
	size_t i;

	if (!*list)
		return;   /* aotriton.build checks the tree's own list before compiling */
	for (i = 0; i < cf.narch; i++)
		if (aot_family(cf.arch[i]) && !listed(list, cf.arch[i]))
			fail("%s: the pinned AOTriton (aotriton_REF=%s) builds %s (aotriton_ARCHES, its "
			     "AOTRITON_TARGET_ARCH), not --arch=%.*s: pin an AOTriton that lists it, or drop "
			     "it from --arch", pins.file, pin(a, "REF"), list, (int)strcspn(cf.arch[i], ":"),
			     cf.arch[i]);
}

void
aot_plan(struct aotplan *p)
{
	const struct component *a = comp_find("aotriton");
	char *none, *some;

	memset(p, 0, sizeof *p);
	p->on = aot_on();
	p->attn = 1;
	if (cf.backend != BACKEND_GFX) {
		if (p->on)
			fail("--with=aotriton: AOTriton is AMD's (its kernels are for gfx targets); "
			     "--arch=%s has none", cf.archarg);
		return;
	}
	none = archesif(aot_family, 0, ",");
	some = archesif(aot_family, 1, " ");
	if (!aot_torch()) {
		/* no torch build to tell: AOTriton alone, for the targets it has */
		if (p->on && !*some)
			fail("--with=aotriton: AOTriton has no kernels for --arch=%s", none);
		if (p->on)
			aot_checkpin(a);
		p->arches = p->on ? xstrdup(some) : NULL;
	} else if (!*some) {
		if (p->on)
			fail("--with=aotriton: AOTriton has no kernels for --arch=%s (its targets: "
			     "gfx90a, gfx942, gfx950, gfx11, gfx12); drop aotriton", none);
		printf("AOTriton has no kernels for %s: flash and memory-efficient attention will be off "
		       "(USE_FLASH_ATTENTION=0 USE_MEM_EFF_ATTENTION=0)\n", none);
		p->attn = 0;
	} else if (!p->on) {
		printf("flash and memory-efficient attention for %s need AOTriton, which torch's build "
		       "would download: off (USE_FLASH_ATTENTION=0 USE_MEM_EFF_ATTENTION=0); "
		       "--with=aotriton builds it as a stage\n", some);
		p->attn = 0;
	} else {
		aot_checkpin(a);
		p->arches = xstrdup(some);
		printf("AOTriton is built for %s (aotriton.build); torch.wheel gets it as "
		       "AOTRITON_INSTALLED_PREFIX\n", some);
		if (*none)
			printf("AOTriton has no kernels for %s: there torch's SDPA uses the math kernel "
			       "(it checks the GPU at run time)\n", none);
	}
	free(none);
	free(some);
}
