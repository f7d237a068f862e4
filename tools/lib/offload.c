/* GPU code containers inside ELF files: clang offload bundles, CCOB, NVIDIA fatbins */
#include "offload.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#ifndef OFFLOAD_NO_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#endif

#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define BUNDLE_MAGICLEN 24
#define NVFATBIN_MAGIC 0xBA55ED50u

#define FAIL(...) return seterr(err, __VA_ARGS__)

typedef unsigned long long ull;

/* true if [off, off+len) lies inside n bytes */
static int
fits(uint64_t off, uint64_t len, uint64_t n)
{
	return off <= n && len <= n - off;
}

const char *
off_kindname(enum offkind k)
{
	switch (k) {
	case OFF_HOST: return "host";
	case OFF_AMDGCN: return "code-object";
	case OFF_AMDGCN_BC: return "bitcode";
	case OFF_NV_SASS: return "sass";
	case OFF_NV_PTX: return "ptx";
	default: return "other";
	}
}

void
off_processor(const char *target, char *buf, size_t len)
{
	size_t k = strcspn(target, ":");

	if (k >= len)
		k = len - 1;
	memcpy(buf, target, k);
	buf[k] = 0;
}

int
off_feature(const char *target, const char *feature)
{
	const char *s = strchr(target, ':');
	size_t fl = strlen(feature);

	while (s) {
		s++;
		if (strncmp(s, feature, fl) == 0 && (s[fl] == '+' || s[fl] == '-'))
			return s[fl];
		s = strchr(s, ':');
	}
	return 0;
}

static struct offbundle *
addbundle(struct offlist *l, enum offfmt fmt, const char *sec, uint64_t off)
{
	struct offbundle *b;

	l->b = xgrow(l->b, &l->capb, l->nb + 1, sizeof *l->b);
	b = &l->b[l->nb++];
	memset(b, 0, sizeof *b);
	b->fmt = fmt;
	snprintf(b->section, sizeof b->section, "%.*s", (int)sizeof b->section - 1, sec);
	b->off = off;
	b->first = l->ne;
	return b;
}

static struct offentry *
addentry(struct offlist *l)
{
	struct offentry *e;

	l->e = xgrow(l->e, &l->cape, l->ne + 1, sizeof *l->e);
	e = &l->e[l->ne++];
	memset(e, 0, sizeof *e);
	return e;
}

/* fill kind, target and code object version of an entry from its id and payload */
static void
classify(struct offentry *e, const unsigned char *pay, uint64_t n)
{
	const char *t, *dash;

	e->kind = OFF_OTHER;
	dash = strchr(e->id, '-');
	if (dash && (size_t)(dash - e->id) == 4 && strncmp(e->id, "host", 4) == 0) {
		e->kind = OFF_HOST;
		return;
	}
	t = strstr(e->id, "amdgcn-amd-amdhsa");
	if (!t) {
		snprintf(e->target, sizeof e->target, "%.*s", (int)sizeof e->target - 1, dash ? dash + 1 : e->id);
		return;
	}
	t += strlen("amdgcn-amd-amdhsa");
	while (*t == '-')
		t++;
	snprintf(e->target, sizeof e->target, "%.*s", (int)sizeof e->target - 1, t);
	e->kind = OFF_AMDGCN;
	if (n >= 4 && memcmp(pay, "BC\xc0\xde", 4) == 0) {
		e->kind = OFF_AMDGCN_BC;
	} else if (n >= 64 && elf_is(pay, n) && pay[4] == 2 && pay[7] == 64) {
		/* ELFOSABI_AMDGPU_HSA: EI_ABIVERSION 0..4 is code object v2..v6 */
		e->cov = pay[8] + 2;
		if (e->cov >= 6)
			e->genericver = (int)(rd32(pay + 48) >> 24);
	}
}

/* off_bundle into l's last bundle, with a prefix for messages about decompressed
   bundles */
