/* a pinned vLLM tree's own build, read before it compiles: the GPU targets its CMake keeps
   and the tools it needs. Facts from vllm-project/vllm (read with the search tool):
   - CMakeLists.txt: set(HIP_SUPPORTED_ARCHS "gfx906;gfx908;...") and, per CUDA release,
     set(CUDA_SUPPORTED_ARCHS "7.5;8.0;..."); cmake/utils.cmake's override_gpu_arches keeps
     only the PYTORCH_ROCM_ARCH targets IN_LIST the HIP list (the rest are dropped
     without a word unless none is left), and cuda_archs_loose_intersection keeps a CUDA
     target when the list has an arch of the same major version at or below it (8.9 for
     sm_89, 12.0 for sm_121).
   - vLLM >= 0.22 builds a Rust frontend through setuptools-rust (tools/build_rust.py:
     RustBin vllm-rs and RustExtension vllm._rust_tool_parser, optional=True in a plain
     build, so a missing toolchain is skipped and the build still succeeds);
     rust-toolchain.toml names the channel (nightly-2026-03-10); rust/proto/build.rs
     compiles the gRPC protos with protoc.
   - requirements/build/rocm.txt asks for cmake>=3.26.1,<4 (the vllm.deps stage installs
     it from the index). */
#include "vllm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "opt.h"
#include "os.h"
#include "strv.h"
#include "util.h"

/* the words of every set(VAR "a;b;c") in text (quoted or not), appended to l; returns
   how many such lists there are */
static int
cmakelists(const char *text, const char *var, struct strv *l)
{
	char *pat = xasprintf("set(%s", var), *w;
	const char *p, *e, *q;
	int n = 0;

	for (p = text; (p = strstr(p, pat)); p = e) {
		p += strlen(pat);
		if (*p != ' ' && *p != '\t' && *p != '\n') {
			e = p;
			continue;   /* set(HIP_SUPPORTED_ARCHS_X ...): another variable */
		}
		p += strspn(p, " \t\n");
		if (*p == '"')
			e = strchr(++p, '"');
		else
			e = strchr(p, ')');
		if (!e)
			break;
		n++;
		for (q = p; q < e; q += strspn(q, "; \t\n\"")) {
			size_t k = strcspn(q, "; \t\n\")");
			if (q + k > e)
				k = (size_t)(e - q);
			if (!k)
				break;
			w = xstrndup(q, k);
			strv_add(l, w, 1);
			free(w);
			q += k;
		}
	}
	free(pat);
	return n;
}

/* is CUDA target sm_NN[a|f] kept by a list of "M.m" arches: an entry of the same major
   version at or below it (cuda_archs_loose_intersection) */
static int
cudakept(const char *sm, const struct strv *sup)
{
	const char *d = startswith(sm, "sm_") ? sm + 3 : sm;
	size_t nd = strspn(d, "0123456789"), i;
	long major = 0, minor;

	if (nd < 2 || nd > 4)
		return 0;
	for (i = 0; i + 1 < nd; i++)
		major = major * 10 + (d[i] - '0');
	minor = d[nd - 1] - '0';
	for (i = 0; i < sup->n; i++) {
		char *dot;
		long M = strtol(sup->v[i], &dot, 10), m;
		if (*dot != '.')
			continue;
		m = strtol(dot + 1, NULL, 10);
		if (M == major && m <= minor)
			return 1;
	}
	return 0;
}

/* the list joined with sep, fresh */
static char *
joined(const struct strv *l, const char *sep)
{
	struct buf b = {0};
	size_t i;

	for (i = 0; i < l->n; i++)
		bufprintf(&b, "%s%s", i ? sep : "", l->v[i]);
	return b.s ? bufdetach(&b) : xstrdup("");
}

