/* gpucheck: options every verb shares, usage, detection with those options */
#include "gpucheck.h"
#include "opt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *opt_sysfs = "/sys", *opt_procfs = "/proc";
int procset, sysfsset;

void
gc_usage(const char *error, ...)
{
	struct buf msg = {0};
	va_list ap;

	if (error) {
		va_start(ap, error);
		bufvprintf(&msg, error, ap);
		va_end(ap);
	}
	opt_usage(msg.s,
	          "usage: gpucheck [--arch] [--json] [--sysfs=DIR] [--proc=DIR]\n"
	          "       gpucheck targets [--json] [-v] [--max-inflate=BYTES] FILE|WHEEL|DIR...\n"
	          "       gpucheck cover [--target=T[,T...]|auto] [--json] [-v] [--max-inflate=BYTES]\n"
	          "                      [--kpack-loader=next|first] FILE|WHEEL|DIR...\n"
	          "       gpucheck env [--json] [--sysfs=DIR] [--proc=DIR]\n"
	          "       gpucheck smoke --python=PATH [--timeout=SECONDS] [--json]\n"
	          "       gpucheck --version\n"
	          "Exit status: 0 ok, 1 a problem found (no GPU, not covered, bad environment,\n"
	          "failed smoke check), 2 usage or input error. See gpucheck(1).\n");
}

/* take --sysfs= / --proc= / --help from any verb's options; returns 1 if consumed */
int
gc_commonopt(const char *a)
{
	if (startswith(a, "--sysfs=")) {
		opt_sysfs = a + 8;
		sysfsset = 1;
		return 1;
	}
	if (startswith(a, "--proc=")) {
		opt_procfs = a + 7;
		procset = 1;
		return 1;
	}
	if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
		gc_usage(NULL);
	if (opt_isversion(a))
		opt_version();
	return 0;
}

int
gc_maxinflate(const char *a, uint64_t *max)
{
	char *end;

	if (!startswith(a, "--max-inflate="))
		return 0;
	errno = 0;
	*max = strtoull(a + 14, &end, 10);
	if (*end || !*max || errno || !isdig((unsigned char)a[14]))
		gc_usage("--max-inflate needs a positive number of bytes");
	return 1;
}

void
detect_or_die(struct gpulist *l)
{
	struct detectopts o;
	char *err = NULL;

	o.sysfs = opt_sysfs;
	/* a captured sysfs tree stands alone unless a captured /proc goes with it */
	o.procfs = sysfsset && !procset ? NULL : opt_procfs;
	o.usecuda = !procset && !sysfsset;
	if (detect(l, &o, &err) < 0) {
		gpulist_free(l);
		die("%s", err);
	}
}

