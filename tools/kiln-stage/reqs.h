/* build requirements and build backends of a pinned source tree (the deps and wheel
   steps), and the lock of a folder of wheels */
#ifndef KILN_STAGE_REQS_H
#define KILN_STAGE_REQS_H

#include <stddef.h>

#include "strv.h"
#include "util.h"

/* what a tree's pyproject.toml says under [build-system] */
struct buildsys {
	int has;              /* there is a [build-system] table */
	char *backend;        /* build-backend ("" when it names none) */
	int backendpath;      /* backend-path is set (an in-tree backend) */
	struct strv requires; /* requires = [...], as written */
	struct strv lines;    /* the line of each requirement, "pyproject.toml:N" */
};

/* Read [build-system] of the pyproject.toml text (TOML's subset that tables, strings,
   arrays and comments need). Returns 0, or -1 with *err ("LINE: what"). */
int buildsys_parse(const char *text, struct buildsys *bs, char **err);
void buildsys_free(struct buildsys *bs);

/* How the tree at dir builds: "setup" (setup.py bdist_wheel: no pyproject backend, or
   setuptools' with a setup.py) or "build" (python -m build: any other PEP 517 backend);
   *backend the backend named ("" for none). Returns the fresh word, or NULL with *err. */
char *tree_backend(const char *dir, char **backend, char **err);

/* one requirement the tree asks for */
struct req {
	char *spec;           /* the requirement as written (name, extras, specifier, markers) */
	char *name;           /* its canonical project name */
	char *from;           /* FILE:LINE, relative to the tree */
};

struct reqseen;
struct reqset {
	struct req *v;
	size_t n, cap;
	struct strv skipped;  /* "FILE:LINE: what was left out and why", for messages */
	struct reqseen *seen; /* the specs listed (a hash set: duplicates in linear time) */
	struct reqseen *files;/* the requirement files read (each once, however included) */
};

/* what to read: the gpu flavour of vLLM-style requirements/build/FLAVOUR.txt (rocm,
   cuda, cpu), whether requirements.txt counts (torch's does), the canonical names that
   kiln builds itself (never from an index), and whether the PEP 517 frontend (build)
   is added for a tree that builds with python -m build */
struct reqopts {
	const char *flavour;
	int runtime;
	const struct strv *exclude;
	int frontend;
};

/* Collect the build requirements the tree at dir declares: pyproject.toml's
   [build-system] requires, requirements-build.txt, requirements/build/FLAVOUR.txt (else
   requirements/build.txt) with their -r includes, and with o->runtime requirements.txt.
   Exact duplicates are listed once. A requirement or requirement-file line holding a line
   break or control character (anything pip would read as a second line) is refused.
   Time is linear in the bytes read. Returns 0, or -1 with *err naming the file and line. */
int reqs_collect(const char *dir, const struct reqopts *o, struct reqset *rs, char **err);
void reqs_free(struct reqset *rs);

/* The lock lines of the wheels in dir, "name==version --hash=sha256:HEX", sorted by
   name, into out (one a line). Two files of one project: -1 with *err naming both. A
   wheel that is not a sound zip or has a member pip would install outside its folders
   (an absolute path, "..", two names for one file): -2 with *err naming it. */
int wheels_lock(const char *dir, struct buf *out, char **err);

/* Does a wheel in dir hold the top-level module mod (a member MOD/... or MOD.py)?
   1, 0, or -1 with *err (a folder or wheel that cannot be read). */
int wheels_provide(const char *dir, const char *mod, char **err);

/* kiln-stage reqs|backend|lock: the verbs (argv[0] is the verb) */
int reqs_main(int argc, char **argv);
int backend_main(int argc, char **argv);
int lock_main(int argc, char **argv);

#endif
