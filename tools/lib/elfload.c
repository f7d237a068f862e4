/* the loader's view of an ELF image: glibc's elf/dl-load.c and elf/get-dynamic-info.h
   read PT_DYNAMIC and map DT_STRTAB, DT_SYMTAB, DT_VERNEED and DT_VERDEF by address;
   the symbol count is DT_HASH's nchain or the end of DT_GNU_HASH's last chain */
#include "elfload.h"
#include "util.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lview {
	const struct elf *e;
	uint64_t str, strsz;          /* DT_STRTAB (file offset), DT_STRSZ */
	uint64_t sym, syment, hash, gnuhash, vn, vnnum, vd, vdnum;
	char **err;
};

#define LFAIL(...) return seterr(v->err, __VA_ARGS__)

/* the file offset of address a, n bytes of which must be in one PT_LOAD's file part;
   UINT64_MAX if not */
static uint64_t
mapaddr(const struct elf *e, uint64_t a, uint64_t n)
{
	size_t i;

	for (i = 0; i < e->nph; i++) {
		const struct elfphdr *p = &e->ph[i];
		if (p->type == PT_LOAD && a >= p->vaddr && a - p->vaddr <= p->filesz &&
		    n <= p->filesz - (a - p->vaddr) && p->off + (a - p->vaddr) + n <= e->n)
			return p->off + (a - p->vaddr);
	}
	return UINT64_MAX;
}

/* add "kind name" for the string at off of DT_STRTAB */
static int
addname(struct lview *v, struct strv *out, const char *kind, uint64_t off)
{
	const unsigned char *t = v->e->p + v->str;
	const void *z;
	char *s;

	if (off >= v->strsz || !(z = memchr(t + off, 0, v->strsz - off)))
		LFAIL("a %s name at string %llu is past DT_STRSZ (%llu)", kind, (unsigned long long)off,
		      (unsigned long long)v->strsz);
	s = xasprintf("%s %s", kind, (const char *)t + off);
	strv_add(out, s, 0);
	free(s);
	return 0;
}

/* a word of the image's class */
static uint64_t
rdword(const struct elf *e, const unsigned char *p)
{
	return e->is64 ? rd64(p) : rd32(p);
}

/* the .dynamic entries: the tables' addresses, then the string entries in order */
static int
dynamic(struct lview *v, struct strv *out, uint64_t off, uint64_t size)
{
	const struct elf *e = v->e;
	uint64_t esz = e->is64 ? 16 : 8, i, tag, val, stra = 0, havestr = 0;
	static const struct { uint64_t tag; const char *kind; } names[] = {
		{DT_NEEDED, "needed"}, {DT_SONAME, "soname"}, {DT_RPATH, "rpath"}, {DT_RUNPATH, "runpath"},
	};
	size_t k;

	if (off > e->n || size > e->n - off)
		LFAIL("PT_DYNAMIC (offset %llu) is past the end of the file", (unsigned long long)off);
	for (i = 0; i + esz <= size; i += esz) {
		tag = rdword(e, e->p + off + i);
		val = rdword(e, e->p + off + i + esz / 2);
		if (tag == DT_NULL)
			break;
		switch (tag) {
		case DT_STRTAB: stra = val; havestr = 1; break;
		case DT_STRSZ: v->strsz = val; break;
		case DT_SYMTAB: v->sym = val; break;
		case DT_SYMENT: v->syment = val; break;
		case DT_HASH: v->hash = val; break;
		case DT_GNU_HASH: v->gnuhash = val; break;
		case DT_VERNEED: v->vn = val; break;
		case DT_VERNEEDNUM: v->vnnum = val; break;
		case DT_VERDEF: v->vd = val; break;
		case DT_VERDEFNUM: v->vdnum = val; break;
		}
	}
	if (!havestr)
		LFAIL("PT_DYNAMIC has no DT_STRTAB");
	if ((v->str = mapaddr(e, stra, v->strsz)) == UINT64_MAX)
		LFAIL("DT_STRTAB 0x%llx (%llu bytes) is not mapped by a PT_LOAD", (unsigned long long)stra,
		      (unsigned long long)v->strsz);
	for (i = 0; i + esz <= size; i += esz) {
		tag = rdword(e, e->p + off + i);
		if (tag == DT_NULL)
			break;
		for (k = 0; k < sizeof names / sizeof names[0]; k++)
			if (tag == names[k].tag &&
			    addname(v, out, names[k].kind, rdword(e, e->p + off + i + esz / 2)) < 0)
				return -1;
	}
	return 0;
}

