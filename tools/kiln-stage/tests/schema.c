/* unit tests of the stack's schema: names, pin keys and their values, pin files,
   the arch table, ninja escaping, and kv_put read back by kv_parse */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "emit.h"
#include "kv.h"
#include "schema.h"
#include "test.h"
#include "util.h"

static char *
esc(const char *s, int shq)
{
	struct buf b = {0};

	if (shq)
		ninja_shq(&b, s);
	else
		ninja_esc(&b, s);
	return bufdetach(&b);
}

/* write text to a fresh temp file; returns its path */
static char *
tmpfile_with(const char *text)
{
	char *p = xstrdup("/tmp/kiln-schema.XXXXXX");
	int fd = mkstemp(p);

	if (fd < 0 || writeall(fd, text, strlen(text)) < 0)
		exit(2);
	close(fd);
	return p;
}


int
main(void)
{
	struct pins p;
	struct kvfile f;
	struct buf b = {0};
	char *err = NULL, *s, *path;
	const char *vals[] = {"plain", "a b", "q\"uo'te", "$(touch x) `y` $z", "back\\slash", ""};
	size_t i;

	CHECK(isimport("torch") && isimport("torch.utils") && isimport("_x1"), "module names");
	CHECK(!isimport("os;open('x')") && !isimport("a..b") && !isimport("1x") && !isimport(""),
	      "code or junk is no module name");
	CHECK(isdistname("pytorch-triton-rocm") && isdistname("flash_attn") && !isdistname("a b") &&
	      !isdistname("-x") && !isdistname("x;y"), "distribution names");
	CHECK(pinkey_find("URL", 0) && pinkey_find("FAT", 1) && !pinkey_find("EVN", 0) &&
	      !pinkey_find("URL", 1), "pin keys: component and stack tables");
	CHECK(!pinkey_check(KT_COMPS, "torch, triton") && pinkey_check(KT_COMPS, "torch potato"),
	      "component lists");
	{
		/* C_CMAKE_ARGS: an allow-list; nothing that writes outside the build folder */
		static const char *const ok[] = {
			"-DGGML_VULKAN=ON -DGGML_NATIVE=OFF", "-DX:BOOL=ON", "-DCMAKE_BUILD_TYPE=Debug",
			"-UFOO", "-Wno-dev --warn-uninitialized", "--log-level=VERBOSE", "-DA=",
			"-DCMAKE_INSTALL_RPATH=/opt/x/lib", "-DCMAKE_INSTALL_LIBDIR=lib", "-DX=a=b",
			"-DCMAKE_HIP_COMPILER=/usr/lib/llvm-21/bin/clang++", "",
		};
		static const char *const no[] = {
			"--graphviz=/tmp/x.dot", "--graphviz /tmp/x.dot", "--system-information /tmp/x",
			"--profiling-output=/tmp/p --profiling-format=google-trace", "--trace-redirect=/tmp/t",
			"-DCMAKE_INSTALL_PREFIX=/usr", "-DCMAKE_INSTALL_PREFIX:PATH=/usr",
			"-DCMAKE_INSTALL_PREFIX:STRING=", "-DCMAKE_STAGING_PREFIX=/x",
			"-DCMAKE_RUNTIME_OUTPUT_DIRECTORY=/tmp", "-DCMAKE_LIBRARY_OUTPUT_DIRECTORY_RELEASE=/tmp",
			"-DCMAKE_INSTALL_LIBDIR=/usr/lib", "-DCMAKE_EXPORT_PACKAGE_REGISTRY=ON",
			"-S /elsewhere", "-B/x", "-GNinja", "-A x64", "-Tv143", "--install-prefix=/usr",
			"--build .", "--install .", "-P /tmp/x.cmake", "-E rm -rf /", "-N", "-C /tmp/init.cmake",
			"--preset=x", "--toolchain=/tmp/t.cmake", "--help-full /tmp/h", "-DNOEQ",
			"-D=1", "-D NAME=1", "-D$(id)=1", "ON", "-Wno-dev extra",
		};

		for (i = 0; i < sizeof ok / sizeof *ok; i++)
			CHECK(pinkey_check(KT_CMAKEARGS, ok[i]) == NULL, "CMAKE_ARGS allows '%s': %s", ok[i],
			      pinkey_check(KT_CMAKEARGS, ok[i]) ? pinkey_check(KT_CMAKEARGS, ok[i]) : "");
		for (i = 0; i < sizeof no / sizeof *no; i++)
			CHECK(pinkey_check(KT_CMAKEARGS, no[i]) != NULL, "CMAKE_ARGS refuses '%s'", no[i]);
	}
	CHECK(!pinkey_check(KT_ENV, "A=1 B_2=x=y") && pinkey_check(KT_ENV, "A=1 junk"), "ENV words");
	CHECK(!pinkey_check(KT_COMMIT, "abcdef0") && pinkey_check(KT_COMMIT, "12345") &&
	      pinkey_check(KT_COMMIT, "ABCDEF0"), "commits");
	CHECK(comp_find("flash_attn") && !comp_find("flash"), "components");

	CHECK_INT(arch_backend("gfx1151"), BACKEND_GFX, "gfx1151 is AMD");
	CHECK_INT(arch_backend("gfx11-generic"), BACKEND_GFX, "a generic target is AMD");
	CHECK_INT(arch_backend("sm_90a"), BACKEND_CUDA, "sm_90a is CUDA");
	CHECK_INT(arch_backend("sm_x9"), BACKEND_NONE, "sm_x9 is nothing");
	CHECK_INT(arch_backend("cpu"), BACKEND_CPU, "cpu");
	CHECK_INT(arch_backend("gfx801"), BACKEND_NONE, "gfx801 is known (gpucheck) but not built for");
	CHECK_INT(arch_backend("gfx803"), BACKEND_GFX, "gfx803 is built for");
	CHECK_STR(arch_find("gfx1151")->generic, "gfx11-generic", "gfx1151's generic target");
	CHECK(arch_find("gfx90a")->generic == NULL, "gfx90a has no generic target");
	{
		const char *w[] = {"gfx1100", "gfx1151", "gfx1150"};
		CHECK_STR(closest("gfx1115", w, 3, 3), "gfx1151", "did you mean: a transposition");
		CHECK(closest("potato", w, 3, 3) == NULL, "nothing close");
	}

	s = esc("a b:c$d", 0);
	CHECK_STR(s, "a$ b$:c$$d", "ninja escaping");
	free(s);
	s = esc("it's $x", 1);
	CHECK_STR(s, "'it'\\''s$ $$x'", "shell quoting, then ninja escaping");
	free(s);

	/* every value kv_put writes, kv_parse reads back byte for byte */
	for (i = 0; i < sizeof vals / sizeof vals[0]; i++)
		kv_put(&b, "K", vals[i]);
	CHECK_INT(kv_parse(&f, "mem", b.s, b.len, &err), 0, "kv_put's text parses");
	CHECK_INT(f.n, sizeof vals / sizeof vals[0], "one line per value");
	for (i = 0; i < f.n && i < sizeof vals / sizeof vals[0]; i++)
		CHECK_STR(f.v[i].value, vals[i], "value %zu read back", i);
	kv_free(&f);
	buffree(&b);

	/* pin files */
	path = tmpfile_with("torch_URL=https://x\nvision_EVN=\"A=1\"\n");
	CHECK_INT(pins_load(&p, path, &err), -1, "a misspelt key is refused");
	s = xasprintf("%s:2: unknown pin vision_EVN; did you mean vision_ENV?", path);
	CHECK_STR(err, s, "with file:line and the key meant");
	free(s);
	free(err);
	err = NULL;
	pins_free(&p);
	unlink(path);
	free(path);
	path = tmpfile_with("flash_attn_URL=u\nflash_attn_REF=r\nstack_FAT=yes\ntorch_HIPIFY=\n");
	CHECK_INT(pins_load(&p, path, &err), 0, "a good pin file loads");
	CHECK_STR(pins_get(&p, comp_find("flash_attn"), "REF"), "r", "a component with '_' in its name");
	CHECK_STR(pins_get(&p, comp_find("torch"), "HIPIFY"), "", "set but empty overrides the default");
	CHECK_STR(pins_get(&p, comp_find("vision"), "HIPIFY"), "vision", "unset gives the default");
	CHECK_STR(pins_stack(&p, "FAT"), "yes", "stack_ keys");
	CHECK_INT(pins_override(&p, "vision=system", &err), 0, "--pin vision=system");
	CHECK_STR(pins_get(&p, comp_find("vision"), "KIND"), "system", "makes vision a system pin");
	CHECK_INT(pins_override(&p, "visoin=v1", &err), -1, "--pin of an unknown component");
	CHECK_STR(err, "unknown component 'visoin' in --pin; did you mean vision?", "with a suggestion");
	free(err);
	pins_free(&p);
	unlink(path);
	free(path);
	/* image_BASE: the --image-base pin, an image ID or digest */
	path = tmpfile_with("image_BASE=sha256:4af882fd9508a9d4051a6c1bf4b8907b8661ab0bba857fbfb56577ec0c06db11\n");
	CHECK_INT(pins_load(&p, path, &err), 0, "image_BASE loads");
	CHECK_STR(pins_image(&p, "BASE"), "sha256:4af882fd9508a9d4051a6c1bf4b8907b8661ab0bba857fbfb56577ec0c06db11",
	          "image_ keys");
	CHECK_STR(pins_stack(&p, "FAT"), "", "and are not stack_ keys");
	pins_free(&p);
	unlink(path);
	free(path);
	path = tmpfile_with("image_BASE=debian:bookworm\n");
	CHECK_INT(pins_load(&p, path, &err), -1, "a tag is not a pinned base");
	CHECK(err && strstr(err, "not an image ID or digest"), "and says why: %s", err ? err : "");
	free(err);
	err = NULL;
	pins_free(&p);
	unlink(path);
	free(path);
	path = tmpfile_with("image_BSAE=4af882fd9508\n");
	CHECK_INT(pins_load(&p, path, &err), -1, "a misspelt image_ key is refused");
	CHECK(err && strstr(err, "did you mean image_BASE?"), "with the key meant: %s", err ? err : "");
	free(err);
	err = NULL;
	pins_free(&p);
	unlink(path);
	free(path);
	CHECK(pinkey_check(KT_IMAGEID, "4af882fd9508") == NULL, "a short image ID");
	CHECK(pinkey_check(KT_IMAGEID, "sha256:4af882fd9508") != NULL, "a digest is 64 digits");
	CHECK(pinkey_check(KT_IMAGEID, "4AF882FD9508") != NULL, "lowercase hex only");
	path = tmpfile_with("torch_IMPORT=\"os;open('x','w')\"\n");
	CHECK_INT(pins_load(&p, path, &err), -1, "code in IMPORT is refused");
	CHECK(err && strstr(err, "not a Python module name"), "and says why");
	free(err);
	pins_free(&p);
	unlink(path);
	free(path);
	return TEST_DONE();
}
