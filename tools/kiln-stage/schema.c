/* the component and pin-key tables: where a component, a pin key or a default is added */
#include "schema.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

/* the stack's components. deps: what a component builds against (their install, or
   their patched source for a source-only component); against: whose release its own
   releases are made for (the pin-fit check of configure) */
const struct component comp_table[] = {
	/* name        deps           dist                   import         hipify    subdir    kind      dflt fat against rule */
	/* torch's requirements.txt is part of its build (its setup imports them) */
	{"torch",      "",            "torch",               "torch",       "torch",  "",       "build",  1,   1,  "", {.runtime = 1}},
	{"vision",     "torch",       "torchvision",         "torchvision", "vision", "",       "build",  1,   0,  "torch", {0}},
	{"audio",      "torch",       "torchaudio",          "torchaudio",  "",       "",       "build",  1,   0,  "torch", {0}},
	/* triton: the package is triton (torch's ROCm builds depend on it by that name since
	   pytorch-triton-rocm was retired); setup.py at the root or in python/, which the steps
	   read from the tree (treesubdir, ninja/steps/lib/tree.sh). It builds offline
	   (TRITON_OFFLINE_BUILD=1, triton-lang/triton setup.py) and stops without LLVM_SYSPATH */
	{"triton",     "",            "triton",              "triton",      "",       "",       "build",  0,   0,  "",
	 {.offline = "LLVM_SYSPATH",
	  .offwhy = "builds offline (TRITON_OFFLINE_BUILD=1) and needs the LLVM its tree pins (cmake/llvm-hash.txt)"}},
	/* AOTriton: a CMake project (aotriton.build), whose prefix torch.wheel gets
	   (AOTRITON_INSTALLED_PREFIX; aotriton.c plans it) */
	{"aotriton",   "",            "",                    "",            "",       "",       "build",  0,   0,  "", {.build = "cmake", .feeds = "torch"}},
	/* AITER (ROCm/aiter): flash-attention's Triton AMD backend lives there since
	   2026-03; built before flash_attn, whose build uses its install (flashaiter) */
	{"aiter",      "torch triton", "amd-aiter",          "aiter",       "",       "",       "build",  0,   0,  "", {0}},
	{"flash_attn", "torch aiter", "flash_attn",          "flash_attn",  "",       "",       "build",  0,   0,  "", {0}},
	/* vllm.check (kiln-stage vllm-check) before its deps: the targets and tools it needs */
	{"vllm",       "torch triton", "vllm",               "vllm",        "",       "",       "build",  0,   0,  "torch", {.check = "vllmcheck"}},
	/* the ROCm SDK: rocm_URL + rocm_SHA256 make it the stages rocm.sdk and rocm.check
	   (kind sdk); without a URL, or rocm_KIND=system, configure's --rocm-path is used */
	{"rocm",       "",            "",                    "",            "",       "",       "sdk",    0,   0,  "", {0}},
	/* ggml (ggml-org/ggml), the tensor library under llama.cpp: a CMake project
	   (ggml_BUILD=cmake by default, comp_defbuild); env/tracks/ggml*.env */
	{"ggml",       "",            "",                    "",            "",       "",       "build",  0,   0,  "", {.build = "cmake"}},
};
const size_t comp_count = sizeof comp_table / sizeof comp_table[0];

