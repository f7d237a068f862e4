/* test hooks that stop a tool at a named step (see fault.h) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "util.h"

void
fault_at(const char *var, const char *step)
{
	static int seen, want = -1;
	const char *v;

	if (want == -1) {
		v = getenv(var);
		want = !v || !*v ? 0 : strcmp(v, "list") == 0 ? -2 : atoi(v);
	}
	if (!want)
		return;
	seen++;
	if (want == -2)
		fprintf(stderr, "%s: fault point %d: %s\n", argv0, seen, step);
	else if (seen == want) {
		fprintf(stderr, "%s: killed after step %d: %s (%s)\n", argv0, seen, step, var);
		fflush(stderr);
		raise(SIGKILL);
	}
}
