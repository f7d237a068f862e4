/* what the dynamic loader reads of an ELF image, found the way ld.so finds it (PT_DYNAMIC,
   then the addresses its entries name mapped through the PT_LOADs), never through the
   section headers, which the loader does not read */
#ifndef KILN_ELFLOAD_H
#define KILN_ELFLOAD_H

#include "elffile.h"
#include "strv.h"

/* Add every name the loader reads to names, in order, as "KIND NAME": "needed",
   "soname", "rpath", "runpath" (the .dynamic entries, through DT_STRTAB/DT_STRSZ),
   "sym" (each dynamic symbol of DT_SYMTAB; the count from DT_HASH, else DT_GNU_HASH),
   "vnfile" and "vna" (DT_VERNEED, DT_VERNEEDNUM), "vda" (DT_VERDEF, DT_VERDEFNUM).
   Returns 0 (no PT_DYNAMIC: nothing added), or -1 with *err naming what does not
   read: an address no PT_LOAD maps, a string past DT_STRSZ, a table past the file. */
int elf_loaderview(const struct elf *e, struct strv *names, char **err);

#endif