static int
bundle(const struct offbytes *in, const char *what, struct offlist *l, uint64_t *end, char **err)
{
	const unsigned char *p = in->p;
	size_t n = in->n;
	uint64_t base = in->base;
	uint64_t count, i, pos, eoff, esize, idlen, last;
	struct offentry *e;
	struct offbundle *b;

	if (n < BUNDLE_MAGICLEN + 8 || memcmp(p, BUNDLE_MAGIC, BUNDLE_MAGICLEN) != 0)
		FAIL("%sno offload bundle at offset %llu", what, (ull)base);
	count = rd64(p + BUNDLE_MAGICLEN);
	pos = BUNDLE_MAGICLEN + 8;
	if (count > (n - pos) / 24)
		FAIL("%soffload bundle at offset %llu claims %llu entries; only %llu bytes follow",
		     what, (ull)base, (ull)count, (ull)(n - pos));
	last = pos;
	for (i = 0; i < count; i++) {
		if (!fits(pos, 24, n))
			FAIL("%sbundle entry %llu at offset %llu is past the end of the bundle",
			     what, (ull)i, (ull)(base + pos));
		eoff = rd64(p + pos);
		esize = rd64(p + pos + 8);
		idlen = rd64(p + pos + 16);
		pos += 24;
		if (!fits(pos, idlen, n))
			FAIL("%sbundle entry %llu id (%llu bytes at offset %llu) is past the end of the bundle",
			     what, (ull)i, (ull)idlen, (ull)(base + pos));
		if (!fits(eoff, esize, n))
			FAIL("%sbundle entry %llu (offset %llu, %llu bytes) is past the end of the bundle at offset %llu",
			     what, (ull)i, (ull)eoff, (ull)esize, (ull)(base + pos - 24));
		e = addentry(l);
		if (idlen >= sizeof e->id || memchr(p + pos, 0, idlen))
			FAIL("%sbundle entry %llu has a bad id (%llu bytes at offset %llu)",
			     what, (ull)i, (ull)idlen, (ull)(base + pos));
		memcpy(e->id, p + pos, idlen);
		e->id[idlen] = 0;
		e->off = eoff;
		e->size = esize;
		classify(e, p + eoff, esize);
		pos += idlen;
		if (eoff + esize > last)
			last = eoff + esize;
	}
	if (pos > last)
		last = pos;
	b = &l->b[l->nb - 1];
	b->n = l->ne - b->first;
	*end = last;
	return 0;
}

int
off_bundle(const struct offbytes *in, struct offlist *l, uint64_t *end, char **err)
{
	addbundle(l, OFFB_CLANG, in->sec, in->base);
	if (bundle(in, "", l, end, err) < 0)
		return -1;
	l->b[l->nb - 1].size = *end;
	return 0;
}

int
off_ccobhdr(const struct offbytes *in, struct ccobhdr *h, char **err)
{
	const unsigned char *p = in->p;
	size_t n = in->n;
	uint64_t base = in->base;

	memset(h, 0, sizeof *h);
	if (n < 8 || memcmp(p, "CCOB", 4) != 0)
		FAIL("no compressed bundle (CCOB) at offset %llu", (ull)base);
	h->version = rd16(p + 4);
	h->method = rd16(p + 6);
	switch (h->version) {
	case 1:
		h->hdrlen = 20;
		break;
	case 2:
		h->hdrlen = 24;
		break;
	case 3:
		h->hdrlen = 32;
		break;
	default:
		FAIL("compressed bundle at offset %llu has unknown version %d (offset %llu)",
		     (ull)base, h->version, (ull)(base + 4));
	}
	if (n < h->hdrlen)
		FAIL("compressed bundle header at offset %llu is truncated (%zu of %zu bytes)",
		     (ull)base, n, h->hdrlen);
	if (h->method != 0 && h->method != 1)
		FAIL("compressed bundle at offset %llu has unknown method %d (offset %llu; 0 zlib, 1 zstd)",
		     (ull)base, h->method, (ull)(base + 6));
	switch (h->version) {
	case 1:
		h->raw = rd32(p + 8);
		h->hash = rd64(p + 12);
		break;
	case 2:
		h->total = rd32(p + 8);
		h->raw = rd32(p + 12);
		h->hash = rd64(p + 16);
		break;
	case 3:
		h->total = rd64(p + 8);
		h->raw = rd64(p + 16);
		h->hash = rd64(p + 24);
		break;
	}
	if (h->version > 1 && h->total < h->hdrlen)
		FAIL("compressed bundle at offset %llu says its total size is %llu bytes, less than its header (offset %llu)",
		     (ull)base, (ull)h->total, (ull)(base + 8));
	if (h->total > n)
		FAIL("compressed bundle at offset %llu says it is %llu bytes but only %zu remain (offset %llu)",
		     (ull)base, (ull)h->total, n, (ull)(base + 8));
	return 0;
}

