/* kpack archives and library references (the format: kpack.h) */
#include "kpack.h"
#include "elffile.h"
#include "util.h"

#ifndef GPUCHECK_NO_MSGPACK
#include <msgpack.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define FAIL(...) return seterr(err, __VA_ARGS__)

typedef unsigned long long ull;

/* the size of the big-endian length or count of width w at p */
static uint64_t
be(const unsigned char *p, int w)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < w; i++)
		v = v << 8 | p[i];
	return v;
}

/* One msgpack object header at p[0..n): its header length *h, the bytes of payload
   that follow it *pay, and the objects it contains *items (map pairs count twice).
   Returns 0, or -1 for the unused type 0xc1 or a header cut short. */
static int
mphead(const unsigned char *p, size_t n, size_t *h, uint64_t *pay, uint64_t *items)
{
	unsigned c = p[0];
	int w = 0;

	*pay = 0, *items = 0, *h = 1;
	if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
		return 0;
	if (c >= 0x80 && c <= 0x8f) {
		*items = 2 * (uint64_t)(c & 0xf);
		return 0;
	}
	if (c >= 0x90 && c <= 0x9f) {
		*items = c & 0xf;
		return 0;
	}
	if (c >= 0xa0 && c <= 0xbf) {
		*pay = c & 0x1f;
		return 0;
	}
	switch (c) {
	case 0xc4: case 0xd9: w = 1; break;          /* bin8, str8 */
	case 0xc5: case 0xda: w = 2; break;          /* bin16, str16 */
	case 0xc6: case 0xdb: w = 4; break;          /* bin32, str32 */
	case 0xc7: w = 1, *pay = 1; break;           /* ext8: size, type */
	case 0xc8: w = 2, *pay = 1; break;
	case 0xc9: w = 4, *pay = 1; break;
	case 0xca: *pay = 4; return 0;               /* float32 */
	case 0xcb: *pay = 8; return 0;
	case 0xcc: case 0xd0: *pay = 1; return 0;    /* uint8, int8 */
	case 0xcd: case 0xd1: *pay = 2; return 0;
	case 0xce: case 0xd2: *pay = 4; return 0;
	case 0xcf: case 0xd3: *pay = 8; return 0;
	case 0xd4: *pay = 2; return 0;               /* fixext1: type + 1 */
	case 0xd5: *pay = 3; return 0;
	case 0xd6: *pay = 5; return 0;
	case 0xd7: *pay = 9; return 0;
	case 0xd8: *pay = 17; return 0;
	case 0xdc: case 0xdd: case 0xde: case 0xdf:  /* array16/32, map16/32 */
		w = c & 1 ? 4 : 2;
		if (n < 1 + (size_t)w)
			return -1;
		*h = 1 + (size_t)w;
		*items = be(p + 1, w) * (c >= 0xde ? 2 : 1);
		return 0;
	default:
		return -1;
	}
	if (n < 1 + (size_t)w)
		return -1;
	*h = 1 + (size_t)w;
	*pay += be(p + 1, w);
	return 0;
}

int
kpack_mpcheck(const unsigned char *p, size_t n, int maxdepth, size_t *used, char **err)
{
	uint64_t rem[KP_MAXDEPTH + 2], pay, items, nobj = 0;
	size_t pos = 0, h;
	int d = 0;

	if (maxdepth > KP_MAXDEPTH)
		maxdepth = KP_MAXDEPTH;
	rem[0] = 1;
	while (d >= 0) {
		if (rem[d] == 0) {
			d--;
			continue;
		}
		rem[d]--;
		if (++nobj > KP_MAXOBJECTS)
			FAIL("msgpack holds more than %llu objects (offset %zu)", (ull)KP_MAXOBJECTS, pos);
		if (pos >= n)
			FAIL("msgpack is truncated at offset %zu", pos);
		if (mphead(p + pos, n - pos, &h, &pay, &items) < 0)
			FAIL("msgpack has a bad or truncated header 0x%02x at offset %zu", p[pos], pos);
		if (pay > n - pos - h)
			FAIL("msgpack value at offset %zu says %llu bytes but only %zu follow", pos, (ull)pay, n - pos - h);
		/* every object takes at least one byte: a count past the bytes left is a lie */
		if (items > n - pos - h)
			FAIL("msgpack container at offset %zu claims %llu items but only %zu bytes follow",
			     pos, (ull)items, n - pos - h);
		pos += h + (size_t)pay;
		if (items) {
			if (d + 1 > maxdepth)
				FAIL("msgpack nests deeper than %d levels at offset %zu", maxdepth, pos - h);
			rem[++d] = items;
		}
	}
	*used = pos;
	return 0;
}

