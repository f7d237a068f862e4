/* libFuzzer target: ELF headers, sections, program headers, dynamic table (elffile.h) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elffile.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct elfdyn d;
	struct elf e;
	char err[256];
	size_t i, total = 0;

	if (elf_open(&e, p, n, err, sizeof err) < 0)
		return 0;
	for (i = 0; i < e.nsec; i++) {
		const unsigned char *s = elf_secdata(&e, &e.sec[i]);

		total += strlen(e.sec[i].name);
		if (s && e.sec[i].size)
			total += s[e.sec[i].size - 1]; /* touch the last byte: must be in bounds */
	}
	if (elf_dynamic(&e, &d, err, sizeof err) == 0) {
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