/* one compressed bundle's stream: its header h at file offset base, the stream at src
   (*srcn bytes, cut to what the stream used), the declared raw size's field at rawoff */
struct ccobin {
	const struct ccobhdr *h;
	uint64_t base, rawoff;
	const unsigned char *src;
	size_t srcn;
};

#ifndef OFFLOAD_NO_ZSTD
/* the zstd frame into dst (h->raw bytes); its decompressed size in *r */
static int
unzstd(struct ccobin *c, unsigned char *dst, size_t *r, char **err)
{
	const struct ccobhdr *h = c->h;
	unsigned long long fsz;

	if (h->version == 1) {
		*r = ZSTD_findFrameCompressedSize(c->src, c->srcn);
		if (ZSTD_isError(*r))
			FAIL("compressed bundle at offset %llu: bad zstd stream at offset %llu (%s)",
			     (ull)c->base, (ull)(c->base + h->hdrlen), ZSTD_getErrorName(*r));
		c->srcn = *r;
	}
	fsz = ZSTD_getFrameContentSize(c->src, c->srcn);
	if (fsz != ZSTD_CONTENTSIZE_UNKNOWN && fsz != ZSTD_CONTENTSIZE_ERROR && fsz != h->raw)
		FAIL("compressed bundle at offset %llu says %llu bytes decompressed but its zstd frame holds %llu (offset %llu)",
		     (ull)c->base, (ull)h->raw, fsz, (ull)c->rawoff);
	*r = ZSTD_decompress(dst, h->raw, c->src, c->srcn);
	if (!ZSTD_isError(*r))
		return 0;
	if (ZSTD_getErrorCode(*r) == ZSTD_error_dstSize_tooSmall)
		FAIL("compressed bundle at offset %llu decompresses to more than the %llu bytes its header says (offset %llu)",
		     (ull)c->base, (ull)h->raw, (ull)c->rawoff);
	FAIL("compressed bundle at offset %llu: bad zstd stream at offset %llu (%s)",
	     (ull)c->base, (ull)(c->base + h->hdrlen), ZSTD_getErrorName(*r));
}
#endif

/* inflate in chunks zlib's 32-bit counters can take, into dst (raw bytes); any output
   past raw means the header lied (*over set); returns inflate's last answer */
static int
inflatecapped(z_stream *z, const struct ccobin *c, unsigned char *dst, int *over)
{
	const unsigned char *src = c->src;
	size_t srcn = c->srcn, raw = (size_t)c->h->raw;
	unsigned char extra;
	int zr = Z_OK;

	*over = 0;
	while (zr == Z_OK) {
		size_t inleft = srcn - (size_t)(z->next_in - src);
		size_t outleft = raw - (size_t)(z->next_out - dst);

		z->avail_in = inleft > 0x40000000 ? 0x40000000 : (uInt)inleft;
		z->avail_out = outleft > 0x40000000 ? 0x40000000 : (uInt)outleft;
		if (outleft == 0) {
			z->next_out = &extra;
			z->avail_out = 1;
		}
		zr = inflate(z, Z_NO_FLUSH);
		if (outleft == 0 && z->avail_out == 0) {
			*over = 1;
			return Z_BUF_ERROR;
		}
		if (zr == Z_BUF_ERROR && z->avail_in == 0)
			break;
		if (zr == Z_OK && z->avail_in == 0 && inleft == 0)
			break;
	}
	return zr;
}

/* the zlib stream into dst (h->raw bytes); its decompressed size in *r */
static int
unzlib(struct ccobin *c, unsigned char *dst, size_t *r, char **err)
{
	const struct ccobhdr *h = c->h;
	z_stream z;
	int zr, over;

	memset(&z, 0, sizeof z);
	if (inflateInit(&z) != Z_OK)
		FAIL("compressed bundle at offset %llu: zlib cannot start", (ull)c->base);
	z.next_in = (unsigned char *)c->src;
	z.next_out = dst;
	zr = inflatecapped(&z, c, dst, &over);
	c->srcn = (size_t)(z.next_in - c->src);
	inflateEnd(&z);
	if (over)
		FAIL("compressed bundle at offset %llu decompresses to more than the %llu bytes its header says (offset %llu)",
		     (ull)c->base, (ull)h->raw, (ull)c->rawoff);
	if (zr != Z_STREAM_END)
		FAIL("compressed bundle at offset %llu: bad or truncated zlib stream at offset %llu (%s)",
		     (ull)c->base, (ull)(c->base + h->hdrlen + c->srcn), z.msg ? z.msg : "ends early");
	*r = z.total_out;
	return 0;
}

