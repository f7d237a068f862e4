/* a bounds-checked ELF reader */
#include "elffile.h"
#include "util.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint16_t
rd16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t
rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t
rd64(const unsigned char *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

void
wr16(unsigned char *p, uint64_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

void
wr32(unsigned char *p, uint64_t v)
{
	wr16(p, v);
	wr16(p + 2, v >> 16);
}

void
wr64(unsigned char *p, uint64_t v)
{
	wr32(p, v);
	wr32(p + 4, v >> 32);
}

/* true if [off, off+len) lies inside n bytes */
static int
inside(uint64_t off, uint64_t len, size_t n)
{
	return off <= n && len <= n - off;
}

int
elf_is(const void *p, size_t n)
{
	return n >= 4 && memcmp(p, ELFMAG, SELFMAG) == 0;
}

#define ERR(...) do { return seterr(err, __VA_ARGS__); } while (0)

/* where the ELF header puts the section and program header tables, and their sizes */
struct ehdr {
	uint64_t shoff, phoff;
	uint32_t shnum, phnum, shentsize, phentsize, shstrndx;
};

/* the identification bytes and the header's size: sets is64, type and machine */
static int
readident(struct elf *e, char **err)
{
	const unsigned char *p = e->p;
	size_t n = e->n;

	if (!elf_is(p, n))
		ERR("not an ELF file (bad magic at offset 0)");
	if (n < EI_NIDENT + 4)
		ERR("truncated ELF header (%zu bytes)", n);
	if (p[EI_CLASS] != ELFCLASS32 && p[EI_CLASS] != ELFCLASS64)
		ERR("bad ELF class %u at offset 4", p[EI_CLASS]);
	if (p[EI_DATA] != ELFDATA2LSB)
		ERR("big-endian ELF is not supported (offset 5)");
	e->is64 = p[EI_CLASS] == ELFCLASS64;
	if (n < (e->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		ERR("truncated ELF header (%zu bytes)", n);
	e->type = rd16(p + 16);
	e->machine = rd16(p + 18);
	return 0;
}

static void
readehdr(const struct elf *e, struct ehdr *h)
{
	const unsigned char *p = e->p;

	if (e->is64) {
		h->phoff = rd64(p + 32);
		h->shoff = rd64(p + 40);
		h->phentsize = rd16(p + 54);
		h->phnum = rd16(p + 56);
		h->shentsize = rd16(p + 58);
		h->shnum = rd16(p + 60);
		h->shstrndx = rd16(p + 62);
	} else {
		h->phoff = rd32(p + 28);
		h->shoff = rd32(p + 32);
		h->phentsize = rd16(p + 42);
		h->phnum = rd16(p + 44);
		h->shentsize = rd16(p + 46);
		h->shnum = rd16(p + 48);
		h->shstrndx = rd16(p + 50);
	}
}

/* extended numbering: the real counts live in section 0 */
static int
extnum(const struct elf *e, struct ehdr *h, char **err)
{
	const unsigned char *s0;

	if (!h->shoff || (h->shnum != 0 && h->shstrndx != SHN_XINDEX))
		return 0;
	if (h->shentsize < (e->is64 ? 64u : 40u) || !inside(h->shoff, h->shentsize, e->n))
		ERR("section header table at offset %llu is past the end (%zu bytes)",
		    (unsigned long long)h->shoff, e->n);
	s0 = e->p + h->shoff;
	if (h->shnum == 0)
		h->shnum = (uint32_t)(e->is64 ? rd64(s0 + 32) : rd32(s0 + 20));
	if (h->shstrndx == SHN_XINDEX)
		h->shstrndx = e->is64 ? rd32(s0 + 40) : rd32(s0 + 24);
	return 0;
}

/* one section header at h */
static void
readsec(struct elfsec *s, const unsigned char *h, int is64)
{
	s->name = "";
	s->type = rd32(h + 4);
	if (is64) {
		s->flags = rd64(h + 8);
		s->addr = rd64(h + 16);
		s->off = rd64(h + 24);
		s->size = rd64(h + 32);
		s->link = rd32(h + 40);
		s->info = rd32(h + 44);
		s->entsize = rd64(h + 56);
	} else {
		s->flags = rd32(h + 8);
		s->addr = rd32(h + 12);
		s->off = rd32(h + 16);
		s->size = rd32(h + 20);
		s->link = rd32(h + 24);
		s->info = rd32(h + 28);
		s->entsize = rd32(h + 36);
	}
}

/* each section's name, where the name table holds a terminated string for it */
static int
secnames(struct elf *e, const struct ehdr *h, char **err)
{
	const struct elfsec *strsec;
	const char *s0;
	size_t i;

	if (!h->shstrndx || h->shstrndx >= h->shnum)
		return 0;
	strsec = &e->sec[h->shstrndx];
	if (strsec->type == SHT_NOBITS || !inside(strsec->off, strsec->size, e->n))
		ERR("section name table (offset %llu, %llu bytes) is past the end of the file",
		    (unsigned long long)strsec->off, (unsigned long long)strsec->size);
	s0 = (const char *)e->p + strsec->off;
	for (i = 0; i < h->shnum; i++) {
		uint32_t nm = rd32(e->p + h->shoff + i * h->shentsize);

		if (nm < strsec->size && memchr(s0 + nm, 0, strsec->size - nm))
			e->sec[i].name = s0 + nm;
	}
	return 0;
}

static int
readsecs(struct elf *e, const struct ehdr *h, char **err)
{
	size_t i;

	if (!h->shoff || !h->shnum)
		return 0;
	if (h->shentsize < (e->is64 ? 64u : 40u))
		ERR("bad section header size %u at offset %d", h->shentsize, e->is64 ? 58 : 46);
	if (h->shnum > e->n / h->shentsize || !inside(h->shoff, (uint64_t)h->shnum * h->shentsize, e->n))
		ERR("section header table (%u entries at offset %llu) is past the end of the file (%zu bytes)",
		    h->shnum, (unsigned long long)h->shoff, e->n);
	e->sec = xcalloc(h->shnum, sizeof *e->sec);
	e->nsec = h->shnum;
	for (i = 0; i < h->shnum; i++)
		readsec(&e->sec[i], e->p + h->shoff + i * h->shentsize, e->is64);
	return secnames(e, h, err);
}

/* one program header at h */
static void
readph(struct elfphdr *ph, const unsigned char *h, int is64)
{
	ph->type = rd32(h);
	if (is64) {
		ph->flags = rd32(h + 4);
		ph->off = rd64(h + 8);
		ph->vaddr = rd64(h + 16);
		ph->filesz = rd64(h + 32);
		ph->memsz = rd64(h + 40);
	} else {
		ph->off = rd32(h + 4);
		ph->vaddr = rd32(h + 8);
		ph->filesz = rd32(h + 16);
		ph->memsz = rd32(h + 20);
		ph->flags = rd32(h + 24);
	}
}

static int
readphs(struct elf *e, const struct ehdr *h, char **err)
{
	size_t i;

	if (!h->phoff || !h->phnum)
		return 0;
	if (h->phentsize < (e->is64 ? 56u : 32u))
		ERR("bad program header size %u", h->phentsize);
	if (h->phnum > e->n / h->phentsize || !inside(h->phoff, (uint64_t)h->phnum * h->phentsize, e->n))
		ERR("program header table (%u entries at offset %llu) is past the end of the file",
		    h->phnum, (unsigned long long)h->phoff);
	e->ph = xcalloc(h->phnum, sizeof *e->ph);
	e->nph = h->phnum;
	for (i = 0; i < h->phnum; i++)
		readph(&e->ph[i], e->p + h->phoff + i * h->phentsize, e->is64);
	return 0;
}

int
elf_open(struct elf *e, const void *bytes, size_t n, char **err)
{
	struct ehdr h;

	memset(e, 0, sizeof *e);
	e->p = bytes;
	e->n = n;
	if (readident(e, err) < 0)
		goto fail;
	readehdr(e, &h);
	if (extnum(e, &h, err) < 0 || readsecs(e, &h, err) < 0 ||
	    readphs(e, &h, err) < 0)
		goto fail;
	return 0;
fail:
	elf_close(e);
	return -1;
}

void
elf_close(struct elf *e)
{
	free(e->sec);
	free(e->ph);
	e->sec = NULL;
	e->ph = NULL;
	e->nsec = e->nph = 0;
}

const struct elfsec *
elf_section(const struct elf *e, const char *name)
{
	size_t i;

	for (i = 0; i < e->nsec; i++)
		if (strcmp(e->sec[i].name, name) == 0)
			return &e->sec[i];
	return NULL;
}

const unsigned char *
elf_secdata(const struct elf *e, const struct elfsec *s)
{
	if (s->type == SHT_NOBITS || !inside(s->off, s->size, e->n))
		return NULL;
	return e->p + s->off;
}

/* the NUL-terminated string at off in a string table, or NULL if it runs off the end */
static const char *
strat(const unsigned char *tab, uint64_t size, uint64_t off)
{
	if (off >= size || !memchr(tab + off, 0, size - off))
		return NULL;
	return (const char *)tab + off;
}

#undef FAIL
#define FAIL(...) do { seterr(err, __VA_ARGS__); elf_dynfree(d); return -1; } while (0)

/* the version needs of .gnu.version_r (section vr) into d; 0, or -1 with *err (d freed) */
static int
verneeds(const struct elf *e, const struct elfsec *vr, struct elfdyn *d, char **err)
{
	const unsigned char *vp;
	const char *s;
	size_t vcap = 0;
	const struct elfsec *vs = &e->sec[vr->link];
	const unsigned char *vsp = elf_secdata(e, vs);
	uint64_t off = 0, aoff;
	uint32_t cnt, acnt, j, guard = 0;

	vp = elf_secdata(e, vr);
	if (!vp || !vsp)
		FAIL(".gnu.version_r (offset %llu) is past the end of the file",
		     (unsigned long long)vr->off);
	for (cnt = 0; cnt < 4096; cnt++) {
		const char *file;

		if (off + 16 > vr->size)
			FAIL(".gnu.version_r entry at offset %llu is past its section",
			     (unsigned long long)(vr->off + off));
		acnt = rd16(vp + off + 2);
		file = strat(vsp, vs->size, rd32(vp + off + 4));
		aoff = off + rd32(vp + off + 8);
		for (j = 0; j < acnt; j++) {
			if (aoff + 16 > vr->size || ++guard > 65536)
				FAIL(".gnu.version_r aux entry at offset %llu is past its section",
				     (unsigned long long)(vr->off + aoff));
			s = strat(vsp, vs->size, rd32(vp + aoff + 8));
			if (s) {
				d->verneed = xgrow(d->verneed, &vcap, d->nverneed + 1,
				                   sizeof *d->verneed);
				d->verneedfile = xrealloc(d->verneedfile,
				                          vcap * sizeof *d->verneedfile);
				d->verneed[d->nverneed] = s;
				d->verneedfile[d->nverneed++] = file ? file : "";
			}
			if (!rd32(vp + aoff + 12))
				break;
			aoff += rd32(vp + aoff + 12);
		}
		if (!rd32(vp + off + 12))
			break;
		off += rd32(vp + off + 12);
	}
	return 0;
}

int
elf_dynamic(const struct elf *e, struct elfdyn *d, char **err)
{
	const struct elfsec *dyn = NULL, *str, *vr;
	const unsigned char *dp, *sp;
	size_t i, ent = e->is64 ? 16 : 8, cap = 0;
	uint64_t tag, val;
	const char *s;

	memset(d, 0, sizeof *d);
	for (i = 0; i < e->nsec; i++)
		if (e->sec[i].type == SHT_DYNAMIC) {
			dyn = &e->sec[i];
			break;
		}
	if (!dyn)
		return 0;
	if (dyn->link >= e->nsec)
		FAIL(".dynamic links to missing section %llu", (unsigned long long)dyn->link);
	str = &e->sec[dyn->link];
	dp = elf_secdata(e, dyn);
	sp = elf_secdata(e, str);
	if (!dp || !sp)
		FAIL(".dynamic or its string table (offset %llu) is past the end of the file",
		     (unsigned long long)dyn->off);
	d->dynoff = dyn->off;
	for (i = 0; i + ent <= dyn->size; i += ent) {
		tag = e->is64 ? rd64(dp + i) : rd32(dp + i);
		val = e->is64 ? rd64(dp + i + 8) : rd32(dp + i + 4);
		if (tag == DT_NULL)
			break;
		if (tag != DT_NEEDED && tag != DT_SONAME && tag != DT_RPATH && tag != DT_RUNPATH)
			continue;
		s = strat(sp, str->size, val);
		if (!s)
			FAIL(".dynamic entry at offset %llu names string %llu past its table",
			     (unsigned long long)(dyn->off + i), (unsigned long long)val);
		switch (tag) {
		case DT_NEEDED:
			d->needed = xgrow(d->needed, &cap, d->nneeded + 1, sizeof *d->needed);
			d->needed[d->nneeded++] = s;
			break;
		case DT_SONAME: d->soname = s; break;
		case DT_RPATH: d->rpath = s; break;
		case DT_RUNPATH: d->runpath = s; break;
		}
	}
	vr = elf_section(e, ".gnu.version_r");
	if (vr && vr->link < e->nsec)
		return verneeds(e, vr, d, err);
	return 0;
}

void
elf_dynfree(struct elfdyn *d)
{
	free(d->needed);
	free(d->verneed);
	free(d->verneedfile);
	memset(d, 0, sizeof *d);
}
