/* envclean --check: the question the interpreter is asked, and its answer parsed */
#include <stdlib.h>
#include <string.h>

#include "checkint.h"
#include "os.h"

/* Asked of the interpreter once: sys.path after site ran, the site folders, the user
   site, extension suffixes, and what startup already imported. It imports nothing of
   the modules checked (they are only looked up in sys.modules). */
const char probe_py[] =
	"import sys, os, site, _imp\n"
	"w = sys.stdout.buffer.write\n"
	"sys.stdout.flush()\n"
	"w(b'\\0envclean-probe\\0')\n"
	"def o(k, v):\n"
	"    w(k.encode() + b'\\0' + os.fsencode(str(v)) + b'\\0')\n"
	"o('version', '%d.%d.%d' % sys.version_info[:3])\n"
	"o('executable', sys.executable)\n"
	"o('prefix', sys.prefix)\n"
	"o('base_prefix', getattr(sys, 'base_prefix', sys.prefix))\n"
	"o('cwd', os.getcwd())\n"
	"o('stdlib', os.path.dirname(os.__file__))\n"
	"for p in sys.path: o('path', p)\n"
	"for p in getattr(site, 'getsitepackages', lambda: [])(): o('site', p)\n"
	"o('user_site', site.getusersitepackages() if hasattr(site, 'getusersitepackages') else '')\n"
	"o('user_site_enabled', bool(site.ENABLE_USER_SITE))\n"
	"for s in _imp.extension_suffixes(): o('ext', s)\n"
	"for n in ('sitecustomize', 'usercustomize'):\n"
	"    m = sys.modules.get(n)\n"
	"    if m is not None and getattr(m, '__file__', None): o(n, m.__file__)\n"
	"for n in sys.argv[1:]:\n"
	"    m = sys.modules.get(n)\n"
	"    if m is not None: o('loaded', n); o('loadedfile', getattr(m, '__file__', None) or '(built in)')\n"
	"for n, m in list(sys.modules.items()):\n"
	"    mp = getattr(m, 'MAPPING', None) if n.startswith('__editable__') else None\n"
	"    if isinstance(mp, dict):\n"
	"        for k, v in mp.items(): o('edfile', getattr(m, '__file__', '') or n); o('edmod', k); o('edpath', v)\n"
	"o('end', '')\n";

/* a failed parse: release the pair and triple lists while their counts are raw */
static int
probefail(struct probe *pr)
{
	strs_free(pr->loaded, pr->nloaded);
	strs_free(pr->editable, pr->nedit);
	pr->loaded = pr->editable = NULL;
	pr->nloaded = pr->nedit = 0;
	return -1;
}

int
probe_parse(struct probe *pr, const char *s, size_t n)
{
	const char *end = s + n, *k, *v;
	int done = 0;

	memset(pr, 0, sizeof *pr);
	/* startup hooks may print before the answer: it starts after the marker */
	k = memmem(s, n, "\0envclean-probe\0", 16);
	if (!k)
		return -1;
	s = k + 16;
	while (s < end) {
		k = s;
		s = memchr(s, 0, (size_t)(end - s));
		if (!s)
			return probefail(pr);
		v = ++s;
		s = memchr(s, 0, (size_t)(end - s));
		if (!s)
			return probefail(pr);
		s++;
		if (done)
			return probefail(pr);
#define ONE(name) else if (strcmp(k, #name) == 0) { free(pr->name); pr->name = xstrdup(v); }
		if (strcmp(k, "end") == 0)
			done = 1;
		ONE(version) ONE(executable) ONE(prefix) ONE(base_prefix) ONE(cwd) ONE(stdlib)
		ONE(user_site) ONE(sitecustomize) ONE(usercustomize)
		else if (strcmp(k, "user_site_enabled") == 0)
			pr->user_site_enabled = strcmp(v, "True") == 0;
		else if (strcmp(k, "path") == 0)
			push(&pr->path, &pr->npath, v);
		else if (strcmp(k, "site") == 0)
			push(&pr->site, &pr->nsite, v);
		else if (strcmp(k, "ext") == 0)
			push(&pr->ext, &pr->next, v);
		else if (strcmp(k, "loaded") == 0 || strcmp(k, "loadedfile") == 0)
			push(&pr->loaded, &pr->nloaded, v);
		else if (strcmp(k, "edfile") == 0 || strcmp(k, "edmod") == 0 || strcmp(k, "edpath") == 0)
			push(&pr->editable, &pr->nedit, v);
#undef ONE
	}
	if (!done || !pr->version || !pr->cwd || !pr->stdlib || pr->nloaded % 2 || pr->nedit % 3)
		return probefail(pr);
	pr->nloaded /= 2;
	pr->nedit /= 3;
	return 0;
}

void
probe_free(struct probe *pr)
{
	free(pr->version);
	free(pr->executable);
	free(pr->prefix);
	free(pr->base_prefix);
	free(pr->cwd);
	free(pr->stdlib);
	free(pr->user_site);
	free(pr->sitecustomize);
	free(pr->usercustomize);
	strs_free(pr->path, pr->npath);
	strs_free(pr->site, pr->nsite);
	strs_free(pr->ext, pr->next);
	strs_free(pr->loaded, pr->nloaded * 2);
	strs_free(pr->editable, pr->nedit * 3);
	memset(pr, 0, sizeof *pr);
}
