/* kiln's stack schema: the components, the pin keys a pin file may set, the decisions
   configure hands the generator, and the stage records the graph is derived from */
#ifndef KILN_STAGE_SCHEMA_H
#define KILN_STAGE_SCHEMA_H

#include <stddef.h>

#include "arch.h"
#include "util.h"

/* the rules only some components have: NULL or 0 for the others */
struct comprule {
	const char *build;    /* the default of C_BUILD ("cmake"); NULL: the tree says */
	const char *check;    /* the step of a C.check stage before C.deps (vllmcheck) */
	const char *offline;  /* the variable its offline build needs pinned (LLVM_SYSPATH) */
	const char *offwhy;   /* why, for the message when it is not */
	const char *feeds;    /* the component whose wheel builds against its install prefix */
	int runtime;          /* C.deps installs its runtime requirements too */
};

/* one upstream project the stack may build; its row gives the defaults of its pins */
struct component {
	const char *name;     /* torch: the prefix of its pin keys and stage names */
	const char *deps;     /* components it builds against, space-separated */
	const char *dist;     /* wheel (distribution) name */
	const char *import;   /* module the smoke test imports; "" for none */
	const char *hipify;   /* hipify-wrap project for ROCm builds; "" for none */
	const char *subdir;   /* where setup.py is, inside the source tree */
	const char *kind;     /* build, or source (only src and patch: consumed by others) */
	int isdefault;        /* built without --with */
	int fat;              /* stack_FAT=yes bundles its wheel's closure (fatwheel) */
	const char *against;  /* the component whose version its releases pin ("" none) */
	struct comprule rule; /* {0}, or the rules it has ({.build = "cmake"}) */
};

extern const struct component comp_table[];
extern const size_t comp_count;
/* the row of a component, or NULL */
const struct component *comp_find(const char *name);
/* the default of C_BUILD: "cmake" for a CMake project (ggml), else "" (setup.py or
   PEP 517, found in the tree) */
const char *comp_defbuild(const struct component *c);

/* how a pin key's value is checked */
enum keytype {
	KT_TEXT,    /* any UTF-8 text (one line) */
	KT_URL,     /* a URL or a path, UTF-8, with no credentials (user:secret@) in it */
	KT_PATH,    /* a file or folder; any byte but NUL and newline */
	KT_NAME,    /* a distribution name: [A-Za-z0-9._-], starting with a letter or digit */
	KT_IMPORT,  /* a dotted Python identifier */
	KT_COMPS,   /* component names, separated by spaces or commas */
	KT_COMMIT,  /* 7 to 40 hex digits */
	KT_KIND,    /* build, source, wheel, system; rocm: sdk or wheels */
	KT_BUILD,   /* setup, build, pip or cmake */
	KT_ENV,     /* NAME=VALUE words */
	KT_YESNO,   /* yes or no */
	KT_SHA256,  /* 64 lowercase hex digits */
	KT_IMAGEID, /* an image ID or digest: sha256:HEX (64), or 12 to 64 hex digits */
	KT_CMAKEARGS, /* -DNAME=VALUE words (no -S, -B, -G: the cmake step's) */
};

/* one key a pin file may set: COMPONENT_KEY (per component) or stack_KEY */
struct pinkey {
	const char *key;      /* URL */
	int stack;            /* a stack_ key (not per component); 2: an image_ key */
	enum keytype type;
	const char *what;     /* one line for messages and HACKING.md */
};

extern const struct pinkey pinkey_table[];
extern const size_t pinkey_count;
/* the row of a key (stack: the stack_ table), or NULL */
const struct pinkey *pinkey_find(const char *key, int stack);
/* NULL if value fits type, else why not (a static string) */
const char *pinkey_check(enum keytype type, const char *value);
/* does the URL v carry credentials (an '@' in its authority: user:secret@host) */
int urlcreds(const char *v);

/* is s a dotted Python identifier / a distribution or component name */
int isimport(const char *s);
int isdistname(const char *s);

/* the pins: every value of every component's keys, after the pin file, the defaults
   and the --pin overrides */
struct pins {
	char *file;                 /* the pin file read */
	char **v;                   /* [comp * pinkey_count + key], NULL = unset */
	char **stackv;              /* [key] for stack_ keys */
};

/* Load path into p (defaults filled in later by pins_get). Unknown keys are refused with
   "path:line: unknown pin K" and a did-you-mean. Returns 0, or -1 with *err. */
int pins_load(struct pins *p, const char *path, char **err);
/* apply one --pin NAME=REF (REF, wheel:PATH or system); returns 0 or -1 with *err */
int pins_override(struct pins *p, const char *arg, char **err);
/* set component c's key (configure's own resolution, e.g. C_REF=@torch from the matrix) */
void pins_set(struct pins *p, const struct component *c, const char *key, const char *v);
/* the value of component c's key (the pin, else the component's default; never NULL) */
const char *pins_get(const struct pins *p, const struct component *c, const char *key);
/* a stack_ key's value, or "" */
const char *pins_stack(const struct pins *p, const char *key);
/* an image_ key's value (image_BASE), or "" */
const char *pins_image(const struct pins *p, const char *key);
/* release */
void pins_free(struct pins *p);

/* Digest of a patch series as srcpin records it (SERIES_DIGEST): "none" when the folder
   has no series file. Appends each patch file to inputs. Returns a fresh string, or
   NULL with *err (a listed patch that does not exist). */
char *series_digest(const char *dir, char ***inputs, size_t *ninputs, char **err);

/* write build.ninja, config.mk and, with targets, the stack; 0 or exit status */
int graph_main(int argc, char **argv);

#endif
