/* unit tests of tools/lib/zip (used by fatwheel) and fatwheel's wheel helpers:
   round trips, ZIP64 end records, raw copies, corrupt input, RECORD and tag parsing */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "elffile.h"
#include "fw.h"
#include "test.h"
#include "util.h"
#include "zip.h"

static char dir[] = "/tmp/fw-unit.XXXXXX";
/* the message of the last call given E (the one before it freed), ES it or "" */
static char *err_;
#define E (free(err_), err_ = NULL, &err_)
#define ES (err_ ? err_ : "")

static int
count(void *ctx, const void *p, size_t n)
{
	struct buf *b = ctx;

	bufadd(b, p, n);
	return 0;
}

/* write an archive of n members "d/NNNNN.txt" (every 3rd deflated); returns its path */
static char *
mkarchive(size_t n, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct zipout w;
	struct zipcd m;
	struct buf z = {0};
	char nm[64], body[128];
	size_t i;

	zipw_init(&w, fd);
	for (i = 0; i < n; i++) {
		memset(&m, 0, sizeof m);
		snprintf(nm, sizeof nm, "d/%05zu.txt", i);
		snprintf(body, sizeof body, "member %zu member %zu member %zu\n", i, i, i);
		m.name = nm;
		m.usize = strlen(body);
		if (i % 3 == 0) {
			zip_deflate(body, strlen(body), 6, &z, &m.crc);
			m.method = 8;
			m.csize = z.len;
			zipw_add(&w, &m, z.s);
		} else {
			m.crc = zip_crc(body, strlen(body));
			m.csize = m.usize;
			zipw_add(&w, &m, body);
		}
	}
	CHECK(zipw_finish(&w) == 0, "writer finishes %zu members", n);
	close(fd);
	buffree(&z);
	return path;
}

static void
test_roundtrip(void)
{
	char *p = mkarchive(5, "small.zip");
	struct zipin z;
	struct buf b = {0};
	struct mapfile m;

	CHECK(zip_open(&z, p, E) == 0, "reads back what it wrote (%s)", ES);
	CHECK_INT(z.n, 5, "five members");
	CHECK_STR(z.e[3].name, "d/00003.txt", "names in order");
	CHECK_INT(z.e[3].method, 8, "member 3 deflated");
	CHECK(zip_read(&z, &z.e[3], count, &b, E) == 0, "inflates member 3");
	CHECK_STR(b.s, "member 3 member 3 member 3\n", "content survives deflate");
	bufreset(&b);
	CHECK(zip_read(&z, &z.e[1], count, &b, E) == 0, "reads stored member 1");
	CHECK_STR(b.s, "member 1 member 1 member 1\n", "stored content");
	buffree(&b);
	zip_close(&z);
	/* no ZIP64 record in a small archive */
	map_open(&m, p);
	CHECK(m.n > 22 && memcmp(m.p + m.n - 22, "PK\5\6", 4) == 0, "ends with the classic end record");
	CHECK(memmem(m.p, m.n, "PK\6\6", 4) == NULL, "no ZIP64 end record when none is needed");
	map_close(&m);
	free(p);
}

static void
test_zip64count(void)
{
	char *p = mkarchive(70000, "many.zip");
	struct zipin z;
	struct mapfile m;
	struct buf b = {0};
	const unsigned char *e;

	map_open(&m, p);
	e = m.p + m.n - 22;
	CHECK(memcmp(e, "PK\5\6", 4) == 0, "classic end record last");
	CHECK_INT(rd16(e + 10), 0xffff, "its member count is 0xFFFF (70000 does not fit)");
	CHECK(rd32(e + 16) != 0xffffffffu, "its offset field is exact (it fits)");
	CHECK(memcmp(e - 20, "PK\6\7", 4) == 0, "ZIP64 locator precedes it");
	CHECK(memcmp(m.p + rd64(e - 20 + 8), "PK\6\6", 4) == 0, "the locator points at the ZIP64 end record");
	CHECK_INT(rd64(m.p + rd64(e - 12) + 32), 70000, "ZIP64 end record counts 70000 members");
	CHECK_INT(rd64(m.p + rd64(e - 12) + 4), 44, "ZIP64 end record size field is 44");
	map_close(&m);
	CHECK(zip_open(&z, p, E) == 0, "reads a ZIP64 archive back (%s)", ES);
	CHECK_INT(z.n, 70000, "70000 members");
	CHECK(zip_read(&z, &z.e[69999], count, &b, E) == 0, "reads the last member");
	CHECK_STR(b.s, "member 69999 member 69999 member 69999\n", "last member's content");
	buffree(&b);
	zip_close(&z);
	free(p);
}

