/* helpers for fuzz targets: the error convention checked, and for a parser that reads
   files, a scratch folder per process and writing the input into it (header-only: fuzz
   targets link no shared fuzz module) */
#ifndef KILN_FUZZFILE_H
#define KILN_FUZZFILE_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* the error convention (HACKING.md) after a call that returned r: a message exactly
   when r < 0 (aborts otherwise); frees it and sets *err back to NULL */
static inline void
fuzz_err(int r, char **err)
{
	if ((r < 0) != (*err != NULL))
		abort();
	free(*err);
	*err = NULL;
}

/* the scratch folder /tmp/kiln-fuzz-NAME.PID, created on first use */
static inline const char *
fuzz_dir(const char *name)
{
	static char dir[96];

	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/kiln-fuzz-%s.%d", name, (int)getpid());
		mkdir(dir, 0755);
	}
	return dir;
}

/* write n bytes to DIR/rel (rel's folders must exist); aborts if it cannot */
static inline void
fuzz_put(const char *dir, const char *rel, const void *p, size_t n)
{
	char *path = xasprintf("%s/%s", dir, rel);
	FILE *f = fopen(path, "wb");

	if (!f)
		abort();
	if (n)
		fwrite(p, 1, n, f);
	fclose(f);
	free(path);
}

#endif
