/* libFuzzer target: the ELF editor (elfedit.h). The input is two bytes of edit list and
   an ELF image: byte 0 picks the edits (bit 0 SONAME, bit 1 search path, bit 2 as
   DT_RUNPATH, bits 3-5 how many DT_NEEDED to rename), byte 1 the length of the new
   names. The result must either be refused or read back with exactly those edits (every
   DT_NEEDED entry renamed by its original name, all at once, so chains such as a -> b,
   b -> c are exact too), and editing it again the same way must change nothing unless a
   new name is also an old one. Never a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elfedit.h"
#include "elffile.h"
#include "fuzzfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

/* a name of length len (at least 4) made from tag */
static char *
mkname(const char *tag, size_t len)
{
	size_t k = strlen(tag);
	char *s = xmalloc(len + k + 1);

	memcpy(s, tag, k);
	memset(s + k, 'a' + (int)(len % 26), len);
	s[k + len] = 0;
	return s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct elfedits ed;
	struct buf b = {0};
	struct elf e;
	struct elfdyn d;
	char *err = NULL, **orig = NULL;
	const char *oldn[8], *newn[8];
	size_t i, j, len, norig = 0;
	int r, chained = 0;

	if (n < 2 || n > (4u << 20))
		return 0;
	memset(&ed, 0, sizeof ed);
	len = (size_t)(p[1] % 64) * (p[1] >= 192 ? 40 : 1) + 1;
	bufadd(&b, p + 2, n - 2);
	/* rename the first DT_NEEDED names, as read by the reader */
	fuzz_err(r = elf_open(&e, b.s, b.len, &err), &err);
	if (r == 0) {
		fuzz_err(r = elf_dynamic(&e, &d, &err), &err);
		if (r == 0) {
			orig = xmalloc((d.nneeded + 1) * sizeof *orig);
			for (norig = 0; norig < d.nneeded; norig++)
				orig[norig] = xstrdup(d.needed[norig]);
			for (i = 0; i < norig && ed.nren < (size_t)((p[0] >> 3) & 7); i++)
				oldn[ed.nren++] = orig[i];
			elf_dynfree(&d);
		}
		elf_close(&e);
	}
	for (i = 0; i < ed.nren; i++) {
		char tag[16];
		tag[0] = 'f', tag[1] = 'z', tag[2] = (char)('0' + i), tag[3] = 0;
		newn[i] = mkname(tag, len + i);
	}
	for (i = 0; i < ed.nren; i++)
		for (j = 0; j < ed.nren; j++)
			if (strcmp(newn[i], oldn[j]) == 0)
				chained = 1;
	ed.oldn = oldn;
	ed.newn = newn;
	if (p[0] & 1)
		ed.soname = mkname("fzsoname", len);
	if (p[0] & 2)
		ed.rpath = mkname("$ORIGIN/fz", len / 2);
	ed.runpath = (p[0] & 4) != 0;
	r = elfedit(&b, &ed, &err);
	fuzz_err(r, &err);
	if (r == 0 && (b.len != n - 2 || memcmp(b.s, p + 2, b.len) != 0))
		abort(); /* "nothing changed" must mean the same bytes */
	if (r > 0) {
		/* the reader sees every edit */
		if (elf_open(&e, b.s, b.len, NULL) < 0 || elf_dynamic(&e, &d, NULL) < 0)
			abort();
		if (ed.soname && (!d.soname || strcmp(d.soname, ed.soname) != 0))
			abort();
		if (ed.rpath) {
			const char *got = ed.runpath ? d.runpath : d.rpath, *other = ed.runpath ? d.rpath : d.runpath;
			if (!got || strcmp(got, ed.rpath) != 0 || other)
				abort();
		}
		if (d.nneeded != norig)
			abort();
		for (i = 0; i < norig; i++) {
			const char *want = orig[i];
			for (j = 0; j < ed.nren; j++)
				if (strcmp(orig[i], ed.oldn[j]) == 0) {
					want = ed.newn[j];
					break;
				}
			if (strcmp(d.needed[i], want) != 0)
				abort();
		}
		elf_dynfree(&d);
		elf_close(&e);
		/* the same edits again: nothing left to do */
		if (!chained && elfedit(&b, &ed, NULL) != 0)
			abort();
	}
	buffree(&b);
	for (i = 0; i < ed.nren; i++)
		free((char *)newn[i]);
	for (i = 0; i < norig; i++)
		free(orig[i]);
	free(orig);
	free((char *)ed.soname);
	free((char *)ed.rpath);
	return 0;
}