/* write bytes to a file under dir and try to open it as a zip */
static int
opens(const char *name, const void *p, size_t n, char **err)
{
	char *path = xasprintf("%s/%s", dir, name);
	struct zipin z;
	int r;

	writefile_atomic(path, p, n, 0644);
	r = zip_open(&z, path, err);
	zip_close(&z);
	free(path);
	return r;
}

static void
test_corrupt(void)
{
	char *p = mkarchive(3, "c.zip");
	struct buf b = {0}, got = {0};
	struct zipin z;
	size_t off;

	readfile(p, &b, 0);
	CHECK(opens("t1.zip", b.s, b.len - 5, E) < 0 && strstr(ES, "truncated"),
	      "a cut end record is refused (%s)", ES);
	CHECK(opens("t2.zip", b.s, 40, E) < 0, "a file cut after the first member is refused");
	CHECK(opens("t3.zip", "hello", 5, E) < 0 && strstr(ES, "not a zip"),
	      "a text file is not a zip (%s)", ES);
	/* rename member 1 to "../x" in both headers (same length as "d/00001.txt" needs 11) */
	off = (size_t)((char *)memmem(b.s, b.len, "d/00001.txt", 11) - b.s);
	memcpy(b.s + off, "../00001.tx", 11);
	off = (size_t)((char *)memmem(b.s + off + 11, b.len - off - 11, "d/00001.txt", 11) - b.s);
	memcpy(b.s + off, "../00001.tx", 11);
	CHECK(opens("t4.zip", b.s, b.len, E) < 0 && strstr(ES, "unsafe"),
	      "a '..' member is refused (%s)", ES);
	memcpy(b.s + off, "/tmp/0001.tx", 11);
	CHECK(opens("t5.zip", b.s, b.len, E) < 0, "mismatched or absolute names are refused (%s)", ES);
	buffree(&b);
	/* a flipped byte in a stored member fails its CRC */
	readfile(p, &b, 0);
	off = (size_t)((char *)memmem(b.s, b.len, "member 1 ", 9) - b.s);
	b.s[off] = 'M';
	CHECK(opens("t6.zip", b.s, b.len, E) == 0, "a flipped content byte still opens");
	{
		char *q = xasprintf("%s/t6.zip", dir);
		zip_open(&z, q, E);
		CHECK(zip_read(&z, &z.e[1], count, &got, E) < 0 && strstr(ES, "CRC"),
		      "but fails its CRC-32 (%s)", ES);
		zip_close(&z);
		free(q);
	}
	buffree(&got);
	buffree(&b);
	free(p);
	CHECK(zip_safename("a/b.py") && !zip_safename("/a") && !zip_safename("a/../b") &&
	      !zip_safename("..") && !zip_safename("a\\b") && !zip_safename("C:x") && zip_safename("a..b/c"),
	      "zip_safename");
}

/* one cap for every inflate: zip_open refuses a member declared over zip_maxinflate,
   zip_read stops at it; and a FIFO is refused without waiting for a writer */
static void
test_cap(void)
{
	char *p = mkarchive(4, "cap.zip"), *fifo = xasprintf("%s/fifo.zip", dir);
	struct zipin z;
	struct buf got = {0};
	uint64_t saved = zip_maxinflate;

	CHECK(zip_maxinflate == ZIP_MAXINFLATE, "the default cap is ZIP_MAXINFLATE");
	zip_maxinflate = 20;
	CHECK(zip_open(&z, p, E) == -1 && strstr(ES, "over the cap of 20"),
	      "zip_open refuses members declared over the cap (%s)", ES);
	zip_maxinflate = saved;
	CHECK(zip_open(&z, p, E) == 0, "the same archive opens under the default cap");
	zip_maxinflate = 20;
	CHECK(zip_read(&z, &z.e[0], count, &got, E) < 0 && strstr(ES, "over the cap"),
	      "zip_read of a deflated member honours a lowered cap (%s)", ES);
	CHECK(zip_read(&z, &z.e[1], count, &got, E) < 0 && strstr(ES, "over the cap"),
	      "zip_read of a stored member too (%s)", ES);
	zip_maxinflate = saved;
	zip_close(&z);
	buffree(&got);
	CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
	CHECK(zip_open(&z, fifo, E) == -1 && strstr(ES, "is a FIFO, not a regular file"),
	      "zip_open refuses a FIFO at once (%s)", ES);
	CHECK(zip_safename("a/b") && !zip_safename("a/\x1b[2Jb") && !zip_safename("a\nb") &&
	      !zip_safename("a\x7f"), "zip_safename refuses control characters and DEL");
	unlink(fifo);
	free(fifo);
	free(p);
}

