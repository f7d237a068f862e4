/* unit tests of srcpin's parsers: patch paths, routing patch sections into submodules,
   series files and their digest, edit distance */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "srcpin.h"
#include "test.h"

static const char patch[] =
	"From 1234 Mon Sep 17 00:00:00 2001\n"
	"Subject: [PATCH] two repos\n"
	"\n"
	"---\n"
	" x.txt | 2 +-\n"
	"\n"
	"diff --git a/top.txt b/top.txt\n"
	"index 1..2 100644\n"
	"--- a/top.txt\n"
	"+++ b/top.txt\n"
	"@@ -1,2 +1,2 @@\n"
	" keep\n"
	"-old\n"
	"+new\n"
	"diff --git a/third_party/gloo/gloo/types.h b/third_party/gloo/gloo/types.h\n"
	"--- a/third_party/gloo/gloo/types.h\n"
	"+++ b/third_party/gloo/gloo/types.h\n"
	"@@ -1 +1 @@\n"
	"+#include <cstdint>\n"
	"-- \n"   /* a removed line "- " inside a hunk, not the signature */
	"diff --git a/third_party/gloo/x/y.c b/third_party/gloo/x/z.c\n"
	"similarity index 90%\n"
	"rename from third_party/gloo/x/y.c\n"
	"rename to third_party/gloo/x/z.c\n"
	"-- \n"
	"2.39.5\n";

/* the submodules the patches are routed into */
static char *subs[] = {"third_party/gloo", "third_party/gloo/deeper"};

/* frees n buffers */
static void
freebufs(struct buf *b, int n)
{
	for (int i = 0; i < n; i++)
		buffree(&b[i]);
}

/* the paths a patch may name */
static void
test_paths(void)
{
	CHECK(patchpath_ok("a/b.c"), "plain relative path");
	CHECK(!patchpath_ok("../x"), "'..' refused");
	CHECK(!patchpath_ok("a/../../x"), "inner '..' refused");
	CHECK(!patchpath_ok("/etc/passwd"), "absolute refused");
	CHECK(!patchpath_ok(".git/config"), ".git refused");
	CHECK(!patchpath_ok("sub/.GIT/hooks/x"), ".GIT in any case refused");
	CHECK(!patchpath_ok("a//b"), "empty component refused");
	CHECK(!patchpath_ok(""), "empty refused");
	CHECK(patchpath_ok("a/..b/c"), "'..b' is a name");
}

/* a mail-formatted patch routed to the top repository and its submodules */
static void
test_split(void)
{
	struct buf out[3] = {{0}};
	char *err = NULL;
	struct linkmoves mv = {0};

	CHECK_INT(patch_split(patch, strlen(patch), &(struct splitspec){subs, 2, NULL},
	                      &(struct splitout){out, &mv}, &err), 0, "split");
	CHECK(out[2].s && strstr(out[2].s, "diff --git a/top.txt b/top.txt\n"), "top section kept");
	CHECK(out[2].s && !strstr(out[2].s, "Subject"), "mail header dropped");
	CHECK(out[2].s && !strstr(out[2].s, "x.txt |"), "diffstat dropped");
	CHECK(out[0].s && strstr(out[0].s, "diff --git a/gloo/types.h b/gloo/types.h\n"), "submodule prefix stripped from diff --git");
	CHECK(out[0].s && strstr(out[0].s, "--- a/gloo/types.h\n+++ b/gloo/types.h\n"), "stripped from ---/+++");
	CHECK(out[0].s && strstr(out[0].s, "+#include <cstdint>\n-- \n"), "a '-- ' hunk line is kept");
	CHECK(out[0].s && strstr(out[0].s, "rename from x/y.c\nrename to x/z.c\n"), "stripped from rename lines");
	CHECK(out[0].s && !strstr(out[0].s, "2.39.5"), "signature dropped");
	CHECK_INT(out[1].len, 0, "nothing for the deeper submodule");
	freebufs(out, 3);
}

/* a path out of the tree, a rename across a submodule: refused */
static void
test_split_refused(void)
{
	char *err = NULL;
	struct linkmoves mv = {0};

	const char *evil = "diff --git a/../e b/../e\n--- a/../e\n+++ b/../e\n@@ -1 +1 @@\n-a\n+b\n";
	struct buf o2[1] = {{0}};
	CHECK_INT(patch_split(evil, strlen(evil), &(struct splitspec){NULL, 0, NULL},
	                      &(struct splitout){o2, &mv}, &err), -1, "escaping path refused");
	CHECK(err && strstr(err, "../e"), "message names the path");
	free(err);
	err = NULL;
	buffree(&o2[0]);

	const char *cross = "diff --git a/third_party/gloo/a b/b\nrename from third_party/gloo/a\nrename to b\n";
	struct buf o3[3] = {{0}};
	CHECK_INT(patch_split(cross, strlen(cross), &(struct splitspec){subs, 2, NULL},
	                      &(struct splitout){o3, &mv}, &err), -1, "rename across a submodule refused");
	free(err);
	err = NULL;
	freebufs(o3, 3);
}