/* the keys of a pin file. A new key: add its row here, read it in graph.c */
const struct pinkey pinkey_table[] = {
	{"URL", 0, KT_URL, "git URL (with --mirror=DIR, srcpin fetches DIR/<name>.git)"},
	{"REF", 0, KT_TEXT, "tag, branch or commit"},
	{"SHA", 0, KT_COMMIT, "the commit REF must resolve to"},
	{"COMMIT", 0, KT_COMMIT, "the same, as srcpin lock writes it"},
	{"KIND", 0, KT_KIND, "build, source (src and patch only), wheel or system"},
	{"WHEEL", 0, KT_PATH, "the prebuilt wheel of a KIND=wheel pin"},
	{"DEPS", 0, KT_COMPS, "components it builds against"},
	{"DIST", 0, KT_NAME, "wheel (distribution) name"},
	{"IMPORT", 0, KT_IMPORT, "the module the smoke test imports"},
	{"HIPIFY", 0, KT_NAME, "hipify-wrap project (torch, vision, generic); empty for none"},
	{"HIPIFY_CMD", 0, KT_TEXT, "the command generic hipify runs in the tree"},
	{"SUBDIR", 0, KT_PATH, "where setup.py is, inside the tree"},
	{"BUILD", 0, KT_BUILD, "setup, build, pip or cmake"},
	{"ENV", 0, KT_ENV, "\"K=V K=V\": the build's environment"},
	{"SUBMODULES", 0, KT_YESNO, "no: the src stage leaves the tree's submodules empty (what they hold comes as components)"},
	{"PATCHES", 0, KT_PATH, "patch folder (relative to the pin file); default patches/C"},
	{"SHA256", 0, KT_SHA256, "the sha256 of an SDK tarball (rocm_SHA256)"},
	{"INDEX", 0, KT_URL, "rocm_KIND=wheels: TheRock's package index (a URL or a folder of wheels)"},
	{"CMAKE_ARGS", 0, KT_CMAKEARGS, "C_BUILD=cmake: the configure's own options (\"-DGGML_VULKAN=ON ...\")"},
	{"SUBSET", 0, KT_PATH, "torch: a file of torch's ninja targets and sources (relative to the pin file): torch.configure and torch.subset instead of the wheel"},
	{"CHECK", 0, KT_TEXT, "C_BUILD=cmake: the project's own check, run by C.smoke (\"test-backend-ops -b Vulkan0\")"},
	{"INPUTS", 0, KT_TEXT, "\"NAME=URL#sha256=HEX ...\": tar archives a build would download, fetched by C.inputs; the build gets NAME=their folder"},
	{"ARCHES", 0, KT_TEXT, "aotriton: the GPU targets the pinned release builds (AOTRITON_TARGET_ARCH of its CMakeLists.txt)"},
	{"VERSION", 0, KT_TEXT, "rocm_KIND=wheels: the ROCm release to install (rocm==VERSION)"},
	{"WITH", 1, KT_COMPS, "components a track adds (stack_WITH=triton,vllm)"},
	{"WITHOUT", 1, KT_COMPS, "components a track drops (stack_WITHOUT=audio)"},
	{"FAT", 1, KT_YESNO, "yes: fatwheel bundles torch's library closure (stack.fat)"},
	{"COVER", 1, KT_YESNO, "no: the smoke test skips gpucheck cover"},
	{"BASE", 2, KT_IMAGEID, "image_BASE: the --image-base image's ID or digest (sha256:...)"},
};
const size_t pinkey_count = sizeof pinkey_table / sizeof pinkey_table[0];

const char *
comp_defbuild(const struct component *c)
{
	return c->rule.build ? c->rule.build : "";
}

/* the CMake options C_CMAKE_ARGS may hold besides -DNAME[:TYPE]=VALUE and -UNAME: the
   warning, log and trace switches of cmake(1) (CMake 3.25 to 4.x), none of which reads
   or writes a file. Everything else is refused: -S, -B, -G, -A, -T and --install-prefix
   are the cmake step's; --graphviz=FILE, --system-information FILE,
   --profiling-output=FILE, --trace-redirect=FILE, --help-* FILE write where they are
   told; -P, -E, -N, --build, --install, --workflow, --preset, -C and --toolchain run or
   read what the key does not hold */
static const char *const cmake_switches[] = {
	"-Wdev", "-Wno-dev", "-Werror=dev", "-Wno-error=dev", "-Wdeprecated", "-Wno-deprecated",
	"-Werror=deprecated", "-Wno-error=deprecated", "--warn-uninitialized", "--warn-unused-vars",
	"--no-warn-unused-cli", "--check-system-vars", "--compile-no-warning-as-error",
	"--debug-output", "--debug-find", "--trace", "--trace-expand", "--log-context", "--fresh",
};
static const char *const cmake_valued[] = {
	"--log-level=", "--loglevel=", "--trace-format=", "--trace-source=", "--debug-find-pkg=",
	"--debug-find-var=",
};

/* a -D variable that puts files outside the build folder: the install prefix (kiln's),
   the staging prefix, an output folder, the user's package registry, or an absolute
   install folder (GNUInstallDirs' CMAKE_INSTALL_LIBDIR=/usr/lib installs there whatever
   the prefix); name is n bytes, value what follows '=' */
