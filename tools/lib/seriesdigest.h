/* a patch series as srcpin applies it and the graph keys it: its entries, and the one
   digest both record (SERIES_DIGEST in srcpin state, SERIES in a patch stage's key) */
#ifndef KILN_SERIESDIGEST_H
#define KILN_SERIESDIGEST_H

#include "hash.h"

/* the next entry of a series file's text (NUL-terminated, edited in place) from *cur:
   '#' comments (at the start or after white space), surrounding white space and blank
   lines dropped; *line counts the lines read. Returns the entry, or NULL at the end. */
char *series_next(char **cur, int *line);

/* the digest: "srcpin-series-v1\n" and the series text, then for each listed patch its
   name, "\n<size>\n" and its bytes, in order */
void seriesdigest_begin(struct sha256 *h, const char *text, size_t len);
void seriesdigest_patch(struct sha256 *h, const char *name, const char *bytes, size_t len);
/* finish into 64 hex digits and a NUL */
void seriesdigest_end(struct sha256 *h, char hex[65]);

#endif
