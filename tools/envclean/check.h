/* envclean --check: find what makes a Python import another copy of a module than the
   installed one, without importing it */
#ifndef ENVCLEAN_CHECK_H
#define ENVCLEAN_CHECK_H

#include <stddef.h>

/* what --check was asked */
struct checkopt {
	const char *python;        /* interpreter or venv folder; NULL = python3 on PATH */
	const char **modules;      /* top-level module names; none = torch */
	size_t nmodules;
	const char *cwd;           /* the working folder the build would run in */
	int json, verbose;
};

/* Run the check and print the findings (stdout). Returns the exit status: 0 clean,
   1 findings, 2 usage or input error (message on stderr). */
int check_run(const struct checkopt *o);

/* the answers of the interpreter, asked once */
struct probe {
	char *version, *executable, *prefix, *base_prefix, *cwd, *stdlib, *user_site;
	int user_site_enabled;
	char **path;    size_t npath;   /* sys.path as the interpreter has it */
	char **site;    size_t nsite;   /* site.getsitepackages() */
	char **ext;     size_t next;    /* extension module suffixes, in import order */
	char *sitecustomize, *usercustomize; /* files loaded at startup, or NULL */
	char **loaded;  size_t nloaded; /* pairs: module already imported at startup, its file */
	char **editable; size_t nedit;  /* triples: finder file, module, path it maps to */
};

/* Parse the probe's output: anything a startup hook printed, the marker
   "\0envclean-probe\0", then NUL-separated KEY, VALUE pairs up to "end". Returns 0, or
   -1 if the output is not a complete probe answer. */
int probe_parse(struct probe *pr, const char *s, size_t n);
/* release a parsed probe */
void probe_free(struct probe *pr);

/* one line of a .pth file, classified the way site.py would treat it */
enum { PTH_BLANK, PTH_PATH, PTH_IMPORT };
/* classify a .pth line (without its newline) exactly as site.addpackage reads it */
int pth_kind(const char *line);
/* true if an import line changes the import system (sys.path, meta_path, modules, path
   hooks, PYTHONPATH) or names module as a word */
int pth_touches(const char *line, const char *module);
/* normalize a distribution or module name for comparison (PEP 503, '_' for runs of
   "-_."), lowercased, into a fresh string */
char *normname(const char *s, size_t n);

#endif
