/* libFuzzer target: the build requirements of a source tree as kiln-stage reqs reads
   them (reqs.c's reqs_collect: pyproject.toml's [build-system], requirement files with
   their -r includes) and tree_backend. The input is split at each 0xff byte into
   pyproject.toml, requirements-build.txt, requirements/build/rocm.txt,
   requirements/common.txt and requirements.txt (missing parts: no such file). Whatever
   the bytes, a requirement that comes out is one line of printable text (pip cannot read
   a second line into it) and a message is one line without a control byte. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/fuzzfile.h"
#include "os.h"
#include "reqs.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

static const char *const files[] = {
	"pyproject.toml", "requirements-build.txt", "requirements/build/rocm.txt",
	"requirements/common.txt", "requirements.txt",
};

/* text a terminal or pip could take for a line break or control: C0 (tab with tabok
   aside), DEL, UTF-8's C1, U+2028, U+2029 */
static int
controls(const char *s, int tabok)
{
	const unsigned char *u = (const unsigned char *)s;

	for (; *u; u++) {
		if ((*u < 0x20 && !(tabok && *u == '\t')) || *u == 0x7f)
			return 1;
		if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f)
			return 1;
		if (u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
			return 1;
	}
	return 0;
}

/* write the parts of the input into the tree dir; the files of parts it lacks go */
static void
tree(const char *dir, const uint8_t *p, size_t n)
{
	const uint8_t *e = p + n, *cut;
	char *path;
	size_t i;

	for (i = 0; i < sizeof files / sizeof *files; i++) {
		path = xasprintf("%s/%s", dir, files[i]);
		unlink(path);
		free(path);
	}
	for (i = 0; i < sizeof files / sizeof *files && p <= e; i++) {
		if (!(cut = memchr(p, 0xff, (size_t)(e - p))))
			cut = e;
		fuzz_put(dir, files[i], p, (size_t)(cut - p));
		p = cut + 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	const char *dir = fuzz_dir("reqs");
	struct strv ex = {0};
	struct reqopts o = {"rocm", 1, &ex, 1};
	struct reqset rs;
	char *err = NULL, *backend = NULL, *how, *sub;
	size_t i;

	sub = xasprintf("%s/requirements/build", dir);
	os_mkdirs(sub, 0755);
	free(sub);
	strv_add(&ex, "torch", 0);
	tree(dir, p, n);
	if (reqs_collect(dir, &o, &rs, &err) < 0) {
		if (!err || controls(err, 0))
			__builtin_trap();
	} else {
		for (i = 0; i < rs.n; i++)
			if (controls(rs.v[i].spec, 0) || !*rs.v[i].name)
				__builtin_trap();
		for (i = 0; i < rs.skipped.n; i++)
			if (controls(rs.skipped.v[i], 1))
				__builtin_trap();
	}
	reqs_free(&rs);
	free(err);
	err = NULL;
	how = tree_backend(dir, &backend, &err);
	if (!how && (!err || controls(err, 0)))
		__builtin_trap();
	free(how);
	free(backend);
	free(err);
	strv_free(&ex);
	return 0;
}
