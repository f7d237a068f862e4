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

int
main(void)
{
	struct buf b = {0};

	inner();
	kinds();
	safeadd(&b, "a\033[31mred\033[0m\tb\x01", 16, 100);
	CHECK_STR(b.s, "ared b?", "safeadd drops colours, turns tabs and controls");
	bufreset(&b);
	safeadd(&b, "abcdef", 6, 3);
	CHECK_STR(b.s, "abc...", "safeadd cuts a long line");
	buffree(&b);
	return TEST_DONE();
}
