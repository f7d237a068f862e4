/* unit tests of envclean's policy and --check parsers */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "policy.h"
#include "test.h"
#include "util.h"

static void
test_small(void)
{
	char *s;

	CHECK(env_match("PIP_*", "PIP_USER") && !env_match("PIP_*", "XPIP_USER"), "prefix pattern");
	CHECK(env_match("HOME", "HOME") && !env_match("HOME", "HOMEX"), "exact pattern");
	CHECK(locale_utf8("C.UTF-8") && locale_utf8("en_US.utf8") && locale_utf8("de_DE.UTF-8@euro"),
	      "UTF-8 locales");
	CHECK(!locale_utf8("C") && !locale_utf8("POSIX") && !locale_utf8("en_US.ISO-8859-1") &&
	      !locale_utf8(NULL), "non-UTF-8 locales");
	s = normname("Foo.Bar--baz_", 13);
	CHECK_STR(s, "foo_bar_baz_", "normname folds case and runs of -_.");
	free(s);
	CHECK_INT(pth_kind("# c"), PTH_BLANK, "pth comment");
	CHECK_INT(pth_kind(" \t "), PTH_BLANK, "pth blank");
	CHECK_INT(pth_kind("  # c"), PTH_PATH, "an indented '#' is a path, as site.py reads it");
	CHECK_INT(pth_kind(" import sys"), PTH_PATH, "an indented import is a path, as site.py reads it");
	CHECK_INT(pth_kind("import sys"), PTH_IMPORT, "pth import line");
	CHECK_INT(pth_kind("import\tos"), PTH_IMPORT, "pth import with a tab");
	CHECK_INT(pth_kind("importlib_stuff"), PTH_PATH, "a path starting with 'import' is a path");
	CHECK(pth_touches("import sys; sys.path.insert(0, '/s')", "torch"), "sys.path insert touches");
	CHECK(pth_touches("import torch", "torch"), "names the module");
	CHECK(!pth_touches("import torchvision_hook", "torch"), "a longer word is not the module");
	CHECK(!pth_touches("import os; os.environ.get('X')", "torch"), "an unrelated hook");
}

static void
test_probe(void)
{
	static const char good[] =
		"text printed by a startup hook\n\0envclean-probe\0" "version\0" "3.11.2\0" "executable\0" "/v/bin/python\0" "cwd\0" "/w\0"
		"stdlib\0" "/usr/lib/python3.11\0" "path\0" "\0" "path\0" "/v/lib\0"
		"user_site_enabled\0" "True\0" "loaded\0" "torch\0" "loadedfile\0" "/t/__init__.py\0"
		"edfile\0" "/f.py\0" "edmod\0" "pkg\0" "edpath\0" "/src/pkg\0" "end\0" "\0";
	struct probe pr;

	CHECK_INT(probe_parse(&pr, good, sizeof good - 1), 0, "a complete probe answer parses");
	CHECK_INT(pr.npath, 2, "two sys.path entries");
	CHECK_STR(pr.path[0], "", "the empty entry is kept");
	CHECK(pr.user_site_enabled, "user site flag");
	CHECK_INT(pr.nloaded, 1, "one module loaded at startup");
	CHECK_STR(pr.loaded[1], "/t/__init__.py", "with its file");
	CHECK_INT(pr.nedit, 1, "one editable mapping");
	CHECK_STR(pr.editable[2], "/src/pkg", "editable path");
	probe_free(&pr);
	CHECK_INT(probe_parse(&pr, good, sizeof good - 6), -1, "a probe answer without 'end' fails");
	probe_free(&pr);
	CHECK_INT(probe_parse(&pr, "\0envclean-probe\0version\0" "3\0" "end\0", 29), -1, "a cut pair fails");
	probe_free(&pr);
	CHECK_INT(probe_parse(&pr, "version\0" "3\0" "end\0" "\0", 14), -1, "an answer without the marker fails");
	probe_free(&pr);
	CHECK_INT(probe_parse(&pr, "hello world\n", 12), -1, "text that is not a probe fails");
	probe_free(&pr);
}

