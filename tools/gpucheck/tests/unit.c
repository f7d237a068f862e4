/* unit tests of gpucheck's rules and of tools/lib/offload's parsers on bytes made here */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>

#include "cover.h"
#include "gpucheck.h"
#include "kpack.h"
#include "offload.h"
#include "test.h"

/* the message of the last call given E (the one before it freed), ES it or "" */
static char *err_;
#define E (free(err_), err_ = NULL, &err_)
#define ES (err_ ? err_ : "")

static void
test_names(void)
{
	char t[32];

	gfxname(11, 5, 1, t, sizeof t);
	CHECK_STR(t, "gfx1151", "110501 is gfx1151");
	gfxname(9, 0, 10, t, sizeof t);
	CHECK_STR(t, "gfx90a", "90010 is gfx90a (stepping in hex)");
	CHECK(parse_override("11.0.0", t, sizeof t) == 0, "11.0.0 parses");
	CHECK_STR(t, "gfx1100", "11.0.0 means gfx1100");
	CHECK(parse_override("9.0.10", t, sizeof t) == 0 && strcmp(t, "gfx90a") == 0, "9.0.10 means gfx90a");
	CHECK(parse_override("11.0", t, sizeof t) < 0, "two fields are rejected");
	CHECK(parse_override("11.0.0x", t, sizeof t) < 0, "trailing text is rejected");
	CHECK(parse_override("", t, sizeof t) < 0, "empty is rejected");
	CHECK(parse_override("64.0.0", t, sizeof t) < 0, "major over 63 is rejected");
	CHECK(parse_override("10.3.256", t, sizeof t) < 0, "stepping over 255 is rejected");
	CHECK(gfxversion("gfx1151", t, sizeof t) == 0 && strcmp(t, "11.5.1") == 0, "gfx1151 is 11.5.1");
	CHECK(gfxversion("gfx90a", t, sizeof t) == 0 && strcmp(t, "9.0.10") == 0, "gfx90a is 9.0.10");
	CHECK(gfxversion("gfx11-generic", t, sizeof t) < 0, "a generic target has no version");
	CHECK_STR(arch_proc("gfx1151")->family, arch_proc("gfx1100")->family, "gfx1151 and gfx1100 share a family");
	CHECK(strcmp(arch_proc("gfx1151")->family, arch_proc("gfx1030")->family) != 0, "gfx1151 and gfx1030 do not");
	CHECK(strcmp(arch_proc("gfx90a")->family, arch_proc("gfx900")->family) != 0, "gfx90a is not in gfx9-generic");
	CHECK_STR(arch_find("gfx11-generic")->family, arch_proc("gfx1103")->family, "gfx11-generic covers gfx1103");
	CHECK(arch_proc("gfx11-generic") == NULL, "a generic target is not a processor");
	CHECK(arch_proc("gfx110") == NULL, "a prefix is not a member");
	CHECK(arch_proc("gfx810") && !arch_proc("gfx810")->build, "gfx810 is known, not built for");
	CHECK_STR(arch_member("gfx8", NULL)->name, "gfx801", "gfx8's first member is gfx801");
	CHECK_STR(arch_member("gfx8", arch_proc("gfx803"))->name, "gfx805", "gfx805 follows gfx803");
	CHECK(arch_member("gfx12", arch_proc("gfx1201")) == NULL, "gfx1201 is gfx12's last");
	CHECK_INT(arch_proc("gfx1036")->wave, 32, "gfx1036 has wave 32");
}

static struct offentry
ent(enum offkind k, const char *target, int cov)
{
	struct offentry e;

	memset(&e, 0, sizeof e);
	e.kind = k;
	snprintf(e.target, sizeof e.target, "%s", target);
	e.cov = cov;
	return e;
}