size_t
kpack_targets(const char *isa, char out[][96], size_t max)
{
	char feat[4][32], proc[64];
	const char *c = isa;
	size_t nf = 0, k, cnt = 0, len;
	unsigned mask, i;

	if (startswith(c, "amdgcn-amd-amdhsa--"))
		c += strlen("amdgcn-amd-amdhsa--");
	k = strcspn(c, ":");
	if (!k || k >= sizeof proc)
		return 0;
	memcpy(proc, c, k);
	proc[k] = 0;
	c += k;
	while (*c == ':' && nf < 4) {
		c++;
		k = strcspn(c, ":");
		if (k && k < sizeof feat[0]) {
			memcpy(feat[nf], c, k);
			feat[nf++][k] = 0;
		}
		c += k;
	}
	/* every subset of the features, the mask counting down: the rightmost dropped first */
	for (mask = (1u << nf) - 1; cnt < max; mask--) {
		len = (size_t)snprintf(out[cnt], 96, "%s", proc);
		for (i = 0; i < nf; i++)
			if (mask & (1u << (nf - 1 - i)))
				len += (size_t)snprintf(out[cnt] + len, len < 96 ? 96 - len : 0, ":%s", feat[i]);
		cnt++;
		if (mask == 0)
			break;
	}
	return cnt;
}
#ifndef GPUCHECK_NO_MSGPACK
/* unpack one checked msgpack object of p[0..n) into up */
static int
unpack(const unsigned char *p, size_t n, msgpack_unpacked *up, const char *what, char **err)
{
	size_t used, off = 0;
	char *e2 = NULL;

	if (kpack_mpcheck(p, n, KP_MAXDEPTH, &used, &e2) < 0) {
		seterr(err, "%s: %.159s", what, e2);
		free(e2);
		return -1;
	}
	msgpack_unpacked_init(up);
	if (msgpack_unpack_next(up, (const char *)p, used, &off) != MSGPACK_UNPACK_SUCCESS) {
		msgpack_unpacked_destroy(up);
		FAIL("%s: msgpack-c cannot read it", what);
	}
	return 0;
}

