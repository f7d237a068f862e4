/* unit tests of tools/lib: strings, quoting, hashing, atomic files, JSON, KEY=VALUE */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "hash.h"
#include "json.h"
#include "kv.h"
#include "proc.h"
#include "test.h"
#include "util.h"

static void
test_buf(void)
{
	struct buf b = {0};
	int i;

	for (i = 0; i < 1000; i++)
		bufprintf(&b, "%d,", i);
	CHECK_INT(b.len, 3890, "bufprintf grows the string");
	CHECK(strncmp(b.s, "0,1,2,", 6) == 0 && b.s[b.len] == 0, "buf stays NUL-terminated");
	bufreset(&b);
	shquote(&b, "it's a 'test'");
	CHECK_STR(b.s, "'it'\\''s a '\\''test'\\'''", "shquote escapes single quotes");
	buffree(&b);
	CHECK(startswith("gfx1151", "gfx11") && !startswith("gfx", "gfx11"), "startswith");
	CHECK(endswith("a.whl", ".whl") && !endswith("whl", ".whl"), "endswith");
}

static void
test_hash(void)
{
	unsigned char d[32];
	struct buf b = {0};
	struct sha256 h;

	sha256_buf("abc", 3, d);
	hexenc(&b, d, 32);
	CHECK_STR(b.s, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	          "SHA-256 of 'abc' (FIPS 180-2 vector)");
	bufreset(&b);
	sha256_init(&h);
	sha256_update(&h, "a", 1);
	sha256_update(&h, "bc", 2);
	sha256_final(&h, d);
	b64url(&b, d, 32);
	CHECK_STR(b.s, "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0",
	          "incremental SHA-256 in RECORD's urlsafe base64, no padding");
	bufreset(&b);
	b64url(&b, (const unsigned char *)"f", 1);
	bufputc(&b, '|');
	b64url(&b, (const unsigned char *)"fo", 2);
	CHECK_STR(b.s, "Zg|Zm8", "base64url of 1 and 2 bytes has no padding");
	buffree(&b);
}

static void
test_atomic(const char *dir)
{
	char *p = xasprintf("%s/f", dir), *sub;
	struct buf b = {0};
	struct stat st1, st2;
	struct atomic a;

	CHECK_INT(writefile_ifchanged(p, "one", 3, 0644), 1, "write-if-changed writes a new file");
	stat(p, &st1);
	sleep(0);
	CHECK_INT(writefile_ifchanged(p, "one", 3, 0644), 0, "same content is not rewritten");
	stat(p, &st2);
	CHECK(st1.st_ino == st2.st_ino && st1.st_mtim.tv_nsec == st2.st_mtim.tv_nsec,
	      "unchanged file keeps inode and mtime");
	CHECK_INT(writefile_ifchanged(p, "two", 3, 0644), 1, "new content is written");
	readfile(p, &b, 0);
	CHECK_STR(b.s, "two", "content replaced");
	CHECK_INT(atomic_open(&a, p, 0644), 0, "atomic_open");
	atomic_write(&a, "partial", 7);
	atomic_abort(&a);
	readfile(p, &b, 0);
	CHECK_STR(b.s, "two", "an aborted write leaves the old file intact");
	sub = xasprintf("%s/missing/f", dir);
	CHECK(writefile_atomic(sub, "x", 1, 0644) < 0 && errno == ENOENT,
	      "writing into a missing folder fails with ENOENT");
	free(sub);
	writefile_atomic(p, "a\nb\nc\nd\ne\n", 10, 0644);
	bufreset(&b);
	tailfile(p, 2, "> ", &b);
	CHECK_STR(b.s, "> d\n> e\n", "tailfile gives the last lines, prefixed");
	writefile_atomic(p, "x\ny", 3, 0644);
	bufreset(&b);
	tailfile(p, 5, "", &b);
	CHECK_STR(b.s, "x\ny\n", "a file shorter than n, without a final newline");
	bufreset(&b);
	tailfile("/nonexistent/log", 5, "", &b);
	CHECK_INT(b.len, 0, "a missing file adds nothing");
	unlink(p);
	free(p);
	buffree(&b);
}

