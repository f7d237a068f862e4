/* envclean --check, inside: what its modules share (not for other tools) */
#ifndef ENVCLEAN_CHECKINT_H
#define ENVCLEAN_CHECKINT_H

#include <stddef.h>

#include "check.h"
#include "util.h"

/* where a sys.path entry came from */
enum { O_CWD, O_PYTHONPATH, O_USER, O_SITE, O_PTH, O_PTHHOOK, O_EDITABLE, O_STDLIB, O_OTHER };
/* their names in messages (check.c) */
extern const char *const origname[];

/* kinds of copies */
enum { K_PKG, K_EXT, K_PY, K_PYC, K_NS, K_EDIT };
extern const char *const kindname[];

/* one sys.path entry, absolute, with its origin */
struct entry {
	char *path;        /* absolute */
	int origin;
	char *pth;         /* .pth file that adds it, if any */
	int pthline;
	int srctree;       /* holds setup.py / pyproject.toml */
};

/* one copy of a module */
struct copy {
	char *path;        /* the package folder or module file */
	int kind;
	size_t entry;      /* index in the entries; editable: (size_t)-1 */
	char *editfile;    /* the finder file of an editable copy */
	char *meta;        /* metadata found beside it: "name version (file)" */
};

/* one .pth line */
struct pthline {
	char *file;        /* the .pth file */
	int line;
	int kind;
	char *text;
	char *target;      /* PTH_PATH: the absolute folder */
};

/* a finding: one line */
enum { L_PROBLEM, L_NOTE };
struct finding {
	int level;
	const char *kind;
	char *module;
	char *text;
	char *fix;
	char **paths;
	size_t npaths;
};

struct state {
	const struct checkopt *o;
	struct probe pr;
	struct entry *e;
	size_t ne;
	struct pthline *pl;
	size_t npl, plcap;
	struct finding *f;
	size_t nf, fcap;
	char **pypath;     /* PYTHONPATH entries, absolute */
	size_t npypath;
	struct modres {    /* the copies found of each module, for --json */
		const char *name;
		struct copy *c;
		size_t nc;
	} *mods;
	size_t nmods;
};


/* check.c: small helpers */
/* the sorted names in a folder (without . and ..), or NULL with *n = 0 */
char **listdir(const char *d, size_t *n);
/* read a file found in a site folder (readfile's contract; a FIFO, device or folder is
   -1 at once, never waited on) */
int readreg(const char *path, struct buf *b, size_t max);
/* append a copy of s to a string array */
void push(char ***v, size_t *n, const char *s);

/* probe.c: the program the interpreter runs, asked once (see probe_parse in check.h) */
extern const char probe_py[];

/* syspath.c: where each sys.path entry came from, .pth files, startup hooks */
/* true if dir looks like a project root (a source checkout) */
int srctree(const char *dir);
/* the project-root marker file in dir, for messages */
const char *srcmark(const char *dir);
/* read the .pth files of the site folders the interpreter processed into st->pl */
void readpth(struct state *st);
/* decide the origin of each sys.path entry (st->e) */
void entries(struct state *st);
/* findings that do not depend on one module: import hooks, customize files */
void checkhooks(struct state *st);

/* copies.c: the copies of one module on sys.path, their metadata, what shadows what */
/* the origin of a copy in words, e.g. "PYTHONPATH" or "line 1 of /x/d.pth" (fresh) */
char *origintext(const struct state *st, const struct copy *c);
/* check one module: every finding about it, and its copies into st->mods */
void checkmod(struct state *st, const char *mod);

/* ldpath.c: libraries a module ships, reached through LD_LIBRARY_PATH from elsewhere */
/* findings for mod's first regular copy among c[0..nc) (nreg regular ones) */
void check_ldpath(struct state *st, const char *mod, struct copy *c, size_t nc, size_t nreg);

/* report.c: findings and how they are printed */
/* a finding as a check reports it: its level, kind and module (may be NULL), its text and
   fix (fresh strings), the paths it names (p1, p2 may be NULL) */
struct newfinding {
	int level;
	const char *kind;
	const char *module;
	char *text;
	char *fix;
	const char *p1, *p2;
};
/* record one finding; its text and fix become owned by it */
void addfinding(struct state *st, const struct newfinding *nf);
/* print the findings: lines (notes only with -v) or one JSON object */
void report(struct state *st);

#endif