static void
test_policy(void)
{
	char *environ_[] = {
		"PATH=/usr/bin:/bin", "HOME=/h", "PYTHONPATH=/src", "LD_LIBRARY_PATH=/l",
		"PIP_USER=1", "PIP_INDEX_URL=http://m", "LANG=C", "FOO=bar=baz", "LC_TIME=C", NULL,
	};
	struct envop ops[3];
	const char *keep[1];
	struct policy p = {0};
	struct envres r;
	char *err, path[] = "/tmp/kiln-envclean-unit.XXXXXX";
	int fd;
	size_t i, removes = 0;

	p.cwd = "/";
	CHECK_INT(policy_apply(&p, environ_, &r, &err), 0, "the default policy applies");
	CHECK(!env_get(&r.env, "PYTHONPATH") && !env_get(&r.env, "LD_LIBRARY_PATH") &&
	      !env_get(&r.env, "PIP_USER"), "defaults removed");
	CHECK_STR(env_get(&r.env, "PIP_INDEX_URL"), "http://m", "network pip setting kept");
	CHECK_STR(env_get(&r.env, "FOO"), "bar=baz", "value with '=' kept");
	CHECK_STR(env_get(&r.env, "PYTHONNOUSERSITE"), "1", "PYTHONNOUSERSITE set");
	CHECK_STR(env_get(&r.env, "LC_CTYPE"), "C.UTF-8", "UTF-8 LC_CTYPE set for LANG=C");
	for (i = 0; i < r.nch; i++)
		removes += r.ch[i].action == CH_REMOVE;
	CHECK_INT(removes, 3, "three removals recorded");
	CHECK(r.env.v[r.env.n] == NULL, "the environment is NULL-terminated");
	envres_free(&r);

	p.empty = 1;
	keep[0] = "FOO";
	p.keep = keep;
	p.nkeep = 1;
	CHECK_INT(policy_apply(&p, environ_, &r, &err), 0, "-i applies");
	CHECK(env_get(&r.env, "HOME") && env_get(&r.env, "LC_TIME") && env_get(&r.env, "FOO") &&
	      !env_get(&r.env, "PIP_INDEX_URL"), "-i: allow-list, --keep FOO, nothing else");
	envres_free(&r);

	p.empty = 0;
	p.nkeep = 0;
	fd = mkstemp(path);
	CHECK(fd >= 0, "temp profile");
	if (fd < 0)
		return;
	CHECK(write(fd, "A=1\nB=2\n\nnot valid\n", 19) == 19, "write profile");
	close(fd);
	ops[0] = (struct envop){OP_PROFILE, path};
	p.ops = ops;
	p.nops = 1;
	CHECK_INT(policy_apply(&p, environ_, &r, &err), -1, "a malformed profile fails");
	{
		char *want = xasprintf("%s:4: expected KEY=VALUE, got 'not valid'", path);
		CHECK_STR(err, want, "the error names file:line");
		free(want);
	}
	free(err);
	envres_free(&r);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, "A=1\nB='x y'\n", 12) == 12, "rewrite profile");
	close(fd);
	ops[1] = (struct envop){OP_SET, "A=2"};
	ops[2] = (struct envop){OP_UNSET, "B"};
	p.nops = 3;
	CHECK_INT(policy_apply(&p, environ_, &r, &err), 0, "profile, --set, --unset apply");
	CHECK_STR(env_get(&r.env, "A"), "2", "--set after the profile wins");
	CHECK(!env_get(&r.env, "B"), "--unset after the profile removes");
	envres_free(&r);
	ops[0] = (struct envop){OP_SET, "=x"};
	p.nops = 1;
	CHECK_INT(policy_apply(&p, environ_, &r, &err), -1, "--set =x fails");
	free(err);
	envres_free(&r);
	unlink(path);
}

int
main(void)
{
	test_small();
	test_probe();
	test_policy();
	return TEST_DONE();
}
