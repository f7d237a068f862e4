/* the one ROCm probe (rocmprobe.h): the layouts kiln knows. /opt/rocm (bin/hipcc, lib/,
   amdgcn/bitcode), TheRock's dist (llvm/bin/clang, share/therock), Debian's and Ubuntu's
   /usr (hipcc in bin/; libraries and cmake/hip in lib/<multiarch>; device libraries
   under lib/llvm-N), Fedora's /usr (libraries and cmake/hip in lib64; device libraries in
   lib64/rocm/llvm/lib/clang/N/lib/amdgcn/bitcode: rocm-device-libs in
   major/fedora-rpm-specs rocm-compilersupport.spec since ROCm 6.3, lib/clang/N/amdgcn
   and lib64/amdgcn before) */
#include "rocmprobe.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "opt.h"
#include "os.h"
#include "proc.h"

/* the first path (in glob's sorted order) matching DIR/pattern that holds file (NULL:
   the match itself must exist), fresh, or NULL; dir is escaped for glob */
static char *
firstglob(const char *dir, const char *pattern, const char *file)
{
	struct buf pat = {0};
	char *found = NULL, *p;
	glob_t g;
	size_t i;

	for (; *dir; dir++) {
		if (strchr("*?[\\", *dir))
			bufputc(&pat, '\\');
		bufputc(&pat, *dir);
	}
	bufprintf(&pat, "/%s", pattern);
	if (glob(pat.s, 0, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc && !found; i++) {
			p = file ? xasprintf("%s/%s", g.gl_pathv[i], file) : NULL;
			if (file ? os_isfile(p) : 1)
				found = xstrdup(g.gl_pathv[i]);
			free(p);
		}
		globfree(&g);
	}
	buffree(&pat);
	return found;
}

/* the device libraries' folder: the layouts above, in configure's order */
static char *
devlibdir(const char *dir)
{
	static const char *const at[] = {
		"amdgcn/bitcode", "llvm/amdgcn/bitcode", "lib/llvm-*/lib/clang/*/amdgcn/bitcode",
		"llvm/lib/clang/*/lib/amdgcn/bitcode", "lib64/rocm/llvm/lib/clang/*/lib/amdgcn/bitcode",
		"lib64/clang/*/amdgcn/bitcode", "lib/clang/*/amdgcn/bitcode", "lib64/amdgcn/bitcode",
	};
	char *d = NULL;
	size_t i;

	for (i = 0; i < sizeof at / sizeof at[0] && !d; i++)
		d = firstglob(dir, at[i], "ockl.bc");
	return d;
}

/* the device libraries in the resource folder of the compiler cc (cc -print-resource-dir:
   amdgcn/bitcode, or lib/amdgcn/bitcode as newer LLVM has it), fresh, or NULL */
static char *
resdevlib(const char *cc)
{
	char *av[] = {(char *)cc, "-print-resource-dir", NULL}, *d = NULL;
	struct buf out = {0}, err = {0};
	struct procres res;

	if (proc_capture(av, NULL, &out, &err, 1 << 16, 60000, &res) == 0 && res.status == 0) {
		bufrtrim(&out, " \t\r\n");
		if (out.len && !(d = firstglob(out.s, "amdgcn/bitcode", "ockl.bc")))
			d = firstglob(out.s, "lib/amdgcn/bitcode", "ockl.bc");
	}
	buffree(&out);
	buffree(&err);
	return d;
}

/* the HIP runtime's and HIP CMake config's folders: lib/<multiarch>, lib64, lib */
static void
libdirs(const char *dir, struct rocmprobe *r)
{
	static const char *const at[] = {"lib/*-linux-gnu", "lib64", "lib"};
	char *d;
	size_t i;

	for (i = 0; i < sizeof at / sizeof at[0]; i++) {
		if (!r->cmakedir && (d = firstglob(dir, at[i], "cmake/hip/hip-config.cmake"))) {
			r->cmakedir = xasprintf("%s/cmake/hip", d);
			free(d);
		}
		if (!r->libdir && (d = firstglob(dir, at[i], NULL))) {
			char *rt = firstglob(d, "libamdhip64.so*", NULL);

			if (rt)
				r->libdir = xstrdup(d);
			free(rt);
			free(d);
		}
	}
}