static int
cmake_outside(const char *name, size_t n, const char *value)
{
	static const char *const no[] = {"CMAKE_INSTALL_PREFIX", "CMAKE_STAGING_PREFIX",
	                                 "CMAKE_EXPORT_PACKAGE_REGISTRY", "CMAKE_Fortran_MODULE_DIRECTORY"};
	char *v = xstrndup(name, n);
	size_t i;
	int r = 0;

	for (i = 0; i < sizeof no / sizeof *no; i++)
		r |= !strcmp(v, no[i]);
	if (startswith(v, "CMAKE_") && strstr(v, "_OUTPUT_DIRECTORY"))
		r = 1;
	if (startswith(v, "CMAKE_INSTALL_") && *value == '/' && !strstr(v, "RPATH") && !strstr(v, "NAME_DIR"))
		r = 1;
	free(v);
	return r;
}

/* one word of C_CMAKE_ARGS (n bytes at p): NULL when allowed, else why not */
static const char *
cmakeword(const char *p, size_t n)
{
	const char *eq, *colon;
	size_t i, k;

	if (n > 2 && !strncmp(p, "-D", 2)) {
		p += 2, n -= 2;
		if (!(eq = memchr(p, '=', n)))
			return "holds a -D word without '=' (give -DNAME=VALUE or -DNAME:TYPE=VALUE)";
		colon = memchr(p, ':', (size_t)(eq - p));
		k = (size_t)((colon ? colon : eq) - p);
		for (i = 0; i < k; i++)
			if (!isalnumc((unsigned char)p[i]) && !strchr("_.+-", p[i]))
				return "holds a -D word whose NAME is not a CMake variable name";
		if (!k)
			return "holds a -D word without a NAME";
		if (cmake_outside(p, k, eq + 1))
			return "sets the install prefix or a folder outside the build folder, which kiln's "
			       "cmake step owns (CMAKE_INSTALL_PREFIX, an output folder, an absolute install "
			       "folder)";
		return NULL;
	}
	if (n > 2 && !strncmp(p, "-U", 2))
		return NULL;
	for (i = 0; i < sizeof cmake_switches / sizeof *cmake_switches; i++)
		if (strlen(cmake_switches[i]) == n && !strncmp(p, cmake_switches[i], n))
			return NULL;
	for (i = 0; i < sizeof cmake_valued / sizeof *cmake_valued; i++)
		if (n > strlen(cmake_valued[i]) && !strncmp(p, cmake_valued[i], strlen(cmake_valued[i])))
			return NULL;
	if (*p != '-')
		return "is not a list of -DNAME=VALUE words";
	return "holds an option kiln does not allow: C_CMAKE_ARGS takes -DNAME=VALUE, -UNAME and "
	       "CMake's warning, log and trace switches, nothing that names the source, build "
	       "folder, generator or prefix (kiln's cmake step sets them) or writes or reads a file "
	       "(--graphviz=, --system-information, --profiling-output=, -P, -C ...)";
}

/* C_CMAKE_ARGS: words, each an allowed option (cmakeword); NULL, or why not */
static const char *
cmakeargs_check(const char *v)
{
	const char *p, *e, *why;

	for (p = v; *p; p = e) {
		p += strspn(p, " \t\n");
		e = p + strcspn(p, " \t\n");
		if (p == e)
			break;
		if ((why = cmakeword(p, (size_t)(e - p))))
			return why;
	}
	return NULL;
}

const struct component *
comp_find(const char *name)
{
	size_t i;

	for (i = 0; i < comp_count; i++)
		if (strcmp(comp_table[i].name, name) == 0)
			return &comp_table[i];
	return NULL;
}

const struct pinkey *
pinkey_find(const char *key, int stack)
{
	size_t i;

	for (i = 0; i < pinkey_count; i++)
		if (pinkey_table[i].stack == stack && strcmp(pinkey_table[i].key, key) == 0)
			return &pinkey_table[i];
	return NULL;
}

