/* the option layer every tool shares */
#include "opt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "version.h"

const char *
opt_val(int argc, char **argv, int *i, const char *opt, opt_usagefn usage)
{
	const char *a = argv[*i];
	size_t n = strlen(opt);

	if (strncmp(a, opt, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != 0)
		return NULL;
	if (*i + 1 >= argc) {
		static char msg[256];

		snprintf(msg, sizeof msg, "%s needs a value", opt);
		usage(msg);
		die("%s", msg); /* a usage that returned */
	}
	return argv[++*i];
}

void
opt_usage(const char *error, const char *text)
{
	if (error)
		fprintf(stderr, "%s: %s\n", argv0, error);
	fputs(text, error ? stderr : stdout);
	exit(error ? EXIT_USAGE : EXIT_OK);
}

int
opt_isversion(const char *arg)
{
	return strcmp(arg, "--version") == 0;
}

void
opt_version(void)
{
	printf("%s %s\n", argv0, KILN_VERSION);
	if (fflush(stdout) != 0 || ferror(stdout))
		die("writing to stdout:");
	exit(EXIT_OK);
}
