/* wheelpick unit tests written from the specs (PEP 440, 425, 427, 600, 656) and from what
   the choice promises: versions, specifiers, names, tag lists, ranking, warnings */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pep440.h"
#include "pick.h"
#include "target.h"
#include "test.h"
#include "util.h"
#include "wheelname.h"

static int
cmps(const char *a, const char *b)
{
	struct pep440 x, y;
	int r;

	if (pep440_parses(&x, a) < 0)
		return 99;
	if (pep440_parses(&y, b) < 0) {
		pep440_free(&x);
		return 99;
	}
	r = pep440_cmp(&x, &y);
	pep440_free(&x);
	pep440_free(&y);
	return r;
}

static int
valid(const char *s)
{
	struct pep440 v;

	if (pep440_parses(&v, s) < 0)
		return 0;
	pep440_free(&v);
	return 1;
}

/* does the set (text) contain version v? -1 if either does not parse */
static int
in(const char *set, const char *v)
{
	struct pep440_specset ss;
	struct pep440 p;
	const char *why;
	size_t at;
	int r;

	if (pep440_specset_parse(&ss, set, &why, &at) < 0)
		return -1;
	if (pep440_parses(&p, v) < 0) {
		pep440_specset_free(&ss);
		return -1;
	}
	r = pep440_specset_contains(&ss, &p, v);
	pep440_free(&p);
	pep440_specset_free(&ss);
	return r;
}

static int
specok(const char *set)
{
	struct pep440_specset ss;
	const char *why;
	size_t at;

	if (pep440_specset_parse(&ss, set, &why, &at) < 0)
		return 0;
	pep440_specset_free(&ss);
	return 1;
}

static int
specpre(const char *set)
{
	struct pep440_specset ss;
	const char *why;
	size_t at;
	int r;

	if (pep440_specset_parse(&ss, set, &why, &at) < 0)
		return -1;
	r = pep440_specset_pre(&ss);
	pep440_specset_free(&ss);
	return r;
}

static void
test_versions(void)
{
	CHECK(cmps("1.0.0", "1") == 0 && cmps("1.0", "1.0.0.0") == 0, "trailing zeros do not count");
	CHECK(cmps("2.7.0+rocm10.0", "2.7.0+rocm6.3") < 0, "+rocm10.0 sorts below +rocm6.3");
	CHECK(cmps("2.7.0+rocmsdk20250101", "2.7.0+rocm7.0") > 0, "+rocmsdkDATE sorts above +rocm7.0");
	CHECK(cmps("2.7.0+rocm6.10", "2.7.0+rocm6.9") > 0, "numeric local segments compare as numbers");
	CHECK(cmps("1.0+1", "1.0+abc") > 0, "a numeric local segment sorts above a string one");
	CHECK(cmps("1.0+123456789012345678901234567890", "1.0+99") > 0,
	      "local numbers of any length compare by value");
	CHECK(cmps("1.0.dev1", "1.0a1") < 0 && cmps("1.0a1", "1.0.post1.dev1") < 0,
	      "dev < pre < post.dev of the same release");
	CHECK(cmps("1!0.1", "2.0") > 0, "the epoch wins");
	CHECK(valid("18446744073709551615") && !valid("18446744073709551616"),
	      "a component above 2^64-1 is rejected, not wrapped");
	CHECK(valid(" \t1.0\n") && !valid("1.0 1"), "surrounding whitespace only");
	CHECK(valid("1.0.post.") && valid("1.0a.") && !valid("1.0."), "separators after a "
	      "pre/post/dev label are allowed, after the release they are not");
	CHECK(!valid("") && !valid("v") && !valid("+local") && !valid("1.0+"), "empty parts are invalid");
	{
		struct pep440 v;
		struct buf b = { 0 };
		CHECK(pep440_parses(&v, "V1!2.0-RC.3_Post-4.DEV_5+Ub.Untu-07") == 0, "a messy version parses");
		pep440_str(&b, &v);
		CHECK_STR(b.s, "1!2.0rc3.post4.dev5+ub.untu.7", "and normalizes");
		bufreset(&b);
		pep440_public(&b, &v);
		CHECK_STR(b.s, "1!2.0rc3.post4.dev5", "its public part");
		bufreset(&b);
		pep440_base(&b, &v);
		CHECK_STR(b.s, "1!2.0", "its base version");
		buffree(&b);
		pep440_free(&v);
	}
}

