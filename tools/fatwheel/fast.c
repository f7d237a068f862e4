/* whole-buffer DEFLATE and CRC-32 with libdeflate: several times zlib's speed, so
   checking the input and deflating new members costs less */
#include "fw.h"

#include <libdeflate.h>
#include <stdio.h>
#include <string.h>

int
fast_inflate(const struct zipin *z, const struct zipent *e, struct buf *out, char **err)
{
	struct libdeflate_decompressor *d;
	const unsigned char *src = z->m.p + e->dataoff;
	size_t inn = 0, outn = 0;
	enum libdeflate_result r;

	bufreset(out);
	out->s = xgrow(out->s, &out->cap, (size_t)e->usize + 1, 1);
	if (e->method == 0) {
		memcpy(out->s, src, (size_t)e->usize);
		outn = inn = (size_t)e->usize;
		r = LIBDEFLATE_SUCCESS;
	} else {
		if (!(d = libdeflate_alloc_decompressor()))
			die("libdeflate: out of memory");
		r = libdeflate_deflate_decompress_ex(d, src, (size_t)e->csize, out->s, (size_t)e->usize,
		                                     &inn, &outn);
		libdeflate_free_decompressor(d);
	}
	if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
		seterr(err, "member '%s' inflates to more than its recorded %llu bytes", e->name,
		       (unsigned long long)e->usize);
		return -1;
	}
	if (r != LIBDEFLATE_SUCCESS || inn != e->csize) {
		seterr(err, "member '%s': corrupt deflate data", e->name);
		return -1;
	}
	if (outn != e->usize) {
		seterr(err, "member '%s' inflates to %zu bytes, recorded %llu", e->name, outn,
		       (unsigned long long)e->usize);
		return -1;
	}
	out->len = outn;
	out->s[outn] = 0;
	if (fast_crc(out->s, outn) != e->crc) {
		seterr(err, "member '%s': CRC-32 mismatch (corrupt archive)", e->name);
		return -1;
	}
	return 0;
}

void
fast_deflate(const void *p, size_t n, int level, struct buf *out, uint32_t *crc)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
	size_t bound, got;

	if (!c)
		die("libdeflate: cannot compress at level %d", level);
	bound = libdeflate_deflate_compress_bound(c, n);
	bufreset(out);
	out->s = xgrow(out->s, &out->cap, bound + 1, 1);
	got = libdeflate_deflate_compress(c, p, n, out->s, bound);
	libdeflate_free_compressor(c);
	if (!got)
		die("libdeflate: compression failed");
	out->len = got;
	*crc = fast_crc(p, n);
}

uint32_t
fast_crc(const void *p, size_t n)
{
	return libdeflate_crc32(0, p, n);
}
