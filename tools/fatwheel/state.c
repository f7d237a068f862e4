/* one run's state (declared in state.h) and its progress line */
#include "state.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void
fw_init(struct fw *fw)
{
	memset(fw, 0, sizeof *fw);
	fw->glibcmax = -1;
	fw->cxxmax = -1;
}

void
progress(struct fw *fw, const char *what, size_t done, size_t total, uint64_t bytes)
{
	static time_t last;
	time_t now = time(NULL);

	if (!fw->opt.tty || (now == last && done != total))
		return;
	last = now;
	fprintf(stderr, "\rfatwheel: %s %zu/%zu members, %llu MiB   ", what, done, total,
	        (unsigned long long)(bytes >> 20));
	if (done == total)
		fputc('\n', stderr);
}