static void
test_specifiers(void)
{
	CHECK(in(">=2.6,<2.7", "2.6.3") == 1 && in(">=2.6,<2.7", "2.7.0") == 0, "a range");
	CHECK(in("<2.7", "2.7.0rc1") == 0 && in("<2.7rc2", "2.7.0rc1") == 1,
	      "<V leaves out V's own pre-releases unless V is one");
	CHECK(in(">2.7", "2.7.post1") == 0 && in(">2.7", "2.7.1") == 1 && in(">2.7.post1", "2.7.post2") == 1,
	      ">V leaves out V's post-releases unless V is one");
	CHECK(in(">2.7", "2.7+rocm6.4") == 0, ">V leaves out V+local");
	CHECK(in("==2.7.0", "2.7.0+rocm6.4") == 1 && in("==2.7.0+rocm6.3", "2.7.0+rocm6.4") == 0,
	      "== ignores the candidate's label unless the clause has one");
	CHECK(in("<=2.7", "2.7+rocm6.4") == 1, "<=V takes V+local");
	CHECK(in("==2.6.*", "2.6.9+rocm6.4") == 1 && in("==2.6.*", "2.60") == 0 &&
	      in("!=2.6.*", "2.7") == 1, "wildcards match release prefixes");
	CHECK(in("~=2.6", "2.9") == 1 && in("~=2.6", "3.0") == 0 && in("~=2.6.1", "2.7") == 0,
	      "~= drops the last release number");
	CHECK(in("===2.6.0+ROCm6.4", "2.6.0+rocm6.4") == 1 && in("===2.6", "2.6.0") == 0,
	      "=== compares the text, ignoring case");
	CHECK(specok("") && specok(" ") && specok(">=1.0,") && specok("  == 1.0 "),
	      "blank clauses and spaces around a clause are allowed");
	CHECK(!specok("~=1") && !specok(">=1.0+local") && !specok("=>1.0") && !specok("<=1.0.*") &&
	      !specok("==1.0a1.*") && !specok("== 1.0 1") && !specok("===a b"),
	      "malformed clauses are refused");
	CHECK(specpre(">=2.7.0rc1") == 1 && specpre("!=2.7.0rc1") == 0 && specpre("==2.*") == 0 &&
	      specpre(">=2.6") == 0 && specpre("===2.7.0rc1") == 1,
	      "which clauses name a pre-release");
}

static void
test_names(void)
{
	struct wheelname w;
	const char *why;
	struct buf b = { 0 };

	CHECK(wheelname_parse(&w, "Foo.Bar_baz-1.0-2abc-py2.py3-none-any.whl", 0, &why) == 0,
	      "a name with a build tag and a compressed tag set parses");
	CHECK_STR(w.name, "foo-bar-baz", "the project name is canonical");
	CHECK(w.hasbuild && w.buildnum == 2 && !strcmp(w.buildrest, "abc"), "build 2 'abc'");
	CHECK(w.ntags == 2 && !strcmp(w.tags[1].py, "py3") && !strcmp(w.tags[1].plat, "any"),
	      "the set expands to py2-none-any, py3-none-any");
	wheelname_free(&w);
	CHECK(wheelname_parse(&w, "torch-2.7.0+rocm6.4-cp313-cp313t-manylinux_2_28_x86_64.whl", 0,
	      &why) == 0 && w.ver.nloc == 2, "a ROCm torch name parses with its label");
	wheelname_free(&w);
	CHECK(wheelname_parse(&w, "foo-1.0-py3-none-any.whl.part", 0, &why) < 0 &&
	      wheelname_parse(&w, "foo-1.0-py3-none-any-x-y.whl", 0, &why) < 0 &&
	      wheelname_parse(&w, "foo-1.0-py3--any.whl", 0, &why) < 0 &&
	      wheelname_parse(&w, "foo-1.0-3py-none-any.whl", 0, &why) < 0,
	      "bad names are refused");
	canonname(&b, "A__B..c-D", 9);
	CHECK_STR(b.s, "a-b-c-d", "canonical name");
	buffree(&b);
}

static int
has(const struct strv *l, const char *s)
{
	size_t k;

	for (k = 0; k < l->n; k++)
		if (!strcmp(l->v[k], s))
			return (int)k + 1;
	return 0;
}

