/* the generator alone: `kiln-stage graph` (and rocm-probe, configure's ROCm check),
   which configure builds first (into
   BUILDDIR/gen/kiln-stage) from this file, the modules configure's gen_modules names and
   tools/lib, without libcurl, libarchive or libgit2; the tools' kiln-stage has the same
   verb among its others */
#include <stdio.h>
#include <string.h>

#include "rocmprobe.h"
#include "schema.h"
#include "opt.h"
#include "util.h"

static void
usage(const char *error)
{
	opt_usage(error, "usage: kiln-stage graph --srcdir=DIR --builddir=DIR [OPTION]... -- CONFIGURE [ARG]...\n"
	                 "       kiln-stage rocm-probe [--json | --get=NAME] DIR\n"
	                 "       kiln-stage --version\n"
	                 "(configure's generator; the other verbs are the built tools' kiln-stage)\n");
}

int
main(int argc, char **argv)
{
	setprogname(argv[0]);
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		usage(NULL);
	if (argc >= 2 && opt_isversion(argv[1]))
		opt_version();
	if (argc >= 2 && !strcmp(argv[1], "rocm-probe"))
		return rocmprobe_main(argc - 1, argv + 1);
	if (argc < 2 || strcmp(argv[1], "graph"))
		usage(argc < 2 ? "no verb (graph or rocm-probe)"
		               : "this is configure's generator: its verbs are graph and rocm-probe");
	return graph_main(argc - 1, argv + 1);
}