static void
test_rules(void)
{
	struct offentry e;

	e = ent(OFF_AMDGCN, "gfx1151", 5);
	CHECK_INT(entry_covers(&e, "gfx1151", 0), COV_NATIVE, "same processor is native");
	CHECK_INT(entry_covers(&e, "gfx1150", 0), COV_NONE, "another processor is not");
	e = ent(OFF_AMDGCN, "gfx11-generic", 6);
	CHECK_INT(entry_covers(&e, "gfx1151", 0), COV_GENERIC, "gfx11-generic v6 covers gfx1151");
	CHECK_INT(entry_covers(&e, "gfx1030", 0), COV_NONE, "gfx11-generic does not cover gfx1030");
	e = ent(OFF_AMDGCN, "gfx11-generic", 5);
	CHECK_INT(entry_covers(&e, "gfx1151", 0), COV_NONE, "a generic target below code object v6 does not load");
	e = ent(OFF_AMDGCN, "gfx90a:xnack+", 5);
	CHECK_INT(entry_covers(&e, "gfx90a", 0), COV_NONE, "xnack+ code does not run with XNACK off");
	CHECK_INT(entry_covers(&e, "gfx90a", 1), COV_NATIVE, "xnack+ code runs with HSA_XNACK=1");
	e = ent(OFF_AMDGCN, "gfx90a", 5);
	CHECK_INT(entry_covers(&e, "gfx90a:xnack+", 0), COV_NATIVE, "code without xnack runs either way");
	e = ent(OFF_NV_SASS, "sm_80", 0);
	CHECK_INT(entry_covers(&e, "sm_86", 0), COV_NATIVE, "sm_80 cubins run on sm_86");
	CHECK_INT(entry_covers(&e, "sm_90", 0), COV_NONE, "sm_80 cubins do not run on sm_90");
	e = ent(OFF_NV_SASS, "sm_90a", 0);
	CHECK_INT(entry_covers(&e, "sm_90", 0), COV_NATIVE, "sm_90a cubins run on sm_90 devices");
	CHECK_INT(entry_covers(&e, "sm_100", 0), COV_NONE, "sm_90a cubins run nowhere else");
	e = ent(OFF_NV_PTX, "compute_80", 0);
	CHECK_INT(entry_covers(&e, "sm_90", 0), COV_PTX, "compute_80 PTX JITs on sm_90");
	CHECK_INT(entry_covers(&e, "sm_75", 0), COV_NONE, "compute_80 PTX cannot JIT for sm_75");
}

/* write an offload bundle of the given ids and payloads into b */
static void
mkbundle(struct buf *b, int n, const char **ids, const char **pay)
{
	unsigned char h[8];
	size_t off, i, k;

	bufreset(b);
	bufadd(b, "__CLANG_OFFLOAD_BUNDLE__", 24);
#define PUT64(v) do { uint64_t v_ = (v); for (k = 0; k < 8; k++) h[k] = (unsigned char)(v_ >> (8 * k)); bufadd(b, h, 8); } while (0)
	PUT64((uint64_t)n);
	off = 32;
	for (i = 0; i < (size_t)n; i++)
		off += 24 + strlen(ids[i]);
	for (i = 0; i < (size_t)n; i++) {
		PUT64(off);
		PUT64(strlen(pay[i]));
		PUT64(strlen(ids[i]));
		bufputs(b, ids[i]);
		off += strlen(pay[i]);
	}
	for (i = 0; i < (size_t)n; i++)
		bufputs(b, pay[i]);
#undef PUT64
}