/* the shapes libgit2 1.5.1 needs help with, and a gitlink hunk */
static void
test_split_shapes(void)
{
	char *err = NULL;

	const char *shapes =
		"diff --git a/e.txt b/e.txt\n"
		"new file mode 100644\n"
		"index 0000000..e69de29\n"
		"diff --git a/n.txt b/n.txt\n"
		"deleted file mode 100644\n"
		"index 1234567..0000000\n"
		"--- a/n.txt\n"
		"+++ /dev/null\n"
		"@@ -1 +0,0 @@\n"
		"-x\n"
		"diff --git a/sp ace.txt b/sp ace.txt\n"
		"index 1111111..2222222 100644\n"
		"--- a/sp ace.txt\t\n"
		"+++ b/sp ace.txt\t\n"
		"@@ -1 +1 @@\n"
		"-a\n"
		"+b\n"
		"diff --git \"a/third_party/gloo/caf\\303\\251\" \"b/third_party/gloo/caf\\303\\251\"\n"
		"index 1111111..2222222 100644\n"
		"--- \"a/third_party/gloo/caf\\303\\251\"\n"
		"+++ \"b/third_party/gloo/caf\\303\\251\"\n"
		"@@ -1 +1 @@\n"
		"-a\n"
		"+b\n"
		"diff --git a/third_party/gloo b/third_party/gloo\n"
		"index 56c6544..341bb36 160000\n"
		"--- a/third_party/gloo\n"
		"+++ b/third_party/gloo\n"
		"@@ -1 +1 @@\n"
		"-Subproject commit 56c654466e9ac092b3f9ffd6346f5efb7dc02b87\n"
		"+Subproject commit 341bb365d4ab64f14d600d37409195bb4e80e1bd\n"
		"-- \n"
		"2.39.5\n";
	struct buf o4[3] = {{0}};
	struct linkmoves m4 = {0};
	CHECK_INT(patch_split(shapes, strlen(shapes), &(struct splitspec){subs, 2, NULL},
	                      &(struct splitout){o4, &m4}, &err), 0, "shapes split");
	CHECK(o4[2].s && strstr(o4[2].s, "index 0000000..e69de29\n-- \n"), "a header-only section is ended by '-- '");
	CHECK(o4[2].s && strstr(o4[2].s, "--- a/n.txt\n+++ /dev/null\n"), "/dev/null kept");
	CHECK(o4[2].s && strstr(o4[2].s, "diff --git \"a/sp ace.txt\" \"b/sp ace.txt\"\n"), "a name with a space is quoted");
	CHECK(o4[2].s && strstr(o4[2].s, "--- \"a/sp ace.txt\"\n"), "and its tab dropped");
	CHECK(o4[0].s && strstr(o4[0].s, "--- \"a/caf\\303\\251\"\n"), "a quoted name keeps its quoting, prefix removed");
	CHECK(o4[2].s && !strstr(o4[2].s, "Subproject"), "the gitlink section is not passed to libgit2");
	CHECK_INT(m4.n, 1, "one submodule move");
	CHECK_STR(m4.n ? m4.v[0].path : NULL, "third_party/gloo", "its path, in the top repository");
	CHECK_INT(m4.n ? m4.v[0].repo : 0, 2, "routed to the top");
	CHECK_STR(m4.n ? m4.v[0].from : NULL, "56c654466e9ac092b3f9ffd6346f5efb7dc02b87", "from");
	CHECK_STR(m4.n ? m4.v[0].to : NULL, "341bb365d4ab64f14d600d37409195bb4e80e1bd", "to");
	freebufs(o4, 3);
	linkmoves_free(&m4);
}

/* series files: comments, the digest, a missing patch, options */
static void
test_series(void)
{
	char *err = NULL;
	char dir[] = "/tmp/srcpin-unit.XXXXXX";
	char *p, *q;
	struct series s;
	FILE *f;
	char d1[65];
	CHECK(mkdtemp(dir) != NULL, "temp folder");
	p = xasprintf("%s/series", dir);
	q = xasprintf("%s/1.patch", dir);
	f = fopen(q, "w");
	fputs("diff --git a/x b/x\n", f);
	fclose(f);
	f = fopen(p, "w");
	fputs("# c\n\n  1.patch   # trailing comment\n", f);
	fclose(f);
	CHECK_INT(series_load(&s, p, &err), 0, "series loads");
	CHECK_INT(s.n, 1, "one patch");
	CHECK_STR(s.n ? s.p[0].name : NULL, "1.patch", "name trimmed");
	CHECK_INT(strlen(s.digest), 64, "digest is 64 hex");
	memcpy(d1, s.digest, 65);
	series_free(&s);
	f = fopen(q, "a");
	fputs(" ", f);
	fclose(f);
	CHECK_INT(series_load(&s, p, &err), 0, "series loads again");
	CHECK(strcmp(d1, s.digest) != 0, "a changed patch changes the digest");
	series_free(&s);
	f = fopen(p, "w");
	fputs("1.patch\n2.patch\n", f);
	fclose(f);
	CHECK_INT(series_load(&s, p, &err), -1, "missing patch file");
	CHECK(err && strstr(err, "series:2:"), "error names series:line");
	free(err);
	err = NULL;
	series_free(&s);
	f = fopen(p, "w");
	fputs("1.patch -p1\n", f);
	fclose(f);
	CHECK_INT(series_load(&s, p, &err), -1, "options refused");
	free(err);
	series_free(&s);
	unlink(p);
	unlink(q);
	rmdir(dir);
	free(p);
	free(q);
}

