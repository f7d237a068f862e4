/* unit tests of tools/lib: strings, quoting, hashing, atomic files, JSON, KEY=VALUE */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "hash.h"
#include "json.h"
#include "kv.h"
#include "opt.h"
#include "os.h"
#include "proc.h"
#include "strv.h"
#include "test.h"
#include "util.h"

static void
test_buf(void)
{
	struct buf b = {0};
	char *xp;
	int i;

	for (i = 0; i < 1000; i++)
		bufprintf(&b, "%d,", i);
	CHECK_INT(b.len, 3890, "bufprintf grows the string");
	CHECK(strncmp(b.s, "0,1,2,", 6) == 0 && b.s[b.len] == 0, "buf stays NUL-terminated");
	bufreset(&b);
	shquote(&b, "it's a 'test'");
	CHECK_STR(b.s, "'it'\\''s a '\\''test'\\'''", "shquote escapes single quotes");
	bufreset(&b);
	bufputs(&b, "6.4.1 \r\n\n");
	bufrtrim(&b, " \r\n");
	CHECK(b.len == 5 && !strcmp(b.s, "6.4.1"), "bufrtrim drops trailing white space");
	bufrtrim(&b, "1.");
	CHECK_STR(b.s, "6.4", "bufrtrim drops only bytes of its set, from the end");
	{
		char s[] = "580.159.04 \t\n";
		CHECK_STR(strrtrim(s, " \t\n"), "580.159.04", "strrtrim");
	}
	buffree(&b);
	xp = xasprintf("%s-%d", "gfx", 1151);
	CHECK_STR(xp, "gfx-1151", "xasprintf (bufvprintf)");
	free(xp);
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
	bufreset(&b);
	/* UTF-8 passes; a byte outside it (a Latin-1 tag, a cut sequence, an overlong '/',
	   a surrogate, past U+10FFFF) is \udcXX, so the output stays valid JSON */
	json_quote(&b, "v1\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80-\xe9-\xc3-\xc0\xaf-\xed\xa0\x80-\xf4\x90\x80\x80", 27);
	CHECK_STR(b.s, "\"v1\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80-\\udce9-\\udcc3-\\udcc0\\udcaf-"
	          "\\udced\\udca0\\udc80-\\udcf4\\udc90\\udc80\\udc80\"", "JSON escapes bytes that are not UTF-8");
	bufreset(&b);
	/* C1 controls (a UTF-8 CSI, NEL) and U+2028/U+2029 are escaped: no terminal acts on them */
	json_quote(&b, "a\xc2\x9b" "2J\xc2\x85\xc2\xa0\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xa7", 18);
	CHECK_STR(b.s, "\"a\\u009b2J\\u0085\xc2\xa0\\u2028\\u2029\xe2\x80\xa7\"", "JSON escapes C1, U+2028, U+2029");
	CHECK(utf8_badat("ok\xc3\xa9", 4) == 4 && utf8_badat("ok\xff", 3) == 2 &&
	      utf8_badat("\xe2\x82", 2) == 0, "utf8_badat");
	bufreset(&b);
	{
		struct strv l = {0};

		strv_add(&l, "cp312", 0);
		strv_add(&l, "abi3", 0);
		strv_add(&l, "cp312", 1);
		CHECK(l.n == 2 && strv_has(&l, "abi3") && !strv_has(&l, "abi"), "strv_has, strv_add uniq");
		json_init(&j, &b);
		json_obj(&j);
		json_kstrs(&j, "abis", l.v, l.n);
		json_kstrs(&j, "none", NULL, 0);
		json_end(&j);
		CHECK_STR(b.s, "{\"abis\":[\"cp312\",\"abi3\"],\"none\":[]}", "json_kstrs");
		strv_free(&l);
	}
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

static void
counttick(unsigned long lines, void *arg)
{
	*(unsigned long *)arg = lines;
}

/* proc_tofd: a log, a folder, an environment, a group the caught signals reach */
static void
test_tofd(const char *dir)
{
	char *lp = xasprintf("%s/tofd.log", dir), *env[] = {"X=from envp", NULL};
	char *pw[] = {"sh", "-c", "pwd; echo \"$X\"; echo two >&2; exit 4", NULL};
	char *nf[] = {"/nonexistent/prog", NULL};
	/* the child signals this process, which sends it on to the child's group: the
	   shell and its sleep both end, long before the 30 seconds */
	char *sg[] = {"sh", "-c", "sleep 30 & kill -TERM $PPID; wait; echo survived", NULL};
	unsigned long lines = 0;
	struct procopt o = {env, dir, 0, counttick, &lines, 0};
	struct procres r;
	struct buf b = {0};
	char *want;
	int fd;

	fd = open(lp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK_INT(proc_tofd(pw, fd, &o, &r), 0, "proc_tofd runs sh");
	CHECK(r.status == 4 && !r.sig && !r.notfound, "proc_tofd: the exit status");
	CHECK_INT(lines, 3, "proc_tofd: tick counts the lines");
	readfile(lp, &b, 1 << 16);
	want = xasprintf("%s\nfrom envp\ntwo\n", dir);
	CHECK_STR(b.s, want, "proc_tofd: cwd, envp, stdout and stderr into the log");
	free(want);
	CHECK_INT(proc_tofd(nf, fd, NULL, &r), 0, "proc_tofd: a missing program still ran a child");
	CHECK(r.notfound && r.err == ENOENT && r.status == 127, "proc_tofd: a missing program gives 127");
	o.cwd = "/nonexistent";
	o.tick = NULL;
	CHECK(proc_tofd(pw, fd, &o, &r) == 0 && r.notfound && r.status == 127, "proc_tofd: a folder not entered gives 127");
	readfile(lp, &b, 1 << 16);
	CHECK(strstr(b.s, "cannot run /nonexistent/prog: No such file") != NULL, "proc_tofd: says which program");
	CHECK(strstr(b.s, "cannot enter /nonexistent: No such file") != NULL, "proc_tofd: says which folder");
	close(fd);

	fd = open(lp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	memset(&o, 0, sizeof o);
	o.group = 1;
	proc_forward();
	CHECK_INT(proc_tofd(sg, fd, &o, &r), 0, "proc_tofd: a group");
	CHECK(proc_gotsig == SIGTERM, "proc_forward: the signal is recorded");
	CHECK(r.sig == SIGTERM && r.status == 128 + SIGTERM, "proc_forward: the signal reached the group");
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	proc_gotsig = 0;
	readfile(lp, &b, 1 << 16);
	CHECK(!b.s || !strstr(b.s, "survived"), "proc_forward: the shell did not go on");
	close(fd);
	unlink(lp);
	buffree(&b);
	free(lp);
}

/* the silence tick's state: a FIFO the child waits on, opened for it on a tick that
   came with no new line */
struct silent {
	const char *fifo;
	unsigned long lines, quiet;
};

static void
silencetick(unsigned long lines, void *arg)
{
	struct silent *q = arg;
	int fd;

	if (lines == q->lines && lines > 0 && !q->quiet++) {
		/* the child said "waiting" and is silent: only a tick on silence frees it */
		if ((fd = open(q->fifo, O_WRONLY | O_CLOEXEC)) >= 0) {
			(void)!write(fd, "go\n", 3);
			close(fd);
		}
	}
	q->lines = lines;
}

/* proc_tofd with tickms: tick is also called while the child is silent (the child
   waits on a FIFO that only such a tick writes: no timing in the test) */
static void
test_tofd_silence(const char *dir)
{
	char *fifo = xasprintf("%s/tick.fifo", dir), *lp = xasprintf("%s/tick.log", dir);
	char *ch[] = {"sh", "-c", "echo waiting; read x <\"$0\"; echo got \"$x\"", fifo, NULL};
	struct silent q = {fifo, 0, 0};
	struct procopt o = {NULL, NULL, 0, silencetick, &q, 10};
	struct procres r;
	int fd;

	mkfifo(fifo, 0600);
	fd = open(lp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(proc_tofd(ch, fd, &o, &r) == 0 && r.status == 0, "proc_tofd tickms: the child ran");
	CHECK_INT(q.quiet > 0, 1, "proc_tofd tickms: a tick came while the child was silent");
	CHECK_INT(q.lines, 2, "proc_tofd tickms: and the child went on");
	close(fd);
	unlink(fifo);
	unlink(lp);
	free(fifo);
	free(lp);
}

static void
nousage(const char *error)
{
	fprintf(stderr, "usage called: %s\n", error);
	exit(3);
}

/* the OS layer: lexical paths, PATH lookup, folders, and opens that neither hang on a
   FIFO nor follow a planted link */
/* a fresh place for one call's message (the last one freed): os_openreg(..., E) */
static char *err_;
#define E (free(err_), err_ = NULL, &err_)

static void
test_os(const char *dir)
{
	char *s, *d = xasprintf("%s/os", dir), *p;
	struct strv l = {0};
	struct buf b = {0};
	char *argv[] = {"t", "--log=a", "--log", "b", "--logx", "--log", NULL};
	int fd, i;

	s = os_abspath("../b/./c//d/", "/x/y");
	CHECK_STR(s, "/x/b/c/d", "os_abspath resolves . and .. lexically");
	free(s);
	s = os_abspath("/../..", "/x");
	CHECK_STR(s, "/", "os_abspath stops at /");
	free(s);
	s = os_findprog("sh", "/nonexistent:/bin:/usr/bin", "/");
	CHECK(s && endswith(s, "/sh"), "os_findprog finds sh");
	free(s);
	errno = 0;
	s = os_findprog("kiln-none", "/bin", "/");
	CHECK(!s && errno == ENOENT, "os_findprog: not found is ENOENT");

	p = xasprintf("%s/a/b/c", d);
	CHECK(os_mkdirs(p, 0755) == 0 && os_isdir(p), "os_mkdirs makes every level");
	CHECK(os_mkdirs(p, 0755) == 0, "os_mkdirs on an existing folder is fine");
	free(p);
	p = xasprintf("%s/a/file", d);
	CHECK(writefile_atomic(p, "x\n", 2, 0644) == 0 && os_isfile(p) && !os_isdir(p), "os_isfile");
	free(p);
	p = xasprintf("%s/a/file/sub", d);
	errno = 0;
	CHECK(os_mkdirs(p, 0755) < 0 && errno == ENOTDIR, "os_mkdirs through a file is ENOTDIR");
	free(p);
	p = xasprintf("%s/a", d);
	CHECK(os_listdir(p, &l) == 0 && l.n == 2 && strcmp(l.v[0], "b") == 0 && strcmp(l.v[1], "file") == 0,
	      "os_listdir lists sorted names without . and ..");
	strv_free(&l);
	free(p);

	/* a FIFO: refused at once, never blocking */
	p = xasprintf("%s/fifo", d);
	CHECK(mkfifo(p, 0644) == 0, "mkfifo");
	CHECK(os_openreg(p, 0, NULL, E) < 0 && strstr(err_, "fifo: is a FIFO, not a regular file"),
	      "os_openreg refuses a FIFO without blocking");
	CHECK(os_readreg(p, 0, &b, 0, E) < 0 && errno == EINVAL, "os_readreg too");
	CHECK(os_createreg(p, O_TRUNC, 0644, E) < 0 && strstr(err_, "is a FIFO"),
	      "os_createreg refuses a FIFO");
	free(p);
	CHECK(os_openreg(d, 0, NULL, E) < 0 && errno == EISDIR, "os_openreg refuses a folder");
	CHECK(os_openreg("/dev/null", 0, NULL, E) < 0 && strstr(err_, "a character device"),
	      "os_openreg refuses a device");

	/* links: a planted symlink is not followed, neither for reading (O_NOFOLLOW) nor writing */
	p = xasprintf("%s/link", d);
	s = xasprintf("%s/a/file", d);
	CHECK(symlink(s, p) == 0, "symlink");
	CHECK(os_readreg(p, 0, &b, 0, E) == 0 && strcmp(b.s, "x\n") == 0 && !err_,
	      "os_readreg follows by default (and leaves *err alone)");
	CHECK(os_openreg(p, O_NOFOLLOW, NULL, E) < 0 && strstr(err_, "is a symbolic link"),
	      "os_openreg with O_NOFOLLOW refuses the link");
	CHECK(os_createreg(p, O_TRUNC, 0644, E) < 0 && strstr(err_, "link: is a symbolic link"),
	      "os_createreg never writes through a symlink");
	CHECK(readfile(s, &b, 0) == 0 && b.len == 2, "and the target is untouched");
	CHECK(os_owndir(p, E) < 0 && strstr(err_, "is a symbolic link"), "os_owndir refuses a symlink");
	free(p);
	p = xasprintf("%s/hard", d);
	CHECK(link(s, p) == 0, "link");
	CHECK(os_createreg(p, O_TRUNC, 0644, E) < 0 && strstr(err_, "hard links"),
	      "os_createreg refuses a hard-linked file");
	CHECK(readfile(s, &b, 0) == 0 && b.len == 2, "and does not truncate it");
	free(p);
	free(s);
	p = xasprintf("%s/state", d);
	CHECK(os_owndir(p, E) == 0 && os_isdir(p), "os_owndir makes the folder");
	s = xasprintf("%s/log", p);
	fd = os_createreg(s, O_TRUNC, 0644, E);
	CHECK(fd >= 0 && write(fd, "ok", 2) == 2, "os_createreg makes a new file");
	if (fd >= 0)
		close(fd);
	free(s);
	free(p);

	/* rm -rf without following links: a link to a folder outside is removed, not emptied */
	p = xasprintf("%s/tree/a/b", d);
	CHECK(os_mkdirs(p, 0755) == 0, "a tree to remove");
	free(p);
	p = xasprintf("%s/tree/a/out", d);
	s = xasprintf("%s/a", d);
	CHECK(symlink(s, p) == 0, "a link out of it");
	free(p);
	p = xasprintf("%s/tree", d);
	CHECK(os_rmtree(p) == 0 && !os_isdir(p), "os_rmtree removes the tree");
	CHECK(os_isdir(s) && os_isdir(p) == 0, "and leaves what its link pointed to");
	CHECK(os_rmtree(p) == 0, "os_rmtree on a missing path is fine");
	free(p);
	free(s);

	/* options */
	i = 1;
	CHECK_STR(opt_val(6, argv, &i, "--log", nousage), "a", "opt_val --opt=VALUE");
	i = 2;
	CHECK(strcmp(opt_val(6, argv, &i, "--log", nousage), "b") == 0 && i == 3, "opt_val --opt VALUE advances");
	i = 4;
	CHECK(opt_val(6, argv, &i, "--log", nousage) == NULL, "opt_val: --logx is another option");
	CHECK(opt_isversion("--version") && !opt_isversion("--versions"), "opt_isversion");
	buffree(&b);
	p = xasprintf("rm -rf '%s'", d);
	CHECK(system(p) == 0, "cleanup");
	free(p);
	free(d);
	free(err_);
	err_ = NULL;
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
	test_tofd(dir);
	test_tofd_silence(dir);
	test_os(dir);
	rmdir(dir);
	return TEST_DONE();
}