static void
test_platforms(void)
{
	struct strv p = { 0 };
	struct target t = { 0 };

	plats_expand(&p, "manylinux_2_28_x86_64");
	CHECK(p.n == 27 && !strcmp(p.v[0], "manylinux_2_28_x86_64") &&
	      has(&p, "manylinux2014_x86_64") && !strcmp(p.v[p.n - 1], "manylinux1_x86_64"),
	      "--platform=manylinux_2_28 stands for every older manylinux with the aliases");
	strv_free(&p);
	plats_expand(&p, "manylinux2014_aarch64");
	CHECK(p.n == 2 && !strcmp(p.v[1], "manylinux2014_aarch64"),
	      "manylinux2014 on aarch64 is glibc 2.17 only (nothing older exists there)");
	strv_free(&p);
	plats_expand(&p, "musllinux_1_2_x86_64");
	CHECK(p.n == 3 && !strcmp(p.v[2], "musllinux_1_0_x86_64"), "musllinux_1_2 down to 1_0");
	strv_free(&p);
	plats_linux(&p, "linux_aarch64", 32, &(struct libcver){2, 17, 0, 0}, ORDER_PIP);
	CHECK(has(&p, "manylinux_2_17_armv7l") && has(&p, "linux_armv8l") &&
	      !strcmp(p.v[p.n - 1], "linux_armv7l"), "a 32-bit Python on aarch64 is armv8l/armv7l");
	strv_free(&p);
	plats_linux(&p, "linux_x86_64", 64, &(struct libcver){0, 0, 1, 2}, ORDER_PACKAGING);
	CHECK(p.n == 4 && !strcmp(p.v[0], "linux_x86_64") && !strcmp(p.v[1], "musllinux_1_2_x86_64"),
	      "musl: musllinux only, no manylinux");
	strv_free(&p);

	t.impl = xstrdup("cp");
	t.major = 3;
	t.minor = 13;
	t.nodot = xstrdup("313");
	target_setabis(&t, "cp313t");
	strv_add(&t.plats, "linux_x86_64", 0);
	target_tags(&t);
	CHECK(t.threaded, "cp313t is free-threaded");
	CHECK(target_rank(&t, "cp313", "abi3t", "linux_x86_64") == 1 &&
	      target_rank(&t, "cp313", "abi3", "linux_x86_64") == -1,
	      "a free-threaded Python takes abi3t, not abi3");
	CHECK(target_rank(&t, "py3", "none", "any") > target_rank(&t, "cp313", "none", "any"),
	      "cp313-none-any ranks above py3-none-any");
	target_free(&t);
}

/* make an empty file with an mtime */
static void
touch(const char *dir, const char *name, time_t mtime)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct timespec ts[2];
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0)
		close(fd);
	ts[0].tv_sec = ts[1].tv_sec = mtime;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	utimensat(AT_FDCWD, p, ts, 0);
	free(p);
}

/* run a choice over dir; returns the chosen file name (static) or "none" / "usage" */
static const char *
choose(const char *dir, const char *req, int pre, const char *local, struct strv *warn)
{
	static char out[256];
	struct target t = { 0 };
	struct pickopts o = { 0 };
	struct pickset ps = { 0 };
	const char *why;
	size_t at, k;
	char *s;

	t.impl = xstrdup("cp");
	t.major = 3;
	t.minor = 12;
	t.nodot = xstrdup("312");
	target_setabis(&t, "cp312");
	plats_linux(&t.plats, "linux_x86_64", 64, &(struct libcver){2, 28, 0, 0}, ORDER_PIP);
	target_tags(&t);
	if (req)
		pep440_specset_parse(&o.spec, req, &why, &at);
	o.spectext = req;
	o.pre = pre;
	o.who = "test";
	if (local) {
		s = xasprintf("0+%s", local);
		pep440_parses(&o.local, s);
		free(s);
		o.localtext = local;
	}
	pick_add(&ps, dir);
	if (pick_run(&ps, &t, &o) == 2)
		snprintf(out, sizeof out, "usage");
	else
		snprintf(out, sizeof out, "%s", ps.chosen >= 0 ? ps.c[ps.chosen].base : "none");
	pick_explain(&ps, &t, &o);
	for (k = 0; warn && k < ps.warnings.n; k++)
		strv_add(warn, ps.warnings.v[k], 0);
	pick_free(&ps);
	pep440_specset_free(&o.spec);
	pep440_free(&o.local);
	target_free(&t);
	return out;
}

