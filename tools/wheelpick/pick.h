/* choosing one wheel among candidates, as pip's finder ranks them, with the reasons */
#ifndef WHEELPICK_PICK_H
#define WHEELPICK_PICK_H

#include <stdint.h>

#include "pep440.h"
#include "target.h"
#include "wheelname.h"

/* what became of a candidate */
enum { C_INVALID, C_SKIPPED, C_LOST, C_CHOSEN };
/* why it was left out */
enum { W_NONE, W_BADNAME, W_NAME, W_TAG, W_SPEC, W_PRE, W_LOCAL, W_REQPY, W_LOST };

/* one file looked at */
struct cand {
	char *path;          /* absolute path */
	const char *base;    /* its file name (points into path) */
	struct wheelname w;  /* valid unless state == C_INVALID */
	const char *bad;     /* why the name is invalid */
	long rank;           /* best tag rank (0 = best), -1 if no tag is supported */
	const struct wheeltag *best;
	int state;
	int why;             /* W_... */
	char *reason;        /* why, in words: filled by pick_explain */
	char *reqpy;         /* its Requires-Python, when that excluded it */
	int64_t mtime;       /* ns; read only to break ties */
	int hasmtime;
};

/* the filters of a choice */
struct pickopts {
	const char *name;              /* canonical project name, or NULL */
	struct pep440_specset spec;    /* --require clauses */
	const char *spectext;          /* as written, for messages */
	int pre;                       /* --pre */
	struct pep440 local;           /* --local label parsed as 0+LABEL (nloc 0: none) */
	const char *localtext;
	const char *who;               /* names the target in reasons ("python3 (cp311)") */
	const struct pep440 *pyver;    /* the interpreter's version for Requires-Python, or NULL
	                                  to ignore it */
	const char *pyvertext;
};

/* all candidates of one run */
struct pickset {
	struct cand *c;
	size_t n, cap;
	struct strv warnings;  /* PEP 440 traps and other notes, one line each */
	long chosen;           /* index of the chosen one, -1 if none */
	char *names;           /* "a, b" when several projects are present and none was named */
	char *name;            /* the project chosen among (canonical), or NULL */
};

/* Add the wheel files of a path: a folder's *.whl entries that are regular files or
   links to them (not recursive; a FIFO, device or socket is skipped with a warning in
   ps->warnings), or the file itself (exit 2 with its path when it is a FIFO, device or
   socket: nothing is opened that could block). Returns 0, or -1 with errno set (the
   path cannot be read). */
int pick_add(struct pickset *ps, const char *path);
/* Parse, filter and rank every candidate against t and o, choosing one (ps->chosen).
   Returns 0 (check ps->chosen), or 2 when several projects are present and o->name is
   NULL (ps->names lists them). */
int pick_run(struct pickset *ps, const struct target *t, const struct pickopts *o);
/* fill every left-out candidate's reason (after pick_run; only -v, --json and the near
   misses need them, so the common path does not format 10,000 strings) */
void pick_explain(struct pickset *ps, const struct target *t, const struct pickopts *o);
/* release everything */
void pick_free(struct pickset *ps);

#endif
