/* deflating one big member on many threads: the bytes are cut in pieces of a fixed size,
   each piece is deflated on its own with libdeflate (no dictionary shared), and the pieces
   are joined into one valid raw deflate stream, as pigz joins its blocks. libdeflate ends
   each piece with a final block (BFINAL=1, RFC 1951 3.2.3); in every piece but the last
   that bit is cleared and an empty stored block (BFINAL=0, BTYPE=00, LEN 0, NLEN 0xffff)
   is added, which brings the stream to a byte boundary for the next piece. The CRC-32 of
   the pieces is joined with zlib's crc32_combine. The piece size is fixed, so the output
   is the same bytes whatever the number of threads. */
#include "fw.h"

#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* one piece */
struct piece {
	const unsigned char *p;
	size_t n;
	int last, level, bad;
	struct buf z;
	uint32_t crc;
};

/* Find where the final block of the raw deflate stream s starts and where it ends, as bit
   offsets, with zlib's inflate stopping at each block boundary (Z_BLOCK: data_type holds
   the unused bits of the last byte read, +64 in the last block, +128 at a block's end).
   Returns 0, or -1 if the stream is not what libdeflate writes. */
static int
finalblock(const unsigned char *s, size_t n, uint64_t *start, uint64_t *end)
{
	unsigned char win[1 << 15];
	z_stream z;
	uint64_t pos;
	int r;

	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, -15) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)s;
	z.avail_in = (uInt)n;
	*start = 0;
	*end = 0;
	do {
		z.next_out = win;
		z.avail_out = sizeof win;
		r = inflate(&z, Z_BLOCK);
		if (r != Z_OK && r != Z_STREAM_END)
			break;
		pos = (uint64_t)z.total_in * 8 - (uint64_t)(z.data_type & 7);
		if ((z.data_type & 128) && (z.data_type & 64))
			*end = pos;
		else if (z.data_type & 128)
			*start = pos;
	} while (r != Z_STREAM_END);
	inflateEnd(&z);
	return r == Z_STREAM_END && *end > *start && *end > (uint64_t)(n - 1) * 8 && *end <= (uint64_t)n * 8 ? 0 : -1;
}

/* deflate piece i; all but the last become non-final and end on a byte boundary */
static void
deflatepiece(void *ctx, size_t i)
{
	struct piece *pc = &((struct piece *)ctx)[i];
	uint64_t start, end;
	static const unsigned char stored[4] = {0x00, 0x00, 0xff, 0xff};

	fast_deflate(pc->p, pc->n, pc->level, &pc->z, &pc->crc);
	if (pc->last)
		return;
	if (finalblock((unsigned char *)pc->z.s, pc->z.len, &start, &end) < 0) {
		pc->bad = 1;
		return;
	}
	pc->z.s[start / 8] &= (char)~(1u << (start % 8));
	/* the stored block's 3 header bits are zero: they fit after the final block's last
	   bit in its byte (zero-padded by libdeflate), or take one more zero byte */
	if (end - (uint64_t)(pc->z.len - 1) * 8 > 5)
		bufputc(&pc->z, 0);
	bufadd(&pc->z, stored, sizeof stored);
}

void
fast_pdeflate(const void *p, size_t n, const struct pdeflate *how, struct buf *out, uint32_t *crc)
{
	size_t piece = how->piece, np = piece ? (n + piece - 1) / piece : 1, i;
	int level = how->level, nthreads = how->nthreads;
	struct piece *pc;
	int bad = 0;

	if (np < 2) {
		fast_deflate(p, n, level, out, crc);
		return;
	}
	pc = xcalloc(np, sizeof *pc);
	for (i = 0; i < np; i++) {
		pc[i].p = (const unsigned char *)p + i * piece;
		pc[i].n = i + 1 < np ? piece : n - i * piece;
		pc[i].last = i + 1 == np;
		pc[i].level = level;
	}
	pfor(np, nthreads, deflatepiece, pc);
	bufreset(out);
	for (i = 0; i < np; i++) {
		bad |= pc[i].bad;
		bufadd(out, pc[i].z.s, pc[i].z.len);
		*crc = i ? (uint32_t)crc32_combine(*crc, pc[i].crc, (z_off_t)pc[i].n) : pc[i].crc;
		buffree(&pc[i].z);
	}
	free(pc);
	/* never seen: libdeflate's stream not as expected; one piece is always valid (and
	   the same bytes for the same input) */
	if (bad)
		fast_deflate(p, n, level, out, crc);
}
