/* a bounds-checked ELF reader over bytes in memory (ELF32/ELF64, little-endian) */
#ifndef KILN_ELF_H
#define KILN_ELF_H

#include <stddef.h>
#include <stdint.h>

/* one section header, widened to 64 bits */
struct elfsec {
	const char *name;   /* from .shstrtab; "" if absent */
	uint32_t type;
	uint64_t flags, addr, off, size, link, info, entsize;
};

/* one program header */
struct elfphdr {
	uint32_t type, flags;
	uint64_t off, vaddr, filesz, memsz;
};

/* a parsed ELF image; points into the caller's bytes, which must outlive it */
struct elf {
	const unsigned char *p;
	size_t n;
	int is64;
	uint16_t type, machine;
	struct elfsec *sec;
	size_t nsec;
	struct elfphdr *ph;
	size_t nph;
};

/* true if the bytes start with the ELF magic */
int elf_is(const void *p, size_t n);
/* Parse headers, section and program headers, checking every offset and size against n.
   Returns 0, or -1 with *err set to a fresh message naming the offset. */
int elf_open(struct elf *e, const void *p, size_t n, char **err);
/* release what elf_open allocated */
void elf_close(struct elf *e);
/* the first section with this name, or NULL */
const struct elfsec *elf_section(const struct elf *e, const char *name);
/* a section's bytes (NULL for SHT_NOBITS or out of range) */
const unsigned char *elf_secdata(const struct elf *e, const struct elfsec *s);

/* the dynamic-linking facts of a shared object or executable */
struct elfdyn {
	const char *soname;       /* DT_SONAME or NULL */
	const char *rpath;        /* DT_RPATH or NULL */
	const char *runpath;      /* DT_RUNPATH or NULL */
	const char **needed;      /* DT_NEEDED in order */
	size_t nneeded;
	const char **verneed;     /* versions required, e.g. "GLIBC_2.17" (with their file) */
	const char **verneedfile; /* the library each version is required from */
	size_t nverneed;
	uint64_t dynoff;          /* file offset of .dynamic, 0 if none */
};

/* Read the dynamic section (.dynamic + its string table) and .gnu.version_r.
   Returns 0 (an ELF without .dynamic gives an empty result), or -1 with err set. */
int elf_dynamic(const struct elf *e, struct elfdyn *d, char **err);
/* release the arrays of d */
void elf_dynfree(struct elfdyn *d);

/* read little-endian integers from unaligned bytes */
uint16_t rd16(const unsigned char *p);
uint32_t rd32(const unsigned char *p);
uint64_t rd64(const unsigned char *p);
/* write little-endian integers to unaligned bytes (the low bits of v) */
void wr16(unsigned char *p, uint64_t v);
void wr32(unsigned char *p, uint64_t v);
void wr64(unsigned char *p, uint64_t v);

#endif
