/* envclean's sanitizing policy: from the caller's environment and the options, the
   environment a build runs in, the command it runs and a record of every decision */
#ifndef ENVCLEAN_POLICY_H
#define ENVCLEAN_POLICY_H

#include <stddef.h>

#include "envv.h"

/* one step the user asked for, applied in command-line order after the defaults */
enum { OP_PROFILE, OP_SET, OP_UNSET };
struct envop {
	int kind;
	const char *arg; /* profile path, NAME=VALUE, or NAME (a trailing '*' matches a prefix) */
};

/* what the command line asked for */
struct policy {
	int empty;                /* -i: start empty, copy only the allow-list */
	const char **keep;        /* --keep patterns (a trailing '*' matches a prefix) */
	size_t nkeep;
	struct envop *ops;
	size_t nops;
	const char **prepend;     /* --prepend-path folders, first is first on PATH */
	size_t nprepend;
	const char *cmd;          /* the command (argv[0]) or NULL */
	const char *cwd;          /* folder relative paths are taken from */
};

/* one decision, for -n/--explain */
enum { CH_REMOVE, CH_SET, CH_KEEP };
struct change {
	int action;
	char *name;
	char *value;  /* the value removed, set or kept */
	char *why;
};

/* the outcome */
struct envres {
	struct envv env;          /* the sanitized environment */
	struct change *ch;        /* in the order decided; a name may appear more than once */
	size_t nch, cap;
	char *cmdpath;            /* the program to exec, or NULL if not found */
	int cmderr;               /* errno-like reason when cmdpath is NULL: ENOENT or EACCES */
	char *target;             /* the Python env (venv or conda prefix) the command runs in */
};

/* Apply the policy to envp. Returns 0, or -1 with a one-line message in *err (caller
   frees) for input errors: an unreadable or malformed profile (file:line), a bad --set,
   a --prepend-path that is not a folder. */
int policy_apply(const struct policy *p, char *const *envp, struct envres *r, char **err);
/* release what policy_apply filled in */
void envres_free(struct envres *r);

/* true if name matches pattern (exact, or prefix when pattern ends in '*') */
int env_match(const char *pattern, const char *name);
/* true if the locale value names a UTF-8 codeset ("C.UTF-8", "en_US.utf8") */
int locale_utf8(const char *v);

#endif