char *
vllm_archcheck(const struct vtree *t, enum backend b, char *const *arch, size_t n)
{
	const char *var = b == BACKEND_GFX ? "HIP_SUPPORTED_ARCHS" : "CUDA_SUPPORTED_ARCHS";
	struct strv sup = {0};
	char *text, *msg = NULL, *l;
	size_t i;

	if (b != BACKEND_GFX && b != BACKEND_CUDA)
		return NULL;
	if (!(text = t->get(t->ctx, "CMakeLists.txt")))
		return xasprintf("%s has no CMakeLists.txt: kiln cannot tell which GPU targets its "
		                 "build keeps", t->name);
	if (!cmakelists(text, var, &sup) || !sup.n) {
		free(text);
		return xasprintf("%s: CMakeLists.txt has no set(%s \"...\") list kiln recognises, so "
		                 "it cannot tell which --arch targets the build keeps (vLLM's CMake "
		                 "drops the others without a word); pin a vLLM whose tree has one",
		                 t->name, var);
	}
	free(text);
	for (i = 0; i < n && !msg; i++) {
		int kept = b == BACKEND_GFX ? strv_has(&sup, arch[i]) : cudakept(arch[i], &sup);
		if (kept)
			continue;
		l = joined(&sup, " ");
		msg = xasprintf("%s's CMakeLists.txt drops %s: %s is %s%s, so its wheel would hold "
		                "no %s kernels; drop %s from --arch or build without vllm (--without=vllm)",
		                t->name, arch[i], var, l, b == BACKEND_CUDA ? " (every CUDA release's list)" : "",
		                arch[i], arch[i]);
		free(l);
	}
	strv_free(&sup);
	return msg;
}

/* the value of key = "..." in a TOML text (rust-toolchain.toml's channel), fresh, or NULL */
static char *
tomlstr(const char *text, const char *key)
{
	const char *p = text, *q, *e;
	size_t k = strlen(key);

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		p += strspn(p, " \t");
		if (strncmp(p, key, k))
			continue;
		q = p + k + strspn(p + k, " \t");
		if (*q != '=')
			continue;
		q += 1 + strspn(q + 1, " \t");
		if (*q != '"' || !(e = strchr(q + 1, '"')))
			continue;
		return xstrndup(q + 1, (size_t)(e - q - 1));
	}
	return NULL;
}

/* the cmake requirement line of requirements/build/FLAVOUR.txt, fresh, or NULL */
static char *
cmakereq(const struct vtree *t, const char *flavour, char **file)
{
	char *text, *r = NULL;
	const char *p;

	*file = xasprintf("requirements/build/%s.txt", flavour && *flavour ? flavour : "cpu");
	if (!(text = t->get(t->ctx, *file)))
		return NULL;
	for (p = text; p && *p && !r; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "cmake", 5) && strchr("<>=!~ \t", p[5]))
			r = xstrndup(p, strcspn(p, "#\n"));
	free(text);
	if (r)
		strrtrim(r, " \t");
	return r;
}

/* the major version of the cmake on path (0: none, or no version line) */
static int
cmakemajor(const char *path)
{
	char *prog = os_findprog("cmake", path, NULL), *out = NULL;
	char *av[] = {prog, "--version", NULL};
	int v = 0;

	if (prog && capture(av, &out) == 0 && startswith(out, "cmake version "))
		v = atoi(out + 14);
	free(out);
	free(prog);
	return v;
}

/* does the tree build vLLM's Rust frontend (setuptools-rust) */
static int
hasrust(const struct vtree *t)
{
	char *s = t->get(t->ctx, "tools/build_rust.py");
	int r = s != NULL;

	if (!r && (s = t->get(t->ctx, "setup.py")))
		r = strstr(s, "setuptools_rust") != NULL;
	free(s);
	return r;
}

/* the Rust part of the tool check: what it needs into need, what PATH lacks into lack */
static void
rustcheck(const struct vtree *t, const char *path, struct buf *need, struct strv *lack)
{
	char *tc = t->get(t->ctx, "rust-toolchain.toml"), *ch = tc ? tomlstr(tc, "channel") : NULL;
	char *rustc = os_findprog("rustc", path, NULL), *cargo = os_findprog("cargo", path, NULL);
	char *rup = os_findprog("rustup", path, NULL), *pb = t->get(t->ctx, "rust/proto/build.rs"), *out = NULL;

	bufprintf(need, "rustc and cargo%s%s%s (setuptools-rust builds its Rust frontend, "
	          "tools/build_rust.py)", ch ? " (toolchain " : "", ch ? ch : "",
	          ch ? ", rust-toolchain.toml)" : "");
	if (!rustc)
		strv_add(lack, "rustc", 1);
	else if (ch && startswith(ch, "nightly") && !rup) {
		char *av[] = {rustc, "--version", NULL};
		if (capture(av, &out) != 0 || !strstr(out, "nightly")) {
			char *w = xasprintf("a %s rustc (%s is %s)", ch, rustc, *out ? out : "not runnable");
			strv_add(lack, w, 1);
			free(w);
		}
	}
	if (!cargo)
		strv_add(lack, "cargo", 1);
	if (pb) {
		char *protoc = os_findprog("protoc", path, NULL);
		bufputs(need, ", protoc (rust/proto/build.rs)");
		if (!protoc)
			strv_add(lack, "protoc", 1);
		free(protoc);
	}
	free(out);
	free(pb);
	free(rup);
	free(rustc);
	free(cargo);
	free(ch);
	free(tc);
}

