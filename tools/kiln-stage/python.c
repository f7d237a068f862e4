/* what the target Python says about itself, asked once by running it (no import of
   anything but the standard library), and the checks configure makes on it */
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit.h"
#include "strv.h"
#include "proc.h"

/* --- facts that go into keys --------------------------------------------------------- */

/* run argv, its stdout (trailing newlines removed) in *out; 0 if it exited 0 */
int
capture(char *const *argv, char **out)
{
	struct buf o = {0};
	struct procres res;

	if (proc_capture(argv, NULL, &o, NULL, 0, 120000, &res) < 0 || res.status != 0) {
		buffree(&o);
		*out = xstrdup("");
		return -1;
	}
	bufrtrim(&o, "\n");
	*out = bufdetach(&o);
	return 0;
}

/* line n (from 0) of text, fresh */
char *
line(const char *text, int n)
{
	const char *e;

	while (n-- > 0 && text)
		if ((text = strchr(text, '\n')))
			text++;
	if (!text)
		return xstrdup("");
	e = strchr(text, '\n');
	return e ? xstrndup(text, (size_t)(e - text)) : xstrdup(text);
}

/* what the target Python says about itself (see pyscript) */
struct pyfacts py;

static const char pyscript[] =
	"import sys, os, sysconfig, importlib.util as u\n"
	"print(sys.implementation.cache_tag, sysconfig.get_platform(), sys.version.split()[0])\n"
	"s = u.find_spec('torch')\n"
	"print(os.path.dirname(s.origin) if s and s.origin else '')\n"
	"m = os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')\n"
	"print('managed' if sys.prefix == sys.base_prefix and os.path.isfile(m) else '')\n"
	"print(' '.join(sys.version.split()))\n"
	"try:\n"
	"    import importlib.metadata as md\n"
	"except ImportError:\n"
	"    md = None\n"
	"for d in ('torch', 'torchvision', 'torchaudio'):\n"
	"    try:\n"
	"        r = [x.split(';')[0] for x in (md.requires(d) or []) if x.split(';')[0].replace(' ', '').startswith('torch') and not x.startswith(('torchvision', 'torchaudio'))]\n"
	"        print(md.version(d), ''.join(r[:1]).replace(' ', ''))\n"
	"    except Exception:\n"
	"        print('')\n";

static void
askpython(void)
{
	char *argv[4], *out;
	const char *interp = cf.venv ? cf.basepy : cf.python;
	int i;

	argv[0] = (char *)interp;
	argv[1] = "-c";
	argv[2] = (char *)pyscript;
	argv[3] = NULL;
	if (capture(argv, &out) < 0)
		fail("--python=%s does not run Python", interp);
	py.abi = line(out, 0);
	py.torchdir = line(out, 1);
	{
		char *m = line(out, 2);
		py.managed = !strcmp(m, "managed");
		free(m);
	}
	py.version = line(out, 3);
	for (i = 0; i < 3; i++) {
		char *l = line(out, 4 + i), *sp = strchr(l, ' ');
		py.dists[i][0] = sp ? xstrndup(l, (size_t)(sp - l)) : xstrdup(l);
		py.dists[i][1] = xstrdup(sp ? sp + 1 : "");
		free(l);
	}
	free(out);
}

/* the target Python: it runs, pip may install into it (PEP 668), --venv is ours to make */
void
checkpython(void)
{
	struct stat st;
	struct buf c = {0};
	char *v, *p, **e;
	size_t n;

	if (!cf.python || !*cf.python)
		fail("no target Python: give --python=PATH (or --venv=DIR)");
	if (cf.venv) {
		cf.basepy = cf.python;
		cf.python = xasprintf("%s/bin/python", cf.venv);
	}
	askpython();
	if (py.managed && !cf.venv) {
		/* the command to run, each word quoted where the shell needs it */
		v = xasprintf("%s/kiln-venv", getenv("HOME") ? getenv("HOME") : "/tmp");
		shword(&c, cf.python);
		bufputs(&c, " -m venv ");
		shword(&c, v);
		free(v);
		fail("--python=%s is externally managed (PEP 668: pip refuses to install into it); "
		     "make a venv and pass its python: %s, then --python=%s/bin/python (with what "
		     "the builds need installed in it), or let kiln make one: --venv=DIR",
		     cf.python, c.s, strrchr(c.s, ' ') + 1);
	}
	if (cf.venv && stat(cf.venv, &st) == 0) {
		p = xasprintf("%s/pyvenv.cfg", cf.venv);
		if (access(p, F_OK) < 0) {
			e = lsdir(cf.venv, NULL, 0, &n);
			strs_free(e, n);
			if (!n) {
				e = lsdir(cf.venv, NULL, 1, &n);
				strs_free(e, n);
			}
			if (n)
				fail("--venv=%s: the folder exists and is not a venv; kiln makes and owns the "
				     "venv there, so give a new or empty folder", cf.venv);
		}
		free(p);
	}
}
