/* patch series entries and their digest (see seriesdigest.h) */
#include "seriesdigest.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

char *
series_next(char **cur, int *line)
{
	char *s, *next, *hash, *e;

	for (s = *cur; s && *s; s = next) {
		if ((next = strchr(s, '\n')))
			*next++ = 0;
		(*line)++;
		hash = strchr(s, '#');
		if (hash && (hash == s || hash[-1] == ' ' || hash[-1] == '\t'))
			*hash = 0;
		s += strspn(s, " \t\r");
		e = s + strlen(s);
		while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			*--e = 0;
		if (*s) {
			*cur = next;
			return s;
		}
	}
	*cur = NULL;
	return NULL;
}

void
seriesdigest_begin(struct sha256 *h, const char *text, size_t len)
{
	sha256_init(h);
	sha256_update(h, "srcpin-series-v1\n", 17);
	sha256_update(h, text ? text : "", len);
}

void
seriesdigest_patch(struct sha256 *h, const char *name, const char *bytes, size_t len)
{
	char hdr[32];
	int n = snprintf(hdr, sizeof hdr, "\n%zu\n", len);

	sha256_update(h, name, strlen(name));
	sha256_update(h, hdr, (size_t)n);
	sha256_update(h, bytes ? bytes : "", len);
}

void
seriesdigest_end(struct sha256 *h, char hex[65])
{
	unsigned char d[32];
	struct buf b = {0};

	sha256_final(h, d);
	hexenc(&b, d, 32);
	memcpy(hex, b.s, 65);
	buffree(&b);
}
