/* hipify's own per-file result: the Python driver of the presets, and reading the
   statuses back (driver JSON lines, or hipify's "SRC -> DST [status]" progress lines) */
#ifndef HW_RESULT_H
#define HW_RESULT_H

#include <stddef.h>

/* files per outcome, as hipify reported them */
struct tally {
	unsigned long hipified;   /* "[ok]": written */
	unsigned long unchanged;  /* "[skipped, no changes]", "[skipped, already hipified]" */
	unsigned long skipped;    /* "[ignored, ...]" and other skips */
	unsigned long failed;     /* "[skipped, no permissions]" and unknown statuses */
	unsigned long total;      /* results read */
};

/* the Python driver the presets run with python -I -c: argv[1] preset (torch|vision),
   argv[2] the tree, argv[3] torch's hipify folder that the key digests (vision loads
   hipify from there), argv[4] the result file it writes as JSON lines
   {"src":..., "dst":..., "status":...}, from hipify's returned dict (old form) or
   HipifyResult objects (newer torch) */
extern const char hw_driver[];

/* count one status string into t */
void tally_status(struct tally *t, const char *status, size_t n);
/* Read the driver's JSON-lines result file into t. Returns the number of results read,
   or -1 with errno set if the file could not be read. */
long tally_jsonfile(const char *path, struct tally *t);
/* Read hipify's progress lines ("SRC -> DST [status]") from a log into t. Returns the
   number of results found, or -1 with errno set. */
long tally_logfile(const char *path, struct tally *t);
/* the same two readers over text in memory */
long tally_json(const char *s, size_t n, struct tally *t);
long tally_log(const char *s, size_t n, struct tally *t);

#endif
