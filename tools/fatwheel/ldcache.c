/* reading /etc/ld.so.cache as ld.so does, in its three layouts (glibc's
   sysdeps/generic/dl-cache.h and elf/dl-cache.c):
   - old (libc5, glibc 2.0/2.1): "ld.so-1.7.0", u32 nlibs at 12, then nlibs entries of
     {i32 flags; u32 key, value} (12 bytes); key and value count from the end of the
     entries;
   - new (glibc 2.2, the default since 2.32): "glibc-ld.so.cache" "1.1", u32 nlibs at 20,
     u32 string-table size at 24, entries of {i32 flags; u32 key, value, osversion; u64
     hwcap} (24 bytes) from 48; key and value count from the start of this header;
   - compat: the old layout, then the new one at the next multiple of 8.
   An entry's flags say what it is: the low byte 1 or 3 an ELF library (libc6), the high
   byte its ABI (x86-64, aarch64 ...). ld.so takes the first entry for the name that its
   own ABI accepts; fatwheel takes the first whose file is an ELF object of the loading
   object's class and machine, which is the same entry where ldconfig classified it right.
   Entries for a hwcaps subfolder (hwcap != 0) are passed over: fatwheel bundles the
   baseline library, which every CPU loads. */
#include "state.h"
#include "elffile.h"
#include "mapfile.h"

#include <stdlib.h>
#include <string.h>

static const char oldmagic[] = "ld.so-1.7.0";
static const char newmagic[] = "glibc-ld.so.cache1.1";

/* the cache: mapped once, on the first look-up that reaches it */
static struct {
	int read;
	struct mapfile mf;
	size_t oldn, newn;           /* entries of each layout present (0: absent) */
	size_t oldents, oldstr;      /* offsets of the old entries and their strings */
	size_t newat;                /* offset of the new header */
} c;

static uint32_t
u32at(size_t off)
{
	return rd32(c.mf.p + off);
}

/* the NUL-terminated string at base + off inside the file, or NULL */
static const char *
strat(size_t base, uint32_t off)
{
	size_t at = base + off;

	if (base > c.mf.n || off >= c.mf.n - base || !memchr(c.mf.p + at, 0, c.mf.n - at))
		return NULL;
	return (const char *)c.mf.p + at;
}

/* find the layouts in the mapped file; a file that is neither is an empty cache, as ld.so
   treats it */
static void
layout(void)
{
	size_t n = c.mf.n, at;

	if (n >= 16 && memcmp(c.mf.p, oldmagic, sizeof oldmagic - 1) == 0) {
		c.oldn = u32at(12);
		if (c.oldn > (n - 16) / 12) {
			c.oldn = 0;
			return;
		}
		c.oldents = 16;
		c.oldstr = 16 + c.oldn * 12;
		at = (c.oldstr + 7) & ~(size_t)7;
		if (n > at + 48 && memcmp(c.mf.p + at, newmagic, sizeof newmagic - 1) == 0)
			c.newat = at, c.newn = u32at(at + 20);
	} else if (n >= 48 && memcmp(c.mf.p, newmagic, sizeof newmagic - 1) == 0) {
		c.newat = 0;
		c.newn = u32at(20);
	}
	if (c.newn > (n - c.newat - 48) / 24)
		c.newn = 0;
}

/* map the cache file (--ld-so-cache, else /etc/ld.so.cache) once */
static void
opencache(struct searchpath *s)
{
	if (c.read)
		return;
	c.read = 1;
	if (map_open(&c.mf, s->cache ? s->cache : "/etc/ld.so.cache") < 0 || !c.mf.p) {
		if (s->cache)
			die("--ld-so-cache %s:", s->cache);
		return;
	}
	layout();
	if (s->cache && !c.oldn && !c.newn)
		die("--ld-so-cache %s: not an ld.so.cache file (neither \"%s\" nor \"%s\" with entries)", s->cache,
		    oldmagic, newmagic);
}

/* the path of entry i of the new (isnew) or old layout when its key is name and it is an
   ELF library without a hwcap, else NULL */
static const char *
entry(size_t i, int isnew, const char *name)
{
	size_t at = isnew ? c.newat + 48 + i * 24 : c.oldents + i * 12;
	size_t base = isnew ? c.newat : c.oldstr;
	uint32_t flags = u32at(at);
	const char *k;

	if ((flags & 0xff) != 1 && (flags & 0xff) != 3)
		return NULL;
	if (isnew && (u32at(at + 16) || u32at(at + 20)))
		return NULL;
	if (!(k = strat(base, u32at(at + 4))) || strcmp(k, name) != 0)
		return NULL;
	return strat(base, u32at(at + 8));
}

char *
ldcache_find(struct searchpath *s, const char *name, const struct elfinfo *want)
{
	const char *v;
	size_t i;
	int isnew;

	opencache(s);
	/* ld.so reads the new layout when there is one, the old one only without */
	isnew = c.newn > 0;
	for (i = 0; i < (isnew ? c.newn : c.oldn); i++) {
		if (!(v = entry(i, isnew, name)) || v[0] != '/')
			continue;
		if (search_matches(v, want))
			return xstrdup(v);
	}
	return NULL;
}

void
ldcache_free(void)
{
	map_close(&c.mf);
	memset(&c, 0, sizeof c);
}
