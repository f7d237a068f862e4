/* unit tests of what progress and the failure summary read from a log: the inner
   build's reports (ninja's and CMake's [N/M], CMake Makefiles' [ NN%], setuptools'
   extensions, pip's phases) and the kinds of error lines, modelled on real output */
#include <stdlib.h>
#include <string.h>

#include "errscan.h"
#include "progress.h"
#include "test.h"
#include "util.h"

/* parse one line into in; the formatted report (fresh) */
static char *
fmt(struct inner *in, const char *line, int *said)
{
	struct buf b = {0};

	*said = inner_parse(in, line, strlen(line));
	inner_format(in, &b);
	return bufdetach(&b);
}

static void
inner(void)
{
	struct inner in = {0};
	char *s;
	int said;

	s = fmt(&in, "nothing to see", &said);
	CHECK_STR(s, "running", "no report yet: running");
	CHECK_INT(said, 0, "a plain line says nothing");
	free(s);
	s = fmt(&in, "[1834/7012] Building CXX object caffe2/CMakeFiles/torch_cpu.dir/x.cpp.o", &said);
	CHECK_STR(s, "1834/7012 compiled", "ninja's [N/M]");
	free(s);
	s = fmt(&in, "\033[1m[12/40] \033[0mcc -c a.c", &said);
	CHECK_STR(s, "12/40 compiled", "... after a colour");
	free(s);
	s = fmt(&in, "[3/40] one\r[4/40] two", &said);
	CHECK_STR(s, "4/40 compiled", "... the last of a line redrawn with \\r");
	free(s);
	s = fmt(&in, "[41/40] too many", &said);
	CHECK_STR(s, "4/40 compiled", "N over M is not a count");
	free(s);
	s = fmt(&in, "[ 45%] Building C object foo.o", &said);
	CHECK_STR(s, "45%", "CMake Makefiles' percentage");
	free(s);
	s = fmt(&in, "building 'torch._C' extension", &said);
	CHECK_STR(s, "extension 1 (torch._C)", "setuptools' extension");
	free(s);
	s = fmt(&in, "building 'torchvision._C' extension", &said);
	CHECK_STR(s, "extension 2 (torchvision._C)", "... counted");
	free(s);
	s = fmt(&in, "  Building wheel for torch (pyproject.toml): started", &said);
	CHECK_STR(s, "Building wheel for torch (pyproject.toml): started", "pip's phase");
	free(s);
	s = fmt(&in, "running bdist_wheel\033]0;title\007", &said);
	CHECK(strchr(s, '\033') == NULL && strchr(s, '\007') == NULL, "a phase holds no escapes: '%s'", s);
	free(s);
}

static void
kinds(void)
{
	static const struct { const char *line, *kind; } t[] = {
		{"aten/src/ATen/foo.cpp:12:5: error: 'x' was not declared in this scope", "compiler"},
		{"csrc/a.c:1:10: fatal error: missing.h: No such file or directory", "compiler"},
		{"kernel.cu(12): error: identifier \"y\" is undefined", "compiler"},
		{"error: invalid value 'gfx9999' in '--offload-arch=gfx9999'", "compiler"},
		{"CMake Error at cmake/Dependencies.cmake:1234 (message):", "CMake"},
		{"Traceback (most recent call last):", "Python"},
		{"/usr/bin/ld: a.o: in function `main': a.c:(.text+0x5): undefined reference to `nothere'", "linker"},
		{"error: subprocess-exited-with-error", NULL},
		{"error: command '/usr/bin/gcc' failed with exit code 1", NULL},
		{"cc -Werror=return-type -c a.c", NULL},
		{"ninja: build stopped: subcommand failed.", NULL},
		{"warning: unused variable 'error'", NULL},
	};
	size_t i;

	for (i = 0; i < sizeof t / sizeof *t; i++)
		CHECK_STR(errkind(t[i].line, strlen(t[i].line)), t[i].kind, "errkind: %.40s", t[i].line);
}

/* safeadd on hostile text: escape sequences in their 7-bit, raw 8-bit and UTF-8 C1
   forms dropped whole, other controls one '?', UTF-8 kept, never cut inside a character */
static void
safe(void)
{
	static const struct {
		const char *in, *want, *what;
		size_t max;
	} t[] = {
		{"a\033]0;pwned\007b", "ab", "an OSC title ending in BEL", 100},
		{"a\033]2;pwned\033\\b", "ab", "an OSC title ending in ESC \\", 100},
		{"a\033]8;;http://evil\033\\link\033]8;;\033\\b", "alinkb", "an OSC 8 hyperlink", 100},
		{"a\033]0;never ends", "a", "an OSC without its end: the rest goes", 100},
		{"a\033P+q544e\033\\b", "ab", "a DCS request", 100},
		{"a\033_apc\007b", "ab", "an APC", 100},
		{"a\033cb", "ab", "ESC c (reset the terminal)", 100},
		{"a\033(Bb", "ab", "ESC ( B (a character set)", 100},
		{"a\033", "a", "a lone ESC at the end", 100},
		{"a\xc2\x9b" "2Jb", "ab", "UTF-8 C1 CSI (U+009B)", 100},
		{"a\xc2\x9d" "0;t\xc2\x9c" "b", "ab", "UTF-8 C1 OSC to UTF-8 ST", 100},
		{"a\x9b" "31mb", "ab", "a raw 8-bit CSI", 100},
		{"a\x9d" "0;t\x07" "b", "ab", "a raw 8-bit OSC", 100},
		{"a\xc2\x85" "b\xc2\x8d" "c", "a?b?c", "UTF-8 NEL and RI: one '?' each", 100},
		{"a\x85" "b", "a?b", "a raw NEL", 100},
		{"a\x7f" "b\x08" "c\r" "d", "a?b?c?d", "DEL, BS, CR", 100},
		{"a\xff\xfe" "b", "a??b", "bytes that are not UTF-8", 100},
		{"caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac", "UTF-8 kept", 100},
		{"ab\xe2\x82\xac", "ab...", "a character that does not fit is left out whole", 4},
		{"a\xe2\x80\xa8" "b", "a\xe2\x80\xa8" "b", "U+2028 is no control", 100},
	};
	struct buf b = {0};
	size_t i, k;
	int clean;

	for (i = 0; i < sizeof t / sizeof *t; i++) {
		bufreset(&b);
		safeadd(&b, t[i].in, strlen(t[i].in), t[i].max);
		CHECK_STR(b.s ? b.s : "", t[i].want, "safeadd: %s", t[i].what);
		for (k = 0, clean = 1; k < b.len; k++)
			if ((unsigned char)b.s[k] < 0x20 || b.s[k] == 0x7f ||
			    ((unsigned char)b.s[k] == 0xc2 && (unsigned char)b.s[k + 1] < 0xa0))
				clean = 0;
		CHECK(clean, "safeadd: %s: no control byte out", t[i].what);
	}
	buffree(&b);
}

int
main(void)
{
	struct buf b = {0};

	inner();
	kinds();
	safe();
	safeadd(&b, "a\033[31mred\033[0m\tb\x01", 16, 100);
	CHECK_STR(b.s, "ared b?", "safeadd drops colours, turns tabs and controls");
	bufreset(&b);
	safeadd(&b, "abcdef", 6, 3);
	CHECK_STR(b.s, "abc...", "safeadd cuts a long line");
	buffree(&b);
	return TEST_DONE();
}