int
off_ccobinflate(const struct offbytes *in, const struct ccobhdr *h, uint64_t maxraw,
                struct ccobdata *out, char **err)
{
	uint64_t base = in->base;
	size_t n = in->n;
	struct ccobin c = {h, base, base + (h->version == 3 ? 16 : h->version == 2 ? 12 : 8), in->p + h->hdrlen, 0};
	size_t r = 0;
	unsigned char *dst;
	int rc;

	out->raw = NULL;
	if (!maxraw)
		maxraw = OFF_MAXRAW;
	if (h->raw > maxraw || h->raw > SIZE_MAX - 1)
		FAIL("compressed bundle at offset %llu would decompress to %llu bytes, over the %llu-byte cap (offset %llu)",
		     (ull)base, (ull)h->raw, (ull)maxraw, (ull)c.rawoff);
	c.srcn = (h->total ? h->total : n) - h->hdrlen;
	dst = xmalloc(h->raw ? h->raw : 1);
#ifdef OFFLOAD_NO_ZSTD
	if (h->method == 1) {
		free(dst);
		FAIL("compressed bundle at offset %llu is zstd, and this build has no zstd", (ull)base);
	}
	rc = unzlib(&c, dst, &r, err);
#else
	rc = h->method == 1 ? unzstd(&c, dst, &r, err) : unzlib(&c, dst, &r, err);
#endif
	if (rc == 0 && r != h->raw)
		rc = seterr(err, "compressed bundle at offset %llu decompresses to %zu bytes, not the %llu its header says (offset %llu)",
		            (ull)base, r, (ull)h->raw, (ull)c.rawoff);
	if (rc < 0) {
		free(dst);
		return -1;
	}
	out->raw = dst;
	out->used = h->total ? h->total : h->hdrlen + c.srcn;
	return 0;
}

/* the next offset at or after pos that starts a bundle; n if none; -1 on stray bytes */
static int64_t
nextbundle(const unsigned char *p, size_t n, size_t pos)
{
	while (pos < n && p[pos] == 0)
		pos++;
	if (pos >= n)
		return (int64_t)n;
	if (fits(pos, BUNDLE_MAGICLEN, n) && memcmp(p + pos, BUNDLE_MAGIC, BUNDLE_MAGICLEN) == 0)
		return (int64_t)pos;
	if (fits(pos, 4, n) && memcmp(p + pos, "CCOB", 4) == 0)
		return (int64_t)pos;
	return -1 - (int64_t)pos;
}

int
off_hipfatbin(const struct offbytes *in, struct offlist *l, const struct offopts *o, char **err)
{
	const unsigned char *p = in->p;
	size_t n = in->n, pos = 0;
	uint64_t base = in->base, end, used;
	const char *sec = in->sec;
	struct offbytes at, rawin;
	int64_t nx;
	struct offbundle *b;
	struct ccobhdr h;
	struct ccobdata cd;
	char what[96];

	for (;;) {
		nx = nextbundle(p, n, pos);
		if (nx < 0)
			FAIL("%s: bytes at offset %llu are neither a bundle nor padding",
			     sec, (ull)(base + (uint64_t)(-1 - nx)));
		pos = (size_t)nx;
		if (pos >= n)
			return 0;
		at = (struct offbytes){p + pos, n - pos, base + pos, sec};
		if (p[pos] == 'C') {
			if (off_ccobhdr(&at, &h, err) < 0)
				return -1;
			if (off_ccobinflate(&at, &h, o ? o->maxraw : 0, &cd, err) < 0)
				return -1;
			used = cd.used;
			b = addbundle(l, OFFB_CCOB, sec, base + pos);
			b->ccobver = h.version;
			b->method = h.method;
			b->rawsize = h.raw;
			b->size = used;
			snprintf(what, sizeof what, "bundle decompressed from offset %llu: ", (ull)(base + pos));
			rawin = (struct offbytes){cd.raw, h.raw, 0, sec};
			if (bundle(&rawin, what, l, &end, err) < 0) {
				free(cd.raw);
				return -1;
			}
			free(cd.raw);
		} else {
			if (off_bundle(&at, l, &end, err) < 0)
				return -1;
			used = end;
		}
		pos += used;
	}
}

