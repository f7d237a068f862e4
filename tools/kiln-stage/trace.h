/* what each stage did in a build: LOGDIR/STAGE.run records, build/trace.json (Chrome's
   trace-event format) and `kiln-stage report` */
#ifndef KILN_TRACE_H
#define KILN_TRACE_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/* the ninja (or samu) that runs this process as a step: the parent, or the nearest
   ancestor with only shells between; 0: none */
pid_t ninja_pid(void);

/* A stage run begins now: remember when, and which build it belongs to (the ninja
   process that ran it: its pid and start time). */
void trace_begin(const char *logdir, const char *stage);
/* It ended: write LOGDIR/STAGE.run (result "built", "restored", "up to date", "failed"
   or "interrupted"; cache "hit", "miss" or "-"; note: the step's note, or NULL), then
   LOGDIR/../trace.json from every record of this build, under a lock. Never fails the
   stage: a problem is a warning. */
void trace_end(const char *result, const char *cache, const char *note);

/* Write into out the trace of the last build whose records are in logdir: Chrome
   trace-event JSON, one span per stage (args: result, cache, note, log) and, where
   LOGDIR/STAGE.ninja_log was left by the step, its inner build's steps. 0, or -1 with
   *err. */
struct buf;
int trace_json(const char *logdir, struct buf *out, char **err);
/* one LOGDIR/STAGE.run */
struct rec {
	char *stage, *result, *cache, *note, *build;
	int64_t start, end;   /* wall clock, microseconds since the epoch */
};
/* every LOGDIR/STAGE.run, in name order (unreadable ones skipped) */
void loadrecs(const char *logdir, struct rec **v, size_t *n);
/* The records as the last build (the one whose stage ended last) sees them: the others
   become "up to date" (or "not run" when they had not succeeded), at its start.
   Returns the build's start. */
int64_t thisbuild(struct rec *v, size_t n);
/* release one record */
void freerec(struct rec *r);

/* kiln-stage report [--json] [BUILDDIR] */
int report_main(int argc, char **argv);

#endif
