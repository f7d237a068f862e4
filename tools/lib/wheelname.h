/* PEP 427/491 wheel file names, PEP 425 tags and PEP 503 project names, as pypa/packaging
   26.3 parses them (parse_wheel_filename, parse_tag, canonicalize_name). */
#ifndef KILN_WHEELNAME_H
#define KILN_WHEELNAME_H

#include <stddef.h>
#include <stdint.h>

#include "pep440.h"
#include "util.h"

/* one interpreter-abi-platform triple; the strings point into the owner's memory */
struct wheeltag {
	const char *py, *abi, *plat;
};

/* a parsed wheel file name */
struct wheelname {
	char *name;        /* canonical project name (PEP 503: lowercase, runs of -_. -> -) */
	char *rawname;     /* the name part as written */
	char *verstr;      /* the version part as written */
	struct pep440 ver;
	int hasbuild;
	uint64_t buildnum; /* the build tag's leading digits */
	char *buildrest;   /* and the rest ("" when none) */
	char *buildstr;    /* the build tag as written ("" when none) */
	char *tagstr;      /* the compressed tag set as written, e.g. "py2.py3-none-any" */
	struct wheeltag *tags; /* the expanded set, in the order the name lists them */
	size_t ntags;
	char *mem;         /* storage for the tag strings */
	char *arena;       /* storage for the name, version, build and tag strings */
};

/* Parse a wheel file name (the base name, "x-1.0-py3-none-any.whl"). With strict, the
   parts of a compressed tag set must be sorted (packaging's validate_order). Returns 0,
   or -1 with a static reason in *why (w is then zeroed). Release with wheelname_free. */
int wheelname_parse(struct wheelname *w, const char *file, int strict, const char **why);
/* release a parsed name; safe on a zeroed struct */
void wheelname_free(struct wheelname *w);

/* an expanded tag set: tags[0..ntags), the strings in mem (the caller frees both) */
struct tagset {
	struct wheeltag *tags;
	size_t ntags;
	char *mem;
};
/* Parse a PEP 425 tag string ("cp313-cp313-manylinux_2_28_x86_64", or a compressed set
   "py2.py3-none-any") into *ts, the strings in fresh storage ts->mem; with strict, the
   parts of a compressed set must be sorted. Returns 0 or -1 with *why set (ts zeroed). */
int wheeltags_parse(const char *s, int strict, struct tagset *ts, const char **why);

/* append the canonical form of a project name (canonicalize_name) */
void canonname(struct buf *b, const char *name, size_t n);
/* true if name is a valid project name (core metadata: [A-Za-z0-9] at both ends,
   [A-Za-z0-9._-] inside) */
int name_valid(const char *name);
/* true if name is already canonical ([a-z0-9]+(-[a-z0-9]+)*) */
int name_isnormal(const char *name);

/* Parse an sdist file name (NAME-VERSION.tar.gz or .zip): canonical name into *name
   (caller frees) and the version into *v. Returns 0, or -1 with *why set. */
int sdistname_parse(const char *file, char **name, struct pep440 *v, const char **why);

#endif