/* True if the cubin p[0..n) is an ELF64 file whose symbol tables hold no STT_FUNC
   symbol: a module with no kernel or device function. nvcc's link step always runs
   nvlink --register-link-binaries (nvcc -dryrun shows it, CUDA 13.0) and embeds its
   cubin in a fatbin of its own; without -rdc that cubin has no function at all. False
   for anything it cannot read whole (then the module is judged as having code). */
static int
cubin_nofunc(const unsigned char *p, size_t n)
{
	uint64_t shoff, off, size, ent, i, k;
	uint16_t shentsize, shnum;
	const unsigned char *sh;

	if (n < 64 || memcmp(p, "\177ELF", 4) != 0 || p[4] != 2 || p[5] != 1)
		return 0;
	shoff = rd64(p + 40);
	shentsize = rd16(p + 58);
	shnum = rd16(p + 60);
	if (shentsize < 64 || shnum == 0 || !fits(shoff, (uint64_t)shentsize * shnum, n))
		return 0;
	for (i = 0; i < shnum; i++) {
		sh = p + shoff + i * shentsize;
		if (rd32(sh + 4) != 2 && rd32(sh + 4) != 11)   /* SHT_SYMTAB, SHT_DYNSYM */
			continue;
		off = rd64(sh + 24), size = rd64(sh + 32), ent = rd64(sh + 56);
		if (ent < 24 || !fits(off, size, n))
			return 0;
		for (k = 0; k + ent <= size; k += ent)
			if ((p[off + k + 4] & 0xf) == 2)       /* st_info: STT_FUNC */
				return 0;
	}
	return 1;
}

int
off_nvfatbin(const struct offbytes *in, struct offlist *l, char **err)
{
	const unsigned char *p = in->p;
	size_t n = in->n, pos = 0, epos, cend;
	uint64_t base = in->base;
	const char *sec = in->sec;
	uint64_t fatsize, esz, pay;
	uint32_t hs, kind, arch, flags;
	const char *asfx;
	struct offbundle *b;
	struct offentry *e;

	for (;;) {
		while (pos < n && p[pos] == 0)
			pos++;
		if (pos >= n)
			return 0;
		if (!fits(pos, 16, n) || rd32(p + pos) != NVFATBIN_MAGIC)
			FAIL("%s: bytes at offset %llu are not an NVIDIA fatbin (magic 0xba55ed50)",
			     sec, (ull)(base + pos));
		hs = rd16(p + pos + 6);
		fatsize = rd64(p + pos + 8);
		if (hs < 16 || !fits(pos, hs, n) || !fits(pos + hs, fatsize, n))
			FAIL("%s: fatbin at offset %llu says %u + %llu bytes but only %llu remain (offset %llu)",
			     sec, (ull)(base + pos), hs, (ull)fatsize, (ull)(n - pos), (ull)(base + pos + 8));
		b = addbundle(l, OFFB_NVFATBIN, sec, base + pos);
		b->size = hs + fatsize;
		cend = pos + hs + (size_t)fatsize;
		epos = pos + hs;
		while (epos + 64 <= cend) {
			kind = rd16(p + epos);
			esz = rd32(p + epos + 4);
			pay = rd64(p + epos + 8);
			arch = rd32(p + epos + 28);
			/* bit 20 of the flags marks arch-specific code (sm_90a): checked against
			   cuobjdump --list-elf on libtorch_cuda.so (CUDA 13); bit 21 family-specific
			   code (sm_100f, compute_120f): nvcc 13.0 sets it for every 'f' target and
			   only for those (tools/gpucheck/tests/nvidia.sh compiles them) */
			flags = rd32(p + epos + 40);
			asfx = flags & 0x100000 ? "a" : flags & 0x200000 ? "f" : "";
			if (esz == 0)
				break;
			if (esz < 64 || !fits(epos, esz, cend) || !fits(epos + esz, pay, cend))
				FAIL("%s: fatbin entry at offset %llu (header %llu, payload %llu bytes) is past the end of its fatbin",
				     sec, (ull)(base + epos), (ull)esz, (ull)pay);
			e = addentry(l);
			e->off = base + epos + esz;
			e->size = pay;
			if (kind == 1) {
				e->kind = OFF_NV_PTX;
				snprintf(e->target, sizeof e->target, "compute_%u%s", arch, asfx);
			} else if (kind == 2 || kind == 0x10) {
				e->kind = OFF_NV_SASS;
				snprintf(e->target, sizeof e->target, "sm_%u%s", arch, asfx);
				/* flag 0x2000 (LZ4) or 0x8000 (zstd): a compressed payload, unread */
				e->nofunc = !(flags & 0xa000) && cubin_nofunc(p + epos + esz, (size_t)pay);
			} else {
				e->kind = OFF_OTHER;
				snprintf(e->target, sizeof e->target, "kind%u_%u", kind, arch);
			}
			memcpy(e->id, e->target, sizeof e->target);
			epos += esz + pay;
		}
		b = &l->b[l->nb - 1];
		b->n = l->ne - b->first;
		pos = cend;
	}
}

