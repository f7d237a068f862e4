/* gpucheck env: the environment against the device */
#include "gpucheck.h"
#include "json.h"

#include <errno.h>
#include <glob.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* one finding */
struct finding {
	int problem;        /* 1 problem (exit 1), 0 note */
	char *check, *text;
};

struct findings {
	struct finding *f;
	size_t n, cap;
};

static void
add(struct findings *fs, int problem, const char *check, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
add(struct findings *fs, int problem, const char *check, const char *fmt, ...)
{
	va_list ap;
	struct buf b = {0};
	char tmp[1024];

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	bufputs(&b, tmp);
	fs->f = xgrow(fs->f, &fs->cap, fs->n + 1, sizeof *fs->f);
	fs->f[fs->n].problem = problem;
	fs->f[fs->n].check = xstrdup(check);
	fs->f[fs->n].text = bufdetach(&b);
	fs->n++;
}

/* HSA_OVERRIDE_GFX_VERSION and HSA_OVERRIDE_GFX_VERSION_<N> */
static void
check_overrides(struct findings *fs, const struct gpulist *gl)
{
	char **e, name[64], t[32], rp[64], op[64];
	const char *v;
	size_t k, n;
	const struct arch *rf, *of;

	for (e = environ; *e; e++) {
		if (!startswith(*e, "HSA_OVERRIDE_GFX_VERSION"))
			continue;
		n = strcspn(*e, "=");
		if (!(*e)[n] || n >= sizeof name)
			continue;
		snprintf(name, sizeof name, "%.*s", (int)n, *e);
		v = *e + n + 1;
		if (strcmp(name, "HSA_OVERRIDE_GFX_VERSION") != 0 &&
		    (name[24] != '_' || !name[25] || strspn(name + 25, "0123456789") != strlen(name + 25))) {
			add(fs, 1, "override", "%s is not a variable ROCm reads (HSA_OVERRIDE_GFX_VERSION or HSA_OVERRIDE_GFX_VERSION_<node>)", name);
			continue;
		}
		if (!*v) {
			add(fs, 1, "override", "%s is set but empty: ROCm does not apply it (unset it, or give MAJOR.MINOR.STEPPING such as 11.0.0)", name);
			continue;
		}
		if (parse_override(v, t, sizeof t) < 0) {
			add(fs, 1, "override", "%s='%s' is malformed: ROCm wants MAJOR.MINOR.STEPPING in decimal (11.0.0; 9.0.10 for gfx90a) and does not apply anything else", name, v);
			continue;
		}
		add(fs, 0, "override", "%s=%s makes the runtime load %s code", name, v, t);
		/* against the GPUs it applies to */
		for (k = 0; k < gl->n; k++) {
			const struct gpu *g = &gl->g[k];

			if (strcmp(g->vendor, "amd") != 0 || strcmp(g->ovvar, name) != 0 || !g->real[0])
				continue;
			off_processor(g->real, rp, sizeof rp);
			off_processor(t, op, sizeof op);
			if (strcmp(rp, op) == 0)
				continue;
			rf = arch_proc(rp);
			of = arch_proc(op);
			if (!of)
				add(fs, 1, "override", "%s=%s names %s, which is not an AMD target gpucheck knows; GPU %d is %s",
				    name, v, t, g->index, g->real);
			else if (!rf || strcmp(rf->family, of->family) || rf->wave != of->wave)
				add(fs, 1, "override", "%s=%s runs %s code on GPU %d, a %s: a different ISA family%s; kernels will fault or compute garbage (rebuild with PYTORCH_ROCM_ARCH=%s)",
				    name, v, t, g->index, g->real, rf && rf->wave != of->wave ? " and wave size" : "", rp);
		}
	}
}

/* the groups this process is in, as names */
static int
ingroup(gid_t gid)
{
	gid_t gs[256];
	int n, i;

	if (getegid() == gid)
		return 1;
	n = getgroups(256, gs);
	for (i = 0; i < n; i++)
		if (gs[i] == gid)
			return 1;
	return 0;
}

static void
check_node(struct findings *fs, const char *path)
{
	struct stat st;
	struct group *gr;
	const char *gname;

	if (stat(path, &st) < 0) {
		add(fs, 1, "devices", "%s: %s (is the amdgpu driver loaded?)", path, strerror(errno));
		return;
	}
	if (access(path, R_OK | W_OK) == 0)
		return;
	gr = getgrgid(st.st_gid);
	gname = gr ? gr->gr_name : "?";
	if (!ingroup(st.st_gid))
		add(fs, 1, "devices", "%s is not readable and writable by you: it belongs to group '%s' and you are not in it (sudo usermod -aG %s $USER, then log in again)",
		    path, gname, gname);
	else
		add(fs, 1, "devices", "%s: %s", path, strerror(EACCES));
}

static void
check_devices(struct findings *fs, const struct gpulist *gl)
{
	size_t k;
	int amd = 0;
	glob_t gb;

	for (k = 0; k < gl->n; k++)
		amd |= strcmp(gl->g[k].vendor, "amd") == 0;
	if (!amd)
		return;
	check_node(fs, "/dev/kfd");
	if (glob("/dev/dri/renderD*", 0, NULL, &gb) == 0) {
		for (k = 0; k < gb.gl_pathc; k++)
			check_node(fs, gb.gl_pathv[k]);
		globfree(&gb);
	} else {
		add(fs, 1, "devices", "no /dev/dri/renderD* nodes: the GPU cannot be opened");
	}
}

/* HIP_VISIBLE_DEVICES and friends: hidden devices and indexes that do not exist */
static void
check_visible(struct findings *fs, const struct gpulist *gl)
{
	static const char *vars[] = {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
	                             "GPU_DEVICE_ORDINAL", "CUDA_VISIBLE_DEVICES"};
	size_t i, k, namd = 0, nnv = 0, have, shown;
	const char *v, *p;
	char *end;
	long x;

	for (k = 0; k < gl->n; k++) {
		if (strcmp(gl->g[k].vendor, "amd") == 0)
			namd++;
		else
			nnv++;
	}
	for (i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		if (!(v = getenv(vars[i])))
			continue;
		/* CUDA_VISIBLE_DEVICES also selects AMD GPUs under HIP */
		have = i == 3 && nnv ? nnv : namd;
		if (!*v || strcmp(v, "-1") == 0) {
			add(fs, 1, "visible", "%s='%s' hides every GPU", vars[i], v);
			continue;
		}
		shown = 0;
		for (p = v; *p; p = *end ? end + 1 : end) {
			x = strtol(p, &end, 10);
			if (end == p || (*end && *end != ',')) {
				/* UUIDs (GPU-..., MIG-...) select by id: not judged */
				add(fs, 0, "visible", "%s='%s' selects GPUs by id; gpucheck cannot check ids", vars[i], v);
				shown = (size_t)-1;
				break;
			}
			if (x < 0 || (size_t)x >= have) {
				add(fs, 1, "visible", "%s='%s' names GPU %ld, but there %s only %zu; the runtime stops at the first bad index",
				    vars[i], v, x, have == 1 ? "is" : "are", have);
				shown = (size_t)-1;
				break;
			}
			shown++;
		}
		if (shown != (size_t)-1 && shown < have)
			add(fs, 0, "visible", "%s='%s' shows %zu of %zu GPUs", vars[i], v, shown, have);
	}
}

/* two copies of a ROCm library reachable through LD_LIBRARY_PATH */
static void
check_copies(struct findings *fs)
{
	static const char *libs[] = {"libamdhip64.so", "libamd_smi.so"};
	const char *llp = getenv("LD_LIBRARY_PATH");
	char *dup, *dir, *save = NULL, pat[PATH_MAX], firstdir[PATH_MAX], first[PATH_MAX], firstreal[PATH_MAX], rp[PATH_MAX];
	size_t i, k, found;
	glob_t gb;

	if (!llp || !*llp)
		return;
	for (i = 0; i < sizeof libs / sizeof libs[0]; i++) {
		dup = xstrdup(llp);
		found = 0;
		for (dir = strtok_r(dup, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
			snprintf(pat, sizeof pat, "%s/%s*", dir, libs[i]);
			if (glob(pat, 0, NULL, &gb) != 0)
				continue;
			for (k = 0; k < gb.gl_pathc; k++) {
				if (!realpath(gb.gl_pathv[k], rp))
					continue;
				if (!found) {
					snprintf(first, sizeof first, "%.*s", (int)sizeof first - 1, gb.gl_pathv[k]);
					snprintf(firstdir, sizeof firstdir, "%.*s", (int)sizeof firstdir - 1, dir);
					snprintf(firstreal, sizeof firstreal, "%.*s", (int)sizeof firstreal - 1, rp);
					found = 1;
				} else if (strcmp(rp, firstreal) != 0 && strcmp(firstdir, dir) != 0) {
					add(fs, 1, "copies", "two copies of %s on LD_LIBRARY_PATH: %s and %s; the first wins for every library, so the other ROCm's libraries run against a runtime they were not built with",
					    libs[i], first, gb.gl_pathv[k]);
					found = 2;
					break;
				}
			}
			globfree(&gb);
			if (found == 2)
				break;
		}
		free(dup);
	}
}

int
cmd_env(int argc, char **argv)
{
	int i, json = 0, problems = 0;
	struct gpulist gl = {0};
	struct findings fs = {0};
	struct buf b = {0};
	struct json js;
	size_t k;
	const char *v;

	for (i = 1; i < argc; i++) {
		if (gc_commonopt(argv[i]))
			continue;
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else
			gc_usage("env: unknown option '%s'", argv[i]);
	}
	detect_or_die(&gl);
	if (gl.n == 0)
		add(&fs, 1, "gpu", "no GPU found (no KFD GPU node under %s/class/kfd, no NVIDIA driver)", opt_sysfs);
	check_overrides(&fs, &gl);
	if ((v = getenv("ROC_ENABLE_PRE_VEGA")))
		add(&fs, 0, "pre-vega", "ROC_ENABLE_PRE_VEGA=%s does nothing for HIP or PyTorch: it only ever affected OpenCL and was removed in ROCm 6.0; gfx803 needs libraries that carry gfx803 code (check with gpucheck cover)", v);
	if (!sysfsset)
		check_devices(&fs, &gl);
	check_visible(&fs, &gl);
	check_copies(&fs);
	for (k = 0; k < fs.n; k++)
		problems += fs.f[k].problem;
	if (json) {
		json_init(&js, &b);
		json_obj(&js);
		json_kint(&js, "gpus", (int64_t)gl.n);
		json_kint(&js, "problems", problems);
		json_key(&js, "findings");
		json_arr(&js);
		for (k = 0; k < fs.n; k++) {
			json_obj(&js);
			json_kstr(&js, "level", fs.f[k].problem ? "problem" : "note");
			json_kstr(&js, "check", fs.f[k].check);
			json_kstr(&js, "text", fs.f[k].text);
			json_end(&js);
		}
		json_end(&js);
		json_end(&js);
		printf("%s\n", b.s);
		buffree(&b);
	} else {
		for (k = 0; k < fs.n; k++)
			printf("%s: %s\n", fs.f[k].problem ? "problem" : "note", fs.f[k].text);
		if (!problems)
			printf("ok: %zu GPU%s, no problem in the environment\n", gl.n, gl.n == 1 ? "" : "s");
	}
	for (k = 0; k < fs.n; k++) {
		free(fs.f[k].check);
		free(fs.f[k].text);
	}
	free(fs.f);
	gpulist_free(&gl);
	return problems ? EXIT_PROBLEM : EXIT_OK;
}