char *
vllm_toolcheck(const struct vtree *t, const char *flavour, const char *path, char **needs)
{
	struct buf need = {0};
	struct strv lack = {0};
	char *file, *cm = cmakereq(t, flavour, &file), *l, *msg = NULL;
	int rust = hasrust(t);

	if (rust)
		rustcheck(t, path, &need, &lack);
	if (cm && strstr(cm, "<4")) {
		bufprintf(&need, "%sa cmake below 4 (%s: %s; vllm.deps installs it)", need.len ? ", " : "", file, cm);
	} else if (!cm && cmakemajor(path) >= 4) {
		bufprintf(&need, "%sa cmake below 4 (CMakeLists.txt's projects predate CMake 4)", need.len ? ", " : "");
		strv_add(&lack, "a cmake below 4 (PATH's cmake is 4 or later)", 1);
	}
	*needs = need.s ? bufdetach(&need) : xstrdup("nothing beyond its build requirements");
	if (lack.n) {
		l = joined(&lack, ", ");
		msg = xasprintf("%s needs %s; PATH lacks %s%s", t->name, *needs, l,
		                rust ? " (without them its build skips the Rust frontend and still "
		                "succeeds): install them (Debian: apt-get install rustc cargo "
		                "protobuf-compiler; a nightly through rustup), or --without=vllm" : "");
		free(l);
	}
	free(cm);
	free(file);
	strv_free(&lack);
	buffree(&need);
	return msg;
}

/* the reader of a folder: the file's text, or NULL */
static char *
dirget(void *ctx, const char *path)
{
	struct buf b = {0};
	char *p = xasprintf("%s/%s", (const char *)ctx, path);
	int r = os_isfile(p) ? readfile(p, &b, 16 << 20) : -1;

	free(p);
	if (r < 0) {
		buffree(&b);
		return NULL;
	}
	return b.s ? bufdetach(&b) : xstrdup("");
}

static void
checkusage(const char *error)
{
	opt_usage(error, "usage: kiln-stage vllm-check [--arch=LIST] [--flavour=rocm|cuda|cpu] "
	                 "[--name=TEXT] TREE\n");
}

/* kiln-stage vllm-check [--arch=LIST] [--flavour=F] [--name=TEXT] TREE: the vllm.check
   stage's work; exit 1 with one line when --arch holds a target the tree drops or PATH
   lacks a tool its build needs */
int
vllmcheck_main(int argc, char **argv)
{
	const char *tree = NULL, *flavour = "cpu", *name = "vLLM", *archarg = "";
	char **arch = NULL, *cp, *tok, *sp, *msg, *needs;
	size_t n = 0;
	enum backend b = BACKEND_CPU;
	struct vtree t;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help"))
			checkusage(NULL);
		else if (startswith(argv[a], "--arch="))
			archarg = argv[a] + 7;
		else if (startswith(argv[a], "--flavour="))
			flavour = argv[a] + 10;
		else if (startswith(argv[a], "--name="))
			name = argv[a] + 7;
		else if (argv[a][0] == '-' || tree)
			checkusage(xasprintf("vllm-check: unexpected argument '%s'", argv[a]));
		else
			tree = argv[a];
	}
	if (!tree)
		checkusage("vllm-check: give the vLLM tree");
	if (!os_isdir(tree))
		dien(EXIT_USAGE, "%s: not a folder", tree);
	cp = xstrdup(archarg);
	/* --arch's own spelling: gfx1100,gfx1151 */
	for (tok = strtok_r(cp, ",", &sp); tok; tok = strtok_r(NULL, ",", &sp)) {
		arch = xrealloc(arch, (n + 1) * sizeof *arch);
		arch[n++] = tok;
		if (n == 1)
			b = arch_backend(tok);
	}
	t.get = dirget;
	t.ctx = (void *)tree;
	t.name = name;
	if ((msg = vllm_archcheck(&t, b, arch, n)))
		dien(EXIT_PROBLEM, "%s", msg);
	if ((msg = vllm_toolcheck(&t, flavour, NULL, &needs)))
		dien(EXIT_PROBLEM, "%s", msg);
	printf("%s keeps every --arch target (%s); its build needs %s\n", name,
	       n ? archarg : "none given", needs);
	free(needs);
	free(arch);
	free(cp);
	return EXIT_OK;
}
