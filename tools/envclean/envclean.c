/* envclean: run a command in a sanitized environment, or check a Python for shadowed
   modules (see envclean.1) */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "json.h"
#include "opt.h"
#include "policy.h"
#include "util.h"

extern char **environ;

static const char synopsis[] =
	"usage: envclean [-i] [--profile FILE]... [--set NAME=VALUE]... [--keep NAME]...\n"
	"                [--unset NAME]... [--prepend-path DIR]... [-n|--explain [--json]]\n"
	"                [--] COMMAND [ARG]...\n"
	"       envclean --check [--python=PATH] [--module=NAME]... [--cwd=DIR] [--json] [-v]\n"
	"       envclean --version\n";

/* print the error (if any) and the synopsis; exit 2 on error, 0 for --help */
static void
usage(const char *error)
{
	if (error) {
		fprintf(stderr, "envclean: %s\n%s(see envclean --help)\n", error, synopsis);
		exit(EXIT_USAGE);
	}
	printf("%s\n"
	       "Runs COMMAND (exec, no shell) without PYTHONPATH, PYTHONHOME, LD_LIBRARY_PATH,\n"
	       "LD_PRELOAD, build-changing PIP_*, a foreign VIRTUAL_ENV or CONDA_*, with\n"
	       "PYTHONNOUSERSITE=1 and a UTF-8 locale. Its exit status is COMMAND's; 127 if it\n"
	       "is not found, 126 if it cannot run. -n prints the decisions instead.\n"
	       "\n"
	       "  -i                  start empty, copy only PATH, HOME, USER, TERM, LANG, LC_*,\n"
	       "                      TZ, TMPDIR, SSL_CERT_*, proxies ...\n"
	       "  --profile FILE      apply KEY=VALUE lines (env/arch/gfx1151.env)\n"
	       "  --set NAME=VALUE    set a variable        --unset NAME   remove one (NAME* too)\n"
	       "  --keep NAME         exempt from the default removals (NAME* too)\n"
	       "  --prepend-path DIR  put DIR first on PATH (a venv's bin also sets VIRTUAL_ENV)\n"
	       "  -n, --explain       print what would be removed, set and kept; --json for data\n"
	       "\n"
	       "--check asks a Python (default python3) once for its sys.path and finds, without\n"
	       "importing them, several copies of each --module (default torch), stale metadata,\n"
	       ".pth import hooks, a source tree in the working folder or on PYTHONPATH, the user\n"
	       "site, LD_LIBRARY_PATH copies of the libraries the module ships. One line per\n"
	       "finding with the fix; -v adds notes. Exit 0 clean, 1 findings, 2 usage or input\n"
	       "error. See envclean(1).\n", synopsis);
	exit(EXIT_OK);
}

/* append s, quoted for sh only when it needs it */
static void
quoteword(struct buf *b, const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./:=,+@%", *p))
			break;
	if (*s && !*p)
		bufputs(b, s);
	else
		shquote(b, s);
}

static const char *const actname[] = {"remove", "set", "keep"};

/* print the decisions of -n (text or --json) and the command that would run */
static void
explain(const struct envres *r, char **cmd, int json)
{
	struct buf b = {0};
	struct json j;
	size_t i;
	int pass, a;

	if (json) {
		json_init(&j, &b);
		json_obj(&j);
		json_key(&j, "changes");
		json_arr(&j);
		for (i = 0; i < r->nch; i++) {
			json_obj(&j);
			json_kstr(&j, "action", actname[r->ch[i].action]);
			json_kstr(&j, "name", r->ch[i].name);
			json_kstr(&j, "value", r->ch[i].value);
			json_kstr(&j, "why", r->ch[i].why);
			json_end(&j);
		}
		json_end(&j);
		json_key(&j, "command");
		json_arr(&j);
		for (i = 0; cmd && cmd[i]; i++)
			json_str(&j, cmd[i]);
		json_end(&j);
		json_kstr(&j, "program", r->cmdpath);
		json_kstr(&j, "environment", r->target);
		json_kstrs(&j, "env", r->env.v, r->env.n);
		json_end(&j);
		bufputc(&b, '\n');
	} else {
		/* removals and settings in the order decided, then what passes through */
		for (pass = 0; pass < 2; pass++) {
			for (i = 0; i < r->nch; i++) {
				a = r->ch[i].action;
				if ((pass == 0) != (a != CH_KEEP))
					continue;
				bufprintf(&b, "%-6s %s=", actname[a], r->ch[i].name);
				quoteword(&b, r->ch[i].value);
				bufprintf(&b, "  # %s\n", r->ch[i].why);
			}
		}
		if (r->target)
			bufprintf(&b, "# the command runs in the Python environment %s\n", r->target);
		if (cmd && cmd[0]) {
			if (r->cmdpath) {
				bufputs(&b, "exec  ");
				quoteword(&b, r->cmdpath);
				for (i = 1; cmd[i]; i++) {
					bufputc(&b, ' ');
					quoteword(&b, cmd[i]);
				}
				bufputc(&b, '\n');
			} else {
				bufprintf(&b, "# %s: %s\n", cmd[0],
				          r->cmderr == EACCES ? "permission denied" : "command not found");
			}
		}
	}
	fwrite(b.s ? b.s : "", 1, b.len, stdout);
	buffree(&b);
}