/* EF_AMDGPU_MACH values and their processors: LLVM's llvm/BinaryFormat/ELF.h (LLVM 19,
   /usr/lib/llvm-19/include) and, for the targets added after it (gfx950, gfx1152..,
   gfx1250.., gfx9-4-generic ..), llvm/test/CodeGen/AMDGPU/elf-header-flags-mach.ll */
static const struct { unsigned mach; const char *name; } machs[] = {
	{0x020, "gfx600"}, {0x021, "gfx601"}, {0x022, "gfx700"}, {0x023, "gfx701"},
	{0x024, "gfx702"}, {0x025, "gfx703"}, {0x026, "gfx704"}, {0x028, "gfx801"},
	{0x029, "gfx802"}, {0x02a, "gfx803"}, {0x02b, "gfx810"}, {0x02c, "gfx900"},
	{0x02d, "gfx902"}, {0x02e, "gfx904"}, {0x02f, "gfx906"}, {0x030, "gfx908"},
	{0x031, "gfx909"}, {0x032, "gfx90c"}, {0x033, "gfx1010"}, {0x034, "gfx1011"},
	{0x035, "gfx1012"}, {0x036, "gfx1030"}, {0x037, "gfx1031"}, {0x038, "gfx1032"},
	{0x039, "gfx1033"}, {0x03a, "gfx602"}, {0x03b, "gfx705"}, {0x03c, "gfx805"},
	{0x03d, "gfx1035"}, {0x03e, "gfx1034"}, {0x03f, "gfx90a"}, {0x040, "gfx940"},
	{0x041, "gfx1100"}, {0x042, "gfx1013"}, {0x043, "gfx1150"}, {0x044, "gfx1103"},
	{0x045, "gfx1036"}, {0x046, "gfx1101"}, {0x047, "gfx1102"}, {0x048, "gfx1200"},
	{0x049, "gfx1250"}, {0x04a, "gfx1151"}, {0x04b, "gfx941"}, {0x04c, "gfx942"},
	{0x04e, "gfx1201"}, {0x04f, "gfx950"}, {0x050, "gfx1310"}, {0x051, "gfx9-generic"},
	{0x052, "gfx10-1-generic"}, {0x053, "gfx10-3-generic"}, {0x054, "gfx11-generic"},
	{0x055, "gfx1152"}, {0x057, "gfx1154"}, {0x058, "gfx1153"}, {0x059, "gfx12-generic"},
	{0x05a, "gfx1251"}, {0x05b, "gfx12-5-generic"}, {0x05c, "gfx1172"}, {0x05d, "gfx1170"},
	{0x05e, "gfx1171"}, {0x05f, "gfx9-4-generic"}, {0x062, "gfx11-7-generic"},
	{0x063, "gfx13-generic"},
};

