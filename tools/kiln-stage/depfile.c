/* kiln-stage depfile: the depfiles the stack's steps write for ninja (the src rule's
   ref watch, stack.image's list of images), and the rule graph.c follows when it gives
   an edge a depfile at all: one definition of what the syntax can name */
#include "depfile.h"

#include "atomic.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
depfile_safe(const char *path)
{
	const unsigned char *p;

	for (p = (const unsigned char *)path; *p; p++)
		if (*p < 0x80 && !(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr("+,/_.~()}{%=@[]!- #$", *p))
			return 0;
	return 1;
}

/* path in make's form: space and '#' after a backslash, '$' doubled */
static void
depesc(struct buf *b, const char *path)
{
	for (; *path; path++) {
		if (*path == ' ' || *path == '#')
			bufputc(b, '\\');
		else if (*path == '$')
			bufputc(b, '$');
		bufputc(b, *path);
	}
}

int
depfile_main(int argc, char **argv)
{
	struct buf b = {0};
	int i = 1, lenient = 0;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		puts("usage: kiln-stage depfile [-k] -o FILE TARGET [DEP...]");
		return EXIT_OK;
	}
	if (argc > 1 && !strcmp(argv[1], "-k"))
		lenient = 1, i++;
	if (argc - i < 3 || strcmp(argv[i], "-o"))
		dien(EXIT_USAGE, "depfile: give [-k] -o FILE TARGET [DEP...]");
	if (!*argv[i + 2] || !depfile_safe(argv[i + 2])) {
		/* -k: the edge has no depfile (configure gave it none): nothing to write */
		if (lenient && (unlink(argv[i + 1]) == 0 || errno == ENOENT))
			return EXIT_OK;
		dien(EXIT_USAGE, "depfile: %s: a depfile cannot name this target (a quote, backtick, ';' or ':' in it)",
		     argv[i + 2]);
	}
	depesc(&b, argv[i + 2]);
	bufputc(&b, ':');
	for (i += 3; i < argc; i++) {
		if (!*argv[i] || !depfile_safe(argv[i]))
			continue;
		bufputc(&b, ' ');
		depesc(&b, argv[i]);
	}
	bufputc(&b, '\n');
	if (writefile_atomic(argv[2 + lenient], b.s, b.len, 0644) < 0)
		dien(EXIT_USAGE, "%s:", argv[2 + lenient]);
	buffree(&b);
	return EXIT_OK;
}
