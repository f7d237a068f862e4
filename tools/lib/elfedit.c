/* ELF dynamic-name editor: DT_NEEDED, DT_SONAME, DT_RPATH/DT_RUNPATH, in memory */
#include "elfedit.h"
#include "elffile.h"
#include "elfload.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a program header with every field */
struct ph {
	uint32_t type, flags;
	uint64_t off, vaddr, paddr, filesz, memsz, align;
};

/* one .dynamic entry as it will be written; s is its new string (NULL: val is kept) */
struct dent {
	uint64_t tag, val;
	const char *s;
	const char *old;            /* the string val names in the input, or NULL */
	int inplace;                /* s is written over old at val */
};

/* a string-table reference found in the file */
struct sref {
	uint64_t off;
	const char *to;             /* the string it will name after the edit; NULL: kept */
};

struct ed {
	unsigned char *p;
	size_t n;
	int is64;
	struct elf e;
	uint64_t phoff, shoff;
	unsigned phent, shent;
	struct ph *ph;
	size_t nph;
	const struct elfsec *dyn, *str;
	size_t dynidx, stridx, slots, esz;
	struct dent *d;
	size_t nd, dcap;
	struct buf add;             /* strings appended to the table */
	struct sref *refs;
	size_t nrefs, rcap;
	char **err;
};

#define FAIL(...) return seterr(x->err, __VA_ARGS__)

/* a word of the file's class (Elf64_Xword / Elf32_Word) */
static uint64_t
rdw(const struct ed *x, const unsigned char *p)
{
	return x->is64 ? rd64(p) : rd32(p);
}

static void
wrw(const struct ed *x, unsigned char *p, uint64_t v)
{
	if (x->is64)
		wr64(p, v);
	else
		wr32(p, v);
}

static int
inside(uint64_t off, uint64_t len, uint64_t n)
{
	return off <= n && len <= n - off;
}

/* do [a, a+n) and [b, b+m) share a byte? */
static int
overlaps(uint64_t a, uint64_t n, uint64_t b, uint64_t m)
{
	return n && m && a < b + m && b < a + n;
}

