/* libFuzzer target: ELF headers, sections, program headers, dynamic table (elffile.h) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elffile.h"
#include "fuzzfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct elfdyn d;
	struct elf e;
	char *err = NULL;
	size_t i, total = 0;
	int r;

	fuzz_err(r = elf_open(&e, p, n, &err), &err);
	if (r < 0)
		return 0;
	for (i = 0; i < e.nsec; i++) {
		const unsigned char *s = elf_secdata(&e, &e.sec[i]);

		total += strlen(e.sec[i].name);
		if (s && e.sec[i].size)
			total += s[e.sec[i].size - 1]; /* touch the last byte: must be in bounds */
	}
	fuzz_err(r = elf_dynamic(&e, &d, &err), &err);
	if (r == 0) {
		for (i = 0; i < d.nneeded; i++)
			total += strlen(d.needed[i]);
		for (i = 0; i < d.nverneed; i++)
			total += strlen(d.verneed[i]) + strlen(d.verneedfile[i]);
		if (d.soname)
			total += strlen(d.soname);
		elf_dynfree(&d);
	}
	elf_close(&e);
	return total == (size_t)-1;
}