/* the value of string key k in map m, or NULL */
static const msgpack_object *
mapget(const msgpack_object *m, const char *k)
{
	uint32_t i;
	size_t kl = strlen(k);

	if (m->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (i = 0; i < m->via.map.size; i++) {
		const msgpack_object *key = &m->via.map.ptr[i].key;

		if (key->type == MSGPACK_OBJECT_STR && key->via.str.size == kl &&
		    memcmp(key->via.str.ptr, k, kl) == 0)
			return &m->via.map.ptr[i].val;
	}
	return NULL;
}

/* a msgpack string as a fresh C string; NULL if it is not a string or holds a NUL */
static char *
mpstr(const msgpack_object *o)
{
	if (!o || o->type != MSGPACK_OBJECT_STR || memchr(o->via.str.ptr, 0, o->via.str.size))
		return NULL;
	return xstrndup(o->via.str.ptr, o->via.str.size);
}

/* a non-negative msgpack integer into *v; -1 if it is not one */
static int
mpuint(const msgpack_object *o, uint64_t *v)
{
	if (!o || o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return -1;
	*v = o->via.u64;
	return 0;
}

/* a search path the loader may follow: relative, no ".." but at its start (twice at most) */
static int
safepath(const char *s)
{
	const char *c = s;
	size_t k;
	int i = 0;

	if (!*s || *s == '/')
		return 0;
	while (*c) {
		k = strcspn(c, "/");
		if (k == 2 && c[0] == '.' && c[1] == '.' && i >= 2)
			return 0;
		if (!(k == 2 && c[0] == '.' && c[1] == '.'))
			i = 2;
		else
			i++;
		c += k;
		while (*c == '/')
			c++;
	}
	return 1;
}

/* a search path and its place, sorted by the path, then by place */
struct pathix {
	const char *s;
	size_t i;
};
static int
pathcmp(const void *a, const void *b)
{
	const struct pathix *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

/* keep each search path once, at its first place (sorted once: n log n, not n^2) */
static void
dedup(struct kpref *r)
{
	struct pathix *ix = xmalloc(r->npath * sizeof *ix);
	unsigned char *dup = xcalloc(r->npath, 1);
	size_t i, n = 0;

	for (i = 0; i < r->npath; i++)
		ix[i].s = r->path[i], ix[i].i = i;
	qsort(ix, r->npath, sizeof *ix, pathcmp);
	for (i = 1; i < r->npath; i++)
		if (strcmp(ix[i].s, ix[i - 1].s) == 0)
			dup[ix[i].i] = 1;
	for (i = 0; i < r->npath; i++) {
		if (dup[i])
			free(r->path[i]);
		else
			r->path[n++] = r->path[i];
	}
	r->npath = n;
	free(dup);
	free(ix);
}

void
kpack_reffree(struct kpref *r)
{
	size_t i;

	free(r->kernel);
	for (i = 0; i < r->npath; i++)
		free(r->path[i]);
	free(r->path);
	memset(r, 0, sizeof *r);
}

int
kpack_ref(const unsigned char *p, size_t n, struct kpref *r, char **err)
{
	msgpack_unpacked up;
	const msgpack_object *o;
	uint32_t i;

	memset(r, 0, sizeof *r);
	if (unpack(p, n < KP_MAXREF ? n : KP_MAXREF, &up, ".rocm_kpack_ref", err) < 0) {
		if (n > KP_MAXREF && err) {
			char *m = *err;
			*err = xasprintf("%s (the loader reads at most the first %d bytes of it)", m, KP_MAXREF);
			free(m);
		}
		return -1;
	}
	if (up.data.type != MSGPACK_OBJECT_MAP) {
		seterr(err, ".rocm_kpack_ref: not a msgpack map");
		goto bad;
	}
	if (!(r->kernel = mpstr(mapget(&up.data, "kernel_name"))) || !*r->kernel) {
		seterr(err, ".rocm_kpack_ref: kernel_name is missing or not a string");
		goto bad;
	}
	o = mapget(&up.data, "kpack_search_paths");
	if (!o || o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size == 0) {
		seterr(err, ".rocm_kpack_ref: kpack_search_paths is missing, empty or not an array");
		goto bad;
	}
	r->path = xcalloc(o->via.array.size, sizeof *r->path);
	for (i = 0; i < o->via.array.size; i++) {
		char *s = mpstr(&o->via.array.ptr[i]);

		if (!s) {
			seterr(err, ".rocm_kpack_ref: kpack_search_paths[%u] is not a string", i);
			goto bad;
		}
		r->path[r->npath++] = s;
		if (!safepath(s)) {
			seterr(err, ".rocm_kpack_ref: kpack_search_paths[%u] '%.200s' is %s", i, s,
			       *s == '/' ? "absolute" : !*s ? "empty" : "climbing with '..' past its start");
			goto bad;
		}
	}
	dedup(r);
	msgpack_unpacked_destroy(&up);
	return 0;
bad:
	msgpack_unpacked_destroy(&up);
	kpack_reffree(r);
	return -1;
}

void
kpack_free(struct kpack *k)
{
	size_t i;

	for (i = 0; i < k->narch; i++)
		free(k->arch[i]);
	free(k->arch);
	for (i = 0; i < k->ne; i++) {
		free(k->e[i].key);
		free(k->e[i].arch);
	}
	free(k->e);
	free(k->foff);
	free(k->fsz);
	free(k->fwant);
	free(k->fgot);
	ZSTD_freeDCtx(k->zctx);
	free(k->zbuf);
	memset(k, 0, sizeof *k);
}

static int
entcmp(const void *a, const void *b)
{
	const struct kpentry *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : strcmp(x->arch, y->arch);
}

/* the toc's entries: {key: {arch: {type, ordinal, original_size}}} */
static int
tocentries(const msgpack_object *toc, struct kpack *k, char **err)
{
	uint32_t i, j;
	size_t cap = 0;

	if (!toc || toc->type != MSGPACK_OBJECT_MAP)
		FAIL("toc is missing or not a map");
	for (i = 0; i < toc->via.map.size; i++) {
		const msgpack_object *key = &toc->via.map.ptr[i].key, *archs = &toc->via.map.ptr[i].val;

		if (key->type != MSGPACK_OBJECT_STR || archs->type != MSGPACK_OBJECT_MAP)
			FAIL("toc entry %u is not a string key with a map of arches", i);
		for (j = 0; j < archs->via.map.size; j++) {
			const msgpack_object *meta = &archs->via.map.ptr[j].val;
			struct kpentry *e;
			uint64_t ord;

			k->e = xgrow(k->e, &cap, k->ne + 1, sizeof *k->e);
			e = &k->e[k->ne];
			memset(e, 0, sizeof *e);
			e->key = mpstr(key);
			e->arch = mpstr(&archs->via.map.ptr[j].key);
			if (e->key && e->arch)
				k->ne++;
			if (!e->key || !e->arch || mpuint(mapget(meta, "ordinal"), &ord) < 0 ||
			    ord > UINT32_MAX || mpuint(mapget(meta, "original_size"), &e->size) < 0) {
				if (!e->key || !e->arch) {
					free(e->key);
					free(e->arch);
				}
				FAIL("toc entry '%.*s' arch %u: not a string, or a missing or bad ordinal/original_size",
				     key->type == MSGPACK_OBJECT_STR ? (int)(key->via.str.size < 100 ? key->via.str.size : 100) : 0,
				     key->type == MSGPACK_OBJECT_STR ? key->via.str.ptr : "", j);
			}
			e->ordinal = (uint32_t)ord;
		}
	}
	if (k->ne)
		qsort(k->e, k->ne, sizeof *k->e, entcmp);
	return 0;
}

/* the "none" scheme: each entry's blob {offset, size}, as the table says (checked when
   the entry is fetched, as the loader reads it only then) */
static int
noopblobs(const msgpack_object *blobs, struct kpack *k, char **err)
{
	size_t i;
	const msgpack_object *b;

	if (!blobs || blobs->type != MSGPACK_OBJECT_ARRAY)
		FAIL("compression_scheme none without a blobs array");
	for (i = 0; i < k->ne; i++) {
		if (k->e[i].ordinal >= blobs->via.array.size)
			continue;  /* the loader's KERNEL_NOT_FOUND, at fetch time */
		b = &blobs->via.array.ptr[k->e[i].ordinal];
		if (mpuint(mapget(b, "offset"), &k->e[i].boff) < 0 || mpuint(mapget(b, "size"), &k->e[i].bsize) < 0)
			FAIL("blobs[%u] has no offset or size", k->e[i].ordinal);
	}
	return 0;
}

/* the "zstd-per-kernel" scheme: the blob's frame index (a u32 count, then a u32 size and
   one zstd frame per kernel), every frame inside the blob, as kpack_open's
   build_zstd_frame_index reads it; no frame is inflated */
static int
zstdblobs(const unsigned char *p, const msgpack_object *toc, struct kpack *k, uint64_t end,
          char **err)
{
	uint64_t zo, zs, pos;
	uint32_t nk, i, fs;
	size_t j;

	if (mpuint(mapget(toc, "zstd_offset"), &zo) < 0 || mpuint(mapget(toc, "zstd_size"), &zs) < 0)
		FAIL("zstd-per-kernel without zstd_offset and zstd_size");
	if (zo < 16 || zo > end || zs > end - zo || zs < 4)
		FAIL("zstd blob (zstd_offset %llu, zstd_size %llu) lies outside the data before the toc (16..%llu)",
		     (ull)zo, (ull)zs, (ull)end);
	nk = rd32(p + zo);
	if (nk > (zs - 4) / 4)
		FAIL("zstd blob at offset %llu claims %u kernels in %llu bytes", (ull)zo, nk, (ull)zs);
	k->foff = xmalloc(((size_t)nk + 1) * sizeof *k->foff);
	k->fsz = xmalloc(((size_t)nk + 1) * sizeof *k->fsz);
	k->fwant = xcalloc((size_t)nk + 1, sizeof *k->fwant);
	k->fgot = xmalloc(((size_t)nk + 1) * sizeof *k->fgot);
	for (pos = 4, i = 0; i < nk; i++) {
		if (pos + 4 > zs)
			FAIL("zstd blob: frame %u's size at offset %llu is past the blob's end", i, (ull)(zo + pos));
		fs = rd32(p + zo + pos);
		if (fs > zs - pos - 4)
			FAIL("zstd blob: frame %u (%u bytes at offset %llu) runs past the blob's end", i, fs,
			     (ull)(zo + pos + 4));
		k->foff[i] = zo + pos + 4;
		k->fsz[i] = fs;
		k->fgot[i] = KP_UNCHECKED;
		k->nframe = i + 1;
		pos += 4 + (uint64_t)fs;
	}
	for (j = 0; j < k->ne; j++)
		if (k->e[j].ordinal < nk && k->e[j].size > k->fwant[k->e[j].ordinal])
			k->fwant[k->e[j].ordinal] = k->e[j].size;
	return 0;
}

/* Inflate zstd frame f[0..fn) streamed through a fixed buffer, counting its bytes, up to
   limit + 1: the count (exact when at most limit), KP_BADFRAME when it is no zstd frame
   or runs past limit, KP_TRAILING when bytes follow the frame's end. A frame whose
   header declares a size it does not hold is corrupt to zstd itself. */
static uint64_t
zinflate(struct kpack *k, const unsigned char *f, size_t fn, uint64_t limit)
{
	enum { BUFSZ = 1 << 16 };
	ZSTD_inBuffer in = {f, fn, 0};
	ZSTD_outBuffer out;
	uint64_t got = 0;
	size_t r = 1;

	if (!k->zctx) {
		if (!(k->zctx = ZSTD_createDCtx()))
			die("out of memory");
		/* the window a frame may ask for: zstd's own default limit (128 MiB) */
		ZSTD_DCtx_setParameter(k->zctx, ZSTD_d_windowLogMax, 27);
		k->zbuf = xmalloc(BUFSZ);
	}
	ZSTD_DCtx_reset(k->zctx, ZSTD_reset_session_only);
	while (r != 0) {
		out.dst = k->zbuf, out.size = BUFSZ, out.pos = 0;
		r = ZSTD_decompressStream(k->zctx, &out, &in);
		got += out.pos;
		if (ZSTD_isError(r) || got > limit || (r != 0 && in.pos == in.size && out.pos == 0))
			return KP_BADFRAME;
	}
	return in.pos != in.size ? KP_TRAILING : got;
}

int
kpack_check(struct kpack *k, const unsigned char *p, size_t n, const struct kpentry *e, char **err)
{
	uint64_t got, lim, maxraw = k->maxraw;
	uint32_t o = e->ordinal;

	if (!k->zstd) {
		if (e->bsize == 0 && e->boff == 0 && e->size)
			FAIL("%s (%s): ordinal %u names no blob", e->key, e->arch, o);
		if (e->boff < 16 || e->boff > k->tocoff || e->bsize > k->tocoff - e->boff)
			FAIL("%s (%s): blobs[%u] (offset %llu, %llu bytes) lies outside the data before the toc (16..%llu)",
			     e->key, e->arch, o, (ull)e->boff, (ull)e->bsize, (ull)k->tocoff);
		if (e->bsize != e->size)
			FAIL("%s (%s): blobs[%u] is %llu bytes, but the toc's original_size is %llu", e->key, e->arch,
			     o, (ull)e->bsize, (ull)e->size);
		return 0;
	}
	if (o >= k->nframe)
		FAIL("%s (%s) has ordinal %u, but the zstd blob has %u frames", e->key, e->arch, o, k->nframe);
	if (k->fgot[o] == KP_UNCHECKED) {
		if (!p || k->foff[o] > n || k->fsz[o] > n - k->foff[o])
			FAIL("%s (%s): zstd frame %u was not read", e->key, e->arch, o);
		lim = k->fwant[o] < maxraw ? k->fwant[o] : maxraw;
		k->fgot[o] = zinflate(k, p + k->foff[o], k->fsz[o], lim);
	}
	got = k->fgot[o];
	if (got == e->size)
		return 0;
	if (e->size > maxraw)
		FAIL("zstd frame %u at offset %llu: original_size %llu is over the %llu-byte cap (--max-inflate)",
		     o, (ull)k->foff[o], (ull)e->size, (ull)maxraw);
	if (got == KP_TRAILING)
		FAIL("zstd frame %u at offset %llu: bytes follow the frame's end", o, (ull)k->foff[o]);
	if (got == KP_BADFRAME)
		FAIL("zstd frame %u at offset %llu inflates to garbage or past its original_size %llu", o,
		     (ull)k->foff[o], (ull)e->size);
	FAIL("zstd frame %u at offset %llu inflates to %llu bytes, not its original_size %llu", o,
	     (ull)k->foff[o], (ull)got, (ull)e->size);
}

int
kpack_checkall(struct kpack *k, const unsigned char *p, size_t n, char **err)
{
	size_t i;

	for (i = 0; i < k->ne; i++)
		if (kpack_check(k, p, n, &k->e[i], err) < 0)
			return -1;
	return 0;
}

/* gfx_arches and compression_scheme of the toc */
static int
tocheader(const msgpack_object *t, struct kpack *k, char **err)
{
	const msgpack_object *o = mapget(t, "gfx_arches");
	char *s;
	uint32_t i;

	if (t->type != MSGPACK_OBJECT_MAP)
		FAIL("the table of contents is not a msgpack map");
	if (!o || o->type != MSGPACK_OBJECT_ARRAY)
		FAIL("gfx_arches is missing or not an array");
	k->arch = xcalloc(o->via.array.size + 1, sizeof *k->arch);
	for (i = 0; i < o->via.array.size; i++) {
		if (!(s = mpstr(&o->via.array.ptr[i])))
			FAIL("gfx_arches[%u] is not a string", i);
		k->arch[k->narch++] = s;
	}
	s = mpstr(mapget(t, "compression_scheme"));
	if (!s)
		FAIL("compression_scheme is missing or not a string");
	k->zstd = strcmp(s, "zstd-per-kernel") == 0;
	if (!k->zstd && strcmp(s, "none") != 0) {
		seterr(err, "compression_scheme '%.60s' is neither none nor zstd-per-kernel", s);
		free(s);
		return -1;
	}
	free(s);
	return 0;
}

int
kpack_read(const unsigned char *p, size_t n, uint64_t maxraw, struct kpack *k, char **err)
{
	msgpack_unpacked up;
	uint64_t toff;
	uint32_t ver;
	char what[40], *e2 = NULL;
	int rc;

	memset(k, 0, sizeof *k);
	k->maxraw = maxraw;
	if (n < 16 || memcmp(p, "KPAK", 4) != 0)
		FAIL("not a kpack archive: bad magic (offset 0; want KPAK)");
	if ((ver = rd32(p + 4)) != 1)
		FAIL("kpack version %u, not 1 (offset 4)", ver);
	toff = rd64(p + 8);
	if (toff < 16 || toff >= n)
		FAIL("toc offset %llu is past the end of the file (%zu bytes) (offset 8)", (ull)toff, n);
	if (n - toff > KP_MAXTOC)
		FAIL("toc at offset %llu is %llu bytes, over the %llu-byte cap", (ull)toff, (ull)(n - toff),
		     (ull)KP_MAXTOC);
	snprintf(what, sizeof what, "toc at offset %llu", (ull)toff);
	if (unpack(p + toff, (size_t)(n - toff), &up, what, err) < 0)
		return -1;
	rc = tocheader(&up.data, k, &e2);
	if (rc == 0)
		rc = tocentries(mapget(&up.data, "toc"), k, &e2);
	k->tocoff = toff;
	if (rc == 0)
		rc = k->zstd ? zstdblobs(p, &up.data, k, toff, &e2)
		             : noopblobs(mapget(&up.data, "blobs"), k, &e2);
	msgpack_unpacked_destroy(&up);
	if (rc < 0) {
		seterr(err, "toc at offset %llu: %.399s", (ull)toff, e2);
		free(e2);
		kpack_free(k);
	}
	return rc;
}

int
kpack_hasarch(const struct kpack *k, const char *arch)
{
	size_t i;

	for (i = 0; i < k->narch; i++)
		if (strcmp(k->arch[i], arch) == 0)
			return 1;
	return 0;
}

const struct kpentry *
kpack_find(const struct kpack *k, const char *key, const char *arch)
{
	struct kpentry want;

	want.key = (char *)key;
	want.arch = (char *)arch;
	if (!k->ne)
		return NULL;
	return bsearch(&want, k->e, k->ne, sizeof *k->e, entcmp);
}

#else
/* a build without msgpack-c (bench/gpucheck.sh device on a bare machine): kpack'd
   libraries and archives are an input error that says so */
int
kpack_ref(const unsigned char *p, size_t n, struct kpref *r, char **err)
{
	(void)p, (void)n;
	memset(r, 0, sizeof *r);
	FAIL(".rocm_kpack_ref: this gpucheck was built without msgpack-c");
}

void
kpack_reffree(struct kpref *r)
{
	memset(r, 0, sizeof *r);
}

int
kpack_read(const unsigned char *p, size_t n, uint64_t maxraw, struct kpack *k, char **err)
{
	(void)p, (void)n;
	memset(k, 0, sizeof *k);
	k->maxraw = maxraw;
	FAIL("this gpucheck was built without msgpack-c and cannot read kpack archives");
}

void
kpack_free(struct kpack *k)
{
	memset(k, 0, sizeof *k);
}

int
kpack_check(struct kpack *k, const unsigned char *p, size_t n, const struct kpentry *e, char **err)
{
	(void)k, (void)p, (void)n, (void)e;
	FAIL("this gpucheck was built without msgpack-c and cannot read kpack archives");
}

int
kpack_checkall(struct kpack *k, const unsigned char *p, size_t n, char **err)
{
	(void)k, (void)p, (void)n, (void)err;
	return 0;
}

int
kpack_hasarch(const struct kpack *k, const char *arch)
{
	(void)k, (void)arch;
	return 0;
}

const struct kpentry *
kpack_find(const struct kpack *k, const char *key, const char *arch)
{
	(void)k, (void)key, (void)arch;
	return NULL;
}
#endif
