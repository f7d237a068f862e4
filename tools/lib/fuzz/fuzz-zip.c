/* libFuzzer target: zip central directory, ZIP64 records and local headers as fatwheel
   and wheelpick read them (zip.h), every member's content through its CRC check, and
   member names: what zip_open accepts is safe and installs to distinct paths
   (wheelpath.h), and the input's first line, taken as a member name, keeps the
   normaliser's promises */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzzfile.h"
#include "util.h"
#include "wheelpath.h"
#include "zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

static int
sink(void *ctx, const void *p, size_t n)
{
	uint64_t *total = ctx;

	(void)p;
	*total += n;
	return *total > (64u << 20); /* bound the work per input */
}

/* the promises of wheelpath_key and wheelpath_plainname on one name */
static void
namecheck(const char *name)
{
	char *k = wheelpath_key(name), *k2;
	struct buf b = {0};

	if (zip_safename(name) && !k)
		abort(); /* a safe name never leaves its root */
	if (k && k[0] != 1) {
		if (k[0] == '/' || strstr(k, "//") || !strcmp(k, "..") || startswith(k, "../") ||
		    strstr(k, "/../") || endswith(k, "/..") || strstr(k, "/./") || startswith(k, "./"))
			abort(); /* a key is normalised */
		k2 = wheelpath_key(k);
		if (!k2 || (strcmp(k, k2) && !strstr(k, ".data/")))
			abort(); /* normalising twice changes nothing */
		free(k2);
	}
	if (wheelpath_plainname(name) && (strchr(name, '/') || !strcmp(name, "..")))
		abort();
	wheelpath_escape(&b, name);
	for (size_t i = 0; i < b.len; i++)
		if ((unsigned char)b.s[i] < 0x20 || (unsigned char)b.s[i] >= 0x7f)
			abort(); /* escaped text prints on one line */
	buffree(&b);
	free(k);
}

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	static char path[64];
	struct zipin z;
	uint64_t total = 0;
	char *err = NULL;
	FILE *f;
	int r;
	size_t i;

	if (!path[0])
		snprintf(path, sizeof path, "/tmp/kiln-fuzz-zip.%d", (int)getpid());
	f = fopen(path, "wb");
	if (!f)
		abort();
	fwrite(p, 1, n, f);
	fclose(f);
	{
		size_t l = 0;
		while (l < n && l < 512 && p[l] != '\n' && p[l] != 0)
			l++;
		char *name = xstrndup((const char *)p, l);
		namecheck(name);
		free(name);
	}
	fuzz_err(r = zip_open(&z, path, &err), &err);
	if (r == 0) {
		char **names = xmalloc((z.n ? z.n : 1) * sizeof *names);
		size_t a, b;
		for (i = 0; i < z.n; i++) {
			names[i] = z.e[i].name;
			namecheck(z.e[i].name);
		}
		if (wheelpath_clash(names, z.n, &a, &b) != 0)
			abort(); /* zip_open must refuse two members that install to one path */
		free(names);
		for (i = 0; i < z.n; i++) {
			if (!zip_safename(z.e[i].name))
				abort(); /* zip_open must refuse unsafe names */
			if (z.e[i].usize > zip_maxinflate)
				abort(); /* nor a member over the cap */
			fuzz_err(r = zip_read(&z, &z.e[i], sink, &total, &err), &err);
			if (r > 0)
				break;
		}
		zip_close(&z);
	}
	return 0;
}