/* the first value of a line "...PREFIX VALUE\"..." of the file at path, fresh, or NULL */
static char *
quotedafter(const char *path, const char *prefix)
{
	struct buf t = {0};
	char *v = NULL, *p, *e;

	if (readfile(path, &t, 1 << 20) == 0 && t.s && (p = strstr(t.s, prefix))) {
		p += strlen(prefix);
		p += strspn(p, " ");
		if (*p == '"' && (e = strchr(p + 1, '"')))
			v = xstrndup(p + 1, (size_t)(e - p - 1));
	}
	buffree(&t);
	return v;
}

/* the version: .info/version, TheRock's manifest (rocm_version), HIP's CMake version */
static char *
rocmver(const char *dir, const struct rocmprobe *r)
{
	struct buf t = {0};
	char *p, *v = NULL;

	p = xasprintf("%s/.info/version", dir);
	if (readfile(p, &t, 4096) == 0 && t.len) {
		bufrtrim(&t, " \t\r\n");
		v = t.len ? bufdetach(&t) : NULL;
	}
	free(p);
	buffree(&t);
	p = xasprintf("%s/share/therock/therock_manifest.json", dir);
	if (!v && !(v = quotedafter(p, "\"rocm_version\":")))
		v = quotedafter(p, "\"rocm-version\":");
	free(p);
	if (!v && r->cmakedir) {
		p = xasprintf("%s/hip-config-version.cmake", r->cmakedir);
		v = quotedafter(p, "set(PACKAGE_VERSION");
		free(p);
	}
	return v;
}

int
rocm_probe(const char *dir, struct rocmprobe *r)
{
	char *p;

	memset(r, 0, sizeof *r);
	r->hipcc = xasprintf("%s/bin/hipcc", dir);
	r->clang = xasprintf("%s/llvm/bin/clang", dir);
	if (access(r->hipcc, X_OK) < 0)
		free(r->hipcc), r->hipcc = NULL;
	if (access(r->clang, X_OK) < 0)
		free(r->clang), r->clang = NULL;
	r->found = r->hipcc || r->clang;
	libdirs(dir, r);
	r->devlib = devlibdir(dir);
	r->version = rocmver(dir, r);
	p = xasprintf("%s/share/therock/therock_manifest.json", dir);
	r->layout = r->libdir && strstr(r->libdir, "-linux-gnu") ? "Debian's and Ubuntu's layout"
	            : r->libdir && endswith(r->libdir, "/lib64") ? "Fedora's layout (lib64)"
	            : os_isfile(p) ? "TheRock's layout" : "/opt/rocm's layout";
	free(p);
	return r->found ? 0 : -1;
}

char *
rocm_ccdevlib(const char *dir, const struct rocmprobe *r, const char *cc)
{
	char *d = xasprintf("%s/amdgcn/bitcode", dir), *p = xasprintf("%s/ockl.bc", d);

	if (!os_isfile(p)) {
		free(d);
		d = NULL;
		if (cc || r->clang)
			d = resdevlib(cc ? cc : r->clang);
		if (!d && r->devlib)
			d = xstrdup(r->devlib);
	}
	free(p);
	return d;
}

void
rocm_describe(const char *dir, const struct rocmprobe *r, struct buf *b)
{
	const char *kind = !strcmp(dir, "/usr") || !strcmp(dir, "/usr/") ? "a distribution's ROCm under /usr" : "ROCm";

	bufprintf(b, "%s %s, %s", kind, r->version ? r->version : "(version unknown)", r->layout);
	if (r->libdir && strstr(r->libdir, "-linux-gnu"))
		bufprintf(b, " (lib/%s)", strrchr(r->libdir, '/') + 1);
	bufprintf(b, ": hipcc %s, HIP runtime in %s, HIP CMake config %s, device libraries %s",
	          r->hipcc ? r->hipcc : "none", r->libdir ? r->libdir : "none",
	          r->cmakedir ? r->cmakedir : "none", r->devlib ? r->devlib : "none");
}

