/* running the hipify command with its output in a log */
#include "run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os.h"
#include "proc.h"

/* the progress line: redrawn when the count of output lines changes */
static void
tick(unsigned long lines, void *arg)
{
	unsigned long *shown = arg;

	if (lines != *shown) {
		fprintf(stderr, "\r%s: running hipify, %lu lines of output", argv0, lines);
		*shown = lines;
	}
}

int
run_logged(char *const argv[], char *const envp[], const char *cwd, int logfd, int progress)
{
	unsigned long shown = 0;
	struct procopt o = {envp, cwd, 0, progress ? tick : NULL, &shown, 0};
	struct procres r;
	int rc;

	rc = proc_tofd(argv, logfd, &o, &r);
	if (progress && shown)
		fprintf(stderr, "\r\033[K");
	return rc < 0 ? -1 : r.status;
}

char *
findprog(const char *name, const char *self)
{
	char *dir, *c, *r;
	const char *slash;

	/* const: C23's strrchr keeps its argument's qualifier (gcc 16, glibc 2.43) */
	if (self && (slash = strrchr(self, '/'))) {
		dir = xstrndup(self, (size_t)(slash - self));
		c = xasprintf("%s/%s", dir, name);
		free(dir);
		if (access(c, X_OK) == 0) {
			/* absolute: the child runs in another folder */
			if ((r = realpath(c, NULL))) {
				free(c);
				return r;
			}
			return c;
		}
		free(c);
	}
	c = os_findprog(name, NULL, NULL);
	if (c && c[0] != '/') {
		/* a relative PATH entry: the child runs elsewhere, so only absolute ones count */
		free(c);
		return NULL;
	}
	return c;
}
