/* unit tests of fast_pdeflate: a member deflated in pieces on many threads is one valid
   raw deflate stream (zlib inflates it back to the input), its CRC-32 is the input's,
   and the bytes are the same for 1, 2, 3 and 8 threads; text, random bytes (stored
   blocks) and a mix, at levels 1, 5 and 12, with piece sizes that put the end of a final
   block at every bit position of its byte */
#include "fw.h"
#include "test.h"

#include <stdlib.h>
#include <zlib.h>

/* n bytes of kind 0 (text), 1 (random, incompressible) or 2 (both, alternating) */
static unsigned char *
mkdata(size_t n, int kind)
{
	unsigned char *p = xmalloc(n ? n : 1);
	uint32_t x = 2463534242u;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		if (kind == 1 || (kind == 2 && (i / 3000) % 2))
			p[i] = (unsigned char)x;
		else
			p[i] = (unsigned char)("the quick brown fox jumps over the lazy dog 0123456789\n"[(i * 7 + x % 3) % 55]);
	}
	return p;
}

/* inflate the raw stream z and compare it with want */
static int
inflatesame(const struct buf *z, const unsigned char *want, size_t n)
{
	unsigned char *out = xmalloc(n + 1);
	z_stream s;
	int r, same;

	memset(&s, 0, sizeof s);
	inflateInit2(&s, -15);
	s.next_in = (unsigned char *)z->s;
	s.avail_in = (uInt)z->len;
	s.next_out = out;
	s.avail_out = (uInt)n + 1;
	r = inflate(&s, Z_FINISH);
	same = r == Z_STREAM_END && s.total_out == n && s.avail_in == 0 && memcmp(out, want, n) == 0;
	inflateEnd(&s);
	free(out);
	return same;
}

static void
one(size_t n, int kind, int level, size_t piece)
{
	unsigned char *p = mkdata(n, kind);
	struct buf z1 = {0}, zk = {0};
	uint32_t crc1 = 0, crck = 0;
	int threads[] = {2, 3, 8}, k, samebytes = 1, samecrc = 1;

	fast_pdeflate(p, n, &(struct pdeflate){level, 1, piece}, &z1, &crc1);
	CHECK(inflatesame(&z1, p, n), "%zu bytes (kind %d, level %d, pieces of %zu): inflates back to the input", n,
	      kind, level, piece);
	CHECK_INT(crc1, crc32(0, p, (uInt)n), "  its CRC-32 is the input's");
	for (k = 0; k < 3; k++) {
		fast_pdeflate(p, n, &(struct pdeflate){level, threads[k], piece}, &zk, &crck);
		samebytes &= zk.len == z1.len && memcmp(zk.s, z1.s, z1.len) == 0;
		samecrc &= crck == crc1;
	}
	CHECK(samebytes && samecrc, "  the same bytes and CRC-32 on 2, 3 and 8 threads");
	buffree(&z1);
	buffree(&zk);
	free(p);
}

int
main(void)
{
	size_t piece;
	int kind;
	struct buf a = {0}, b = {0};
	uint32_t ca, cb;
	unsigned char *p;

	for (kind = 0; kind < 3; kind++)
		one(200000, kind, 5, 16384);
	one(1 << 20, 2, 1, 65536);
	one(300000, 0, 12, 100000);
	one(3 * FW_PIECE + 17, 2, 5, FW_PIECE);
	/* many small pieces: the final block ends at every bit of its last byte somewhere */
	for (piece = 997; piece < 1010; piece++)
		one(40000, 0, 5, piece);
	one(1, 0, 5, 1);
	/* one piece: exactly what libdeflate writes for the whole */
	p = mkdata(5000, 0);
	fast_pdeflate(p, 5000, &(struct pdeflate){5, 8, FW_PIECE}, &a, &ca);
	fast_deflate(p, 5000, 5, &b, &cb);
	CHECK(a.len == b.len && memcmp(a.s, b.s, a.len) == 0 && ca == cb, "a member below one piece is deflated whole");
	buffree(&a);
	buffree(&b);
	free(p);
	return TEST_DONE();
}