void
rocm_probefree(struct rocmprobe *r)
{
	free(r->hipcc);
	free(r->clang);
	free(r->libdir);
	free(r->cmakedir);
	free(r->devlib);
	free(r->version);
	memset(r, 0, sizeof *r);
}

static void
usage(const char *error)
{
	opt_usage(error, "usage: kiln-stage rocm-probe [--json | --get=layout|version|hipcc|clang|libdir|cmakedir|devlib]\n"
	                 "                             [--clang=PATH] DIR\n");
}

/* the probe's field called name, or usage */
static const char *
probefield(const struct rocmprobe *r, const char *name)
{
	const struct { const char *name; const char *v; } f[] = {
		{"layout", r->layout}, {"version", r->version}, {"hipcc", r->hipcc}, {"clang", r->clang},
		{"libdir", r->libdir}, {"cmakedir", r->cmakedir}, {"devlib", r->devlib},
	};
	size_t i;

	for (i = 0; i < sizeof f / sizeof f[0]; i++)
		if (!strcmp(f[i].name, name))
			return f[i].v ? f[i].v : "";
	usage(xasprintf("rocm-probe: --get=%s: not one of layout, version, hipcc, clang, libdir, cmakedir, devlib", name));
	return NULL;
}

/* the probe as JSON on stdout */
static void
probejson(const char *dir, const struct rocmprobe *r)
{
	struct buf b = {0};
	struct json j;

	json_init(&j, &b);
	json_obj(&j);
	json_kstr(&j, "dir", dir);
	json_kbool(&j, "rocm", r->found);
	json_kstr(&j, "layout", r->layout);
	json_kstr(&j, "version", r->version);
	json_kstr(&j, "hipcc", r->hipcc);
	json_kstr(&j, "clang", r->clang);
	json_kstr(&j, "libdir", r->libdir);
	json_kstr(&j, "cmakedir", r->cmakedir);
	json_kstr(&j, "devlib", r->devlib);
	json_end(&j);
	bufputc(&b, '\n');
	fputs(b.s, stdout);
	buffree(&b);
}

/* kiln-stage rocm-probe DIR: the probe in one line (exit 0), or why DIR is no ROCm (exit
   1); --json: every field; --get=NAME: one field's value (exit 1 when it has none);
   --clang=PATH: devlib is what that HIP compiler compiles against (rocm_ccdevlib) */
int
rocmprobe_main(int argc, char **argv)
{
	const char *get = NULL, *dir = NULL, *cc = NULL, *v;
	char *d;
	struct rocmprobe r;
	struct buf b = {0};
	int json = 0, i, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			usage(NULL);
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else if ((v = opt_val(argc, argv, &i, "--get", usage)))
			get = v;
		else if ((v = opt_val(argc, argv, &i, "--clang", usage)))
			cc = v;
		else if (argv[i][0] == '-' || dir)
			usage(xasprintf("rocm-probe: unexpected argument '%s'", argv[i]));
		else
			dir = argv[i];
	}
	if (!dir)
		usage("rocm-probe: no DIR");
	rc = rocm_probe(dir, &r) < 0 ? EXIT_PROBLEM : EXIT_OK;
	if (cc) {
		d = rocm_ccdevlib(dir, &r, cc);
		free(r.devlib);
		r.devlib = d;
	}
	if (json) {
		probejson(dir, &r);
	} else if (get) {
		v = probefield(&r, get);
		if (*v)
			printf("%s\n", v);
		rc = *v ? EXIT_OK : EXIT_PROBLEM;
	} else if (rc == EXIT_OK) {
		rocm_describe(dir, &r, &b);
		printf("%s\n", b.s);
	} else {
		warn("%s: not a ROCm of any known layout: it has neither bin/hipcc (/opt/rocm; Debian's, "
		     "Ubuntu's or Fedora's /usr with the hipcc package) nor llvm/bin/clang (TheRock's "
		     "dist, rocm-sdk path --root)", dir);
	}
	buffree(&b);
	rocm_probefree(&r);
	return rc;
}