static void
test_json(void)
{
	struct buf b = {0};
	struct json j;

	json_init(&j, &b);
	json_obj(&j);
	json_kstr(&j, "name", "a\"b\\c\n\x01");
	json_key(&j, "list");
	json_arr(&j);
	json_int(&j, -1);
	json_bool(&j, 1);
	json_null(&j);
	json_obj(&j);
	json_end(&j);
	json_end(&j);
	json_kint(&j, "n", 42);
	json_end(&j);
	CHECK_STR(b.s, "{\"name\":\"a\\\"b\\\\c\\n\\u0001\",\"list\":[-1,true,null,{}],\"n\":42}",
	          "JSON escapes strings and places commas");
	buffree(&b);
}

static void
test_kv(void)
{
	static const char good[] =
	    "# comment\n\nPYTORCH_ROCM_ARCH=gfx1151\nexport A='x y'\nB=\"q\\\"z\" # trailing\nC=\n";
	struct kvfile f;
	char *err;

	CHECK_INT(kv_parse(&f, "p.env", good, sizeof good - 1, &err), 0, "a valid profile parses");
	CHECK_INT(f.n, 4, "four assignments");
	CHECK_STR(kv_get(&f, "PYTORCH_ROCM_ARCH"), "gfx1151", "plain value");
	CHECK_STR(kv_get(&f, "A"), "x y", "single-quoted value with export");
	CHECK_STR(kv_get(&f, "B"), "q\"z", "double-quoted value with escape and comment");
	CHECK_STR(kv_get(&f, "C"), "", "empty value");
	CHECK_INT(f.v[0].line, 3, "line numbers are kept");
	kv_free(&f);
	CHECK_INT(kv_parse(&f, "bad.env", "A=1\nnot a line\n", 16, &err), -1, "a malformed line fails");
	CHECK_STR(err, "bad.env:2: expected KEY=VALUE, got 'not a line'", "the error names file:line");
	free(err);
	kv_free(&f);
	CHECK_INT(kv_parse(&f, "q.env", "A='x\n", 5, &err), -1, "an unterminated quote fails");
	CHECK_STR(err, "q.env:1: unterminated ' quote", "and says so");
	free(err);
	kv_free(&f);
	CHECK_INT(kv_parse(&f, "s.env", "A=$HOME\n", 8, &err), -1, "expansions are refused");
	free(err);
	kv_free(&f);
	CHECK_INT(kv_parse(&f, "d.env", "A=\"$(id)\"\n", 10, &err), -1,
	          "expansions inside double quotes are refused too");
	free(err);
	kv_free(&f);
	CHECK_INT(kv_parse(&f, "e.env", "A=\"\\$x\"\nB='$y'\n", 15, &err), 0,
	          "an escaped $ and a single-quoted $ are plain text");
	CHECK_STR(kv_get(&f, "A"), "$x", "escaped $ kept");
	CHECK_STR(kv_get(&f, "B"), "$y", "single-quoted $ kept");
	free(err);
	kv_free(&f);
	CHECK_INT(kv_parse(&f, "e.env", "export\t\t", 8, &err), -1, "'export' with no key at end of input fails");
	CHECK_STR(err, "e.env:1: expected KEY=VALUE, got ''", "without reading past the end");
	free(err);
	kv_free(&f);
	CHECK_INT(kv_load(&f, "/nonexistent/x.env", &err), -1, "a missing file fails");
	CHECK_STR(err, "/nonexistent/x.env: No such file or directory", "naming the file");
	free(err);
	kv_free(&f);
}

static void
test_proc(void)
{
	char *sh[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
	char *sl[] = {"sleep", "5", NULL};
	char *nf[] = {"/nonexistent/prog", NULL};
	struct buf o = {0}, e = {0};
	struct procres r;

	CHECK_INT(proc_capture(sh, NULL, &o, &e, 0, 0, &r), 0, "proc_capture runs sh");
	CHECK_STR(o.s, "out\n", "stdout captured");
	CHECK_STR(e.s, "err\n", "stderr captured");
	CHECK_INT(r.status, 3, "exit status passed back");
	proc_capture(sl, NULL, &o, NULL, 0, 100, &r);
	CHECK(r.timedout && r.status == 128 + 9, "a child past its timeout is killed");
	proc_capture(nf, NULL, &o, NULL, 0, 0, &r);
	CHECK(r.notfound && r.status == 127, "a missing program gives 127");
	buffree(&o);
	buffree(&e);
}

int
main(void)
{
	char dir[] = "/tmp/kiln-libtest.XXXXXX";

	if (!mkdtemp(dir))
		return 2;
	test_buf();
	test_hash();
	test_atomic(dir);
	test_json();
	test_kv();
	test_proc();
	rmdir(dir);
	return TEST_DONE();
}
