/* libFuzzer target: every GPU code container of an ELF file, found through its section
   headers (.hip_fatbin, __CLANG_OFFLOAD_BUNDLE__*, .nv_fatbin, __nv_relfatbin) */
#include <stdint.h>
#include <stdlib.h>

#include "elffile.h"
#include "fuzzfile.h"
#include "offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct offopts o = {.maxraw = 1 << 20};
	struct offlist l = {0};
	struct elf e;
	char *err = NULL;
	int r;

	fuzz_err(r = elf_open(&e, p, n, &err), &err);
	if (r < 0)
		return 0;
	fuzz_err(off_scanelf(&e, &l, &o, &err), &err);
	off_free(&l);
	elf_close(&e);
	return 0;
}
