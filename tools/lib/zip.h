/* zip archives: a bounds-checked reader over a mapped file and a writer that copies
   members as compressed bytes and writes ZIP64 records exactly where the spec needs
   them (APPNOTE 6.3.10, 4.3.9 / 4.4 / 4.5.3) */
#ifndef KILN_ZIP_H
#define KILN_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "mapfile.h"
#include "util.h"

/* one member of an archive being read */
struct zipent {
	char *name;                /* NUL-terminated copy of the stored name */
	uint16_t flags, method;    /* general purpose flags, 0 stored / 8 deflated */
	uint16_t mtime, mdate;     /* MS-DOS time and date */
	uint16_t madeby;           /* "version made by" (high byte: host system) */
	uint32_t crc, extattr;     /* CRC-32 of the content, external attributes */
	uint64_t csize, usize;     /* compressed and uncompressed sizes */
	uint64_t lho, dataoff;     /* local header offset, offset of the compressed bytes */
	uint64_t end;              /* end of its bytes in the file (data descriptor included) */
};

/* an archive open for reading; the members point into the map */
struct zipin {
	struct mapfile m;
	struct zipent *e;
	size_t n;
};

/* the largest member zip_open accepts and zip_read inflates, in bytes, unless a tool
   sets zip_maxinflate (one cap for every decompression path that reads a zipin) */
#define ZIP_MAXINFLATE ((uint64_t)16 << 30)
extern uint64_t zip_maxinflate;
/* zip_open's return for a member path that is unsafe or installs where another does */
#define ZIP_EPATH (-2)

/* Open path without blocking (a FIFO or device is refused, not waited on), require a
   regular file, map it and read its central directory, checking every offset and size,
   each local header against its central entry (name, method, flags, CRC-32 and sizes,
   or the data descriptor's CRC-32), that no two members overlap, that no member declares
   more than zip_maxinflate bytes or more than deflate can expand its compressed bytes
   to, no encryption, methods 0 and 8 only, no data in folder entries, and every name
   (zip_safename, and no two that pip would install to one path: wheelpath_clash).
   Returns 0; ZIP_EPATH for an unsafe or clashing name; -1 for anything else; with a
   message in err. */
int zip_open(struct zipin *z, const char *path, char **err);
/* unmap and free */
void zip_close(struct zipin *z);
/* true if name is a safe relative member path: not empty, not absolute ("/", "C:"), no
   ".." component, no '\\', no control characters or DEL */
int zip_safename(const char *name);

/* Stream a member's uncompressed content through fn in chunks, checking that the
   deflate stream ends exactly at its compressed size, that it inflates to exactly its
   recorded size (never past zip_maxinflate), and its CRC-32. fn returns non-zero to stop (zip_read then returns that value). Returns 0,
   -1 with err set on corrupt data, or fn's value. */
int zip_read(const struct zipin *z, const struct zipent *e,
             int (*fn)(void *ctx, const void *p, size_t n), void *ctx, char **err);

/* raw deflate (no zlib header) of n bytes at the given level (1-9) into out; sets *crc */
void zip_deflate(const void *p, size_t n, int level, struct buf *out, uint32_t *crc);
/* CRC-32 of n bytes */
uint32_t zip_crc(const void *p, size_t n);

/* a member written, kept for the central directory */
struct zipcd {
	char *name;
	uint16_t flags, method, mtime, mdate, madeby;
	uint32_t crc, extattr;
	uint64_t csize, usize, lho;
};

/* an archive being written sequentially to fd */
struct zipout {
	int fd;
	uint64_t off;              /* bytes written so far */
	struct zipcd *cd;
	size_t n, cap;
};

/* start writing at the current position of fd (which must be 0) */
void zipw_init(struct zipout *w, int fd);
/* Write one member: local header (ZIP64 extra when a size is >= 0xFFFFFFFF), then the
   csize bytes at data exactly as given (already compressed for method 8). The
   meta fields (flags, method, times, madeby, extattr, crc, sizes) come from m; flag
   bit 3 (data descriptor) is cleared since sizes are known. Returns 0, or -1 with errno. */
int zipw_add(struct zipout *w, const struct zipcd *m, const void *data);
/* Write the central directory, ZIP64 end records when needed, and the end record;
   frees the directory. Returns 0, or -1 with errno set. */
int zipw_finish(struct zipout *w);
/* free what a writer holds without finishing */
void zipw_free(struct zipout *w);

#endif
