/* edit the dynamic-linking names of an ELF image in memory: DT_NEEDED, DT_SONAME and the
   library search path (DT_RPATH / DT_RUNPATH), ELF32 and ELF64 little-endian */
#ifndef KILN_ELFEDIT_H
#define KILN_ELFEDIT_H

#include <stddef.h>

#include "util.h"

/* what to change; NULL or 0 fields keep what the file has */
struct elfedits {
	const char *soname;         /* new DT_SONAME (added when absent) */
	const char **oldn, **newn;  /* rename DT_NEEDED oldn[i] to newn[i] (and the
	                               .gnu.version_r file names that match) */
	size_t nren;
	const char *rpath;          /* new search path, set as DT_RPATH with every
	                               DT_RUNPATH removed (or the other way round with runpath) */
	int runpath;                /* set rpath as DT_RUNPATH and remove DT_RPATH */
};

/* Apply ed to the ELF image in b, in place. A new string that fits over the old one (and
   shares its bytes with nothing else) is written there; otherwise the string table is
   copied, with the new strings appended, into a new PT_LOAD at the end of the file (the
   .dynamic table too when it has to grow), the program header table grows in place by
   one entry and the sections in its way move to the new segment. Entries are kept in
   their order; an added DT_SONAME or search path goes first, as patchelf puts it.
   The result is read back with the ELF reader and checked against ed.
   Returns 1 if b changed, 0 if nothing needed changing, -1 with err set (b may then be
   partly edited: discard it). */
int elfedit(struct buf *b, const struct elfedits *ed, char **err);

#endif
