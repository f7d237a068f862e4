/* libFuzzer target: KFD topology properties (nodes/N/properties and mem_banks), read
   through gpucheck's detection from a scratch sysfs tree. A detected GPU must have a
   target, CU count, VRAM and wave size some GPU can have: out-of-range numbers are
   errors, never a made-up GPU. The input is split at the
   first "\n--\n": before it the node's properties, after it one memory bank's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/fuzzfile.h"
#include "gpucheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

/* a target name a GPU can have: gfx, a decimal major 1-63, two hex digits (gfx90a) */
static int
realtarget(const char *t)
{
	size_t k = strlen(t), i;
	unsigned major = 0;

	if (strncmp(t, "gfx", 3) != 0 || k < 6 || k > 7)
		return 0;
	for (i = 3; i < k - 2; i++) {
		if (t[i] < '0' || t[i] > '9')
			return 0;
		major = major * 10 + (unsigned)(t[i] - '0');
	}
	return major >= 1 && major <= 63 && strspn(t + k - 2, "0123456789abcdef") == 2;
}

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct detectopts o = {0};
	struct gpulist l = {0};
	const uint8_t *sep;
	const char *root = fuzz_dir("kfd");
	char *err = NULL, *d;
	int r;
	size_t i;
	static int made;

	if (!made) {
		made = 1;
		d = xasprintf("%s/class/kfd/kfd/topology/nodes/1/mem_banks/0", root);
		for (i = 1; d[i]; i++)
			if (d[i] == '/') {
				d[i] = 0;
				mkdir(d, 0755);
				d[i] = '/';
			}
		mkdir(d, 0755);
		free(d);
		d = xasprintf("%s/class/kfd/kfd/topology/nodes/0", root);
		mkdir(d, 0755);
		free(d);
		fuzz_put(root, "class/kfd/kfd/topology/nodes/0/properties", "cpu_cores_count 4\nsimd_count 0\n", 31);
	}
	sep = n >= 4 ? memmem(p, n, "\n--\n", 4) : NULL;
	fuzz_put(root, "class/kfd/kfd/topology/nodes/1/properties", p, sep ? (size_t)(sep - p) : n);
	fuzz_put(root, "class/kfd/kfd/topology/nodes/1/mem_banks/0/properties", sep ? sep + 4 : (const uint8_t *)"",
	    sep ? n - (size_t)(sep + 4 - p) : 0);
	o.sysfs = root;
	r = detect(&l, &o, &err);
	if (r < 0 && (!err || !strstr(err, root)))
		abort(); /* errors name the file */
	fuzz_err(r, &err);
	if (r == 0) {
		for (i = 0; i < l.n; i++) {
			if (!memchr(l.g[i].real, 0, sizeof l.g[i].real) ||
			    !memchr(l.g[i].target, 0, sizeof l.g[i].target))
				abort();
			/* numbers no GPU reports never make a GPU (issue #15) */
			if (l.g[i].real[0] && !realtarget(l.g[i].real))
				abort();
			if (l.g[i].cus > 65536 || l.g[i].vram > ((uint64_t)1 << 50) ||
			    (l.g[i].wave && l.g[i].wave != 32 && l.g[i].wave != 64) || l.g[i].devid > 0xffff)
				abort();
		}
	}
	gpulist_free(&l);
	return 0;
}
