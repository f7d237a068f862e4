/* the option layer every tool shares: --opt=VALUE / --opt VALUE, and --version */
#ifndef KILN_OPT_H
#define KILN_OPT_H

/* a tool's usage function: prints error (NULL: none) and the synopsis, then exits */
typedef void (*opt_usagefn)(const char *error);

/* The value of option opt at argv[*i] given as "--opt=VALUE" or as "--opt VALUE" (then
   *i is advanced past VALUE); NULL when argv[*i] is not opt (another option that only
   starts like it, "--optx", is not opt). A missing VALUE calls usage("--opt needs a
   value"), which must not return. */
const char *opt_val(int argc, char **argv, int *i, const char *opt, opt_usagefn usage);

/* The body of every tool's usage function: error (NULL: none) as "TOOL: error" on
   stderr, then text (the synopsis) on stderr after an error, else on stdout; exits 2
   after an error, else 0 (--help). */
void opt_usage(const char *error, const char *text) __attribute__((noreturn));

/* true if arg asks for the version ("--version") */
int opt_isversion(const char *arg);
/* print "TOOL VERSION" (the program name set by setprogname, and KILN_VERSION) on
   stdout and exit 0 */
void opt_version(void) __attribute__((noreturn));

#endif