/* traditional headers, as git apply reads them (git/git apply.c) */
static void
test_traditional(void)
{
	static const struct {
		const char *hdr, *name;
		int isnew, isdel, p;
	} tv[] = {
		{"--- a/x.c\t2010-07-05 19:41:17.620000023 -0500\n+++ b/x.c\t2010-07-05 19:41:18.1 -0500\n@@ -1 +1 @@\n",
		 "x.c", 0, 0, 1},
		{"--- pkg.orig/sp ace.txt\t2026-01-01 00:00:00\n+++ pkg/sp ace.txt\t2026-01-01 00:00:01\n@@ -1 +1 @@\n",
		 "sp ace.txt", 0, 0, 1},
		/* whitespace damage: spaces, not a tab, before the date */
		{"--- a/y z   2010-07-05 19:41:17\n+++ b/y z   2010-07-05 19:41:17\n@@ -1 +1 @@\n", "y z", 0, 0, 1},
		/* no timestamp: the name ends at a tab */
		{"--- a/n.txt\tjunk\n+++ b/n.txt\tjunk\n@@ -1 +1 @@\n", "n.txt", 0, 0, 1},
		{"--- /dev/null\n+++ b/new/n.txt\n@@ -0,0 +1 @@\n", "new/n.txt", 1, 0, 1},
		{"--- a/gone\n+++ /dev/null\n@@ -1 +0,0 @@\n", "gone", 0, 1, 1},
		/* diff -N: the epoch on the side that lacks the file (UTC, and west of it) */
		{"--- a/new\t1970-01-01 00:00:00.000000000 +0000\n+++ b/new\t2026-11-25 16:01:39 +0000\n@@ -0,0 +1 @@\n",
		 "new", 1, 0, 1},
		{"--- a/old\t2026-11-25 16:01:39 -0500\n+++ b/old\t1969-12-31 19:00:00.000000000 -0500\n@@ -1 +0,0 @@\n",
		 "old", 0, 1, 1},
		/* names without '/': -p0 by git's guess; the shorter name */
		{"--- a.txt.orig\t2026-01-01 00:00:00\n+++ a.txt\t2026-01-01 00:00:00\n@@ -1 +1 @@\n", "a.txt", 0, 0, 0},
		{"--- \"a/caf\\303\\251\"\n+++ \"b/caf\\303\\251\"\n@@ -1 +1 @@\n", "caf\303\251", 0, 0, 1},
		/* -p1 ends at the first '/': the rest, squashed, is absolute (refused later) */
		{"--- a//d///e\n+++ b//d///e\n@@ -1 +1 @@\n", "/d/e", 0, 0, 1},
	};
	for (size_t i = 0; i < sizeof tv / sizeof tv[0]; i++) {
		struct tradp tp = {1, 0};
		struct tradhdr h;
		char d[32];
		snprintf(d, sizeof d, "traditional %zu", i);
		CHECK(trad_start(tv[i].hdr), "%s", d);
		CHECK_INT(trad_header(tv[i].hdr, &tp, &h), 0, "%s", d);
		CHECK_STR(h.name ? h.name : "(null)", tv[i].name, "%s", d);
		CHECK_INT(h.isnew, tv[i].isnew, "%s", d);
		CHECK_INT(h.isdel, tv[i].isdel, "%s", d);
		CHECK_INT(tp.p, tv[i].p, "%s", d);
		free(h.name);
	}
	CHECK(!trad_start("--- a/x\n+++ b/x\nnot a hunk\n"), "no @@ line: not a header");
	CHECK(!trad_start("---\n+++ b/x\n@@ -1 +1 @@\n"), "a mail's --- line: not a header");
	{
		/* a name with fewer folders than -p: no name, as git says */
		struct tradp tp = {1, 1};
		struct tradhdr h;
		CHECK_INT(trad_header("--- x\n+++ y\n@@ -1 +1 @@\n", &tp, &h), -1, "no folder to strip");
	}
}

int
main(void)
{
	test_paths();
	test_split();
	test_split_refused();
	test_split_shapes();
	CHECK_INT(editdist("v0.22.1", "v0.22.0"), 1, "edit distance one");
	CHECK_INT(editdist("", "abc"), 3, "edit distance from empty");
	CHECK_INT(editdist("kitten", "sitting"), 3, "kitten/sitting");
	test_series();
	test_traditional();
	return TEST_DONE();
}
