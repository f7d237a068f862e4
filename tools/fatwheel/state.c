/* fatwheel's shared state (declared in state.h) and its progress line */
#include "state.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

struct options opt;
struct zipin zin;
struct member *mem;
size_t nmem;
struct lib **libs;
size_t nlibs, libcap;
struct atomic out;
int outopen;
struct buf errors;
struct recline *rec;
size_t nrec;
char *distinfo;
struct member *wheelm, *recordm;
struct whlname wn;
char *libdir, *newplat, *outname, *outpath;
int glibcmax = -1;
int cxxmax = -1;

void
progress(const char *what, size_t done, size_t total, uint64_t bytes)
{
	static time_t last;
	time_t now = time(NULL);

	if (!opt.tty || (now == last && done != total))
		return;
	last = now;
	fprintf(stderr, "\rfatwheel: %s %zu/%zu members, %llu MiB   ", what, done, total,
	        (unsigned long long)(bytes >> 20));
	if (done == total)
		fputc('\n', stderr);
}

