/* the test hook that stops srcpin at a named step, as a kill at that instant would */
#include "srcpin.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
fault(const char *step)
{
	static int seen, want = -1;
	const char *v;

	if (want == -1) {
		v = getenv("SRCPIN_FAULT_AFTER");
		want = !v || !*v ? 0 : strcmp(v, "list") == 0 ? -2 : atoi(v);
	}
	if (!want)
		return;
	seen++;
	if (want == -2)
		fprintf(stderr, "srcpin: fault point %d: %s\n", seen, step);
	else if (seen == want) {
		fprintf(stderr, "srcpin: killed after step %d: %s (SRCPIN_FAULT_AFTER)\n", seen, step);
		fflush(stderr);
		raise(SIGKILL);
	}
}