/* parse the --check options from argv[i] on and run the check; returns the exit status */
static int
runcheck(int argc, char **argv, int i)
{
	struct checkopt co = {0};
	const char *v;
	char cwd[PATH_MAX];
	int rc;

	for (; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--check") == 0)
			continue;
		if ((v = opt_val(argc, argv, &i, "--python", usage)))
			co.python = v;
		else if ((v = opt_val(argc, argv, &i, "--module", usage))) {
			co.modules = xrealloc(co.modules, (co.nmodules + 1) * sizeof *co.modules);
			co.modules[co.nmodules++] = v;
		} else if ((v = opt_val(argc, argv, &i, "--cwd", usage)))
			co.cwd = v;
		else if (strcmp(a, "--json") == 0)
			co.json = 1;
		else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0)
			co.verbose = 1;
		else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
			usage(NULL);
		else if (opt_isversion(a))
			opt_version();
		else {
			char *m = a[0] == '-' ? xasprintf("--check: unknown option '%s'", a) :
			          xasprintf("--check takes no command ('%s')", a);
			usage(m);
		}
	}
	if (!co.cwd) {
		if (!getcwd(cwd, sizeof cwd))
			die("cannot read the working folder:");
		co.cwd = cwd;
	}
	rc = check_run(&co);
	free(co.modules);
	return rc;
}

/* envclean [options] [--] COMMAND [ARG]... or envclean --check [options] */
int
main(int argc, char **argv)
{
	struct policy p = {0};
	struct envres r;
	char cwd[PATH_MAX], *err;
	const char *v;
	int i, dry = 0, json = 0;

	setprogname(argv[0]);
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--check") == 0)
			return runcheck(argc, argv, 1);
		else if (strcmp(argv[i], "--") == 0 || argv[i][0] != '-')
			break;
	if (!getcwd(cwd, sizeof cwd))
		die("cannot read the working folder:");
	p.cwd = cwd;
	p.keep = xcalloc((size_t)argc, sizeof *p.keep);
	p.ops = xcalloc((size_t)argc, sizeof *p.ops);
	p.prepend = xcalloc((size_t)argc, sizeof *p.prepend);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == 0)
			break;
		if (strcmp(a, "-i") == 0 || strcmp(a, "--ignore-environment") == 0)
			p.empty = 1;
		else if (strcmp(a, "-n") == 0 || strcmp(a, "--explain") == 0)
			dry = 1;
		else if (strcmp(a, "--json") == 0)
			json = 1;
		else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
			usage(NULL);
		else if (opt_isversion(a))
			opt_version();
		else if ((v = opt_val(argc, argv, &i, "--profile", usage)))
			p.ops[p.nops++] = (struct envop){OP_PROFILE, v};
		else if ((v = opt_val(argc, argv, &i, "--set", usage)))
			p.ops[p.nops++] = (struct envop){OP_SET, v};
		else if ((v = opt_val(argc, argv, &i, "--unset", usage)))
			p.ops[p.nops++] = (struct envop){OP_UNSET, v};
		else if ((v = opt_val(argc, argv, &i, "--keep", usage)))
			p.keep[p.nkeep++] = v;
		else if ((v = opt_val(argc, argv, &i, "--prepend-path", usage)))
			p.prepend[p.nprepend++] = v;
		else {
			char *m = xasprintf("unknown option '%s'", a);
			usage(m);
		}
	}
	if (json && !dry)
		usage("--json goes with -n/--explain or --check");
	if (i >= argc && !dry)
		usage("no command given");
	p.cmd = i < argc ? argv[i] : NULL;
	if (policy_apply(&p, environ, &r, &err) < 0) {
		fprintf(stderr, "envclean: %s\n", err);
		free(err);
		envres_free(&r);
		free(p.keep);
		free(p.ops);
		free(p.prepend);
		return EXIT_USAGE;
	}
	if (dry) {
		explain(&r, i < argc ? argv + i : NULL, json);
		envres_free(&r);
		free(p.keep);
		free(p.ops);
		free(p.prepend);
		return EXIT_OK;
	}
	if (!r.cmdpath) {
		if (r.cmderr == EACCES)
			dien(126, "%s: permission denied", argv[i]);
		dien(127, "%s: command not found", argv[i]);
	}
	fflush(NULL);
	execve(r.cmdpath, argv + i, r.env.v);
	if (errno == ENOENT && access(r.cmdpath, F_OK) < 0)
		dien(127, "%s: command not found", argv[i]);
	dien(126, "%s: cannot run %s:", argv[i], r.cmdpath);
}