static void
put(unsigned char *p, uint64_t v, int n)
{
	int k;

	for (k = 0; k < n; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

/* a three-entry bundle parsed; then a count that overflows, an entry and an id past the end */
static void
test_bundle_parse(const struct buf *b, const char *id0)
{
	struct buf c = {0};
	struct offlist l = {0};
	uint64_t end;

	CHECK(off_bundle(&(struct offbytes){(unsigned char *)b->s, b->len, 0, "t"}, &l, &end, E) == 0, "a bundle parses");
	CHECK_INT(l.ne, 3, "three entries");
	CHECK_STR(l.e[2].target, "gfx90a:xnack-", "target with features");
	CHECK_INT(l.e[0].kind, OFF_HOST, "host entry");
	CHECK_INT(off_feature(l.e[2].target, "xnack"), '-', "xnack- read");
	CHECK_INT(end, b->len, "the bundle ends after its last entry");
	off_free(&l);

	/* a count that overflows */
	bufadd(&c, b->s, b->len);
	put((unsigned char *)c.s + 24, UINT64_MAX / 2, 8);
	CHECK(off_bundle(&(struct offbytes){(unsigned char *)c.s, c.len, 4096, "t"}, &l, &end, E) < 0 &&
	      strstr(ES, "claims") && strstr(ES, "4096"), "an overflowing count is refused with its offset: %s", ES);
	off_free(&l);
	/* an entry past the end */
	memcpy(c.s, b->s, b->len);
	put((unsigned char *)c.s + 32 + 24 + strlen(id0), UINT64_MAX - 3, 8);
	CHECK(off_bundle(&(struct offbytes){(unsigned char *)c.s, c.len, 0, "t"}, &l, &end, E) < 0 &&
	      strstr(ES, "past the end"), "an entry offset past the end is refused: %s", ES);
	off_free(&l);
	/* an id length past the end */
	memcpy(c.s, b->s, b->len);
	put((unsigned char *)c.s + 32 + 16, 1u << 30, 8);
	CHECK(off_bundle(&(struct offbytes){(unsigned char *)c.s, c.len, 0, "t"}, &l, &end, E) < 0 &&
	      strstr(ES, "id"), "an id past the end is refused: %s", ES);
	off_free(&l);
	buffree(&c);
}

/* CCOB version v (1: zlib; 2 and 3: zstd) of bundle b, in a new buffer; its length in *n */
static unsigned char *
mkccob(const struct buf *b, int v, size_t *n)
{
	size_t hl = v == 1 ? 20 : v == 2 ? 24 : 32;
	size_t zn = ZSTD_compressBound(b->len) + compressBound(b->len);
	unsigned char *z = calloc(1, hl + zn + 4096);
	uLongf zl;

	memcpy(z, "CCOB", 4);
	put(z + 4, (uint64_t)v, 2);
	put(z + 6, v == 1 ? 0 : 1, 2);
	if (v == 1) {
		zl = (uLongf)zn;
		compress2(z + hl, &zl, (unsigned char *)b->s, b->len, 9);
		zn = zl;
		put(z + 8, b->len, 4);
	} else {
		zn = ZSTD_compress(z + hl, zn, b->s, b->len, 3);
		if (v == 2) {
			put(z + 8, hl + zn, 4);
			put(z + 12, b->len, 4);
		} else {
			put(z + 8, hl + zn, 8);
			put(z + 16, b->len, 8);
		}
	}
	*n = hl + zn;
	return z;
}

/* a .hip_fatbin: CCOB version v of b, zero padding to 4096, the plain bundle; read whole,
   over a cap, with a raw size that lies and (v2, v3) with a total past the section */
static void
test_ccob(const struct buf *b, int v)
{
	size_t zn, tot = 4096 + b->len;
	unsigned char *z = mkccob(b, v, &zn), *sec = calloc(1, tot);
	struct offlist l = {0};
	struct offopts o = {0};

	memcpy(sec, z, zn);
	memcpy(sec + 4096, b->s, b->len);
	CHECK(off_hipfatbin(&(struct offbytes){sec, tot, 0, ".hip_fatbin"}, &l, &o, E) == 0,
	      "CCOB v%d then a plain bundle: %s", v, ES);
	CHECK(l.nb == 2 && l.b[0].ccobver == v && l.b[0].fmt == OFFB_CCOB && l.b[1].fmt == OFFB_CLANG &&
	      l.b[1].off == 4096 && l.ne == 6, "CCOB v%d: two bundles, six entries", v);
	off_free(&l);
	/* a cap below the raw size: refused, like a decompression bomb */
	o.maxraw = 64;
	CHECK(off_hipfatbin(&(struct offbytes){sec, tot, 0, ".hip_fatbin"}, &l, &o, E) < 0 &&
	      strstr(ES, "cap"), "CCOB v%d over the cap is refused: %s", v, ES);
	o.maxraw = 0;
	off_free(&l);
	/* a raw size that lies (smaller than the stream) */
	if (v == 1)
		put(sec + 8, b->len - 10, 4);
	else if (v == 2)
		put(sec + 12, b->len - 10, 4);
	else
		put(sec + 16, b->len - 10, 8);
	CHECK(off_hipfatbin(&(struct offbytes){sec, tot, 0, ".hip_fatbin"}, &l, &o, E) < 0,
	      "CCOB v%d with a lying raw size is refused: %s", v, ES);
	off_free(&l);
	if (v > 1) {
		/* a total size past the section */
		put(sec + 8, 1u << 30, v == 2 ? 4 : 8);
		CHECK(off_hipfatbin(&(struct offbytes){sec, tot, 0, ".hip_fatbin"}, &l, &o, E) < 0 &&
		      strstr(ES, "only"), "CCOB v%d with a total past the end is refused: %s", v, ES);
		off_free(&l);
	}
	free(sec);
	free(z);
}

/* a real bomb: 1 GiB of zeros squeezed into a few KB, declared honestly */
static void
test_ccob_bomb(void)
{
	size_t big = (size_t)1 << 30, hl = 32;
	unsigned char *zeros = calloc(1, 1 << 20), *z;
	ZSTD_CCtx *cx = ZSTD_createCCtx();
	ZSTD_outBuffer ob;
	ZSTD_inBuffer ib;
	size_t k, cap = 1 << 20;
	struct ccobhdr h;
	struct offbytes in;
	struct ccobdata cd;

	z = calloc(1, hl + cap);
	ob.dst = z + hl;
	ob.size = cap;
	ob.pos = 0;
	ZSTD_CCtx_setPledgedSrcSize(cx, big);
	for (k = 0; k < big >> 20; k++) {
		ib.src = zeros;
		ib.size = 1 << 20;
		ib.pos = 0;
		ZSTD_compressStream2(cx, &ob, &ib, k + 1 == big >> 20 ? ZSTD_e_end : ZSTD_e_continue);
	}
	ZSTD_freeCCtx(cx);
	memcpy(z, "CCOB", 4);
	put(z + 4, 3, 2);
	put(z + 6, 1, 2);
	put(z + 8, hl + ob.pos, 8);
	put(z + 16, big, 8);
	in = (struct offbytes){z, hl + ob.pos, 0, ".hip_fatbin"};
	CHECK(off_ccobhdr(&in, &h, E) == 0 &&
	      off_ccobinflate(&in, &h, 256 << 20, &cd, E) < 0 &&
	      strstr(ES, "cap"), "a 1 GiB zstd bomb of %zu bytes is refused under a 256 MiB cap: %s",
	      (size_t)ob.pos, ES);
	free(zeros);
	free(z);
}

/* stray bytes between bundles */
static void
test_stray(const struct buf *b)
{
	unsigned char *sec = calloc(1, 8192);
	struct offlist l = {0};
	struct offopts o = {0};

	memcpy(sec, b->s, b->len);
	sec[5000] = 0x41;
	CHECK(off_hipfatbin(&(struct offbytes){sec, 8192, 100, ".hip_fatbin"}, &l, &o, E) < 0 &&
	      strstr(ES, "offset 5100"), "stray bytes are refused at their offset: %s", ES);
	off_free(&l);
	free(sec);
}

static void
test_bundles(void)
{
	const char *ids[] = {"host-x86_64-unknown-linux--", "hipv4-amdgcn-amd-amdhsa--gfx1151",
	                     "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"};
	const char *pay[] = {"", "code-a", "code-b"};
	struct buf b = {0};
	int v;

	mkbundle(&b, 3, ids, pay);
	test_bundle_parse(&b, ids[0]);
	for (v = 1; v <= 3; v++)
		test_ccob(&b, v);
	test_ccob_bomb();
	test_stray(&b);
	buffree(&b);
}

/* an NVIDIA fatbin laid out as the CUDA 13 toolchain writes it (header fields checked
   against cuobjdump on libtorch_cuda.so on an H200) */
static void
test_nvfatbin(void)
{
	unsigned char f[16 + 3 * (64 + 8)];
	struct offlist l = {0};
	int i;
	static const struct { int kind, arch, a; } en[] = {{2, 90, 0}, {2, 90, 1}, {1, 80, 0}};

	memset(f, 0, sizeof f);
	put(f, 0xBA55ED50u, 4);
	put(f + 4, 1, 2);
	put(f + 6, 16, 2);
	put(f + 8, 3 * (64 + 8), 8);
	for (i = 0; i < 3; i++) {
		unsigned char *e = f + 16 + i * 72;

		put(e, (uint64_t)en[i].kind, 2);
		put(e + 2, 0x0101, 2);
		put(e + 4, 64, 4);
		put(e + 8, 8, 8);
		put(e + 28, (uint64_t)en[i].arch, 4);
		put(e + 40, 0x8011 | (en[i].a ? 0x100000 : 0), 4);
	}
	CHECK(off_nvfatbin(&(struct offbytes){f, sizeof f, 0, ".nv_fatbin"}, &l, E) == 0, "a fatbin parses: %s", ES);
	CHECK(l.ne == 3 && strcmp(l.e[0].target, "sm_90") == 0 && strcmp(l.e[1].target, "sm_90a") == 0 &&
	      strcmp(l.e[2].target, "compute_80") == 0 && l.e[2].kind == OFF_NV_PTX,
	      "sm_90 sass, sm_90a sass, compute_80 ptx");
	CHECK_INT(entry_covers(&l.e[1], "sm_100", 0), COV_NONE, "sm_90a code is not taken for sm_100");
	off_free(&l);
	put(f + 16 + 72 + 8, 1u << 20, 8);
	CHECK(off_nvfatbin(&(struct offbytes){f, sizeof f, 0, ".nv_fatbin"}, &l, E) < 0 && strstr(ES, "offset 88"),
	      "an entry past its fatbin is refused at its offset: %s", ES);
	off_free(&l);
	put(f + 8, UINT64_MAX - 8, 8);
	CHECK(off_nvfatbin(&(struct offbytes){f, sizeof f, 0, ".nv_fatbin"}, &l, E) < 0 && strstr(ES, "remain"),
	      "a fatbin size past the section is refused: %s", ES);
	off_free(&l);
}

/* code-object e_flags, the kpack loader's target order, the msgpack bounds walk */
static void
test_kpack(void)
{
	char t[KP_MAXTARGETS][96], b[96];
	size_t n;
	struct offentry e;
	size_t used;
	static const unsigned char deep[] = {0x91, 0x91, 0x91, 0x90};
	static const unsigned char huge[] = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x00};
	static const unsigned char map[] = {0x81, 0xa1, 'k', 0x01};

	CHECK(off_amdgpu_target(0x03f | 0x200 | 0xc00, 5, b, sizeof b) == 0, "gfx90a v5 flags parse");
	CHECK_STR(b, "gfx90a:sramecc+:xnack-", "v4+: sramecc on, xnack off, sramecc named first");
	CHECK(off_amdgpu_target(0x04a | 0x100, 5, b, sizeof b) == 0 && strcmp(b, "gfx1151") == 0,
	      "xnack any is not named");
	CHECK(off_amdgpu_target(0x02a | 0x100, 3, b, sizeof b) == 0 && strcmp(b, "gfx803:xnack+") == 0,
	      "v3: the xnack bit means on");
	CHECK(off_amdgpu_target(0x04f, 6, b, sizeof b) == 0 && strcmp(b, "gfx950") == 0, "gfx950 (after LLVM 19)");
	CHECK(off_amdgpu_target(0x054, 6, b, sizeof b) == 0 && strcmp(b, "gfx11-generic") == 0, "gfx11-generic");
	CHECK(off_amdgpu_target(0x027, 5, b, sizeof b) < 0, "a reserved machine value is unknown");
	n = kpack_targets("gfx942:sramecc+:xnack-", t, KP_MAXTARGETS);
	CHECK_INT((int)n, 4, "two features: four targets");
	CHECK(n == 4 && !strcmp(t[0], "gfx942:sramecc+:xnack-") && !strcmp(t[1], "gfx942:sramecc+") &&
	      !strcmp(t[2], "gfx942:xnack-") && !strcmp(t[3], "gfx942"), "the loader's order: the rightmost feature dropped first");
	n = kpack_targets("amdgcn-amd-amdhsa--gfx1201", t, KP_MAXTARGETS);
	CHECK(n == 1 && !strcmp(t[0], "gfx1201"), "no features: the processor once, prefix stripped");
	CHECK(kpack_mpcheck(map, sizeof map, 16, &used, E) == 0 && used == sizeof map, "a map passes");
	CHECK(kpack_mpcheck(deep, sizeof deep, 2, &used, E) < 0, "nesting past the limit is refused");
	CHECK(kpack_mpcheck(huge, sizeof huge, 16, &used, E) < 0 && strstr(ES, "claims 4294967295 items"),
	      "a count past the bytes left is refused before any allocation");
	CHECK(kpack_mpcheck(map, 3, 16, &used, E) < 0, "a truncated map is refused");
	memset(&e, 0, sizeof e);
	e.kind = OFF_NV_SASS;
	snprintf(e.target, sizeof e.target, "sm_100f");
	CHECK_INT(entry_covers(&e, "sm_103", 0), COV_NATIVE, "sm_100f runs on sm_103");
	CHECK_INT(entry_covers(&e, "sm_110", 0), COV_NONE, "sm_100f does not run on sm_110");
	e.kind = OFF_NV_PTX;
	snprintf(e.target, sizeof e.target, "compute_90a");
	CHECK_INT(entry_covers(&e, "sm_90", 0), COV_PTX, "compute_90a PTX on sm_90");
	CHECK_INT(entry_covers(&e, "sm_100", 0), COV_NONE, "compute_90a PTX nowhere else");
}

int
main(void)
{
	test_names();
	test_rules();
	test_kpack();
	test_bundles();
	test_nvfatbin();
	free(err_);
	return TEST_DONE();
}