static void
test_wheel(void)
{
	struct whlname w;
	struct recline *r;
	size_t n;
	char *s;
	const char *why;
	const char *rec = "a/b.py,sha256=x,3\n\"a/c,d.py\",sha256=y,4\r\nx.dist-info/RECORD,,\n";
	struct buf b = {0};
	unsigned char h[32] = {0};

	CHECK(whl_parse(&w, "/x/torch-2.7.0+rocm6.4-1-cp312-cp312-linux_x86_64.whl", &why) == 0, "wheel name with build tag");
	CHECK_STR(w.build, "1", "build tag");
	s = whl_fmt(&w, "manylinux_2_28_x86_64");
	CHECK_STR(s, "torch-2.7.0+rocm6.4-1-cp312-cp312-manylinux_2_28_x86_64.whl", "retagged name");
	free(s);
	whl_free(&w);
	CHECK(whl_parse(&w, "Zope.Foo_bar-01.0-007x-py2.py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl", &why) == 0,
	      "a raw name, a build tag with a rest, compressed tag sets");
	CHECK_STR(w.name, "Zope.Foo_bar", "the name as written");
	CHECK_STR(w.version, "01.0", "the version as written");
	CHECK_STR(w.build, "007x", "the build tag as written");
	CHECK_STR(w.py, "py2.py3", "the python tags");
	CHECK_STR(w.abi, "none", "the abi tag");
	CHECK_STR(w.plat, "manylinux1_x86_64.manylinux_2_5_x86_64", "the platform tags");
	s = whl_fmt(&w, NULL);
	CHECK_STR(s, "Zope.Foo_bar-01.0-007x-py2.py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl", "the same name back");
	free(s);
	whl_free(&w);
	CHECK(whl_parse(&w, "x-1.0-py3-none.whl", &why) < 0 && strstr(why, "number of parts"), "four parts is not a wheel name");
	CHECK(whl_parse(&w, "x-1.0-py3-none-any.zip", &why) < 0 && strstr(why, ".whl"), ".zip is not a wheel name");
	CHECK(whl_parse(&w, "x-1.0.x-py3-none-any.whl", &why) < 0 && strstr(why, "PEP 440"),
	      "a version pip cannot parse is not a wheel name");
	CHECK(whl_parse(&w, "x-1.0-py3-none-any-linux.whl", &why) < 0, "a build tag must start with a digit");
	CHECK(record_parse(rec, strlen(rec), &r, &n, E) == 0, "RECORD parses (%s)", ES);
	CHECK_INT(n, 3, "three lines");
	CHECK(record_find(r, n, "a/c,d.py") && strcmp(record_find(r, n, "a/c,d.py")->size, "4") == 0,
	      "a quoted path with a comma");
	record_free(r, n);
	CHECK(record_parse("a,b\n", 4, &r, &n, E) < 0 && strstr(ES, "line 1"), "two fields is an error");
	CHECK(record_parse("a,b,1\na,c,2\n", 12, &r, &n, E) < 0 && strstr(ES, "twice"),
	      "a path listed twice is an error");
	record_line(&b, "p,q", h, 7);
	record_line(&b, "R", NULL, 0);
	CHECK_STR(b.s, "\"p,q\",sha256=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,7\nR,,\n", "record_line quotes and leaves RECORD unhashed");
	buffree(&b);
	s = wheel_retag("Wheel-Version: 1.0\nTag: py2-none-linux_x86_64\nTag: py3-none-linux_x86_64\n", 73, "manylinux_2_17_x86_64");
	CHECK_STR(s, "Wheel-Version: 1.0\nTag: py2-none-manylinux_2_17_x86_64\nTag: py3-none-manylinux_2_17_x86_64\n", "WHEEL retag");
	free(s);
	CHECK_STR(plat_arch("linux_x86_64"), "x86_64", "plat_arch");
	CHECK(plat_arch("any") == NULL, "plat_arch of any");
	CHECK(policy_system("libc.so.6") && policy_system("libstdc++.so.6") && policy_system("libz.so.1") && !policy_system("libzstd.so.1"),
	      "policy list");
}

int
main(void)
{
	char *cmd;

	if (!mkdtemp(dir))
		return 2;
	test_roundtrip();
	test_zip64count();
	test_corrupt();
	test_cap();
	test_wheel();
	cmd = xasprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	free(cmd);
	free(err_);
	return TEST_DONE();
}
