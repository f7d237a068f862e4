/* live progress of a running stage: what its inner build reports, on ninja's terminal
   or as plain lines, and in LOGDIR/STAGE.status for any other viewer */
#ifndef KILN_PROGRESS_H
#define KILN_PROGRESS_H

#include <sys/types.h>

#include "util.h"

/* what the inner build said last */
struct inner {
	long n, m;          /* [n/m] of ninja or CMake's ninja; m 0: none */
	int pct;            /* [ 45%] of CMake's Makefiles; -1: none */
	int ext;            /* setuptools' "building 'x' extension" lines so far */
	char what[64];      /* the last extension's name, or pip's / CMake's phase */
	int last;           /* which of these came last (0: none yet) */
};

/* one running stage's progress */
struct progress {
	char *stage, *logpath, *statuspath, *timepath, *lockpath;
	char *ninjalog;     /* LOGDIR/STAGE.ninja_log: where the step leaves its inner build's */
	int logrd;          /* the log, read back as the child writes it; -1: none */
	off_t off;          /* how far it has been read */
	struct buf part;    /* a line not finished yet (at most 4 KiB kept) */
	struct inner in;
	double t0, est;     /* start (monotonic) and the last build's seconds (0: unknown) */
	double lastdraw, lastplain, laststatus, every;
	int disp, tty, cols; /* where the line goes (-1: nowhere), a terminal?, its width */
	int lockfd, drawer; /* the drawer lock of LOGDIR: one stage draws the terminal line */
	int changed, drawn;
};

/* Parse one line of the inner build's output into in; returns 1 if it said something
   progress shows ([N/M], a percentage, an extension, a phase), else 0. */
int inner_parse(struct inner *in, const char *line, size_t n);
/* "1834/7012 compiled", "45%", "extension 3 (torch._C)", a phase, or "running" */
void inner_format(const struct inner *in, struct buf *b);

/* Start showing stage's progress: LOGDIR/STAGE.status, the estimate from
   LOGDIR/STAGE.time, the display: the standard output of the ninja (or samu) whose step
   this is, when it is a terminal, a pipe or a file opened to append, else this stderr;
   KILN_PROGRESS=0 shows nothing, KILN_PROGRESS_EVERY=SECONDS sets the plain lines'
   interval (default 300; 0: a line at each change, for tests). */
void progress_start(struct progress *p, const char *stage, const char *logdir, const char *logpath);
/* proc_tofd's tick: read what the child wrote since, parse it, redraw when due */
void progress_tick(unsigned long lines, void *arg);
/* The stage ended: clear the terminal line, remove the status file and, when built is
   set, keep the elapsed time in LOGDIR/STAGE.time for the next run's estimate. */
void progress_end(struct progress *p, int built);

/* "4.2s", "2m05s", "1h02m" (fresh string) */
char *fmtdur(double s);
/* seconds on the monotonic clock */
double mono(void);
/* s[0..n) made safe for a terminal or a file, at most max bytes kept (then "..."):
   escape sequences dropped whole (CSI colours; OSC titles, DCS, SOS, PM, APC through BEL
   or ST; other ESC sequences), in their 7-bit, raw 8-bit and UTF-8 C1 forms; a tab is a
   space; every other C0 control, DEL, C1 control or byte that is not UTF-8 is one '?';
   valid UTF-8 kept whole */
void safeadd(struct buf *b, const char *s, size_t n, size_t max);

#endif