static int
isident(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || !(s[0] == '_' || ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z')))
		return 0;
	for (i = 1; i < n; i++)
		if (!(s[i] == '_' || isalnumc((unsigned char)s[i])))
			return 0;
	return 1;
}

int
isimport(const char *s)
{
	const char *dot;

	for (;;) {
		dot = strchr(s, '.');
		if (!isident(s, dot ? (size_t)(dot - s) : strlen(s)))
			return 0;
		if (!dot)
			return 1;
		s = dot + 1;
	}
}

int
isdistname(const char *s)
{
	const char *p;

	if (!isalnumc((unsigned char)*s))
		return 0;
	for (p = s; *p; p++)
		if (!isalnumc((unsigned char)*p) && !strchr("._-", *p))
			return 0;
	return isalnumc((unsigned char)p[-1]);
}

int
urlcreds(const char *v)
{
	const char *h = strstr(v, "://"), *end;

	if (!h || h != v + strcspn(v, ":/?#"))
		return 0;   /* a path, or a scheme-less name */
	h += 3;
	end = h + strcspn(h, "/?#");
	return memchr(h, '@', (size_t)(end - h)) != NULL;
}

/* KT_COMPS: components kiln knows, separated by spaces or commas; NULL, or why not */
static const char *
comps_check(const char *v)
{
	const char *p, *e;
	char w[64];
	size_t n;

	for (p = v; *p; p = e) {
		p += strspn(p, " ,");
		e = p + strcspn(p, " ,");
		n = (size_t)(e - p);
		if (n == 0)
			break;
		if (n >= sizeof w)
			return "not a component name";
		memcpy(w, p, n);
		w[n] = 0;
		if (!comp_find(w))
			return "names a component kiln does not know";
	}
	return NULL;
}

/* KT_ENV: NAME=VALUE words; NULL, or why not */
static const char *
env_check(const char *v)
{
	const char *p, *e;
	size_t n;

	for (p = v; *p; p = e) {
		p += strspn(p, " \t");
		e = p + strcspn(p, " \t");
		if (p == e)
			break;
		n = strcspn(p, "=");
		if (p + n >= e || !isident(p, n))
			return "is not a list of NAME=VALUE words";
	}
	return NULL;
}

/* KT_IMAGEID: an image ID or digest (sha256:64 hex, or 12 to 64 hex) or ""; NULL, or why
   not */
static const char *
imageid_check(const char *v)
{
	const char *p = startswith(v, "sha256:") ? v + 7 : v;
	size_t n = strlen(p);

	if (!*v || (n >= 12 && n <= 64 && strspn(p, "0123456789abcdef") == n && (p == v || n == 64)))
		return NULL;
	return "is not an image ID or digest (sha256:64 hex digits, or 12 to 64 hex digits)";
}

const char *
pinkey_check(enum keytype type, const char *v)
{
	size_t n;

	switch (type) {
	case KT_TEXT:
		return utf8_badat(v, strlen(v)) == strlen(v) ? NULL :
		       "is not UTF-8 text (build-info.json and the logs are UTF-8)";
	case KT_URL:
		if (utf8_badat(v, strlen(v)) != strlen(v))
			return "is not UTF-8 text (build-info.json and the logs are UTF-8)";
		return urlcreds(v) ? "has credentials in the URL, which would land in build.ninja, "
		       "the key files, the logs and a command line; put them in ~/.netrc (or $NETRC) "
		       "or KILN_FETCH_TOKEN instead" : NULL;
	case KT_PATH:
		return NULL;
	case KT_NAME:
		return !*v || isdistname(v) ? NULL : "not a name (letters, digits, '.', '_', '-')";
	case KT_IMPORT:
		return !*v || isimport(v) ? NULL : "not a Python module name (a dotted identifier)";
	case KT_COMPS:
		return comps_check(v);
	case KT_COMMIT:
		n = strlen(v);
		if (n == 0)
			return NULL;
		if (n < 7 || n > 40 || strspn(v, "0123456789abcdef") != n)
			return "is not a commit (40 hex digits)";
		return NULL;
	case KT_KIND:
		return !*v || !strcmp(v, "build") || !strcmp(v, "source") || !strcmp(v, "wheel") ||
		       !strcmp(v, "system") || !strcmp(v, "sdk") || !strcmp(v, "wheels") ? NULL :
		       "use build, source, wheel or system (rocm: sdk, wheels or system)";
	case KT_SHA256:
		return !*v || (strlen(v) == 64 && strspn(v, "0123456789abcdef") == 64) ? NULL :
		       "is not a sha256 (64 lowercase hex digits)";
	case KT_BUILD:
		return !*v || !strcmp(v, "setup") || !strcmp(v, "build") || !strcmp(v, "pip") ||
		       !strcmp(v, "cmake") ? NULL : "use setup, build, pip or cmake";
	case KT_CMAKEARGS:
		return cmakeargs_check(v);
	case KT_ENV:
		return env_check(v);
	case KT_YESNO:
		return !*v || !strcmp(v, "yes") || !strcmp(v, "no") ? NULL : "use yes or no";
	case KT_IMAGEID:
		return imageid_check(v);
	}
	return NULL;
}