static void
test_choice(void)
{
	char tmpl[] = "/tmp/wheelpick-units.XXXXXX", *d = mkdtemp(tmpl), *sub;
	struct strv w = { 0 };

	if (!d) {
		CHECK(0, "mkdtemp");
		return;
	}
	sub = xasprintf("%s/a", d);
	mkdir(sub, 0755);
	touch(sub, "x-1.0-py3-none-any.whl", 1000);
	touch(sub, "x-1.0-cp312-cp312-linux_x86_64.whl", 1000);
	touch(sub, "x-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", 1000);
	CHECK_STR(choose(sub, NULL, 0, NULL, NULL), "x-1.0-cp312-cp312-manylinux_2_17_x86_64.whl",
	          "pip order: manylinux above linux above py3");
	touch(sub, "x-1.0-1-cp312-cp312-manylinux_2_17_x86_64.whl", 500);
	CHECK_STR(choose(sub, NULL, 0, NULL, NULL), "x-1.0-1-cp312-cp312-manylinux_2_17_x86_64.whl",
	          "a build tag beats none, whatever the mtime");
	touch(sub, "x-1.0-1-cp312-cp312-manylinux_2_5_x86_64.manylinux_2_17_x86_64.whl", 2000);
	CHECK_STR(choose(sub, NULL, 0, NULL, NULL),
	          "x-1.0-1-cp312-cp312-manylinux_2_5_x86_64.manylinux_2_17_x86_64.whl",
	          "same version, tag and build: the newer file wins");
	touch(sub, "x-1.1rc1-py3-none-any.whl", 1000);
	CHECK_STR(choose(sub, NULL, 0, NULL, NULL),
	          "x-1.0-1-cp312-cp312-manylinux_2_5_x86_64.manylinux_2_17_x86_64.whl",
	          "a pre-release is not taken while a final one fits");
	CHECK_STR(choose(sub, NULL, 1, NULL, NULL), "x-1.1rc1-py3-none-any.whl", "--pre takes it");
	CHECK_STR(choose(sub, ">1.0", 0, NULL, NULL), "x-1.1rc1-py3-none-any.whl",
	          "it is taken when no final release is left (packaging 26's PEP 440 rule)");
	CHECK_STR(choose(sub, ">=2", 0, NULL, NULL), "none", "nothing fits >=2");
	touch(sub, "y-1.0-py3-none-any.whl", 1000);
	CHECK_STR(choose(sub, NULL, 0, NULL, NULL), "usage", "two projects need a name");
	free(sub);

	sub = xasprintf("%s/b", d);
	mkdir(sub, 0755);
	touch(sub, "torch-2.7.0+rocm6.3-py3-none-any.whl", 1000);
	touch(sub, "torch-2.7.0+rocm10.0-py3-none-any.whl", 1000);
	touch(sub, "torch-2.7.0+rocmsdk20251015-py3-none-any.whl", 1000);
	touch(sub, "torch-2.6.0+rocm12.0-py3-none-any.whl", 1000);
	CHECK_STR(choose(sub, NULL, 0, NULL, &w), "torch-2.7.0+rocmsdk20251015-py3-none-any.whl",
	          "+rocmsdkDATE wins");
	CHECK(w.n == 2 && strstr(w.v[0], "+rocmsdk20251015 sorts above +rocm") &&
	      strstr(w.v[1], "+rocmsdk20251015 sorts above +rocm"),
	      "and both +rocmX.Y of its version are warned about, not 2.6.0's");
	strv_free(&w);
	CHECK_STR(choose(sub, NULL, 0, "rocm10.0", &w), "torch-2.7.0+rocm10.0-py3-none-any.whl",
	          "--local rocm10.0 takes it");
	CHECK(w.n == 0, "with no warning");
	strv_free(&w);
	CHECK_STR(choose(sub, NULL, 0, "rocm6.03", NULL), "torch-2.7.0+rocm6.3-py3-none-any.whl",
	          "--local compares normalized segments (6.03 == 6.3)");
	CHECK_STR(choose(sub, NULL, 0, "cu126", &w), "torch-2.7.0+rocmsdk20251015-py3-none-any.whl",
	          "--local with no match chooses among all");
	CHECK(w.n >= 1 && strstr(w.v[0], "no suitable wheel has the local label cu126"),
	      "and says so");
	strv_free(&w);
	free(sub);
	{
		char *cmd = xasprintf("rm -rf '%s'", d);
		CHECK(system(cmd) == 0, "clean up");
		free(cmd);
	}
}

int
main(void)
{
	test_versions();
	test_specifiers();
	test_names();
	test_platforms();
	test_choice();
	return TEST_DONE();
}