/* the number of dynamic symbols: DT_HASH's nchain, else past DT_GNU_HASH's last chain */
static int
nsyms(struct lview *v, uint64_t *n)
{
	const struct elf *e = v->e;
	uint64_t o, nb, symoff, bloom, b, maxi = 0, i, chain;

	*n = 0;
	if (v->hash) {
		if ((o = mapaddr(e, v->hash, 8)) == UINT64_MAX)
			LFAIL("DT_HASH 0x%llx is not mapped by a PT_LOAD", (unsigned long long)v->hash);
		*n = rd32(e->p + o + 4);
		return 0;
	}
	if (!v->gnuhash)
		return 0;
	if ((o = mapaddr(e, v->gnuhash, 16)) == UINT64_MAX)
		LFAIL("DT_GNU_HASH 0x%llx is not mapped by a PT_LOAD", (unsigned long long)v->gnuhash);
	nb = rd32(e->p + o);
	symoff = rd32(e->p + o + 4);
	bloom = rd32(e->p + o + 8) * (e->is64 ? 8ull : 4ull);
	b = v->gnuhash + 16 + bloom;
	if (mapaddr(e, b, nb * 4) == UINT64_MAX)
		LFAIL("DT_GNU_HASH's buckets are not mapped by a PT_LOAD");
	for (i = 0; i < nb; i++)
		if (rd32(e->p + mapaddr(e, b, nb * 4) + i * 4) > maxi)
			maxi = rd32(e->p + mapaddr(e, b, nb * 4) + i * 4);
	if (maxi < symoff) {
		*n = symoff;
		return 0;
	}
	chain = b + nb * 4;
	for (i = maxi; i - maxi < (1u << 24); i++) {
		if ((o = mapaddr(e, chain + (i - symoff) * 4, 4)) == UINT64_MAX)
			LFAIL("DT_GNU_HASH's chain %llu is not mapped by a PT_LOAD", (unsigned long long)i);
		if (rd32(e->p + o) & 1)
			break;
	}
	*n = i + 1;
	return 0;
}

/* "sym NAME" for each dynamic symbol */
static int
symbols(struct lview *v, struct strv *out)
{
	uint64_t n, i, o, ent = v->syment ? v->syment : (v->e->is64 ? 24 : 16);

	if (nsyms(v, &n) < 0)
		return -1;
	if (!n)
		return 0;
	if (!v->sym || ent < 4 || n > v->e->n / ent || (o = mapaddr(v->e, v->sym, n * ent)) == UINT64_MAX)
		LFAIL("DT_SYMTAB 0x%llx (%llu symbols) is not mapped by a PT_LOAD", (unsigned long long)v->sym,
		      (unsigned long long)n);
	for (i = 0; i < n; i++)
		if (addname(v, out, "sym", rd32(v->e->p + o + i * ent)) < 0)
			return -1;
	return 0;
}

/* walk DT_VERNEED (def 0: each Elf_Verneed with its Elf_Vernaux) or DT_VERDEF (def 1:
   each Elf_Verdef with its Elf_Verdaux) */
static int
versions(struct lview *v, struct strv *out, int def)
{
	uint64_t a = def ? v->vd : v->vn, num = def ? v->vdnum : v->vnnum, i, j, o, aa, cnt;
	uint64_t esz = def ? 20 : 16, asz = def ? 8 : 16;

	for (i = 0; a && i < num && i < 65536; i++) {
		if ((o = mapaddr(v->e, a, esz)) == UINT64_MAX)
			LFAIL("DT_VER%s entry %llu is not mapped by a PT_LOAD", def ? "DEF" : "NEED",
			      (unsigned long long)i);
		cnt = rd16(v->e->p + o + (def ? 4 : 2));
		if (!def && addname(v, out, "vnfile", rd32(v->e->p + o + 4)) < 0)
			return -1;
		aa = a + rd32(v->e->p + o + (def ? 12 : 8));
		for (j = 0; j < cnt && j < 65536; j++) {
			uint64_t ao = mapaddr(v->e, aa, asz);
			if (ao == UINT64_MAX)
				LFAIL("DT_VER%s aux entry %llu is not mapped by a PT_LOAD", def ? "DEF" : "NEED",
				      (unsigned long long)j);
			if (addname(v, out, def ? "vda" : "vna", rd32(v->e->p + ao + (def ? 0 : 8))) < 0)
				return -1;
			if (!rd32(v->e->p + ao + (def ? 4 : 12)))
				break;
			aa += rd32(v->e->p + ao + (def ? 4 : 12));
		}
		if (!rd32(v->e->p + o + (def ? 16 : 12)))
			break;
		a += rd32(v->e->p + o + (def ? 16 : 12));
	}
	return 0;
}

int
elf_loaderview(const struct elf *e, struct strv *names, char **err)
{
	struct lview v;
	size_t i;

	memset(&v, 0, sizeof v);
	v.e = e;
	v.err = err;
	for (i = 0; i < e->nph; i++)
		if (e->ph[i].type == PT_DYNAMIC)
			break;
	if (i == e->nph)
		return 0;
	if (dynamic(&v, names, e->ph[i].off, e->ph[i].filesz) < 0 || symbols(&v, names) < 0 ||
	    versions(&v, names, 0) < 0 || versions(&v, names, 1) < 0)
		return -1;
	return 0;
}
