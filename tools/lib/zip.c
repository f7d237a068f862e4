/* zip reader and writer (APPNOTE 6.3.10) */
#include "zip.h"
#include "atomic.h"
#include "elffile.h"
#include "os.h"
#include "wheelpath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define MAX32 0xffffffffu
#define MAX16 0xffffu
#define SIG_DD 0x08074b50u
/* deflate cannot expand one byte into more than 258 * 4 (one length code per two bits) */
#define DEFLATE_RATIO 1032u

uint64_t zip_maxinflate = ZIP_MAXINFLATE;

int
zip_safename(const char *name)
{
	const char *p = name, *q;
	const unsigned char *u;

	if (!*name || *name == '/' || strchr(name, '\\'))
		return 0;
	for (u = (const unsigned char *)name; *u; u++)
		if (*u < 0x20 || *u == 0x7f)
			return 0;
	if (((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z')) && name[1] == ':')
		return 0;
	for (;;) {
		q = strchr(p, '/');
		if ((q ? (size_t)(q - p) : strlen(p)) == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		if (!q)
			return 1;
		p = q + 1;
	}
}

/* open path without blocking, require a regular file and map it */
static int
mapin(struct mapfile *m, const char *path, char **err)
{
	struct stat st;
	void *p;
	int fd, e;

	/* O_NONBLOCK: opening a FIFO with no writer would wait for one forever */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return seterr(err, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return seterr(err, "%s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return seterr(err, "is %s, not a regular file", os_ftype(st.st_mode));
	}
	if (st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			e = errno;
			close(fd);
			return seterr(err, "%s", strerror(e));
		}
		m->p = p;
		m->n = (size_t)st.st_size;
	}
	close(fd);
	return 0;
}

/* where the central directory lies and how many entries it claims */
struct cdir {
	uint64_t off, size, count;
};

/* a member's bytes in the file, from its local header to the end of its data */
struct span {
	uint64_t from, to;
	size_t i;
};

static int
byfrom(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

static int
cmpname(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* check a local header against its central entry; sets e->dataoff and *end (the end of
   the member's bytes, data descriptor included) */
static int
checklocal(struct zipent *e, const unsigned char *p, uint64_t cdoff, uint64_t *end, char **err)
{
	const unsigned char *h = p + e->lho;
	uint16_t lflags = rd16(h + 6), lmethod = rd16(h + 8);
	uint32_t lcrc = rd32(h + 14);
	uint64_t lcs = rd32(h + 18), lus = rd32(h + 22), lnl = rd16(h + 26), lxl = rd16(h + 28);
	uint64_t dd;
	size_t i;

	if (lflags & 1)
		return seterr(err, "member '%s' is encrypted (local header flag)", e->name);
	if (lmethod != e->method)
		return seterr(err, "member '%s': the local header says compression method %u, the central directory %u (offset %llu)",
		              e->name, lmethod, e->method, (unsigned long long)e->lho);
	e->dataoff = e->lho + 30 + lnl + lxl;
	if (e->dataoff > cdoff || e->csize > cdoff - e->dataoff)
		return seterr(err, "member '%s' (%llu bytes at offset %llu) runs past the central directory; truncated?",
		              e->name, (unsigned long long)e->csize, (unsigned long long)e->dataoff);
	*end = e->dataoff + e->csize;
	if ((lflags | e->flags) & 8) {
		/* sizes and CRC follow the data: [signature] CRC-32, sizes; values left in the
		   local header must still agree */
		dd = *end;
		if (dd + 4 <= cdoff && rd32(p + dd) == SIG_DD)
			dd += 4;
		if (dd + 4 > cdoff)
			return seterr(err, "member '%s': its data descriptor is missing (offset %llu)",
			              e->name, (unsigned long long)*end);
		if (rd32(p + dd) != e->crc)
			return seterr(err, "member '%s': the data descriptor's CRC-32 %08x differs from the central directory's %08x",
			              e->name, rd32(p + dd), e->crc);
		*end = dd + 4;
		if (lcrc && lcrc != e->crc)
			return seterr(err, "member '%s': the local header's CRC-32 %08x differs from the central directory's %08x",
			              e->name, lcrc, e->crc);
		return 0;
	}
	if (lcs == MAX32 || lus == MAX32) {
		/* 4.5.3: the local ZIP64 extra holds both sizes, usize first */
		const unsigned char *x = h + 30 + lnl;
		for (i = 0; i + 4 <= lxl; i += 4 + rd16(x + i + 2)) {
			if (i + 4 + rd16(x + i + 2) > lxl)
				break;
			if (rd16(x + i) == 1 && rd16(x + i + 2) >= 16) {
				lus = rd64(x + i + 4);
				lcs = rd64(x + i + 12);
				break;
			}
		}
	}
	if (lcrc != e->crc)
		return seterr(err, "member '%s': the local header's CRC-32 %08x differs from the central directory's %08x",
		              e->name, lcrc, e->crc);
	if (lcs != e->csize || lus != e->usize)
		return seterr(err, "member '%s': the local header's sizes (%llu compressed, %llu) differ from the central directory's (%llu, %llu)",
		              e->name, (unsigned long long)lcs, (unsigned long long)lus,
		              (unsigned long long)e->csize, (unsigned long long)e->usize);
	return 0;
}

/* fill the sentinel fields of an entry (its sizes and local header offset) from its
   ZIP64 extra field; at is the entry's offset, for messages */
static int
zip64extra(struct zipent *e, const unsigned char *x, size_t xlen, uint64_t at, char **err)
{
	size_t i = 0, sz;
	const unsigned char *d;
	size_t need = 0, k = 0;
	int wantoff = e->lho == MAX32;

	need = (e->usize == MAX32) + (e->csize == MAX32) + (size_t)wantoff;
	if (!need)
		return 0;
	while (i + 4 <= xlen) {
		sz = rd16(x + i + 2);
		if (i + 4 + sz > xlen)
			break;
		if (rd16(x + i) == 1) {
			d = x + i + 4;
			if (sz < need * 8)
				return seterr(err, "ZIP64 extra field too short for '%s' (offset %llu)",
				              e->name, (unsigned long long)at);
			if (e->usize == MAX32)
				e->usize = rd64(d + 8 * k++);
			if (e->csize == MAX32)
				e->csize = rd64(d + 8 * k++);
			if (wantoff)
				e->lho = rd64(d + 8 * k++);
			return 0;
		}
		i += 4 + sz;
	}
	return seterr(err, "'%s' has 0xFFFFFFFF sizes but no ZIP64 extra field (offset %llu)",
	              e->name, (unsigned long long)at);
}

/* the end of central directory record (ZIP64's where present): where the directory is,
   its size and count; 0 or -1 with err */
static int
findeocd(const struct zipin *z, struct cdir *cd, char **err)
{
	const unsigned char *p = z->m.p;
	size_t n = z->m.n, i, lim;
	uint64_t eocd = 0, end, e64;
	int found = 0;

	if (n < 22)
		return seterr(err, "not a zip archive (%zu bytes, no end record)", n);
	lim = n - 22 > 65535 ? n - 22 - 65535 : 0;
	for (i = n - 22 + 1; i-- > lim;) {
		if (rd32(p + i) == SIG_EOCD && i + 22 + rd16(p + i + 20) == n) {
			eocd = i;
			found = 1;
			break;
		}
	}
	if (!found)
		return seterr(err, "not a zip archive or truncated (no end of central directory record)");
	if (rd16(p + eocd + 4) != 0 || rd16(p + eocd + 6) != 0)
		return seterr(err, "multi-disk archives are not supported (offset %llu)",
		              (unsigned long long)eocd);
	cd->count = rd16(p + eocd + 10);
	cd->size = rd32(p + eocd + 12);
	cd->off = rd32(p + eocd + 16);
	end = eocd;
	if (eocd >= 20 && rd32(p + eocd - 20) == SIG_LOC64) {
		e64 = rd64(p + eocd - 20 + 8);
		if (e64 > eocd - 20 || eocd - 20 - e64 < 56 || rd32(p + e64) != SIG_EOCD64)
			return seterr(err, "bad ZIP64 end of central directory locator (offset %llu)",
			              (unsigned long long)(eocd - 20));
		cd->count = rd64(p + e64 + 32);
		cd->size = rd64(p + e64 + 40);
		cd->off = rd64(p + e64 + 48);
		end = e64;
	} else if (cd->count == MAX16 || cd->size == MAX32 || cd->off == MAX32) {
		return seterr(err, "end record needs ZIP64 but the ZIP64 locator is missing (offset %llu)",
		              (unsigned long long)eocd);
	}
	if (cd->off > end || cd->size > end - cd->off)
		return seterr(err, "central directory (offset %llu, %llu bytes) lies outside the file; truncated?",
		              (unsigned long long)cd->off, (unsigned long long)cd->size);
	if (cd->count > cd->size / 46)
		return seterr(err, "end record claims %llu members in a %llu-byte central directory",
		              (unsigned long long)cd->count, (unsigned long long)cd->size);
	return 0;
}

/* what a member may be: a safe name, not encrypted, method 0 or 8, sizes that can be
   true; 0, -1 or ZIP_EPATH with err */
static int
checkmember(const struct zipent *e, uint64_t pos, char **err)
{
	if (!zip_safename(e->name)) {
		struct buf q = {0};
		wheelpath_escape(&q, e->name);
		seterr(err, "unsafe member path '%s' (absolute, '..', '\\' or a control character)", q.s);
		buffree(&q);
		return ZIP_EPATH;
	}
	if (e->flags & 1)
		return seterr(err, "member '%s' is encrypted", e->name);
	if (e->method != 0 && e->method != 8)
		return seterr(err, "member '%s' uses compression method %u (only 0 and 8 are supported)",
		              e->name, e->method);
	if (e->method == 0 && e->csize != e->usize)
		return seterr(err, "stored member '%s' has different sizes (offset %llu)", e->name,
		              (unsigned long long)pos);
	if (e->usize > zip_maxinflate)
		return seterr(err, "member '%s' declares %llu bytes, over the cap of %llu",
		              e->name, (unsigned long long)e->usize, (unsigned long long)zip_maxinflate);
	if (e->method == 8 && e->usize / DEFLATE_RATIO > e->csize + 1)
		return seterr(err, "member '%s' declares %llu bytes from %llu compressed: more than deflate can give; the sizes lie",
		              e->name, (unsigned long long)e->usize, (unsigned long long)e->csize);
	if (endswith(e->name, "/") && (e->usize || e->csize > 2))
		return seterr(err, "folder entry '%s' carries data (%llu bytes, %llu compressed)",
		              e->name, (unsigned long long)e->usize, (unsigned long long)e->csize);
	return 0;
}

/* member i's central directory entry at *pos, its local header and extent; *pos moves to
   the next entry; 0, -1 or ZIP_EPATH with err */
static int
readentry(struct zipin *z, size_t i, uint64_t *pos, const struct cdir *cd, char **err)
{
	const unsigned char *p = z->m.p, *c = p + *pos;
	struct zipent *e = &z->e[i];
	uint64_t nl, xl, cl, lnl;
	int r;

	if (*pos + 46 > cd->off + cd->size || rd32(c) != SIG_CENTRAL)
		return seterr(err, "bad central directory entry %zu (offset %llu)", i,
		              (unsigned long long)*pos);
	nl = rd16(c + 28);
	xl = rd16(c + 30);
	cl = rd16(c + 32);
	if (*pos + 46 + nl + xl + cl > cd->off + cd->size)
		return seterr(err, "central directory entry %zu overruns the directory (offset %llu)",
		              i, (unsigned long long)*pos);
	e->madeby = rd16(c + 4);
	e->flags = rd16(c + 8);
	e->method = rd16(c + 10);
	e->mtime = rd16(c + 12);
	e->mdate = rd16(c + 14);
	e->crc = rd32(c + 16);
	e->csize = rd32(c + 20);
	e->usize = rd32(c + 24);
	e->extattr = rd32(c + 38);
	e->lho = rd32(c + 42);
	e->name = xstrndup((const char *)c + 46, nl);
	z->n = i + 1;
	if (strlen(e->name) != nl)
		return seterr(err, "member name %zu contains a NUL byte (offset %llu)", i,
		              (unsigned long long)*pos);
	if (zip64extra(e, c + 46 + nl, xl, *pos, err) < 0)
		return -1;
	if ((r = checkmember(e, *pos, err)) != 0)
		return r;
	if (e->lho > cd->off || cd->off - e->lho < 30 || rd32(p + e->lho) != SIG_LOCAL)
		return seterr(err, "member '%s': no local header at offset %llu", e->name,
		              (unsigned long long)e->lho);
	lnl = rd16(p + e->lho + 26);
	if (lnl != nl || e->lho + 30 + lnl > cd->off || memcmp(p + e->lho + 30, e->name, nl) != 0)
		return seterr(err, "member '%s': local header name differs from the central directory (offset %llu)",
		              e->name, (unsigned long long)e->lho);
	if (checklocal(e, p, cd->off, &e->end, err) < 0)
		return -1;
	*pos += 46 + nl + xl + cl;
	return 0;
}

/* no two members share bytes (overlapping entries make a small file inflate to many
   copies of one member); 0 or -1 with err */
static int
nooverlap(const struct zipin *z, char **err)
{
	struct span *sp = xmalloc((z->n ? z->n : 1) * sizeof *sp);
	size_t i;
	int r = 0;

	for (i = 0; i < z->n; i++) {
		sp[i].from = z->e[i].lho;
		sp[i].to = z->e[i].end;
		sp[i].i = i;
	}
	qsort(sp, z->n, sizeof *sp, byfrom);
	for (i = 1; i < z->n && !r; i++)
		if (sp[i].from < sp[i - 1].to)
			r = seterr(err, "members '%s' and '%s' overlap (offset %llu)",
			           z->e[sp[i - 1].i].name, z->e[sp[i].i].name,
			           (unsigned long long)sp[i].from);
	free(sp);
	return r;
}

/* no name twice, and no two spellings of one installed path ("a//b", "a/./b",
   NAME.data/purelib/a ...); 0 or ZIP_EPATH with err */
static int
uniquenames(const struct zipin *z, char **err)
{
	char **names = xmalloc((z->n ? z->n : 1) * sizeof *names);
	size_t i, a, b;
	int r = 0, c;

	for (i = 0; i < z->n; i++)
		names[i] = z->e[i].name;
	qsort(names, z->n, sizeof *names, cmpname);
	for (i = 1; i < z->n && !r; i++)
		if (strcmp(names[i - 1], names[i]) == 0) {
			seterr(err, "member '%s' appears twice", names[i]);
			r = ZIP_EPATH;
		}
	if (!r && (c = wheelpath_clash(names, z->n, &a, &b)) != 0) {
		if (err)
			*err = wheelpath_clashmsg(names, c, a, b);
		r = ZIP_EPATH;
	}
	free(names);
	return r;
}

/* zip_open without the cleanup on failure */
static int
zip_open1(struct zipin *z, const char *path, char **err)
{
	struct cdir cd = {0};
	uint64_t pos;
	size_t i;
	int r;

	memset(z, 0, sizeof *z);
	if (mapin(&z->m, path, err) < 0)
		return -1;
	if (findeocd(z, &cd, err) < 0)
		return -1;
	z->e = xcalloc(cd.count ? cd.count : 1, sizeof *z->e);
	pos = cd.off;
	for (i = 0; i < cd.count; i++)
		if ((r = readentry(z, i, &pos, &cd, err)) != 0)
			return r;
	if (nooverlap(z, err) < 0)
		return -1;
	return uniquenames(z, err);
}

int
zip_open(struct zipin *z, const char *path, char **err)
{
	int r = zip_open1(z, path, err);

	if (r == 0)
		return 0;
	zip_close(z); /* nothing half-read survives a failure */
	return r == ZIP_EPATH ? ZIP_EPATH : -1;
}

void
zip_close(struct zipin *z)
{
	size_t i;

	for (i = 0; i < z->n; i++)
		free(z->e[i].name);
	free(z->e);
	map_close(&z->m);
	memset(z, 0, sizeof *z);
}

uint32_t
zip_crc(const void *p, size_t n)
{
	uLong c = crc32(0, Z_NULL, 0);
	const unsigned char *b = p;
	size_t k;

	while (n) {
		k = n > UINT_MAX ? UINT_MAX : n;
		c = crc32(c, b, (uInt)k);
		b += k;
		n -= k;
	}
	return (uint32_t)c;
}

/* zip_read of a stored member: its bytes through fn, then its CRC-32 */
static int
readstored(const struct zipent *e, const unsigned char *src,
           int (*fn)(void *ctx, const void *p, size_t n), void *ctx, char **err)
{
	uint64_t left = e->csize;
	uLong crc = crc32(0, Z_NULL, 0);
	size_t k;
	int r;

	while (left) {
		k = left > (1u << 24) ? (1u << 24) : (size_t)left;
		crc = crc32(crc, src, (uInt)k);
		if ((r = fn(ctx, src, k)) != 0)
			return r;
		src += k;
		left -= k;
	}
	if ((uint32_t)crc != e->crc)
		return seterr(err, "member '%s': CRC-32 mismatch (corrupt archive)", e->name);
	return 0;
}

/* zip_read of a deflated member: inflated through fn, its stream's end, size and CRC-32
   checked */
static int
readdeflated(const struct zipent *e, const unsigned char *src,
             int (*fn)(void *ctx, const void *p, size_t n), void *ctx, char **err)
{
	uint64_t left = e->csize, out = 0;
	unsigned char *ob;
	size_t k, got, obn = 1 << 18;
	uLong crc = crc32(0, Z_NULL, 0);
	z_stream s;
	int r, zr = Z_OK;

	memset(&s, 0, sizeof s);
	if (inflateInit2(&s, -15) != Z_OK)
		return seterr(err, "zlib: cannot start inflate");
	ob = xmalloc(obn);
	r = 0;
	while (zr != Z_STREAM_END) {
		if (s.avail_in == 0 && left) {
			k = left > (1u << 30) ? (1u << 30) : (size_t)left;
			s.next_in = (unsigned char *)src;
			s.avail_in = (uInt)k;
			src += k;
			left -= k;
		}
		s.next_out = ob;
		s.avail_out = (uInt)obn;
		zr = inflate(&s, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && !(zr == Z_BUF_ERROR && (s.avail_in || left))) {
			r = seterr(err, "member '%s': corrupt deflate data at byte %llu (%s)", e->name,
			           (unsigned long long)(e->csize - left - s.avail_in),
			           zr == Z_BUF_ERROR ? "data ends early" : s.msg ? s.msg : "inflate error");
			break;
		}
		got = obn - s.avail_out;
		if (got) {
			out += got;
			if (out > zip_maxinflate) {
				r = seterr(err, "member '%s' inflates past the cap of %llu bytes", e->name,
				           (unsigned long long)zip_maxinflate);
				break;
			}
			if (out > e->usize) {
				r = seterr(err, "member '%s' inflates to more than its recorded %llu bytes",
				           e->name, (unsigned long long)e->usize);
				break;
			}
			crc = crc32(crc, ob, (uInt)got);
			if ((r = fn(ctx, ob, got)) != 0)
				break;
		}
	}
	free(ob);
	inflateEnd(&s);
	if (r)
		return r;
	if (left || s.avail_in)
		return seterr(err, "member '%s': its deflate stream ends %llu bytes before its recorded compressed size %llu",
		              e->name, (unsigned long long)(left + s.avail_in), (unsigned long long)e->csize);
	if (out != e->usize)
		return seterr(err, "member '%s' inflates to %llu bytes, recorded %llu", e->name,
		              (unsigned long long)out, (unsigned long long)e->usize);
	if ((uint32_t)crc != e->crc)
		return seterr(err, "member '%s': CRC-32 mismatch (corrupt archive)", e->name);
	return 0;
}

int
zip_read(const struct zipin *z, const struct zipent *e,
         int (*fn)(void *ctx, const void *p, size_t n), void *ctx, char **err)
{
	const unsigned char *src = z->m.p + e->dataoff;

	if (e->usize > zip_maxinflate)
		return seterr(err, "member '%s' declares %llu bytes, over the cap of %llu", e->name,
		              (unsigned long long)e->usize, (unsigned long long)zip_maxinflate);
	return e->method == 0 ? readstored(e, src, fn, ctx, err) : readdeflated(e, src, fn, ctx, err);
}

void
zip_deflate(const void *p, size_t n, int level, struct buf *out, uint32_t *crc)
{
	z_stream s;
	const unsigned char *src = p;
	size_t left = n, k;
	int flush, zr;

	*crc = zip_crc(p, n);
	memset(&s, 0, sizeof s);
	if (deflateInit2(&s, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		die("zlib: cannot start deflate");
	bufreset(out);
	do {
		k = left > (1u << 30) ? (1u << 30) : left;
		s.next_in = (unsigned char *)src;
		s.avail_in = (uInt)k;
		src += k;
		left -= k;
		flush = left ? Z_NO_FLUSH : Z_FINISH;
		do {
			if (out->cap - out->len < 65536)
				out->s = xgrow(out->s, &out->cap, out->len + (out->len >> 1) + 65536, 1);
			s.next_out = (unsigned char *)out->s + out->len;
			s.avail_out = (uInt)(out->cap - out->len > UINT_MAX ? UINT_MAX : out->cap - out->len);
			k = s.avail_out;
			zr = deflate(&s, flush);
			if (zr == Z_STREAM_ERROR)
				die("zlib: deflate failed");
			out->len += k - s.avail_out;
		} while (s.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
	} while (left);
	deflateEnd(&s);
}

void
zipw_init(struct zipout *w, int fd)
{
	memset(w, 0, sizeof *w);
	w->fd = fd;
}

static int
emit(struct zipout *w, const void *p, size_t n)
{
	if (writeall(w->fd, p, n) < 0)
		return -1;
	w->off += n;
	return 0;
}

int
zipw_add(struct zipout *w, const struct zipcd *m, const void *data)
{
	unsigned char h[30 + 20];
	size_t nl = strlen(m->name), hl = 30;
	int z64 = m->usize >= MAX32 || m->csize >= MAX32;
	struct zipcd *c;

	if (nl > MAX16) {
		errno = ENAMETOOLONG;
		return -1;
	}
	w->cd = xgrow(w->cd, &w->cap, w->n + 1, sizeof *w->cd);
	c = &w->cd[w->n];
	*c = *m;
	c->name = xstrdup(m->name);
	c->flags &= (uint16_t)~8u;
	c->lho = w->off;
	w->n++;
	wr32(h, SIG_LOCAL);
	wr16(h + 4, z64 ? 45 : 20);
	wr16(h + 6, c->flags);
	wr16(h + 8, c->method);
	wr16(h + 10, c->mtime);
	wr16(h + 12, c->mdate);
	wr32(h + 14, c->crc);
	wr32(h + 18, z64 ? MAX32 : (uint32_t)c->csize);
	wr32(h + 22, z64 ? MAX32 : (uint32_t)c->usize);
	wr16(h + 26, (unsigned)nl);
	wr16(h + 28, z64 ? 20 : 0);
	if (z64) {
		/* 4.5.3: the local header's ZIP64 extra holds both sizes */
		wr16(h + 30, 1);
		wr16(h + 32, 16);
		wr64(h + 34, c->usize);
		wr64(h + 42, c->csize);
		hl += 20;
	}
	if (emit(w, h, 30) < 0 || emit(w, m->name, nl) < 0 || emit(w, h + 30, hl - 30) < 0)
		return -1;
	return emit(w, data, (size_t)c->csize);
}

int
zipw_finish(struct zipout *w)
{
	unsigned char h[46 + 28], x[56 + 20];
	uint64_t cdoff = w->off, cdsize, e64;
	size_t i, nl, xl;
	struct zipcd *c;
	int r = 0, z64;

	for (i = 0; i < w->n && !r; i++) {
		c = &w->cd[i];
		nl = strlen(c->name);
		xl = 0;
		/* 4.5.3: the central ZIP64 extra holds only the fields that overflow, in order */
		if (c->usize >= MAX32)
			wr64(h + 46 + 4 + 8 * (xl++), c->usize);
		if (c->csize >= MAX32)
			wr64(h + 46 + 4 + 8 * (xl++), c->csize);
		if (c->lho >= MAX32)
			wr64(h + 46 + 4 + 8 * (xl++), c->lho);
		z64 = xl > 0;
		wr32(h, SIG_CENTRAL);
		wr16(h + 4, (unsigned)((c->madeby & 0xff00) | (z64 ? 45 : 20)));
		wr16(h + 6, z64 ? 45 : 20);
		wr16(h + 8, c->flags);
		wr16(h + 10, c->method);
		wr16(h + 12, c->mtime);
		wr16(h + 14, c->mdate);
		wr32(h + 16, c->crc);
		wr32(h + 20, c->csize >= MAX32 ? MAX32 : (uint32_t)c->csize);
		wr32(h + 24, c->usize >= MAX32 ? MAX32 : (uint32_t)c->usize);
		wr16(h + 28, (unsigned)nl);
		wr16(h + 30, z64 ? (unsigned)(4 + 8 * xl) : 0);
		wr16(h + 32, 0);
		wr16(h + 34, 0);
		wr16(h + 36, 0);
		wr32(h + 38, c->extattr);
		wr32(h + 42, c->lho >= MAX32 ? MAX32 : (uint32_t)c->lho);
		if (z64) {
			wr16(h + 46, 1);
			wr16(h + 48, (unsigned)(8 * xl));
		}
		if (emit(w, h, 46) < 0 || emit(w, c->name, nl) < 0 ||
		    (z64 && emit(w, h + 46, 4 + 8 * xl) < 0))
			r = -1;
	}
	cdsize = w->off - cdoff;
	if (!r && (w->n >= MAX16 || cdsize >= MAX32 || cdoff >= MAX32)) {
		e64 = w->off;
		wr32(x, SIG_EOCD64);
		wr64(x + 4, 44);
		wr16(x + 12, 45);
		wr16(x + 14, 45);
		wr32(x + 16, 0);
		wr32(x + 20, 0);
		wr64(x + 24, w->n);
		wr64(x + 32, w->n);
		wr64(x + 40, cdsize);
		wr64(x + 48, cdoff);
		wr32(x + 56, SIG_LOC64);
		wr32(x + 60, 0);
		wr64(x + 64, e64);
		wr32(x + 72, 1);
		r = emit(w, x, 76);
	}
	if (!r) {
		wr32(x, SIG_EOCD);
		wr16(x + 4, 0);
		wr16(x + 6, 0);
		wr16(x + 8, w->n >= MAX16 ? MAX16 : (unsigned)w->n);
		wr16(x + 10, w->n >= MAX16 ? MAX16 : (unsigned)w->n);
		wr32(x + 12, cdsize >= MAX32 ? MAX32 : (uint32_t)cdsize);
		wr32(x + 16, cdoff >= MAX32 ? MAX32 : (uint32_t)cdoff);
		wr16(x + 20, 0);
		r = emit(w, x, 22);
	}
	zipw_free(w);
	return r;
}

void
zipw_free(struct zipout *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->cd[i].name);
	free(w->cd);
	w->cd = NULL;
	w->n = w->cap = 0;
}