int
off_amdgpu_target(uint32_t flags, int cov, char *buf, size_t len)
{
	size_t i;
	unsigned x, sr;
	const char *name = NULL;

	for (i = 0; i < sizeof machs / sizeof machs[0]; i++)
		if (machs[i].mach == (flags & 0xff))
			name = machs[i].name;
	if (!name)
		return -1;
	if (cov <= 3) {
		/* v3: one bit each, set = on (EF_AMDGPU_FEATURE_XNACK_V3 0x100, SRAMECC_V3 0x200) */
		snprintf(buf, len, "%s%s%s", name, flags & 0x200 ? ":sramecc+" : "",
		         flags & 0x100 ? ":xnack+" : "");
		return 0;
	}
	/* v4 and up: two bits each, 0 unsupported, 1 any, 2 off, 3 on (XNACK_V4 0x300,
	   SRAMECC_V4 0xc00); the target id names sramecc before xnack */
	x = (flags >> 8) & 3;
	sr = (flags >> 10) & 3;
	snprintf(buf, len, "%s%s%s", name, sr == 2 ? ":sramecc-" : sr == 3 ? ":sramecc+" : "",
	         x == 2 ? ":xnack-" : x == 3 ? ":xnack+" : "");
	return 0;
}

int
off_codeobj(const unsigned char *p, size_t n, struct offlist *l, char **err)
{
	struct offbundle *b;
	struct offentry *e;
	uint32_t flags;
	int cov;

	if (n < 64 || !elf_is(p, n))
		FAIL("not an AMDGPU code object: no ELF header (offset 0)");
	if (p[4] != 2)
		FAIL("AMDGPU code object: EI_CLASS is %u, not 2 (ELF64) (offset 4)", p[4]);
	if (p[5] != 1)
		FAIL("AMDGPU code object: EI_DATA is %u, not 1 (little-endian) (offset 5)", p[5]);
	if (rd16(p + 18) != 0xe0)
		FAIL("not an AMDGPU code object: e_machine is 0x%x, not 0xe0 (offset 18)", rd16(p + 18));
	if (p[7] != 64)
		FAIL("AMDGPU code object: EI_OSABI is %u, not 64 (ELFOSABI_AMDGPU_HSA) (offset 7)", p[7]);
	if (p[8] > 4)
		FAIL("AMDGPU code object: EI_ABIVERSION %u names no code object version (offset 8)", p[8]);
	/* EI_ABIVERSION 0..4 is code object v2..v6; v2 kept its target in a note, not e_flags */
	cov = p[8] + 2;
	flags = rd32(p + 48);
	b = addbundle(l, OFFB_CODEOBJ, "code object", 0);
	b->size = n;
	e = addentry(l);
	e->kind = OFF_AMDGCN;
	e->cov = cov;
	e->size = n;
	if (cov >= 6)
		e->genericver = (int)(flags >> 24);
	if (cov < 3 || off_amdgpu_target(flags, cov, e->target, sizeof e->target) < 0) {
		e->kind = OFF_OTHER;
		snprintf(e->target, sizeof e->target, "amdgcn-mach-0x%02x", (unsigned)(flags & 0xff));
	}
	snprintf(e->id, sizeof e->id, "hipv4-amdgcn-amd-amdhsa--%s", e->target);
	l->b[l->nb - 1].n = 1;
	return 0;
}

#define HIPF_MAGIC 0x48495046u /* "HIPF": __CudaFatBinaryWrapper of a fat binary */
#define HIPK_MAGIC 0x4B504948u /* "HIPK": its code lives in .kpack archives */

/* Read .hipFatBinSegment's 24-byte __CudaFatBinaryWrapper records: magic, version,
   binary pointer, reserved1 (the co_index of a HIPK wrapper). ROCm's rocm-kpack
   (rocm-systems shared/kpack/python/rocm_kpack/elf/kpack_transform.py) rewrites HIPF
   to HIPK and stores the wrapper's index in reserved1. */
static int
hipksegment(const struct elf *e, const struct elfsec *s, struct offlist *l, char **err)
{
	const unsigned char *d = elf_secdata(e, s);
	size_t i, nw;
	uint32_t magic;

	if (!d)
		FAIL("section .hipFatBinSegment (offset %llu, %llu bytes) is past the end of the file",
		     (ull)s->off, (ull)s->size);
	nw = (size_t)s->size / 24;
	for (i = 0; i < nw; i++) {
		/* HIPF wrappers (and padding) point at .hip_fatbin, read on its own */
		magic = rd32(d + i * 24);
		if (magic != HIPK_MAGIC)
			continue;
		l->hipk = xrealloc(l->hipk, (l->nhipk + 1) * sizeof *l->hipk);
		l->hipk[l->nhipk++] = rd32(d + i * 24 + 16);
	}
	return 0;
}