static uint64_t
roundup(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* the string at off of the input's dynamic string table, or NULL */
static const char *
strat(const struct ed *x, uint64_t off)
{
	const unsigned char *t = x->p + x->str->off;

	if (off >= x->str->size || !memchr(t + off, 0, x->str->size - off))
		return NULL;
	return (const char *)t + off;
}

static int
isstrtag(uint64_t t)
{
	return t == DT_NEEDED || t == DT_SONAME || t == DT_RPATH || t == DT_RUNPATH ||
	       t == DT_AUXILIARY || t == DT_FILTER || t == DT_CONFIG || t == DT_DEPAUDIT ||
	       t == DT_AUDIT;
}

/* tags whose value is an address in the image */
static int
isptrtag(uint64_t t)
{
	switch (t) {
	case DT_PLTGOT: case DT_HASH: case DT_STRTAB: case DT_SYMTAB: case DT_RELA:
	case DT_INIT: case DT_FINI: case DT_REL: case DT_JMPREL: case DT_INIT_ARRAY:
	case DT_FINI_ARRAY: case DT_PREINIT_ARRAY: case DT_SYMTAB_SHNDX: case 36 /* DT_RELR */:
	case DT_VERSYM: case DT_VERDEF: case DT_VERNEED:
		return 1;
	}
	return t >= DT_ADDRRNGLO && t <= DT_ADDRRNGHI;
}

static void
readph(const struct ed *x, size_t i, struct ph *ph)
{
	const unsigned char *h = x->p + x->phoff + i * x->phent;

	ph->type = rd32(h);
	if (x->is64) {
		ph->flags = rd32(h + 4);
		ph->off = rd64(h + 8);
		ph->vaddr = rd64(h + 16);
		ph->paddr = rd64(h + 24);
		ph->filesz = rd64(h + 32);
		ph->memsz = rd64(h + 40);
		ph->align = rd64(h + 48);
	} else {
		ph->off = rd32(h + 4);
		ph->vaddr = rd32(h + 8);
		ph->paddr = rd32(h + 12);
		ph->filesz = rd32(h + 16);
		ph->memsz = rd32(h + 20);
		ph->flags = rd32(h + 24);
		ph->align = rd32(h + 28);
	}
}

static void
writeph(const struct ed *x, unsigned char *h, const struct ph *ph)
{
	memset(h, 0, x->phent);
	wr32(h, ph->type);
	if (x->is64) {
		wr32(h + 4, ph->flags);
		wr64(h + 8, ph->off);
		wr64(h + 16, ph->vaddr);
		wr64(h + 24, ph->paddr);
		wr64(h + 32, ph->filesz);
		wr64(h + 40, ph->memsz);
		wr64(h + 48, ph->align);
	} else {
		wr32(h + 4, ph->off);
		wr32(h + 8, ph->vaddr);
		wr32(h + 12, ph->paddr);
		wr32(h + 16, ph->filesz);
		wr32(h + 20, ph->memsz);
		wr32(h + 24, ph->flags);
		wr32(h + 28, ph->align);
	}
}

/* set a section header's address, offset and size */
static void
setsec(const struct ed *x, size_t i, uint64_t addr, uint64_t off, uint64_t size)
{
	unsigned char *h = x->p + x->shoff + i * x->shent;

	if (x->is64) {
		wr64(h + 16, addr);
		wr64(h + 24, off);
		wr64(h + 32, size);
	} else {
		wr32(h + 12, addr);
		wr32(h + 16, off);
		wr32(h + 20, size);
	}
}

static uint64_t
secalign(const struct ed *x, size_t i)
{
	const unsigned char *h = x->p + x->shoff + i * x->shent;

	return x->is64 ? rd64(h + 48) : rd32(h + 32);
}

static struct dent *
adddent(struct ed *x, size_t at)
{
	x->d = xgrow(x->d, &x->dcap, x->nd + 1, sizeof *x->d);
	memmove(&x->d[at + 1], &x->d[at], (x->nd - at) * sizeof *x->d);
	x->nd++;
	memset(&x->d[at], 0, sizeof *x->d);
	return &x->d[at];
}

static void
deldent(struct ed *x, size_t at)
{
	memmove(&x->d[at], &x->d[at + 1], (x->nd - at - 1) * sizeof *x->d);
	x->nd--;
}

static void
addref(struct ed *x, uint64_t off, const char *to)
{
	x->refs = xgrow(x->refs, &x->rcap, x->nrefs + 1, sizeof *x->refs);
	x->refs[x->nrefs].off = off;
	x->refs[x->nrefs++].to = to;
}

/* the new name of a DT_NEEDED / version-need file name, or NULL */
static const char *
renamed(const struct elfedits *ed, const char *old)
{
	size_t i;

	for (i = 0; old && i < ed->nren; i++)
		if (strcmp(ed->oldn[i], old) == 0)
			return ed->newn[i];
	return NULL;
}

/* walk .gnu.version_r: call fn for every vn_file (file=1) and vna_name (file=0) field,
   with the field's file offset; returns -1 on a malformed table */
static int
walkverneed(struct ed *x, const struct elfsec *s,
            void (*fn)(struct ed *x, uint64_t fieldoff, int file, void *ctx), void *ctx)
{
	uint64_t off = 0, aoff;
	uint32_t cnt, j, guard = 0, acnt;

	if (!inside(s->off, s->size, x->n))
		FAIL(".gnu.version_r (offset %llu) is past the end of the file", (unsigned long long)s->off);
	for (cnt = 0; cnt < 65536 && s->size; cnt++) {
		if (off + 16 > s->size)
			FAIL(".gnu.version_r entry at offset %llu is past its section",
			     (unsigned long long)(s->off + off));
		acnt = rd16(x->p + s->off + off + 2);
		fn(x, s->off + off + 4, 1, ctx);
		aoff = off + rd32(x->p + s->off + off + 8);
		for (j = 0; j < acnt; j++) {
			if (aoff + 16 > s->size || ++guard > 1000000)
				FAIL(".gnu.version_r aux entry at offset %llu is past its section",
				     (unsigned long long)(s->off + aoff));
			fn(x, s->off + aoff + 8, 0, ctx);
			if (!rd32(x->p + s->off + aoff + 12))
				break;
			aoff += rd32(x->p + s->off + aoff + 12);
		}
		if (!rd32(x->p + s->off + off + 12))
			break;
		off += rd32(x->p + s->off + off + 12);
	}
	return 0;
}

/* walk .gnu.version_d: every vda_name field */
static int
walkverdef(struct ed *x, const struct elfsec *s)
{
	uint64_t off = 0, aoff;
	uint32_t cnt, j, guard = 0, acnt;

	if (!inside(s->off, s->size, x->n))
		FAIL(".gnu.version_d (offset %llu) is past the end of the file", (unsigned long long)s->off);
	for (cnt = 0; cnt < 65536 && s->size; cnt++) {
		if (off + 20 > s->size)
			FAIL(".gnu.version_d entry at offset %llu is past its section",
			     (unsigned long long)(s->off + off));
		acnt = rd16(x->p + s->off + off + 4);
		aoff = off + rd32(x->p + s->off + off + 12);
		for (j = 0; j < acnt; j++) {
			if (aoff + 8 > s->size || ++guard > 1000000)
				FAIL(".gnu.version_d aux entry at offset %llu is past its section",
				     (unsigned long long)(s->off + aoff));
			addref(x, rd32(x->p + s->off + aoff), NULL);
			if (!rd32(x->p + s->off + aoff + 4))
				break;
			aoff += rd32(x->p + s->off + aoff + 4);
		}
		if (!rd32(x->p + s->off + off + 16))
			break;
		off += rd32(x->p + s->off + off + 16);
	}
	return 0;
}

/* collect a version-need reference: a file name is renamed with its DT_NEEDED */
static void
verneedref(struct ed *x, uint64_t fieldoff, int file, void *ctx)
{
	const struct elfedits *ed = ctx;
	uint64_t v = rd32(x->p + fieldoff);

	addref(x, v, file ? renamed(ed, strat(x, v)) : NULL);
}

/* how vnfix1 rewrites .gnu.version_r: the edits, and how far the section moved (its
   fields are read where they were and written where they went) */
struct vnfix {
	const struct elfedits *ed;
	int64_t shift;
	int err;                    /* a renamed file has no new string */
};

/* find the offset of string s among the new entries (every new string is one) */
static int64_t
newoff(const struct ed *x, const char *s)
{
	size_t i;

	for (i = 0; i < x->nd; i++)
		if (x->d[i].s && strcmp(x->d[i].s, s) == 0)
			return (int64_t)x->d[i].val;
	return -1;
}

/* point one vn_file that names a renamed library at the new name's string */
static void
vnfix1(struct ed *x, uint64_t fieldoff, int file, void *ctx)
{
	struct vnfix *f = ctx;
	const char *to, *old;
	int64_t o;

	if (!file || !(old = strat(x, rd32(x->p + fieldoff))) || !(to = renamed(f->ed, old)) ||
	    strcmp(to, old) == 0)
		return;
	if ((o = newoff(x, to)) < 0) {
		f->err = 1;
		return;
	}
	wr32(x->p + (uint64_t)((int64_t)fieldoff + f->shift), (uint64_t)o);
}

/* the program headers: at least one PT_LOAD, each inside the file */
static int
loadphdrs(struct ed *x)
{
	size_t i, nload = 0;

	x->nph = x->e.nph;
	x->ph = xcalloc(x->nph + 1, sizeof *x->ph);
	for (i = 0; i < x->nph; i++) {
		readph(x, i, &x->ph[i]);
		if (x->ph[i].type != PT_LOAD)
			continue;
		nload++;
		if (!inside(x->ph[i].off, x->ph[i].filesz, x->n) || x->ph[i].filesz > x->ph[i].memsz)
			FAIL("PT_LOAD %zu (offset %llu) is past the end of the file or larger on disk than in memory",
			     i, (unsigned long long)x->ph[i].off);
		if (x->ph[i].vaddr + x->ph[i].memsz < x->ph[i].vaddr)
			FAIL("PT_LOAD %zu wraps around the address space", i);
	}
	if (!nload)
		FAIL("no PT_LOAD segment");
	return 0;
}

/* the one SHT_DYNAMIC section and its string table, each inside the file, and
   PT_DYNAMIC at the same place */
static int
finddyn(struct ed *x)
{
	size_t i;

	for (i = 0; i < x->e.nsec; i++) {
		if (x->e.sec[i].type != SHT_DYNAMIC)
			continue;
		if (x->dyn)
			FAIL("more than one SHT_DYNAMIC section");
		x->dyn = &x->e.sec[i];
		x->dynidx = i;
	}
	if (!x->dyn)
		FAIL("no .dynamic section (a static object has no names to edit)");
	if (x->dyn->link == 0 || x->dyn->link >= x->e.nsec)
		FAIL(".dynamic links to missing section %llu", (unsigned long long)x->dyn->link);
	x->stridx = x->dyn->link;
	x->str = &x->e.sec[x->stridx];
	x->esz = x->is64 ? 16 : 8;
	if (x->str->type != SHT_STRTAB || !inside(x->str->off, x->str->size, x->n) || !x->str->size ||
	    x->p[x->str->off + x->str->size - 1] != 0)
		FAIL(".dynamic's string table (section %zu, offset %llu) is not a string table inside the file",
		     x->stridx, (unsigned long long)x->str->off);
	if (!inside(x->dyn->off, x->dyn->size, x->n) || x->dyn->size % x->esz)
		FAIL(".dynamic (offset %llu, %llu bytes) is past the end of the file or not whole entries",
		     (unsigned long long)x->dyn->off, (unsigned long long)x->dyn->size);
	for (i = 0; i < x->nph; i++)
		if (x->ph[i].type == PT_DYNAMIC && x->ph[i].off != x->dyn->off)
			FAIL("PT_DYNAMIC (offset %llu) and the .dynamic section (offset %llu) disagree",
			     (unsigned long long)x->ph[i].off, (unsigned long long)x->dyn->off);
	return 0;
}

/* what the edit writes must not share bytes with the headers or with each other */
static int
nooverlaps(const struct ed *x)
{
	size_t i;

	for (i = 0; i < x->e.nsec; i++) {
		const struct elfsec *s = &x->e.sec[i];
		if (i != x->dynidx && i != x->stridx &&
		    s->type != SHT_GNU_verneed)
			continue;
		if (overlaps(s->off, s->size, 0, x->is64 ? 64 : 52) ||
		    overlaps(s->off, s->size, x->phoff, (uint64_t)x->nph * x->phent) ||
		    overlaps(s->off, s->size, x->shoff, (uint64_t)x->e.nsec * x->shent))
			FAIL("section %zu (offset %llu) overlaps the ELF, program or section headers", i,
			     (unsigned long long)s->off);
		if (i != x->stridx && overlaps(s->off, s->size, x->str->off, x->str->size))
			FAIL("section %zu (offset %llu) overlaps the dynamic string table", i,
			     (unsigned long long)s->off);
		if (i != x->dynidx && overlaps(s->off, s->size, x->dyn->off, x->dyn->size))
			FAIL("section %zu (offset %llu) overlaps .dynamic", i, (unsigned long long)s->off);
	}
	return 0;
}

/* .dynamic's entries up to DT_NULL; DT_STRTAB/DT_STRSZ must be the string table's, and
   every string entry must name a string in it */
static int
loaddents(struct ed *x)
{
	size_t i;
	uint64_t strtab = 0, strsz = 0;
	int havetab = 0, havesz = 0;

	x->slots = x->dyn->size / x->esz;
	for (i = 0; i < x->slots; i++) {
		const unsigned char *q = x->p + x->dyn->off + i * x->esz;
		struct dent *d;
		uint64_t tag = rdw(x, q), val = rdw(x, q + x->esz / 2);

		if (tag == DT_NULL)
			break;
		d = adddent(x, x->nd);
		d->tag = tag;
		d->val = val;
		if (tag == DT_STRTAB)
			strtab = val, havetab = 1;
		if (tag == DT_STRSZ)
			strsz = val, havesz = 1;
	}
	if (i == x->slots)
		FAIL(".dynamic (offset %llu) has no DT_NULL entry", (unsigned long long)x->dyn->off);
	if (!havetab || !havesz)
		FAIL(".dynamic has no DT_STRTAB or DT_STRSZ");
	if (!(x->str->flags & SHF_ALLOC) || strtab != x->str->addr || strsz != x->str->size)
		FAIL("DT_STRTAB/DT_STRSZ (0x%llx, %llu) do not match the .dynstr section (0x%llx, %llu)",
		     (unsigned long long)strtab, (unsigned long long)strsz,
		     (unsigned long long)x->str->addr, (unsigned long long)x->str->size);
	for (i = 0; i < x->nd; i++) {
		if (!isstrtag(x->d[i].tag))
			continue;
		if (!(x->d[i].old = strat(x, x->d[i].val)))
			FAIL(".dynamic entry %zu names string %llu past its table", i,
			     (unsigned long long)x->d[i].val);
	}
	return 0;
}

/* read the ELF and its dynamic table into x */
static int
load(struct ed *x)
{
	if (x->e.type != ET_DYN && x->e.type != ET_EXEC)
		FAIL("not a shared object or executable (ELF type %u)", x->e.type);
	x->phoff = rdw(x, x->p + (x->is64 ? 32 : 28));
	x->shoff = rdw(x, x->p + (x->is64 ? 40 : 32));
	x->phent = rd16(x->p + (x->is64 ? 54 : 42));
	x->shent = rd16(x->p + (x->is64 ? 58 : 46));
	if (!x->e.nph || !x->e.nsec)
		FAIL("no program or section headers");
	if (loadphdrs(x) < 0 || finddyn(x) < 0 || nooverlaps(x) < 0)
		return -1;
	return loaddents(x);
}

/* decide the new entry list; returns 1 if anything changes */
static int
planentries(struct ed *x, const struct elfedits *ed)
{
	size_t i;
	const char *to;
	struct dent *d;
	int changed = 0, found;
	uint64_t want, other;

	for (i = 0; i < x->nd; i++)
		if (x->d[i].tag == DT_NEEDED && (to = renamed(ed, x->d[i].old)))
			x->d[i].s = to;
	if (ed->soname) {
		for (found = 0, i = 0; i < x->nd; i++)
			if (x->d[i].tag == DT_SONAME)
				x->d[i].s = ed->soname, found = 1;
		if (!found) {
			d = adddent(x, 0);
			d->tag = DT_SONAME;
			d->s = ed->soname;
			changed = 1;
		}
	}
	if (ed->rpath) {
		size_t nw = 0, no = 0;
		want = ed->runpath ? DT_RUNPATH : DT_RPATH;
		other = ed->runpath ? DT_RPATH : DT_RUNPATH;
		for (i = 0; i < x->nd; i++) {
			nw += x->d[i].tag == want;
			no += x->d[i].tag == other;
		}
		if (nw == 1 && !no) {
			for (i = 0; i < x->nd; i++)
				if (x->d[i].tag == want)
					x->d[i].s = ed->rpath;
		} else if (!nw && no == 1) {
			/* the other kind turns into this kind where it is */
			for (i = 0; i < x->nd; i++)
				if (x->d[i].tag == other) {
					x->d[i].tag = want;
					x->d[i].s = ed->rpath;
					changed = 1;
				}
		} else {
			/* none, or several: all go, one new entry comes first */
			for (i = x->nd; i-- > 0;)
				if (x->d[i].tag == want || x->d[i].tag == other)
					deldent(x, i), changed = 1;
			d = adddent(x, 0);
			d->tag = want;
			d->s = ed->rpath;
			changed = 1;
		}
	}
	for (i = 0; i < x->nd; i++)
		if (x->d[i].s && (!x->d[i].old || strcmp(x->d[i].s, x->d[i].old) != 0))
			changed = 1;
	return changed;
}

/* may s be written over the old string at off? only if every reference to its bytes
   is one that will name s too */
static int
canreplace(const struct ed *x, uint64_t off, const char *old, const char *s, int ok)
{
	size_t i, len = strlen(old);

	if (!ok || strlen(s) > len)
		return 0;
	for (i = 0; i < x->nrefs; i++) {
		const struct sref *r = &x->refs[i];
		const char *rs;
		if (r->off > off && r->off < off + len)
			return 0;
		if (r->off == off && !(r->to && strcmp(r->to, s) == 0))
			return 0;
		/* a longer string whose tail this one is (GNU ld tail-merges .dynstr:
		   "x_libfoo.so" holds "libfoo.so"): its bytes must stay */
		if (r->off < off && (rs = strat(x, r->off)) && r->off + strlen(rs) >= off)
			return 0;
	}
	return 1;
}

static int secin(const struct elfsec *s, uint64_t lo, uint64_t hi);

/* place the new strings: over the old ones where they fit, else appended */
static int
placestrings(struct ed *x, const struct elfedits *ed)
{
	size_t i, j;
	int ok = 1;
	uint64_t strsz = x->str->size;

	/* every reference into the table, and what it will name */
	for (i = 0; i < x->nd; i++)
		if (isstrtag(x->d[i].tag))
			addref(x, x->d[i].val, x->d[i].s);
	for (i = 0; i < x->e.nsec; i++) {
		const struct elfsec *s = &x->e.sec[i];
		/* the loader reads symbols and versions through DT_STRTAB whatever table their
		   section header names: they are references whatever their sh_link; another
		   section that names this table, or shares its bytes, reads strings we cannot
		   see: nothing is written over */
		if (i == x->dynidx || i == x->stridx || s->type == SHT_NOBITS)
			continue;
		if (s->type != SHT_DYNSYM && s->type != SHT_GNU_verneed && s->type != SHT_GNU_verdef) {
			if (s->link == x->stridx || secin(s, x->str->off, x->str->off + x->str->size))
				ok = 0;
			continue;
		}
		if (s->type == SHT_DYNSYM) {
			uint64_t k, ent = x->is64 ? 24 : 16;
			if (!inside(s->off, s->size, x->n))
				FAIL(".dynsym (offset %llu) is past the end of the file", (unsigned long long)s->off);
			for (k = 0; k + ent <= s->size; k += ent)
				addref(x, rd32(x->p + s->off + k), NULL);
		} else if (s->type == SHT_GNU_verneed) {
			if (walkverneed(x, s, verneedref, (void *)ed) < 0)
				return -1;
		} else if (s->type == SHT_GNU_verdef) {
			if (walkverdef(x, s) < 0)
				return -1;
		}
	}
	for (i = 0; i < x->nd; i++) {
		struct dent *d = &x->d[i];
		if (!d->s)
			continue;
		if (d->old && strcmp(d->s, d->old) == 0) {
			d->s = NULL;        /* unchanged */
			continue;
		}
		if (d->old && canreplace(x, d->val, d->old, d->s, ok)) {
			d->inplace = 1;
			continue;
		}
		for (j = 0; j < i; j++)
			if (x->d[j].s && !x->d[j].inplace && strcmp(x->d[j].s, d->s) == 0)
				break;
		if (j < i) {
			d->val = x->d[j].val;
		} else {
			d->val = strsz + x->add.len;
			bufadd(&x->add, d->s, strlen(d->s) + 1);
		}
	}
	return 0;
}

/* write the entries at file offset off (room for slots entries) */
static void
writedyn(struct ed *x, uint64_t off, size_t slots)
{
	size_t i;
	unsigned char *q = x->p + off;

	memset(q, 0, slots * x->esz);
	for (i = 0; i < x->nd; i++) {
		wrw(x, q + i * x->esz, x->d[i].tag);
		wrw(x, q + i * x->esz + x->esz / 2, x->d[i].val);
	}
}

/* write the strings that go over old ones, into the table at off */
static void
writeinplace(struct ed *x, uint64_t off)
{
	size_t i;

	for (i = 0; i < x->nd; i++) {
		struct dent *d = &x->d[i];
		if (!d->s || !d->inplace)
			continue;
		memset(x->p + off + d->val, 0, strlen(d->old));
		memcpy(x->p + off + d->val, d->s, strlen(d->s));
	}
}


/* the new segment and what moves into it */
struct layout {
	uint64_t bs, be;            /* sections moved out of the program headers' way [bs, be) */
	uint64_t bvaddr;            /* their address */
	uint64_t segoff, segvaddr, segsize, align;
	uint64_t boff;              /* where the block goes */
	uint64_t stroff, dynoff;    /* where the string table / .dynamic go (dynoff 0: stays) */
	size_t dynslots;
	uint64_t oldstroff, oldstrsize; /* where the string table was, its size */
	uint64_t phend;             /* the end of the grown program header table */
};

/* does section s occupy file bytes in [lo, hi)? */
static int
secin(const struct elfsec *s, uint64_t lo, uint64_t hi)
{
	return s->type != SHT_NULL && s->type != SHT_NOBITS && s->size && s->off < hi && s->off + s->size > lo;
}

/* which sections lie where the program header table must grow: l->bs, l->be and their
   address; returns 1 if some do, 0 if the room is free, -1 if they cannot move */
static int
findblock(struct ed *x, struct layout *l)
{
	uint64_t grow0 = x->phoff + (uint64_t)x->nph * x->phent, grow1 = grow0 + x->phent;
	size_t i, first = 0;
	int any = 0, more;
	int64_t delta = 0;

	if (x->phoff < (x->is64 ? 64u : 52u) || x->phent < (x->is64 ? 56u : 32u))
		FAIL("program header table at offset %llu overlaps the ELF header", (unsigned long long)x->phoff);
	if (grow1 > x->n)
		FAIL("no room to grow the program header table (file of %zu bytes)", x->n);
	if (x->shoff < grow1 && x->shoff + (uint64_t)x->e.nsec * x->shent > grow0)
		FAIL("the section header table is where the program headers must grow");
	l->bs = grow0;
	l->be = grow1;
	/* widen to whole sections until nothing is cut */
	do {
		more = 0;
		for (i = 1; i < x->e.nsec; i++) {
			const struct elfsec *s = &x->e.sec[i];
			if (!secin(s, l->bs, l->be))
				continue;
			any = 1;
			if (s->off < l->bs)
				l->bs = s->off, more = 1;
			if (s->off + s->size > l->be)
				l->be = s->off + s->size, more = 1;
		}
	} while (more);
	if (!any)
		return 0;
	/* then exactly the sections' bytes */
	{
		uint64_t lo = UINT64_MAX, hi = 0;
		for (i = 1; i < x->e.nsec; i++) {
			const struct elfsec *s = &x->e.sec[i];
			if (!secin(s, l->bs, l->be))
				continue;
			if (s->off < lo)
				lo = s->off;
			if (s->off + s->size > hi)
				hi = s->off + s->size;
		}
		l->bs = lo;
		l->be = hi;
	}
	for (i = 1; i < x->e.nsec; i++) {
		const struct elfsec *s = &x->e.sec[i];
		if (!secin(s, l->bs, l->be))
			continue;
		if (!(s->flags & SHF_ALLOC))
			FAIL("section %zu '%s' (not loaded) is where the program headers must grow", i, s->name);
		if (i == x->dynidx)
			FAIL(".dynamic lies where the program headers must grow");
		if (secalign(x, i) > 64)
			FAIL("section %zu '%s' is aligned to %llu bytes; cannot move it", i, s->name,
			     (unsigned long long)secalign(x, i));
		if (!first) {
			first = i;
			delta = (int64_t)(s->addr - s->off);
		} else if ((int64_t)(s->addr - s->off) != delta) {
			FAIL("sections %zu and %zu in the program headers' way are not mapped together", first, i);
		}
	}
	l->bvaddr = l->bs + (uint64_t)delta;
	if (l->bs % 64 != l->bvaddr % 64)
		FAIL("sections at offset %llu are not mapped at a congruent address", (unsigned long long)l->bs);
	for (i = 1; i < x->e.nsec; i++) {
		const struct elfsec *s = &x->e.sec[i];
		if (s->type == SHT_NOBITS && (s->flags & SHF_ALLOC) && s->addr < l->bvaddr + (l->be - l->bs) &&
		    s->addr + s->size > l->bvaddr)
			FAIL("section %zu '%s' (no bytes) lies among the sections that must move", i, s->name);
	}
	for (i = 0; i < x->nph; i++) {
		const struct ph *p = &x->ph[i];
		if (!p->filesz || p->off >= l->be || p->off + p->filesz <= l->bs)
			continue;
		if (p->type == PT_LOAD && p->off <= l->bs && p->off + p->filesz >= l->be)
			continue;
		if (p->type != PT_LOAD && p->off >= l->bs && p->off + p->filesz <= l->be)
			continue;
		FAIL("program header %zu (offset %llu) covers part of the sections that must move", i,
		     (unsigned long long)p->off);
	}
	return 1;
}

/* lay out the new segment at the end of the file and the address space */
static int
layout(struct ed *x, struct layout *l, int block)
{
	size_t i;
	uint64_t maxend = 0, a = 4096, r, limit = x->is64 ? UINT64_MAX / 4 : UINT32_MAX;

	for (i = 0; i < x->nph; i++) {
		const struct ph *p = &x->ph[i];
		if (p->type != PT_LOAD)
			continue;
		if (p->align > a) {
			if (p->align & (p->align - 1) || p->align > (1u << 24))
				FAIL("PT_LOAD %zu has alignment %llu", i, (unsigned long long)p->align);
			a = p->align;
		}
		if (p->vaddr + p->memsz > maxend)
			maxend = p->vaddr + p->memsz;
	}
	l->align = a;
	l->segoff = roundup(x->n, a);
	l->segvaddr = roundup(maxend, a);
	r = 0;
	if (block) {
		r = l->bs % 64;
		l->boff = l->segoff + r;
		r += l->be - l->bs;
	}
	r = roundup(r, 8);
	l->stroff = l->segoff + r;
	r += x->str->size + x->add.len;
	if (x->nd + 1 > x->slots) {
		r = roundup(r, 8);
		l->dynoff = l->segoff + r;
		l->dynslots = x->nd + 1;
		r += l->dynslots * x->esz;
	}
	l->segsize = r;
	if (l->segoff > limit || l->segvaddr > limit || r > limit - l->segoff || r > limit - l->segvaddr ||
	    l->segoff + r > SIZE_MAX / 2)
		FAIL("the file or its address space is too large to grow (end 0x%llx)", (unsigned long long)maxend);
	return 0;
}

/* Clear the dead bytes [lo, hi) that moved to the new segment (zeros compress to almost
   nothing; patchelf fills them with 'X'), leaving the program header table, the ELF and
   section header tables and any bytes another section or program header still reads. */
static void
clearold(struct ed *x, const struct layout *l, int block, uint64_t lo, uint64_t hi)
{
	size_t i;
	uint64_t ehsize = x->is64 ? 64 : 52, a, b, phend = l->phend;

	if (lo >= hi || hi > x->n || lo < ehsize)
		return;
	if (x->shoff < hi && x->shoff + (uint64_t)x->e.nsec * x->shent > lo)
		return;
	for (i = 1; i < x->e.nsec; i++) {
		const struct elfsec *s = &x->e.sec[i];
		if (i == x->stridx || !secin(s, lo, hi))
			continue;
		if (!block || s->off < l->bs || s->off + s->size > l->be)
			return;             /* not moved: still read where it is */
	}
	for (i = 0; i < x->nph; i++) {
		const struct ph *p = &x->ph[i];
		if (p->type == PT_LOAD || p->type == PT_PHDR || !p->filesz || p->off >= hi ||
		    p->off + p->filesz <= lo)
			continue;
		if (!block || p->off < l->bs || p->off + p->filesz > l->be)
			return;
	}
	/* the bigger program header table now covers [phoff, phend) */
	a = lo;
	b = hi < x->phoff ? hi : x->phoff;
	if (a < b)
		memset(x->p + a, 0, b - a);
	a = lo > phend ? lo : phend;
	if (a < hi)
		memset(x->p + a, 0, hi - a);
}

/* how the block of sections moves: odelta in the file, vdelta in memory, from
   [bvaddr, bvend); block 0: nothing moves */
struct shift {
	int block;
	uint64_t vdelta, odelta, bvend;
};

/* the new file in b: grown to the end of the new segment, the block copied to its new
   place, the string table (its old strings, then the added ones) at its new place */
static void
newfile(struct ed *x, struct buf *b, const struct layout *l, int block)
{
	uint64_t oldstroff = l->oldstroff, oldstrsize = l->oldstrsize;

	if (b->cap < l->segoff + l->segsize) {
		b->s = xrealloc(b->s, l->segoff + l->segsize + 1);
		b->cap = l->segoff + l->segsize + 1;
	}
	x->p = (unsigned char *)b->s;
	memset(x->p + x->n, 0, l->segoff + l->segsize - x->n);
	b->len = l->segoff + l->segsize;
	if (block)
		memcpy(x->p + l->boff, x->p + l->bs, l->be - l->bs);
	memcpy(x->p + l->stroff, x->p + oldstroff, oldstrsize);
	if (x->add.len)
		memcpy(x->p + l->stroff + oldstrsize, x->add.s, x->add.len);
	writeinplace(x, l->stroff);
}

/* .dynamic's entries: the string table's new place and size, and the addresses of moved
   sections; written at .dynamic's new place or its old one */
static void
newdyn(struct ed *x, const struct layout *l, const struct shift *m, uint64_t strsize)
{
	size_t i;

	for (i = 0; i < x->nd; i++) {
		struct dent *d = &x->d[i];
		if (d->tag == DT_STRTAB)
			d->val = l->segvaddr + (l->stroff - l->segoff);
		else if (d->tag == DT_STRSZ)
			d->val = strsize;
		else if (m->block && isptrtag(d->tag) && d->val >= l->bvaddr && d->val < m->bvend)
			d->val += m->vdelta;
	}
	if (l->dynoff)
		writedyn(x, l->dynoff, l->dynslots);
	else
		writedyn(x, x->dyn->off, x->slots);
}

/* version-need file names follow their DT_NEEDED */
static int
newverneed(struct ed *x, const struct elfedits *ed, const struct layout *l, const struct shift *m)
{
	const struct elfsec *vn = NULL;
	struct vnfix vf;
	size_t i;

	for (i = 0; i < x->e.nsec; i++)
		if (x->e.sec[i].type == SHT_GNU_verneed)
			vn = &x->e.sec[i];
	if (!vn)
		return 0;
	vf.ed = ed;
	vf.err = 0;
	vf.shift = m->block && vn->off >= l->bs && vn->off < l->be ? (int64_t)m->odelta : 0;
	if (walkverneed(x, vn, vnfix1, &vf) < 0)
		return -1;
	if (vf.err)
		FAIL("a .gnu.version_r file name has no new string");
	return 0;
}

/* one program header as it will be: shifted with the block, .dynamic's new place, the
   PT_PHDR one entry longer */
static void
moveph(const struct ed *x, const struct layout *l, const struct shift *m, struct ph *p)
{
	if (m->block && p->type != PT_LOAD && p->filesz && p->off >= l->bs && p->off + p->filesz <= l->be) {
		p->off += m->odelta;
		p->vaddr += m->vdelta;
		p->paddr += m->vdelta;
	}
	if (p->type == PT_DYNAMIC && l->dynoff) {
		p->off = l->dynoff;
		p->vaddr = p->paddr = l->segvaddr + (l->dynoff - l->segoff);
		p->filesz = p->memsz = l->dynslots * x->esz;
	}
	if (p->type == PT_PHDR) {
		p->filesz += x->phent;
		p->memsz += x->phent;
	}
}

/* program headers: moved ones shifted, the new PT_LOAD after the last one; returns
   their number */
static size_t
newphdrs(struct ed *x, const struct layout *l, const struct shift *m)
{
	struct ph *nph = xcalloc(x->nph + 1, sizeof *nph);
	size_t i, k, lastload = 0;

	for (i = 0; i < x->nph; i++)
		if (x->ph[i].type == PT_LOAD)
			lastload = i;
	for (i = 0, k = 0; i < x->nph; i++) {
		nph[k] = x->ph[i];
		moveph(x, l, m, &nph[k++]);
		if (i == lastload) {
			struct ph *q = &nph[k++];
			q->type = PT_LOAD;
			q->flags = PF_R | PF_W;
			q->off = l->segoff;
			q->vaddr = q->paddr = l->segvaddr;
			q->filesz = q->memsz = l->segsize;
			q->align = l->align;
		}
	}
	for (i = 0; i < k; i++)
		writeph(x, x->p + x->phoff + i * x->phent, &nph[i]);
	free(nph);
	wr16(x->p + (x->is64 ? 56 : 44), k);
	return k;
}

/* section headers: the moved sections, the string table and .dynamic */
static void
newshdrs(struct ed *x, const struct layout *l, const struct shift *m, uint64_t strsize)
{
	size_t i;

	for (i = 1; m->block && i < x->e.nsec; i++) {
		const struct elfsec *s = &x->e.sec[i];
		if (s->type != SHT_NULL && s->type != SHT_NOBITS && s->size && s->off >= l->bs &&
		    s->off + s->size <= l->be)
			setsec(x, i, s->addr + m->vdelta, s->off + m->odelta, s->size);
	}
	setsec(x, x->stridx, l->segvaddr + (l->stroff - l->segoff), l->stroff, strsize);
	if (l->dynoff)
		setsec(x, x->dynidx, l->segvaddr + (l->dynoff - l->segoff), l->dynoff, l->dynslots * x->esz);
}

/* grow the file: the new segment, the bigger program header table, the moved sections */
static int
relocate(struct ed *x, struct buf *b, const struct elfedits *ed)
{
	struct layout l;
	struct shift m;
	uint64_t oldstroff = x->str->off, oldstrsize = x->str->size;

	memset(&l, 0, sizeof l);
	l.oldstroff = oldstroff;
	l.oldstrsize = oldstrsize;
	if (x->nph + 1 >= PN_XNUM)
		FAIL("too many program headers (%zu)", x->nph);
	if ((m.block = findblock(x, &l)) < 0)
		return -1;
	if (layout(x, &l, m.block) < 0)
		return -1;
	m.vdelta = m.block ? l.segvaddr + (l.boff - l.segoff) - l.bvaddr : 0;
	m.odelta = m.block ? l.boff - l.bs : 0;
	m.bvend = l.bvaddr + (l.be - l.bs);
	newfile(x, b, &l, m.block);
	newdyn(x, &l, &m, oldstrsize + x->add.len);
	if (newverneed(x, ed, &l, &m) < 0)
		return -1;
	l.phend = x->phoff + newphdrs(x, &l, &m) * x->phent;
	newshdrs(x, &l, &m, oldstrsize + x->add.len);
	/* what moved leaves dead bytes behind (the old .dynamic stays: _DYNAMIC and the
	   GOT's first entry still name it) */
	clearold(x, &l, m.block, oldstroff, oldstroff + oldstrsize);
	if (m.block)
		clearold(x, &l, m.block, l.bs, l.be);
	return 0;
}

/* everything fits where it was */
static int
inplace(struct ed *x, const struct elfedits *ed)
{
	struct vnfix vf;
	size_t i;

	for (i = 0; i < x->e.nsec; i++) {
		const struct elfsec *s = &x->e.sec[i];
		if (s->type != SHT_GNU_verneed)
			continue;
		vf.ed = ed;
		vf.err = 0;
		vf.shift = 0;
		if (walkverneed(x, s, vnfix1, &vf) < 0)
			return -1;
		if (vf.err)
			FAIL("a .gnu.version_r file name has no new string");
	}
	writeinplace(x, x->str->off);
	writedyn(x, x->dyn->off, x->slots);
	return 0;
}

/* map an address to a file offset through the PT_LOADs; UINT64_MAX if unmapped */
static uint64_t
vtooff(const struct elf *e, uint64_t v)
{
	size_t i;

	for (i = 0; i < e->nph; i++)
		if (e->ph[i].type == PT_LOAD && v >= e->ph[i].vaddr && v - e->ph[i].vaddr < e->ph[i].filesz)
			return e->ph[i].off + (v - e->ph[i].vaddr);
	return UINT64_MAX;
}

static int
streq(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

/* whether name is one of the new names (a -> b, b -> c renames leave a 'b' that is new) */
static int
isnewname(const struct elfedits *ed, const char *name)
{
	size_t i;

	for (i = 0; i < ed->nren; i++)
		if (strcmp(ed->newn[i], name) == 0)
			return 1;
	return 0;
}

/* the dynamic names the reader must see after the edit */
struct wantdyn {
	const char **needed;
	size_t nneeded;
	const char *soname, *rpath, *runpath;
};

/* the names planned in x->d (a new string, else the old one) into w; w->needed is fresh */
static void
wantdyn(const struct ed *x, struct wantdyn *w)
{
	size_t i;

	memset(w, 0, sizeof *w);
	w->needed = xcalloc(x->nd + 1, sizeof *w->needed);
	for (i = 0; i < x->nd; i++) {
		const char *s = x->d[i].s ? x->d[i].s : x->d[i].old;
		switch (x->d[i].tag) {
		case DT_NEEDED: w->needed[w->nneeded++] = s; break;
		case DT_SONAME: w->soname = s; break;
		case DT_RPATH: w->rpath = s; break;
		case DT_RUNPATH: w->runpath = s; break;
		}
	}
}

/* how the read-back d and e differ from the plan, into e2[RBLEN] (empty: they agree) */
#define RBLEN 256
static void
readback(const struct ed *x, const struct elfedits *ed, const struct elf *e,
         const struct elfdyn *d, char *e2)
{
	size_t i, j;
	const struct elfsec *dyn = NULL;
	uint64_t strtab = 0;
	struct wantdyn wd, *w = &wd;

	wantdyn(x, w);
	for (i = 0; i < e->nsec; i++)
		if (e->sec[i].type == SHT_DYNAMIC)
			dyn = &e->sec[i];
	e2[0] = 0;
	if (d->nneeded != w->nneeded)
		snprintf(e2, RBLEN, "%zu DT_NEEDED entries, want %zu", d->nneeded, w->nneeded);
	for (i = 0; !e2[0] && i < w->nneeded; i++)
		if (strcmp(d->needed[i], w->needed[i]) != 0)
			snprintf(e2, RBLEN, "DT_NEEDED[%zu] is '%s', want '%s'", i, d->needed[i], w->needed[i]);
	if (!e2[0] && !streq(d->soname, w->soname))
		snprintf(e2, RBLEN, "DT_SONAME is '%s', want '%s'", d->soname ? d->soname : "(none)",
		         w->soname ? w->soname : "(none)");
	if (!e2[0] && (!streq(d->rpath, w->rpath) || !streq(d->runpath, w->runpath)))
		snprintf(e2, RBLEN, "DT_RPATH/DT_RUNPATH are '%s'/'%s', want '%s'/'%s'",
		         d->rpath ? d->rpath : "(none)", d->runpath ? d->runpath : "(none)",
		         w->rpath ? w->rpath : "(none)", w->runpath ? w->runpath : "(none)");
	for (i = 0; !e2[0] && i < d->nverneed; i++)
		for (j = 0; j < ed->nren; j++)
			if (strcmp(d->verneedfile[i], ed->oldn[j]) == 0 && !isnewname(ed, ed->oldn[j]))
				snprintf(e2, RBLEN, "a version need still names '%s'", ed->oldn[j]);
	for (i = 0; !e2[0] && i < e->nph; i++)
		if (e->ph[i].type == PT_DYNAMIC && (!dyn || e->ph[i].off != dyn->off || vtooff(e, e->ph[i].vaddr) != dyn->off))
			snprintf(e2, RBLEN, "PT_DYNAMIC does not map to .dynamic");
	if (!e2[0] && dyn && dyn->link < e->nsec) {
		for (i = 0; i < x->nd; i++)
			if (x->d[i].tag == DT_STRTAB)
				strtab = x->d[i].val;
		if (vtooff(e, strtab) != e->sec[dyn->link].off)
			snprintf(e2, RBLEN, "DT_STRTAB does not map to .dynstr");
	}
	free(w->needed);
}

/* fail with "WHAT: M" (M cut at 255 bytes) and free M */
static int
readfail(struct ed *x, const char *what, char *m)
{
	seterr(x->err, "%s: %.255s", what, m);
	free(m);
	return -1;
}

/* read the result back: the reader must see exactly the planned names, and ld.so's view
   (PT_DYNAMIC, DT_STRTAB through the PT_LOADs) must agree with the sections */
static int
verify(struct ed *x, const struct elfedits *ed)
{
	struct elf e;
	struct elfdyn d;
	char e2[RBLEN], *m = NULL;

	if (elf_open(&e, x->p, x->n, &m) < 0)
		return readfail(x, "the edited file does not read back", m);
	if (elf_dynamic(&e, &d, &m) < 0) {
		elf_close(&e);
		return readfail(x, "the edited file's dynamic table does not read back", m);
	}
	readback(x, ed, &e, &d, e2);
	elf_dynfree(&d);
	elf_close(&e);
	if (e2[0])
		FAIL("the edited file reads back wrong: %s", e2);
	return 0;
}

/* the name a loader-view line should have after the edit: symbols and version names
   as they were, a version need's file renamed with its DT_NEEDED; NULL for the .dynamic
   entries (verify checks those) */
static char *
wantview(const struct elfedits *ed, const char *line)
{
	const char *to;

	if (startswith(line, "vnfile "))
		return (to = renamed(ed, line + 7)) ? xasprintf("vnfile %s", to) : xstrdup(line);
	if (startswith(line, "sym ") || startswith(line, "vna ") || startswith(line, "vda "))
		return xstrdup(line);
	return NULL;
}

/* read the edited image the way ld.so does (elfload.c) and compare every symbol and
   version name with what the input had: an edit that overwrote bytes some name still
   used, or a table the loader finds elsewhere than the sections say, is refused */
static int
verifyloader(struct ed *x, const struct elfedits *ed, const struct strv *before)
{
	struct strv after = {0}, want = {0};
	struct elf e;
	char e2[256] = "", *w, *m = NULL;
	size_t i, j;

	if (elf_open(&e, x->p, x->n, &m) < 0)
		return readfail(x, "the edited file does not read back", m);
	if (elf_loaderview(&e, &after, &m) < 0) {
		elf_close(&e);
		strv_free(&after);
		return readfail(x, "the edited file would not load", m);
	}
	elf_close(&e);
	for (i = 0; i < before->n; i++)
		if ((w = wantview(ed, before->v[i]))) {
			strv_add(&want, w, 0);
			free(w);
		}
	for (i = j = 0; !e2[0] && i < after.n; i++) {
		if (!(w = wantview(ed, after.v[i])))
			continue;
		free(w);
		if (j >= want.n || strcmp(after.v[i], want.v[j]) != 0)
			snprintf(e2, sizeof e2, "the loader would read '%.100s' where the input has '%.100s'",
			         after.v[i], j < want.n ? want.v[j] : "(nothing)");
		j++;
	}
	if (!e2[0] && j != want.n)
		snprintf(e2, sizeof e2, "the loader would read %zu symbol and version names, the input has %zu",
		         j, want.n);
	strv_free(&after);
	strv_free(&want);
	if (e2[0])
		FAIL("the edit would break the library: %s", e2);
	return 0;
}

int
elfedit(struct buf *b, const struct elfedits *ed, char **err)
{
	struct ed x;
	struct strv view = {0};
	size_t i;
	int r = -1, changed, reloc;

	memset(&x, 0, sizeof x);
	x.p = (unsigned char *)b->s;
	x.n = b->len;
	x.err = err;
	if (elf_open(&x.e, x.p, x.n, err) < 0)
		return -1;
	/* an input the reader refuses is refused: the edit is read back by the same reader,
	   and whatever it could not read (a version need past the end...) would be carried
	   over unchecked */
	{
		struct elfdyn d0;
		if (elf_dynamic(&x.e, &d0, err) < 0)
			goto out;
		elf_dynfree(&d0);
	}
	x.is64 = x.e.is64;
	for (i = 0; i < ed->nren; i++)
		if (!ed->oldn[i] || !ed->newn[i] || !*ed->newn[i])
			break;
	if (i < ed->nren || (ed->soname && !*ed->soname)) {
		seterr(err, "an empty name cannot be set");
		goto out;
	}
	if (load(&x) < 0)
		goto out;
	if (elf_loaderview(&x.e, &view, err) < 0)
		goto out;
	changed = planentries(&x, ed);
	if (!changed) {
		r = 0;
		goto out;
	}
	if (placestrings(&x, ed) < 0)
		goto out;
	/* old names point into b, which the edit overwrites or moves: keep copies */
	reloc = x.add.len || x.nd + 1 > x.slots;
	for (i = 0; i < x.nd; i++)
		if (x.d[i].old)
			x.d[i].old = xstrdup(x.d[i].old);
	if (reloc ? relocate(&x, b, ed) < 0 : inplace(&x, ed) < 0)
		goto outfree;
	x.n = b->len;
	if (verify(&x, ed) < 0 ||
	    verifyloader(&x, ed, &view) < 0)
		goto outfree;
	r = 1;
outfree:
	for (i = 0; i < x.nd; i++)
		free((char *)x.d[i].old);
out:
	strv_free(&view);
	free(x.d);
	free(x.ph);
	free(x.refs);
	buffree(&x.add);
	elf_close(&x.e);
	return r;
}
