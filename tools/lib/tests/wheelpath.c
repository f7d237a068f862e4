/* unit tests of wheelpath.h: member names normalised as pip 23 installs them */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "os.h"
#include "test.h"
#include "util.h"
#include "wheelpath.h"

/* key of name, compared with want (NULL: the name leaves its root) */
static void
key(const char *name, const char *want)
{
	char *k = wheelpath_key(name);

	CHECK_STR(k, want, "wheelpath_key('%s')", name);
	free(k);
}

/* the clash result for a NULL-terminated list of names */
static int
clash(const char *const *l, size_t *a, size_t *b)
{
	size_t n = 0;

	while (l[n])
		n++;
	return wheelpath_clash((char *const *)l, n, a, b);
}

int
main(void)
{
	size_t a = 99, b = 99;
	struct buf q = {0};

	/* posixpath.normpath, as pip applies it before joining the install folder */
	key("pkg/a.py", "pkg/a.py");
	key("pkg/./a.py", "pkg/a.py");
	key("pkg//a.py", "pkg/a.py");
	key("./pkg/a.py", "pkg/a.py");
	key("pkg/b/../a.py", "pkg/a.py");
	key("pkg/a.py/.", "pkg/a.py");
	key("../a.py", NULL);
	key("pkg/../../a.py", NULL);
	key("/etc/passwd", NULL);
	key("pkg\\a.py", "pkg\\a.py");   /* a plain character on POSIX */
	key("Pkg/A.py", "Pkg/A.py");     /* case is kept, as on Linux */
	/* .data schemes: purelib and platlib land where the wheel root does */
	key("pkg-1.0.data/purelib/pkg/a.py", "pkg/a.py");
	key("pkg-1.0.data/platlib/pkg/a.py", "pkg/a.py");
	key("pkg-1.0.data//purelib/./pkg/a.py", "pkg/a.py");
	key("pkg-1.0.data/scripts/run", "\001scripts/run");
	key("other-2.0.data/scripts/run", "\001scripts/run");
	key("./pkg-1.0.data/purelib/a.py", "pkg-1.0.data/purelib/a.py"); /* pip reads the first component as written */

	{
		const char *l[] = { "pkg/a.py", "pkg/b.py", "pkg-1.0.dist-info/RECORD", NULL };
		CHECK_INT(clash(l, &a, &b), 0, "distinct members do not clash");
	}
	{
		const char *l[] = { "pkg/", "pkg/a.py", "pkg/./a.py", NULL };
		CHECK(clash(l, &a, &b) == 1 && a == 1 && b == 2, "'pkg/a.py' and 'pkg/./a.py' clash (%zu, %zu)", a, b);
	}
	{
		const char *l[] = { "pkg//a.py", "pkg/a.py", NULL };
		CHECK(clash(l, &a, &b) == 1, "'pkg//a.py' and 'pkg/a.py' clash");
	}
	{
		const char *l[] = { "pkg/a.py", "pkg-1.0.data/purelib/pkg/a.py", NULL };
		CHECK(clash(l, &a, &b) == 1, "a root member and its .data/purelib twin clash");
	}
	{
		const char *l[] = { "a-1.0.data/scripts/run", "b-1.0.data/scripts/run", "run", NULL };
		CHECK(clash(l, &a, &b) == 1 && a + b == 1, "two .data/scripts/run clash, not with a root 'run'");
	}
	{
		const char *l[] = { "pkg/a", "pkg/a-b", "pkg/a/b.py", NULL };
		CHECK(clash(l, &a, &b) == 1 && a == 0 && b == 2, "a file where another member needs a folder");
	}
	{
		const char *l[] = { "pkg/", "pkg/a.py", NULL };
		CHECK_INT(clash(l, &a, &b), 0, "a folder entry is not a file");
	}
	{
		const char *l[] = { "pkg/A.py", "pkg/a.py", NULL };
		CHECK_INT(clash(l, &a, &b), 0, "case differences install side by side");
	}
	{
		const char *l[] = { "pkg/a.py", "x/../../b", NULL };
		CHECK(clash(l, &a, &b) == -1 && a == 1, "a name leaving its root is reported");
	}

	CHECK(wheelpath_plainname("libz.so.1"), "plain name");
	CHECK(!wheelpath_plainname("../numpy/libz.so.1"), "'..' path is not a plain name");
	CHECK(!wheelpath_plainname("sub/libz.so"), "'/' is not in a plain name");
	CHECK(!wheelpath_plainname("..") && !wheelpath_plainname(".") && !wheelpath_plainname(""),
	      "'..', '.' and '' are not plain names");
	CHECK(!wheelpath_plainname("lib\nz.so") && !wheelpath_plainname("lib\x7fz.so") &&
	      !wheelpath_plainname("a\\b"), "control characters, DEL and '\\' are refused");
	CHECK(wheelpath_plainname("..libz.so"), "a name starting with '..' is still plain");

	wheelpath_escape(&q, "a\nb\\c\x1b\xff");
	CHECK_STR(q.s, "a\\x0ab\\x5cc\\x1b\\xff", "wheelpath_escape");
	buffree(&q);
	CHECK_STR(os_ftype(S_IFIFO), "a FIFO", "os_ftype names a FIFO");
	CHECK_STR(os_ftype(S_IFCHR), "a character device", "os_ftype names a device");
	return TEST_DONE();
}