/* true if the file links at run time against NVIDIA's JIT linker or runtime compiler */
static int
jitlinks(const struct elf *e)
{
	struct elfdyn d;
	char *err = NULL;
	size_t i;
	int r = 0;

	if (elf_dynamic(e, &d, &err) < 0) {
		free(err);
		return 0;
	}
	for (i = 0; i < d.nneeded; i++)
		if (startswith(d.needed[i], "libnvJitLink.so") || startswith(d.needed[i], "libnvrtc.so"))
			r = 1;
	elf_dynfree(&d);
	return r;
}

/* one -fgpu-rdc bundle section: an entry of the object's one RDC bundle */
static void
rdcentry(const struct elfsec *s, const unsigned char *d, struct offlist *l, struct offbundle **b)
{
	struct offentry *en;

	if (!*b)
		*b = addbundle(l, OFFB_RDC, s->name, s->off);
	en = addentry(l);
	snprintf(en->id, sizeof en->id, "%.*s", (int)sizeof en->id - 1, s->name + BUNDLE_MAGICLEN);
	en->off = s->off;
	en->size = s->size;
	classify(en, d, s->size);
	*b = &l->b[l->nb - 1];
	(*b)->n++;
	if (s->off + s->size > (*b)->off + (*b)->size)
		(*b)->size = s->off + s->size - (*b)->off;
}

int
off_scanelf(const struct elf *e, struct offlist *l, const struct offopts *o,
            char **err)
{
	size_t i;
	const struct elfsec *s;
	const unsigned char *d;
	struct offbundle *b = NULL;
	struct offbytes in;
	int pass, nv = 0;

	if (e->machine == 0xe0)
		return off_codeobj(e->p, e->n, l, err);
	if ((s = elf_section(e, ".hipFatBinSegment")) && s->type != 8 && hipksegment(e, s, l, err) < 0)
		return -1;
	if ((s = elf_section(e, ".rocm_kpack_ref")) && s->type != 8) {
		if (!elf_secdata(e, s))
			FAIL("section .rocm_kpack_ref (offset %llu, %llu bytes) is past the end of the file",
			     (ull)s->off, (ull)s->size);
		l->refoff = s->off;
		l->refsize = s->size;
	}
	/* pass 0: fatbin sections; pass 1: the -fgpu-rdc sections, one per entry, which
	   together make one bundle. A kpack'd library's .hip_fatbin is NOBITS or zeroed
	   pages (with its first and last bytes left): its code is in the archives. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < e->nsec; i++) {
			s = &e->sec[i];
			if (s->type == 8 /* SHT_NOBITS */ || s->size == 0)
				continue;
			if (pass == 1 && !startswith(s->name, BUNDLE_MAGIC))
				continue;
			if (pass == 0 && strcmp(s->name, ".hip_fatbin") != 0 &&
			    strcmp(s->name, ".nv_fatbin") != 0 && strcmp(s->name, "__nv_relfatbin") != 0)
				continue;
			if (pass == 0 && l->nhipk && strcmp(s->name, ".hip_fatbin") == 0)
				continue;
			d = elf_secdata(e, s);
			if (!d)
				FAIL("section %s (offset %llu, %llu bytes) is past the end of the file (%zu bytes)",
				     s->name, (ull)s->off, (ull)s->size, e->n);
			in = (struct offbytes){d, s->size, s->off, s->name};
			if (pass == 1) {
				rdcentry(s, d, l, &b);
			} else if (strcmp(s->name, ".hip_fatbin") == 0) {
				if (off_hipfatbin(&in, l, o, err) < 0)
					return -1;
			} else if (off_nvfatbin(&in, l, err) < 0) {
				return -1;
			} else {
				nv = 1;
			}
		}
	}
	if (nv)
		l->jitlink = jitlinks(e);
	return 0;
}

void
off_free(struct offlist *l)
{
	free(l->b);
	free(l->e);
	free(l->hipk);
	memset(l, 0, sizeof *l);
}
