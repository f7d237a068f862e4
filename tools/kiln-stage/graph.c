/* the stack graph: one record per stage, from which its ninja edge (parents as its
   inputs, once), the tools its step runs, its key file and its phony name are all
   written; the settings file stack.env */
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aotriton.h"
#include "depfile.h"
#include "atomic.h"
#include "emit.h"
#include "os.h"
#include "strv.h"
#include "hash.h"
#include "kv.h"
#include "rocmprobe.h"
#include "stage.h"
#include "vllm.h"

/* the tools a step runs, as bits */
enum {
	T_STAGE = 1, T_SRCPIN = 2, T_ENVCLEAN = 4, T_WHEELPICK = 8, T_HIPIFY = 16,
	T_GPUCHECK = 32, T_FATWHEEL = 64,
};

static const char *const toolname[] = {
	"kiln-stage", "srcpin", "envclean", "wheelpick", "hipify-wrap", "gpucheck", "fatwheel",
};

/* each step (ninja/steps/STEP.sh) and the kiln tools it runs */
static const struct {
	const char *step;
	unsigned tools;
	int rocm;   /* cannot run for an AMD arch without ROCm */
} steps[] = {
	/* every step's commands run under envclean (lib/base.sh's clean) */
	{"src", T_SRCPIN | T_ENVCLEAN, 0},
	{"patch", T_SRCPIN | T_ENVCLEAN, 0},
	/* hipify needs Python and the tree, not ROCm: it runs where ROCm is missing */
	{"hipify", T_HIPIFY | T_ENVCLEAN | T_SRCPIN, 0},
	{"wheel", T_ENVCLEAN | T_SRCPIN, 1},
	{"pick", T_WHEELPICK | T_ENVCLEAN, 0},
	{"install", T_SRCPIN | T_ENVCLEAN, 0},
	{"system", T_SRCPIN | T_ENVCLEAN, 0},
	{"fat", T_FATWHEEL | T_ENVCLEAN, 0},
	{"smoke", T_GPUCHECK | T_ENVCLEAN, 0},
	{"venv", 0, 0},
	/* the pinned ROCm SDK (rocm_KIND=wheels installs through clean) and its check */
	{"sdk", T_ENVCLEAN, 0},
	{"check", T_GPUCHECK | T_ENVCLEAN, 0},
	{"srctorch", T_SRCPIN | T_ENVCLEAN, 0},
	/* build requirements: pip into the target Python; no ROCm */
	{"deps", T_ENVCLEAN, 0},
	{"image", 0, 0},
	/* C_BUILD=cmake: C.build, C.install, C.smoke */
	{"cmake", T_ENVCLEAN | T_SRCPIN, 1},
	{"cmakeinstall", T_ENVCLEAN, 0},
	{"cmakesmoke", T_GPUCHECK | T_ENVCLEAN, 0},
	/* vllm.check: the pinned vLLM's supported targets and build tools (kiln-stage) */
	{"vllmcheck", T_STAGE | T_ENVCLEAN, 0},
	/* C_INPUTS: pinned archives fetched before C.wheel (kiln-stage fetch, unpack) */
	{"inputs", T_ENVCLEAN, 0},
	/* torch_SUBSET: torch's own CMake configure and a bounded part of its build (issue
	   42); compiling needs no GPU library's code for --arch, so no rocm.check first */
	{"torchconf", T_ENVCLEAN | T_SRCPIN, 0},
	{"torchsubset", T_ENVCLEAN | T_GPUCHECK, 0},
};

/* one stage: everything its ninja edge and key file are made from */
struct srec {
	char *name;          /* vision.wheel */
	const char *step;    /* wheel */
	const char *comp;    /* vision, or stack */
	char *parent[16];    /* stage names */
	size_t np;
	struct buf key;      /* the key file's text */
	char *out;           /* --out folder (absolute), or NULL */
	int idfile;          /* the step writes $B/src/COMP.id */
	const char *idpath;  /* or this file under $B (--id-file) */
	const char *rule;    /* its ninja rule: "stage" unless set */
	const char *idkeys;  /* --id-keys */
};

struct pins pins;

static struct srec *stages;

static size_t nstages, capstages;

const struct component *on[16];  /* the components built, in table order */
size_t non;

static char *absb;                      /* the build folder, absolute */
static char *rulehash;                  /* ninja/stack.ninja's and stack-steps.sh's digest */

static char *
sha256hex(const char *path)
{
	unsigned char d[32];
	struct buf h = {0};

	if (sha256_file(path, d, NULL) < 0)
		return xstrdup("");
	hexenc(&h, d, 32);
	return bufdetach(&h);
}

static char *
sha256text(const char *s)
{
	unsigned char d[32];
	struct buf h = {0};

	sha256_buf(s, strlen(s), d);
	hexenc(&h, d, 32);
	return bufdetach(&h);
}

/* --- stages ------------------------------------------------------------------------ */

/* RULE: the digest of ninja/stack.ninja (the stage rules) and ninja/stack-steps.sh (the
   dispatcher), which every stage runs */
static char *
rulesdigest(void)
{
	static const char *const f[] = {"stack.ninja", "stack-steps.sh"};
	struct buf t = {0}, all = {0};
	char *p, *h;
	size_t i;

	for (i = 0; i < 2; i++) {
		p = xasprintf("%s/ninja/%s", cf.srcdir, f[i]);
		if (readfile(p, &t, 0) < 0)
			fail("%s:", p);
		bufadd(&all, t.s ? t.s : "", t.len);
		free(p);
	}
	h = sha256text(all.s ? all.s : "");
	buffree(&t);
	buffree(&all);
	return h;
}

/* the digest of ninja/steps/REL (a step's file or a helper it sources); fails naming the
   file when it cannot be read */
static char *
stepdigest(const char *rel)
{
	char *p = xasprintf("%s/ninja/steps/%s", cf.srcdir, rel), *h;
	struct buf t = {0};

	if (readfile(p, &t, 0) < 0)
		fail("%s:", p);
	h = sha256text(t.s ? t.s : "");
	buffree(&t);
	free(p);
	return h;
}

/* the helpers ninja/steps/STEP.sh declares on its "# sources: lib/A.sh lib/B.sh" line
   (a list it declares, read as data: the shell text is never parsed), as NULL-ended
   names (A, B); fails naming the file and line when the line is missing or names a file
   outside lib/ */
static char **
stepsources(const char *step, const char *path, const char *text)
{
	const char *l = text, *e;
	char **v = NULL, *w, *line;
	size_t n = 0, cap = 0, ln = 1;

	for (; *l && !startswith(l, "# sources:"); ln++)
		l = (e = strchr(l, '\n')) ? e + 1 : l + strlen(l);
	if (!*l)
		fail("%s: no '# sources:' line (the helpers step %s sources, lib/NAME.sh ...)", path, step);
	e = strchr(l, '\n');
	line = xstrndup(l + 10, e ? (size_t)(e - l) - 10 : strlen(l + 10));
	for (w = strtok(line, " \t"); w; w = strtok(NULL, " \t")) {
		size_t k = strlen(w);

		if (!startswith(w, "lib/") || k < 8 || strcmp(w + k - 3, ".sh") ||
		    strspn(w + 4, "abcdefghijklmnopqrstuvwxyz0123456789_") != k - 7)
			fail("%s:%zu: '%s' in '# sources:' is not lib/NAME.sh (NAME: a-z, 0-9, _)",
			     path, ln, w);
		v = xgrow(v, &cap, n + 2, sizeof *v);
		v[n++] = xstrndup(w + 4, k - 7);
	}
	v = xgrow(v, &cap, n + 1, sizeof *v);
	v[n] = NULL;
	free(line);
	return v;
}

/* the step's part of a stage's key: RULE, the digest of the stage rules
   (ninja/stack.ninja) and the dispatcher (ninja/stack-steps.sh), which every stage runs;
   STEP_SH, the digest of ninja/steps/STEP.sh; and LIB_NAME, the digest of each helper
   ninja/steps/lib/NAME.sh the step declares it sources, so that editing one step reruns
   only its stages, and editing a helper only the stages of the steps that source it */
static void
setrule(struct srec *s, const char *step)
{
	char *rel = xasprintf("%s.sh", step), *p, *h, **src, **w;
	struct buf t = {0};

	kv_put(&s->key, "RULE", rulehash);
	p = xasprintf("%s/ninja/steps/%s", cf.srcdir, rel);
	if (readfile(p, &t, 0) < 0)
		fail("%s:", p);
	h = sha256text(t.s ? t.s : "");
	kv_put(&s->key, "STEP_SH", h);
	free(h);
	src = stepsources(step, p, t.s ? t.s : "");
	for (w = src; *w; w++) {
		char *k = xasprintf("LIB_%s", *w), *f = xasprintf("lib/%s.sh", *w);

		h = stepdigest(f);
		kv_put(&s->key, k, h);
		free(h);
		free(f);
		free(k);
		free(*w);
	}
	free(src);
	buffree(&t);
	free(p);
	free(rel);
}

/* a new stage COMP.NAME run by step STEP (ninja/steps/STEP.sh) */
static struct srec *
stagerun(const char *comp, const char *name, const char *step)
{
	struct srec *s;

	stages = xgrow(stages, &capstages, nstages + 1, sizeof *stages);
	s = &stages[nstages++];
	memset(s, 0, sizeof *s);
	s->name = xasprintf("%s.%s", comp, name);
	s->comp = comp;
	s->step = step;
	kv_put(&s->key, "STAGE", s->name);
	setrule(s, step);
	return s;
}

/* a new stage COMP.STEP run by step_STEP */
static struct srec *
stage(const char *comp, const char *step)
{
	return stagerun(comp, step, step);
}

static void
key(struct srec *s, const char *k, const char *v)
{
	kv_put(&s->key, k, v);
}

static void
parent(struct srec *s, const char *name)
{
	if (s->np >= sizeof s->parent / sizeof s->parent[0])
		fail("internal: too many parents for %s", s->name);
	s->parent[s->np++] = xstrdup(name);
}

/* the patch folder of a component: C_PATCHES (relative to the pin file), or patches/C */
static char *
patchdir(const struct component *c)
{
	const char *p = pins_get(&pins, c, "PATCHES");
	char *dir, *slash, *r;

	if (!*p)
		return xasprintf("%s/patches/%s", cf.srcdir, c->name);
	if (*p == '/')
		return xstrdup(p);
	dir = realpath(pins.file, NULL);
	if (!dir)
		dir = xstrdup(pins.file);
	if ((slash = strrchr(dir, '/')))
		*slash = 0;
	r = xasprintf("%s/%s", slash ? dir : ".", p);
	free(dir);
	return r;
}

const char *
pin(const struct component *c, const char *k)
{
	return pins_get(&pins, c, k);
}

static const char *
pinsha(const struct component *c)
{
	return *pin(c, "SHA") ? pin(c, "SHA") : pin(c, "COMMIT");
}

static int needsrocm(const char *step);

/* a pinned ROCm SDK (tarball or wheels): rocm.sdk installs it, rocm.check checks it */
static int rocmsdk;
/* a ROCm found at --rocm-path (any layout): rocm.check alone checks it */
static int rocmsys;
/* the SDK as resolved from the pins or the default channel (env/rocm-channels.env) */
static struct {
	const char *kind, *url, *sha256, *index, *version;
	char *extras;   /* rocm[libraries,devel,device-gfxNNNN...] for --arch */
} sdk;

/* is ROCm installed at dir, in any layout kiln knows (rocmprobe.c) */
static int
rocmat(const char *dir)
{
	struct rocmprobe r;
	int ok = rocm_probe(dir, &r) == 0;

	rocm_probefree(&r);
	return ok;
}

/* is every --arch in the list (white-space separated) */
static const char *
archmissing(const char *list)
{
	size_t i;

	for (i = 0; i < cf.narch; i++) {
		char *w = xasprintf(" %s ", cf.arch[i]), *l = xasprintf(" %s ", list);
		int in = strstr(l, w) != NULL;
		free(w);
		free(l);
		if (!in)
			return cf.arch[i];
	}
	return NULL;
}

/* a ROCm channel: one row of env/rocm-channels.env, whose CHANNELS names the rows in the
   order they are tried and whose NAME_CELL lines are row NAME's cells. The first row whose
   ARCHES holds every --arch is taken, as its KIND says: "wheels" pins rocm_KIND=wheels
   from INDEX at VERSION (rocm.sdk installs it), "root" says in one line that the ROCm of
   ROOT is used inside such a root, as TRACK sets it up. No channel is named in code. */
struct channel {
	const char *name;    /* the row's name in CHANNELS */
	const char *who;     /* who builds it, in words: "TheRock" */
	const char *title;   /* what it is, in words: "TheRock's multi-arch wheels" */
	const char *kind;    /* wheels | root */
	const char *arches;  /* the targets it builds, one space between */
	const char *index, *version;   /* wheels: pip's index and rocm's version */
	const char *root, *track;      /* root: "Debian sid", the track that sets it up */
};

/* cell NAME_CELL of a row, "" when it has none; a required one stops configure */
static const char *
chancell(const struct kvfile *f, const char *name, const char *cell, int need)
{
	char *k = xasprintf("%s_%s", name, cell), *q;
	const char *v;

	for (q = k; *q; q++)
		if (*q >= 'a' && *q <= 'z')
			*q = (char)(*q - 'a' + 'A');
	v = kv_get(f, k);
	if (need && (!v || !*v))
		fail("%s: channel %s has no %s", f->path, name, k);
	free(k);
	return v ? v : "";
}

/* row name of f, its cells checked for its kind */
static void
chanrow(const struct kvfile *f, const char *name, struct channel *ch)
{
	ch->name = name;
	ch->who = chancell(f, name, "WHO", 1);
	ch->title = chancell(f, name, "TITLE", 1);
	ch->kind = chancell(f, name, "KIND", 1);
	ch->arches = chancell(f, name, "ARCHES", 1);
	ch->index = chancell(f, name, "INDEX", !strcmp(ch->kind, "wheels"));
	ch->version = chancell(f, name, "VERSION", 0);
	ch->root = chancell(f, name, "ROOT", !strcmp(ch->kind, "root"));
	ch->track = chancell(f, name, "TRACK", !strcmp(ch->kind, "root"));
	if (strcmp(ch->kind, "wheels") && strcmp(ch->kind, "root"))
		fail("%s: channel %s: KIND=%s is not wheels or root", f->path, name, ch->kind);
}

/* take channel ch (skipped: what the rows before it lack, in words, or "") */
static void
chanuse(const struct channel *ch, const char *skipped)
{
	if (!strcmp(ch->kind, "wheels")) {
		sdk.kind = "wheels";
		sdk.index = ch->index;
		sdk.version = ch->version;
		printf("no ROCm at %s and no rocm pin%s%s%s: using %s, the default channel for --arch "
		       "(env/rocm-channels.env): rocm %s from %s\n", cf.rocm, *skipped ? " (" : "",
		       skipped, *skipped ? ")" : "", ch->title, *ch->version ? ch->version : "(newest)",
		       ch->index);
		return;
	}
	printf("no ROCm at %s%s%s: use %s inside a %s root with --rocm-path=/usr, as %s sets it up "
	       "(env/rocm-channels.env)\n", cf.rocm, *skipped ? ", and " : "", skipped, ch->title,
	       ch->root, ch->track);
}

/* no ROCm at the default --rocm-path and no rocm pin: the first channel of
   env/rocm-channels.env that builds every --arch, or a line saying none does */
static void
sdkchannel(void)
{
	static struct kvfile f;
	struct channel ch;
	struct buf skipped = {0}, names = {0};
	char *p = xasprintf("%s/env/rocm-channels.env", cf.srcdir), *err = NULL, *list, *tok, *sp;
	const char *miss;

	if (kv_load(&f, p, &err) < 0)
		fail("%s", err);
	addregen(p);
	free(p);
	list = xstrdup(kv_get(&f, "CHANNELS") ? kv_get(&f, "CHANNELS") : "");
	for (tok = strtok_r(list, " ", &sp); tok; tok = strtok_r(NULL, " ", &sp)) {
		chanrow(&f, tok, &ch);
		if (!(miss = archmissing(ch.arches))) {
			chanuse(&ch, skipped.s ? skipped.s : "");
			buffree(&skipped);
			buffree(&names);
			free(list);
			return;
		}
		bufprintf(&skipped, "%s%s builds nothing for %s", skipped.len ? "; " : "", ch.who, miss);
		bufprintf(&names, "%s%s", names.len ? ", " : "", ch.who);
	}
	if (!names.len)
		fail("%s/env/rocm-channels.env: CHANNELS names no channel", cf.srcdir);
	printf("no ROCm at %s, and no channel of env/rocm-channels.env (%s) builds for all of "
	       "--arch=%s (%s): install a ROCm built for it and pass --rocm-path=DIR\n", cf.rocm,
	       names.s, cf.archarg, skipped.s);
	buffree(&skipped);
	buffree(&names);
	free(list);
}

/* rocm_KIND=wheels: one index only (TheRock's public index holds placeholder packages
   named rocm and amd-torch-device-*: an extra index invites dependency confusion) */
static void
sdkwheelpin(void)
{
	struct buf x = {0};
	const char *e = getenv("PIP_EXTRA_INDEX_URL");
	size_t i;

	if (!*sdk.index)
		fail("%s: rocm_KIND=wheels needs rocm_INDEX (TheRock's index URL, e.g. "
		     "https://repo.amd.com/rocm/whl-multi-arch/, or a folder of its wheels)", pins.file);
	if (strpbrk(sdk.index, " \t,") || startswith(sdk.index, "-"))
		fail("%s: rocm_INDEX=%s: give one index (it is pip's --index-url); an extra index "
		     "is refused: TheRock's public index holds placeholder packages named rocm and "
		     "amd-torch-device-*, and pip would take either", pins.file, sdk.index);
	if (e && *e)
		fail("PIP_EXTRA_INDEX_URL=%s is set: kiln installs TheRock's rocm wheels from "
		     "rocm_INDEX alone and refuses an extra index (placeholder packages named rocm "
		     "and amd-torch-device-* on public indexes); unset it", e);
	bufputs(&x, "rocm[libraries,devel");
	/* one device extra per target: device-gfx90a for gfx90a:xnack- too */
	for (i = 0; i < cf.narch; i++)
		bufprintf(&x, ",device-%.*s", (int)strcspn(cf.arch[i], ":"), cf.arch[i]);
	bufputc(&x, ']');
	if (*sdk.version)
		bufprintf(&x, "==%s", sdk.version);
	sdk.extras = bufdetach(&x);
}

/* a tarball: pinned by URL + rocm_SHA256 ($B/rocm/SHA256), or by URL alone: then its
   digest is locked on first fetch in $B/rocm.lock ($B/rocm/url-HASH of the URL) */
static void
sdktarpin(char **rocmv)
{
	char *h;

	if (*sdk.sha256) {
		cf.rocm = xasprintf("%s/rocm/%s", absb, sdk.sha256);
		*rocmv = xasprintf("sdk %s", sdk.sha256);
		printf("using the pinned ROCm SDK %s (rocm.sdk unpacks it into %s; rocm.check checks "
		       "it for --arch before any build)\n", sdk.url, cf.rocm);
		return;
	}
	h = sha256text(sdk.url);
	h[16] = '\0';
	cf.rocm = xasprintf("%s/rocm/url-%s", absb, h);
	*rocmv = xasprintf("sdk-url %s", sdk.url);
	printf("using the ROCm SDK %s with no rocm_SHA256: its digest is locked on first fetch "
	       "in %s/rocm.lock and verified on every later one (rocm.sdk unpacks it into %s)\n",
	       sdk.url, absb, cf.rocm);
	free(h);
}

static char *sysrocmid(size_t *ngpu);

/* does the ROCm at --rocm-path hold ROCm's GPU libraries (then rocm.check checks them);
   a compiler alone (no rocBLAS, ...) is said in one line and gets no rocm.check */
static int
sysgpulibs(void)
{
	size_t n;
	char *id = sysrocmid(&n);

	free(id);
	if (!n)
		printf("the ROCm at %s has none of ROCm's GPU libraries (rocBLAS, hipBLASLt, rocSPARSE, "
		       "MIOpen, rocRAND, ...): no rocm.check for it\n", cf.rocm);
	return n > 0;
}

/* where ROCm comes from for an AMD build: a pinned SDK (rocmsdk: cf.rocm is the folder
   rocm.sdk fills, *rocmv the stage keys' ROCM value), the ROCm at --rocm-path (rocmsys),
   or the default channel of env/rocm-channels.env */
static void
sdkpin(char **rocmv)
{
	const struct component *r = comp_find("rocm");

	if (cf.backend != BACKEND_GFX)
		return;
	sdk.kind = pin(r, "KIND");
	sdk.url = pin(r, "URL");
	sdk.sha256 = pin(r, "SHA256");
	sdk.index = pin(r, "INDEX");
	sdk.version = pin(r, "VERSION");
	if (!strcmp(sdk.kind, "system") || (!strcmp(sdk.kind, "sdk") && !*sdk.url)) {
		if (rocmat(cf.rocm)) {
			rocmsys = sysgpulibs();
			return;
		}
		if (strcmp(sdk.kind, "sdk") || strcmp(cf.rocm, "/opt/rocm"))
			return;  /* an explicit --rocm-path or rocm=system: rocm.missing says it */
		sdkchannel();
		if (strcmp(sdk.kind, "wheels"))
			return;
	}
	rocmsdk = 1;
	if (!strcmp(sdk.kind, "wheels")) {
		/* TheRock's rocm wheels into the target Python; $B/rocm/wheels links to the
		   root `rocm-sdk path --root` names */
		sdkwheelpin();
		cf.rocm = xasprintf("%s/rocm/wheels", absb);
		*rocmv = xasprintf("wheels %s %s", sdk.index, sdk.extras);
		printf("using TheRock's rocm wheels from %s: %s (rocm.sdk installs them into %s; "
		       "ROCM_PATH is %s)\n", sdk.index, sdk.extras, cf.python, cf.rocm);
		return;
	}
	if (strcmp(sdk.kind, "sdk"))
		fail("%s: rocm_KIND=%s: this kiln installs ROCm as sdk (a tarball), wheels (TheRock's "
		     "index) or system (--rocm-path)", pins.file, sdk.kind);
	sdktarpin(rocmv);
}

/* is name one of ROCm's GPU libraries (the ones rocm.check checks: ninja/steps/check.sh) */
static int
isgpulib(const char *name)
{
	static const char *const gpu[] = {"librocblas.so", "libhipblaslt.so", "librocsparse.so",
	                                  "libMIOpen.so", "librocrand.so", "librocfft.so",
	                                  "librocsolver.so", "libhipsparselt.so", "librccl.so",
	                                  "libhipfft.so", "libhiprand.so"};
	size_t i;

	for (i = 0; i < sizeof gpu / sizeof gpu[0]; i++)
		if (startswith(name, gpu[i]))
			return 1;
	return 0;
}

/* the libraries' identity at a system ROCm (name, size, mtime of each lib*.so* in its
   library folders), so that rocm.check reruns when the distribution upgrades them; *ngpu
   (may be NULL) is set to the number of ROCm's GPU libraries among them */
static char *
sysrocmid(size_t *ngpu)
{
	static const char *const sub[] = {"lib", "lib64", "lib/x86_64-linux-gnu",
	                                  "lib/aarch64-linux-gnu", "lib/powerpc64le-linux-gnu"};
	struct buf b = {0};
	struct stat st;
	size_t i, j, n;
	char **names, *d, *f, *h;

	if (ngpu)
		*ngpu = 0;

	for (i = 0; i < sizeof sub / sizeof sub[0]; i++) {
		d = xasprintf("%s/%s", cf.rocm, sub[i]);
		names = lsdir(d, NULL, 0, &n);
		for (j = 0; j < n; j++) {
			f = xasprintf("%s/%s", d, names[j]);
			if (startswith(names[j], "lib") && strstr(names[j], ".so") && lstat(f, &st) == 0 &&
			    S_ISREG(st.st_mode)) {
				bufprintf(&b, "%s %lld %lld\n", f, (long long)st.st_size, (long long)st.st_mtime);
				if (ngpu && isgpulib(names[j]))
					(*ngpu)++;
			}
			free(f);
		}
		strs_free(names, n);
		free(d);
	}
	h = sha256text(b.s ? b.s : "");
	buffree(&b);
	return h;
}

/* the stages rocm.sdk (download, verify, unpack; or the wheels) and rocm.check (every
   GPU library's code for --arch); a system ROCm gets rocm.check alone */
static void
sdkstages(void)
{
	struct srec *s;
	char *archs, *id;

	if (!rocmsdk && !rocmsys)
		return;
	archs = archwords();
	if (rocmsys) {
		s = stage("rocm", "check");
		key(s, "ROCM_PATH", cf.rocm);
		id = sysrocmid(NULL);
		key(s, "LIBS", id);
		key(s, "ARCH", archs);
		free(id);
		free(archs);
		return;
	}
	s = stage("rocm", "sdk");
	key(s, "KIND", sdk.kind);
	key(s, "URL", sdk.url);
	key(s, "SHA256", sdk.sha256);
	if (!strcmp(sdk.kind, "wheels")) {
		key(s, "INDEX", sdk.index);
		key(s, "REQ", sdk.extras);
		key(s, "PY", cf.python);
		if (cf.venv)
			parent(s, "stack.venv");   /* the wheels go into the venv kiln makes */
	}
	s = stage("rocm", "check");
	key(s, "SHA256", sdk.sha256);
	key(s, "URL", sdk.url);
	key(s, "INDEX", sdk.index);
	key(s, "REQ", sdk.extras ? sdk.extras : "");
	key(s, "ARCH", archs);
	parent(s, "rocm.sdk");
	free(archs);
}

/* stack.image (--image): after stack.smoke, an OCI image of the target environment built
   from a COPY-only Containerfile; its base pinned by image_BASE (ID or digest) */
static void
imagestage(char **proflist, size_t nprof)
{
	const char *base = cf.imagebase ? cf.imagebase : "scratch";
	struct srec *s;
	size_t j;
	char *h, *kn;

	if (strcmp(base, "scratch") && !*pins_image(&pins, "BASE"))
		fail("%s: --image-base=%s is not pinned; add image_BASE=ID (podman image inspect "
		     "--format '{{.Id}}' %s) to the pins", pins.file, base, base);
	/* the image step's builder is lib/oci.sh's; the image rule runs the imagecheck step
	   first (ninja/stack.ninja); the stamp's ID is the image's (image.id) */
	s = stagerun("stack", "image", "image");
	s->rule = "image";
	s->idpath = "image.id";
	key(s, "IMAGE", cf.image);
	key(s, "BASE_REF", base);
	key(s, "BASE", strcmp(base, "scratch") ? pins_image(&pins, "BASE") : "");
	key(s, "PY", cf.python);
	key(s, "BACKEND", backend_name(cf.backend));
	for (j = 0; j < nprof; j++) {
		kn = xasprintf("PROFILE_%zu", j);
		h = sha256hex(proflist[j]);
		key(s, kn, h);
		free(h);
		free(kn);
	}
	parent(s, "stack.smoke");
	if (!strcmp(pins_stack(&pins, "FAT"), "yes") && nstages >= 2 && !strcmp(stages[nstages - 2].name, "stack.fat"))
		parent(s, "stack.fat");
}

/* the digest of a wheelhouse's listing (names and sizes): a wheel added, removed or
   replaced there reruns the deps stages; "" without one */
static char *
wheelhouseid(void)
{
	struct strv names = {0};
	struct buf b = {0};
	struct stat st;
	char *p, *h;
	size_t i;

	if (!cf.wheelhouse)
		return xstrdup("");
	addregen(cf.wheelhouse);
	if (os_listdir(cf.wheelhouse, &names) < 0)
		fail("--wheelhouse=%s: cannot list it:", cf.wheelhouse);
	for (i = 0; i < names.n; i++) {
		p = xasprintf("%s/%s", cf.wheelhouse, names.v[i]);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			bufprintf(&b, "%s %lld\n", names.v[i], (long long)st.st_size);
		free(p);
	}
	h = sha256text(b.s ? b.s : "");
	buffree(&b);
	strv_free(&names);
	return h;
}

/* C.deps, before C.wheel: the build requirements the prepared tree declares, from one
   index or a wheelhouse, into the target Python, locked with hashes. Its key: the tree
   (its parent), the index, the interpreter, the names kiln builds itself; its ID the
   lock's digest, so an unchanged lock does not rebuild the wheel */
static void
depsstage(const struct component *c, const char *last)
{
	static const char *const flavour[] = {"cpu", "rocm", "cuda"};
	struct buf ex = {0};
	struct srec *s;
	char *n, *wh;
	size_t i;

	s = stage(c->name, "deps");
	key(s, "COMPONENT", c->name);
	key(s, "SUBDIR", pin(c, "SUBDIR"));
	key(s, "INDEX", cf.indexurl ? cf.indexurl : "");
	key(s, "WHEELHOUSE", cf.wheelhouse ? cf.wheelhouse : "");
	wh = wheelhouseid();
	key(s, "WHEELHOUSE_ID", wh);
	free(wh);
	key(s, "PY", cf.python);
	key(s, "PY_ABI", py.abi);
	key(s, "FLAVOUR", flavour[cf.backend == BACKEND_GFX ? 1 : cf.backend == BACKEND_CUDA ? 2 : 0]);
	key(s, "RUNTIME", c->rule.runtime ? "yes" : "no");
	/* what kiln builds itself never comes from the index (vLLM asks for torch==X) */
	for (i = 0; i < comp_count; i++)
		if (*comp_table[i].dist)
			bufprintf(&ex, "%s%s", ex.len ? "," : "", comp_table[i].dist);
	bufputs(&ex, ",triton");
	key(s, "EXCLUDE", ex.s);
	buffree(&ex);
	s->idpath = xasprintf("deps/%s.id", c->name);
	n = xasprintf("%s.%s", c->name, last);
	parent(s, n);
	free(n);
}

/* the patch stage's release and the range its series is made for (for its message
   when a patch no longer applies) */
static void
patchrelease(struct srec *s, const struct component *c, const char *range)
{
	char *rel = pin_release(c);

	key(s, "RELEASE", rel ? rel : pin(c, "REF"));
	key(s, "RANGE", range);
	free(rel);
}

/* --- pinned inputs (C_INPUTS) and triton's offline build ------------------------------ */

/* one word of C_INPUTS, NAME=URL#sha256=HEX: NULL when good, else what is wrong */
static const char *
inputbad(const char *w, size_t n)
{
	const char *eq = memchr(w, '=', n), *h;
	size_t i;

	if (!eq || eq == w)
		return "is not NAME=URL#sha256=HEX";
	for (i = 0; w + i < eq; i++)
		if (!(w[i] == '_' || isalnumc((unsigned char)w[i])) || (i == 0 && w[i] >= '0' && w[i] <= '9'))
			return "does not start with a variable name (LLVM_SYSPATH=...)";
	if (n < 72 || memcmp(w + n - 72, "#sha256=", 8))
		return "has no #sha256=HEX (64 hex digits) after its URL";
	for (h = w + n - 64; h < w + n; h++)
		if (!strchr("0123456789abcdef", *h))
			return "has a sha256 that is not 64 lowercase hex digits";
	if (strncmp(eq + 1, "https://", 8) && strncmp(eq + 1, "http://", 7) &&
	    strncmp(eq + 1, "file:///", 8) && eq[1] != '/')
		return "names no https://, http://, file:/// URL or absolute path";
	return NULL;
}

/* C.inputs, when C_INPUTS names archives: each fetched, checked and unpacked into
   $B/inputs/SHA256 (the downloads the build would have made, made here and pinned) */
static void
inputsstage(const struct component *c)
{
	const char *v = pin(c, "INPUTS"), *p, *why;
	struct srec *s;
	size_t n;

	if (!*v)
		return;
	for (p = v; *(p += strspn(p, " \t")); p += n) {
		n = strcspn(p, " \t");
		if ((why = inputbad(p, n)))
			fail("%s: %s_INPUTS: '%.*s' %s", pins.file, c->name, (int)n, p, why);
	}
	s = stage(c->name, "inputs");
	key(s, "INPUTS", v);
}

/* C.wheel after C.inputs, keyed by them; what an offline build needs (the component's
   offline column: triton's LLVM_SYSPATH) must be pinned, as an input or in C_ENV */
static void
inputswheel(struct srec *s, const struct component *c)
{
	char *n, *v;

	if (c->rule.offline) {
		v = xasprintf("%s=", c->rule.offline);
		if (!strstr(pin(c, "INPUTS"), v) && !strstr(pin(c, "ENV"), v))
			fail("%s: %s %s: %s_INPUTS=\"%s=URL#sha256=HEX\" (a build of that commit) or "
			     "%s_ENV=\"%s=DIR\"", pins.file, c->name, c->rule.offwhy, c->name, c->rule.offline,
			     c->name, c->rule.offline);
		free(v);
	}
	if (!*pin(c, "INPUTS"))
		return;
	key(s, "INPUTS", pin(c, "INPUTS"));
	n = xasprintf("%s.inputs", c->name);
	parent(s, n);
	free(n);
}

/* --- AOTriton (aotriton.c decides what torch's attention gets) ----------------------- */

static struct aotplan aot;

/* the plan, once, before the stage records; 1 when torch builds its attention kernels */
static int
aotstart(void)
{
	aot_plan(&aot);
	return aot.attn;
}

/* the component built here whose install prefix c's wheel builds against (its feeds
   column names c), or NULL */
static const struct component *
fedby(const struct component *c)
{
	size_t i;

	for (i = 0; i < non; i++)
		if (on[i]->rule.feeds && !strcmp(on[i]->rule.feeds, c->name))
			return on[i];
	return NULL;
}

/* a wheel stage of an AMD build: USE_MEM_EFF_ATTENTION as planned; torch.wheel with
   aotriton built: after aotriton.install, its prefix as AOTRITON_INSTALLED_PREFIX */
static void
aotwheel(struct srec *s, const struct component *c)
{
	const struct component *a;
	char *p;

	if (cf.backend != BACKEND_GFX)
		return;
	key(s, "MEM_EFF", aot.attn ? "1" : "0");
	if (!aot.on || !(a = fedby(c)))
		return;
	p = xasprintf("%s/prefix/%s", absb, a->name);
	key(s, "AOTRITON_PREFIX", p);
	free(p);
	p = xasprintf("%s.install", a->name);
	parent(s, p);
	free(p);
}

/* aotriton.build: the targets it builds, as AOTriton's own variable (AOTRITON_TARGET_ARCH)
   after the generic ones; *aa is replaced */
static void
aotbuild(struct srec *s, const struct component *c, char **aa)
{
	char *n, *l, *p;

	if (!c->rule.feeds || !aot.on)
		return;
	key(s, "AOTRITON_ARCH", aot.arches);
	l = xstrdup(aot.arches);
	for (p = l; (p = strchr(p, ' ')); )   /* the seam's words as a CMake list */
		*p = ';';
	n = xasprintf("%s%s-DAOTRITON_TARGET_ARCH=%s", *aa, **aa ? " " : "", l);
	free(l);
	free(*aa);
	*aa = n;
}

/* the targets C.smoke covers: AOTriton's own, for aotriton; else every --arch (fresh) */
static char *
aotsmoke(const struct component *c, char *archs)
{
	if (!c->rule.feeds || !aot.on)
		return archs;
	free(archs);
	return xstrdup(aot.arches);
}

/* --- CMake components (C_BUILD=cmake) ------------------------------------------------ */

/* the facts the wheel and CMake stages are keyed on, gathered once: the --arch words,
   the compiler, ROCm and flash attention, the profiles */
struct facts {
	char *archs, *ccv, *rocmv, *flash;
	char **proflist;
	size_t nprof;
};


/* the --arch list as the project's own CMake variables: GPU_TARGETS and AMDGPU_TARGETS
   for HIP (ggml's src/ggml-hip/CMakeLists.txt forwards either to CMAKE_HIP_ARCHITECTURES;
   ROCm's own projects read the same two), CMAKE_CUDA_ARCHITECTURES for CUDA (sm_90 ->
   90, sm_90a -> 90a); none for cpu. Fresh. */
static char *
cmakearch(void)
{
	struct buf b = {0};
	char *l;
	size_t i;

	switch (cf.backend) {
	case BACKEND_GFX:
		l = archlist(";");
		bufprintf(&b, "-DGPU_TARGETS=%s -DAMDGPU_TARGETS=%s", l, l);
		free(l);
		break;
	case BACKEND_CUDA:
		bufputs(&b, "-DCMAKE_CUDA_ARCHITECTURES=");
		for (i = 0; i < cf.narch; i++)
			bufprintf(&b, "%s%s", i ? ";" : "", startswith(cf.arch[i], "sm_") ? cf.arch[i] + 3 : cf.arch[i]);
		break;
	default:
		bufputs(&b, "");
		break;
	}
	return bufdetach(&b);
}

/* cmake's version line, once (configure stops when a CMake component has no cmake) */
static const char *
cmakeversion(const char *comp)
{
	static char *v;
	char *av[] = {"cmake", "--version", NULL}, *out = NULL;

	if (v)
		return v;
	if (capture(av, &out) != 0 || !*out)
		fail("%s: %s_BUILD=cmake needs cmake on PATH (apt-get install cmake)", pins.file, comp);
	v = line(out, 0);
	free(out);
	return v;
}

/* the key lines PROFILE_NAME=sha256 of each profile (env/arch/NAME.env) */
static void
profkeys(struct srec *s, char **proflist, size_t nprof)
{
	size_t j;
	char *b, *kn, *q, *h;

	for (j = 0; j < nprof; j++) {
		b = strrchr(proflist[j], '/') + 1;
		kn = xasprintf("PROFILE_%.*s", (int)(strlen(b) - 4), b);
		for (q = kn + 8; *q; q++)
			if (!isalnumc((unsigned char)*q) && *q != '_')
				*q = '_';
		h = sha256hex(proflist[j]);
		key(s, kn, h);
		free(h);
		free(kn);
	}
}

/* the toolchain a CMake-built stage compiles with: backend, targets, compiler, ROCm */
static void
toolkeys(struct srec *s, const char *archs, const char *ccv, const char *rocmv)
{
	key(s, "BACKEND", backend_name(cf.backend));
	key(s, "ARCH", archs);
	key(s, "CC_VERSION", ccv);
	key(s, "CC_CMD", strcmp(cf.cc, "cc") ? cf.cc : "");
	if (cf.backend == BACKEND_GFX)
		key(s, "ROCM", rocmv ? rocmv : "");
}

/* C.build of a CMake component: configure, build and install into a staging prefix,
   packed as one reproducible tarball in $B/cmake/C (the stage's output: stage cache,
   verify); after C.LAST and deps (their installs, space-separated) */
static void
cmakebuild(const struct component *c, const char *last, const struct facts *fx, const char *deps)
{
	struct srec *s;
	char *archs = archwords(), *aa = cmakearch(), *n, *tok, *sp, *d;
	const char *chk = pin(c, "CHECK") + strspn(pin(c, "CHECK"), " \t");

	s = stagerun(c->name, "build", "cmake");
	aotbuild(s, c, &aa);
	key(s, "COMPONENT", c->name);
	key(s, "REF", pin(c, "REF"));
	key(s, "BUILD", "cmake");
	key(s, "CMAKE", cmakeversion(c->name));
	key(s, "CMAKE_ARGS", pin(c, "CMAKE_ARGS"));
	key(s, "ARCH_ARGS", aa);
	/* the program C_CHECK runs is carried into the prefix; its arguments are C.smoke's */
	n = xstrndup(chk, strcspn(chk, " \t"));
	key(s, "CHECK_PROG", n);
	free(n);
	toolkeys(s, archs, fx->ccv, fx->rocmv);
	key(s, "ENV", pin(c, "ENV"));
	key(s, "DEPS", deps);
	profkeys(s, fx->proflist, fx->nprof);
	n = xasprintf("%s.%s", c->name, last);
	parent(s, n);
	free(n);
	d = xstrdup(deps);
	for (tok = strtok_r(d, " ", &sp); tok; tok = strtok_r(NULL, " ", &sp))
		parent(s, tok);
	free(d);
	s->out = xasprintf("%s/cmake/%s", absb, c->name);
	free(archs);
	free(aa);
}

/* the stages of a CMake component after C.patch (or C.hipify, last): C.build
   (cmakebuild), C.install (the tarball unpacked into $B/prefix/C, the prefix other
   stages consume) and C.smoke (C_CHECK, the project's own check, and gpucheck cover of
   its libraries for each AMD --arch) */
static void
cmakestages(const struct component *c, const char *last, const struct facts *fx, const char *deps)
{
	struct srec *s;
	char *archs = aotsmoke(c, archwords()), *n;

	cmakebuild(c, last, fx, deps);
	s = stagerun(c->name, "install", "cmakeinstall");
	key(s, "COMPONENT", c->name);
	s->idkeys = "COMPONENT";
	n = xasprintf("%s.build", c->name);
	parent(s, n);
	free(n);

	s = stagerun(c->name, "smoke", "cmakesmoke");
	key(s, "CHECK", pin(c, "CHECK"));
	key(s, "ENV", pin(c, "ENV"));
	key(s, "BACKEND", backend_name(cf.backend));
	key(s, "ARCH", archs);
	key(s, "COVER", pins_stack(&pins, "COVER"));
	n = xasprintf("%s.install", c->name);
	parent(s, n);
	free(n);
	free(archs);
}

/* --- torch's own CMake build, a bounded part of it (torch_SUBSET, issue 42) ---------- */

/* torch.configure: torch's CMake configure on the prepared tree, in a build tree of its
   own ($B/work/torch), what it found in $B/torch/configure.id; torch.subset: torch's
   ninja on the targets and sources the file torch_SUBSET names (relative to the pin
   file), in that tree: a new configure key makes a fresh tree, the same key goes on
   where an interrupted run stopped */
static void
torchsubset(const struct component *c, const char *last, const struct facts *fx)
{
	const char *p = pin(c, "SUBSET");
	struct srec *s;
	char *f, *h, *n, *slash;

	s = stagerun(c->name, "configure", "torchconf");
	key(s, "COMPONENT", c->name);
	key(s, "REF", pin(c, "REF"));
	key(s, "CMAKE", cmakeversion(c->name));
	key(s, "CMAKE_ARGS", pin(c, "CMAKE_ARGS"));
	toolkeys(s, fx->archs, fx->ccv, fx->rocmv);
	key(s, "ENV", pin(c, "ENV"));
	profkeys(s, fx->proflist, fx->nprof);
	n = xasprintf("%s.%s", c->name, last);
	parent(s, n);
	free(n);
	s->idpath = "torch/configure.id";

	f = realpath(pins.file, NULL);
	if (*p == '/' || !f || !(slash = strrchr(f, '/')))
		n = xstrdup(p);
	else
		*slash = 0, n = xasprintf("%s/%s", f, p);
	free(f);
	if (!*(h = sha256hex(n)))
		fail("%s: %s_SUBSET=%s: cannot read %s", pins.file, c->name, p, n);
	s = stagerun(c->name, "subset", "torchsubset");
	key(s, "SUBSET_FILE", n);
	key(s, "SUBSET", h);
	key(s, "BACKEND", backend_name(cf.backend));
	key(s, "ARCH", fx->archs);
	parent(s, "torch.configure");
	s->idpath = "torch/subset.id";
	free(h);
	free(n);
}

/* --- flash-attention, AITER and vLLM (issue 31) -------------------------------------- */

/* C_SUBMODULES=no: the src and patch stages leave the tree's submodules empty (flash_attn:
   cutlass, composable_kernel and third_party/aiter, none of which its Triton AMD build
   reads; AITER comes as the aiter component). The key line only when set, so the keys
   of every other tree are as before */
static void
subkey(struct srec *s, const struct component *c)
{
	if (!strcmp(pin(c, "SUBMODULES"), "no"))
		key(s, "SUBMODULES", "no");
}

/* flash_attn's Triton AMD backend (FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE in its ENV) is
   AITER's since 2026-03 (Dao-AILab/flash-attention setup.py: ROCM_BACKEND "triton" runs
   `pip install --no-build-isolation third_party/aiter` inside its own build): the aiter
   component comes with it and is built first, its install what flash_attn builds against */
static void
flashaiter(void)
{
	const struct component *f = comp_find("flash_attn"), *a = comp_find("aiter");
	size_t fi = (size_t)(f - comp_table), ai = (size_t)(a - comp_table);

	if (!(wanted[fi] > 0 || (wanted[fi] == 0 && f->isdefault)) || strcmp(pin(f, "KIND"), "build") ||
	    !strstr(pin(f, "ENV"), "FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE"))
		return;
	if (wanted[ai] < 0)
		fail("%s: flash_attn's Triton AMD backend (FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE in "
		     "flash_attn_ENV) is AITER's, which the stack drops: its setup.py would pip-install "
		     "third_party/aiter inside its build; keep aiter, or pin flash_attn_ENV without the "
		     "Triton backend", pins.file);
	if (wanted[ai] == 0) {
		wanted[ai] = 1;
		printf("flash_attn: its Triton AMD backend is AITER's: the aiter component is built "
		       "first and flash_attn builds against its install\n");
	}
}

/* a git mirror of vLLM at its pinned commit: the reader of vllm.c */
struct gitat {
	char *gitdir, *commit;
};

static char *
gitget(void *ctx, const char *path)
{
	struct gitat *g = ctx;
	char *gd = xasprintf("--git-dir=%s", g->gitdir), *spec = xasprintf("%s:%s", g->commit, path);
	char *av[] = {"git", gd, "show", spec, NULL}, *out = NULL;
	int r = capture(av, &out);

	free(gd);
	free(spec);
	if (r != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* the mirror (--mirror's DIR/vllm.git or DIR/vllm, then --git-cache's vllm.git) that holds
   the pinned REF: 1 with g filled, else 0 (not fetched yet) */
static int
vllmmirror(const struct component *c, struct gitat *g)
{
	const char *base[3] = {cf.mirror, cf.mirror, cf.gitcache}, *form[3] = {"%s/%s.git", "%s/%s", "%s/%s.git"};
	char *d, *gd, *rv, *out;
	size_t i;

	if (*pin(c, "REF") == '@')
		return 0;
	for (i = 0; i < 3; i++) {
		if (!base[i] || !*base[i])
			continue;
		d = xasprintf(form[i], base[i], c->name);
		gd = xasprintf("%s/.git", d);
		if (os_isdir(gd)) {   /* a clone with a work tree */
			free(d);
			d = gd;
		} else {
			free(gd);
		}
		gd = xasprintf("--git-dir=%s", d);
		rv = xasprintf("%s^{commit}", pin(c, "REF"));
		out = NULL;
		{
			char *av[] = {"git", gd, "rev-parse", "-q", "--verify", rv, NULL};
			if (os_isdir(d) && capture(av, &out) == 0 && *out) {
				g->gitdir = d;
				g->commit = out;
				free(gd);
				free(rv);
				return 1;
			}
			free(out);
		}
		free(d);
		free(gd);
		free(rv);
	}
	return 0;
}

/* configure's check of the pinned vLLM, when a mirror already holds its commit: the
   --arch targets its CMakeLists.txt would drop and the tools its build needs (vllm.c);
   either stops configure in one line */
static void
vllmconf(const struct component *c, const char *flavour)
{
	struct gitat g;
	struct vtree t;
	char *msg, *needs = NULL, *name = xasprintf("vLLM %s", pin(c, "REF")), *l;

	printf("checking %s's tree... ", name);
	if (!vllmmirror(c, &g)) {
		printf("not fetched yet: vllm.check checks --arch and the tools after vllm.src, "
		       "before its build\n");
		free(name);
		return;
	}
	t.get = gitget;
	t.ctx = &g;
	t.name = name;
	if ((msg = vllm_archcheck(&t, cf.backend, cf.arch, cf.narch)) ||
	    (msg = vllm_toolcheck(&t, flavour, NULL, &needs))) {
		printf("no\n");
		fail("%s", msg);
	}
	l = archlist(",");
	printf("keeps %s (%s); needs %s\n", *l ? l : "no GPU target", g.gitdir, needs);
	free(l);
	free(needs);
	free(g.gitdir);
	free(g.commit);
	free(name);
}

/* vllm.check, after vLLM's prepared tree and before its deps and build: the same check on
   the tree itself (kiln-stage vllm-check). Returns the stage vLLM's build comes after. */
static const char *
vllmstages(const struct component *c, const char *last)
{
	const char *flavour = cf.backend == BACKEND_GFX ? "rocm" : cf.backend == BACKEND_CUDA ? "cuda" : "cpu";
	struct srec *s;
	char *archs, *n;

	if (!c->rule.check)
		return last;
	vllmconf(c, flavour);
	archs = archwords();
	s = stagerun(c->name, "check", c->rule.check);
	key(s, "COMPONENT", c->name);
	key(s, "REF", pin(c, "REF"));
	key(s, "SUBDIR", pin(c, "SUBDIR"));
	key(s, "BACKEND", backend_name(cf.backend));
	key(s, "ARCH", archs);
	key(s, "FLAVOUR", flavour);
	n = xasprintf("%s.%s", c->name, last);
	parent(s, n);
	free(n);
	free(archs);
	return "check";
}


/* the first line of `CC --version` (CC as configure was given it) */
static char *
ccversion(void)
{
	char *ccargv[8], *cccopy = xstrdup(cf.cc), *tok, *sp, *v;
	size_t ncc = 0;

	for (tok = strtok_r(cccopy, " \t", &sp); tok && ncc < 6; tok = strtok_r(NULL, " \t", &sp))
		ccargv[ncc++] = tok;
	ccargv[ncc++] = "--version";
	ccargv[ncc] = NULL;
	capture(ccargv, &tok);
	v = line(tok, 0);
	free(tok);
	free(cccopy);
	return v;
}

/* what identifies the ROCm the stages build with: the SDK pin, .info/version or clang's
   version line of an installed ROCm, or a distribution's libraries (/usr) */
static char *
rocmversion(void)
{
	char *rocmv = NULL, *cl, *vf, *tok;
	struct buf v = {0};

	sdkpin(&rocmv);
	if (cf.backend == BACKEND_GFX && !rocmsdk) {
		cl = xasprintf("%s/llvm/bin/clang", cf.rocm);
		vf = xasprintf("%s/.info/version", cf.rocm);
		if (!rocmat(cf.rocm)) {
			rocmv = xstrdup("");
		} else if (readfile(vf, &v, 4096) == 0 && v.len) {
			bufrtrim(&v, "\n ");
			rocmv = bufdetach(&v);
		} else {
			char *av[] = {cl, "--version", NULL};
			capture(av, &tok);
			rocmv = line(tok, 0);
			free(tok);
		}
		buffree(&v);
		free(cl);
		free(vf);
	}
	/* a distribution's ROCm (/usr) has neither .info/version nor llvm/: its libraries say */
	if (rocmsys && rocmv && !*rocmv) {
		free(rocmv);
		rocmv = sysrocmid(NULL);
	}
	return rocmv;
}

/* "1" when every --arch's env/arch file turns flash attention on and AOTriton is there
   for torch (aotstart: its plan, said once), else "0" */
static char *
flashfacts(void)
{
	char *err = NULL, *p;
	const char *v;
	struct kvfile f;
	size_t i;
	int fl = 1;

	for (i = 0; i < cf.narch; i++) {
		p = xasprintf("%s/env/arch/%s.env", cf.srcdir, cf.arch[i]);
		if (kv_load(&f, p, &err) < 0) {
			fl = 0;
			free(err);
			err = NULL;
		} else if (!(v = kv_get(&f, "KILN_FLASH_ATTENTION")) || strcmp(v, "1")) {
			fl = 0;
		}
		kv_free(&f);
		free(p);
	}
	return xstrdup(aotstart() && fl ? "1" : "0");
}

/* stack.venv: the environment --venv makes */
static void
venvstage(void)
{
	struct srec *s;
	size_t i;
	int syssite = 0;

	for (i = 0; i < non; i++)
		syssite |= !strcmp(pin(on[i], "KIND"), "system");
	s = stage("stack", "venv");
	key(s, "BASE", cf.basepy);
	key(s, "BASE_VERSION", py.version);
	key(s, "VENV", cf.venv);
	key(s, "SYSTEM_SITE", syssite ? "yes" : "no");
	s->idkeys = "BASE,BASE_VERSION,VENV,SYSTEM_SITE";
}

/* what c builds against: its deps' stages (an install; a source-only dep: its patch) in
   dep, their import names in mods */
static void
depsof(const struct component *c, struct buf *dep, struct buf *mods)
{
	const char *ds = pin(c, "DEPS"), *m;
	const struct component *d;
	size_t j, dl;
	int listed;

	bufreset(dep);
	bufreset(mods);
	for (j = 0; j < non; j++) {
		d = on[j];
		dl = strlen(d->name);
		listed = 0;
		for (m = ds; (m = strstr(m, d->name)); m += dl)
			if ((m == ds || strchr(" ,", m[-1])) && (!m[dl] || strchr(" ,", m[dl])))
				listed = 1;
		if (!listed)
			continue;
		bufprintf(dep, "%s%s.%s", dep->len ? " " : "", d->name,
		          !strcmp(pin(d, "KIND"), "source") ? "patch" : "install");
		if (*pin(d, "IMPORT"))
			bufprintf(mods, "%s%s", mods->len ? " " : "", pin(d, "IMPORT"));
	}
}

/* C.src: the pinned tree (C_REF=@torch: the pin torch's patched tree gives, through
   the srctorch step: torchpin, then the src step's fetch, lib/src.sh) */
static void
srcstage(const struct component *c)
{
	const struct component *tc;
	struct srec *s;
	int attorch = !strcmp(pin(c, "REF"), "@torch");

	s = attorch ? stagerun(c->name, "src", "srctorch") : stage(c->name, "src");
	key(s, "COMPONENT", c->name);
	key(s, "URL", pin(c, "URL"));
	key(s, "REF", pin(c, "REF"));
	key(s, "SHA", pinsha(c));
	s->idfile = 1;
	subkey(s, c);
	if (!attorch) {
		/* the src rule: asks upstream whether a tag moved (ninja/stack.ninja) */
		s->rule = "src";
		return;
	}
	tc = comp_find("torch");
	if (c == tc || !on[0] || on[0] != tc || strcmp(pin(tc, "KIND"), "build"))
		fail("%s: %s_REF=@torch takes %s's pin from torch's source tree, so torch "
		     "must be built from source here", pins.file, c->name, c->name);
	parent(s, "torch.patch");
	key(s, "STEP", "srctorch");
}

/* C.src, C.patch (the series made for the pinned release) and, for a HIP build, C.hipify;
   the last of them ("patch" or "hipify"); the series' inputs join ins */
static const char *
treestages(const struct component *c, const char *rocmv, char ***ins, size_t *nins)
{
	char *range, *base = patchdir(c), *pd, *series, *n, *err = NULL;
	const char *last = "patch";
	struct srec *s;

	pd = release_patches(c, base, &range);
	free(base);
	if (!(series = series_digest(pd, ins, nins, &err)))
		fail("%s", err);
	n = xasprintf("%s/series", pd);
	srcstage(c);
	s = stage(c->name, "patch");
	key(s, "COMPONENT", c->name);
	key(s, "SERIES", series);
	key(s, "SERIES_FILE", n);
	subkey(s, c);
	patchrelease(s, c, range);
	free(range);
	s->idfile = 1;
	parent(s, stages[nstages - 2].name);
	if (!strcmp(pin(c, "KIND"), "build") && cf.backend == BACKEND_GFX && *pin(c, "HIPIFY")) {
		s = stage(c->name, "hipify");
		key(s, "PROJECT", pin(c, "HIPIFY"));
		key(s, "CMD", pin(c, "HIPIFY_CMD"));
		key(s, "SERIES", series);
		key(s, "SERIES_FILE", n);
		key(s, "SUBDIR", pin(c, "SUBDIR"));
		key(s, "ROCM", rocmv);
		key(s, "PY_ABI", py.abi);
		parent(s, stages[nstages - 2].name);
		last = "hipify";
	}
	free(n);
	free(series);
	free(pd);
	return last;
}

/* s is a child of each stage named in the space-separated list */
static void
parents(struct srec *s, const char *list)
{
	const char *tok, *sp;
	char *n;

	for (tok = list; tok && *tok; tok = sp) {
		sp = strchr(tok, ' ');
		n = sp ? xstrndup(tok, (size_t)(sp - tok)) : xstrdup(tok);
		parent(s, n);
		free(n);
		if (sp)
			sp++;
	}
}

/* C.deps, C.wheel (built from C.<last>, against its deps) and C.pick */
static void
wheelstages(const struct component *c, const char *last, const struct facts *fx,
            const char *dep, const char *mods)
{
	struct srec *s;
	char *n;

	depsstage(c, last);
	inputsstage(c);
	s = stage(c->name, "wheel");
	key(s, "COMPONENT", c->name);
	/* the release in the wheel's version comes from REF when it is a tag */
	key(s, "REF", pin(c, "REF"));
	key(s, "SUBDIR", pin(c, "SUBDIR"));
	key(s, "BUILD", pin(c, "BUILD"));
	key(s, "BACKEND", backend_name(cf.backend));
	key(s, "ARCH", fx->archs);
	key(s, "PY_ABI", py.abi);
	key(s, "CC_VERSION", fx->ccv);
	/* the compiler configure was given (CC=...), which the builds use too */
	key(s, "CC_CMD", strcmp(cf.cc, "cc") ? cf.cc : "");
	if (cf.backend == BACKEND_GFX)
		key(s, "ROCM", fx->rocmv);
	key(s, "FLASH", fx->flash);
	key(s, "ENV", pin(c, "ENV"));
	key(s, "MODULES", mods);
	/* the package a PEP 517 build force-includes ignored files of */
	key(s, "IMPORT", pin(c, "IMPORT"));
	profkeys(s, fx->proflist, fx->nprof);
	aotwheel(s, c);
	inputswheel(s, c);
	n = xasprintf("%s.%s", c->name, last);
	parent(s, n);
	free(n);
	n = xasprintf("%s.deps", c->name);
	parent(s, n);
	free(n);
	parents(s, dep);
	s->out = xasprintf("%s/wheels/%s", absb, c->name);
	s = stage(c->name, "pick");
	key(s, "DIST", pin(c, "DIST"));
	key(s, "PY_ABI", py.abi);
	parent(s, stages[nstages - 2].name);
}

/* C.pick of a wheel pinned as a file (C_KIND=wheel) */
static void
pinnedwheel(const struct component *c)
{
	struct srec *s = stage(c->name, "pick");
	struct stat st;
	char *ws;

	key(s, "DIST", pin(c, "DIST"));
	key(s, "PY_ABI", py.abi);
	key(s, "WHEEL", pin(c, "WHEEL"));
	if (stat(pin(c, "WHEEL"), &st) < 0)
		fail("%s: wheel pin %s: no such file", c->name, pin(c, "WHEEL"));
	ws = xasprintf("%lld %lld", (long long)st.st_size, (long long)st.st_mtime);
	key(s, "WHEEL_STAT", ws);
	free(ws);
}

/* C.install: the picked wheel into the target, or the system's copy checked (KIND=system) */
static void
installstage(const struct component *c, const char *archs)
{
	struct srec *s = stage(c->name, "install");
	char *h = NULL, *vp, *n;

	key(s, "DIST", pin(c, "DIST"));
	key(s, "PY", cf.python);
	key(s, "PY_ABI", py.abi);
	key(s, "ARCH", archs);
	key(s, "REF", pin(c, "REF"));
	if (strcmp(pin(c, "KIND"), "system")) {
		s->idkeys = "PY_ABI,DIST";
		n = xasprintf("%s.pick", c->name);
		parent(s, n);
		free(n);
		return;
	}
	s->step = "system";
	if (*py.torchdir && c == &comp_table[0]) {
		vp = xasprintf("%s/version.py", py.torchdir);
		h = sha256hex(vp);
		free(vp);
	}
	key(s, "SYSTEM", h ? h : "");
	free(h);
	key(s, "IMPORT", pin(c, "IMPORT"));
	s->idkeys = "PY_ABI,SYSTEM,IMPORT";
}

/* what the components' stages add to the stack as a whole */
struct stackparts {
	char **ins;          /* inputs of configure's (C_INPUTS archives ...) */
	size_t nins;
	struct buf imports;  /* the import names stack.smoke tries */
	struct buf comps;    /* the parts of the fat wheel */
};

/* the stages of component c; its import name joins sp->imports, a fat-wheel part
   sp->comps */
static void
compstages(const struct component *c, const struct facts *fx, struct stackparts *sp)
{
	const char *k = pin(c, "KIND"), *last;
	struct buf dep = {0}, mods = {0};

	depsof(c, &dep, &mods);
	if (!strcmp(k, "build") || !strcmp(k, "source")) {
		last = treestages(c, fx->rocmv, &sp->ins, &sp->nins);
		if (!strcmp(k, "source"))
			goto out;
		if (c == &comp_table[0] && *pin(c, "SUBSET")) {
			torchsubset(c, last, fx);
			goto out;
		}
		if (!strcmp(pin(c, "BUILD"), "cmake")) {
			cmakestages(c, last, fx, dep.s ? dep.s : "");
			goto out;
		}
		last = vllmstages(c, last);
		wheelstages(c, last, fx, dep.s ? dep.s : "", mods.s ? mods.s : "");
	} else if (!strcmp(k, "wheel")) {
		pinnedwheel(c);
	}
	installstage(c, fx->archs);
	if (*pin(c, "IMPORT"))
		bufprintf(&sp->imports, "%s%s", sp->imports.len ? " " : "", pin(c, "IMPORT"));
	if (c->fat && strcmp(k, "system"))
		bufprintf(&sp->comps, "%s%s", sp->comps.len ? " " : "", c->name);
out:
	buffree(&dep);
	buffree(&mods);
}

/* stack.smoke after every install, and stack.fat when the pins ask for a fat wheel */
static void
stackstages(const char *imports, const char *comps, const char *archs)
{
	struct srec *s = stage("stack", "smoke");
	size_t i;

	key(s, "IMPORTS", imports);
	key(s, "BACKEND", backend_name(cf.backend));
	key(s, "ARCH", archs);
	key(s, "PY", cf.python);
	key(s, "COVER", pins_stack(&pins, "COVER"));
	for (i = 0; i < nstages; i++)
		if (!strcmp(stages[i].step, "install") || !strcmp(stages[i].step, "system") ||
		    !strcmp(stages[i].step, "cmakesmoke"))
			parent(&stages[nstages - 1], stages[i].name);
	if (strcmp(pins_stack(&pins, "FAT"), "yes") || !*comps)
		return;
	s = stage("stack", "fat");
	key(s, "COMPONENTS", comps);
	key(s, "BACKEND", backend_name(cf.backend));
	key(s, "ARCH", archs);
	parent(s, "torch.pick");
	s->out = xasprintf("%s/wheels/fat", absb);
}

/* with --venv every stage that runs the target Python comes after stack.venv; with a
   pinned SDK or a system ROCm, every stage that needs ROCm comes after its check */
static void
ordering(void)
{
	size_t i;

	if (cf.venv)
		for (i = 1; i < nstages; i++)
			if (strcmp(stages[i].step, "src") && strcmp(stages[i].step, "patch") &&
			    strcmp(stages[i].step, "fat"))
				parent(&stages[i], "stack.venv");
	if (rocmsdk || rocmsys)
		for (i = 0; i < nstages; i++)
			if (needsrocm(stages[i].step) || !strcmp(stages[i].step, "smoke"))
				parent(&stages[i], "rocm.check");
}

/* the records of every stage */
static void
mkstages(char **proflist, size_t nprof)
{
	struct facts fx = { .proflist = proflist, .nprof = nprof };
	struct stackparts sp = {0};
	size_t i;

	/* in this order: the SDK pin's lines come after the compiler's */
	fx.archs = archwords();
	fx.ccv = ccversion();
	fx.rocmv = rocmversion();
	fx.flash = flashfacts();

	if (cf.venv)
		venvstage();
	sdkstages();
	for (i = 0; i < non; i++)
		if (strcmp(on[i]->kind, "sdk"))   /* the ROCm SDK: sdkstages */
			compstages(on[i], &fx, &sp);
	stackstages(sp.imports.s ? sp.imports.s : "", sp.comps.s ? sp.comps.s : "", fx.archs);
	if (cf.image)
		imagestage(proflist, nprof);
	ordering();
	for (i = 0; i < sp.nins; i++)
		addregen(sp.ins[i]);
	strs_free(sp.ins, sp.nins);
	free(fx.archs);
	free(fx.ccv);
	free(fx.rocmv);
	free(fx.flash);
	buffree(&sp.imports);
	buffree(&sp.comps);
}

/* the tools each stage's step runs, as ninja paths (none with KILN_BIN) */
static void
tooldeps(struct buf *b, const char *step, char *const *tools, size_t ntools)
{
	size_t i, j;
	unsigned want = T_STAGE;

	if (cf.kilnbin)
		return;
	for (i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (!strcmp(steps[i].step, step))
			want |= steps[i].tools;
	for (i = 0; i < sizeof toolname / sizeof toolname[0]; i++) {
		if (!(want & (1u << i)))
			continue;
		for (j = 0; j < ntools && strcmp(tools[j], toolname[i]); j++)
			;
		if (j < ntools)
			bufprintf(b, " $bdir/bin/%s", toolname[i]);
	}
}

static int
needsrocm(const char *step)
{
	size_t i;

	for (i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (!strcmp(steps[i].step, step))
			return steps[i].rocm;
	return 0;
}

/* the run options of signed stage-cache manifests (stack.env records them too) */
static void
stagekeys(struct buf *b)
{
	char *p;

	if (cf.trustedkeys && *cf.trustedkeys) {
		bufputc(b, ' ');
		p = xasprintf("--cache-trusted-keys=%s", cf.trustedkeys);
		ninja_shq(b, p);
		free(p);
	}
	if (cf.signkey && *cf.signkey) {
		bufputc(b, ' ');
		p = xasprintf("--cache-sign-key=%s", cf.signkey);
		ninja_shq(b, p);
		free(p);
	}
}

/* the line "NAME = DIR/FILE", the path quoted for the shell and escaped for ninja */
static void
qvar(struct buf *b, const char *name, const char *dir, const char *file)
{
	char *p = xasprintf("%s%s", dir, file);

	bufprintf(b, "%s = ", name);
	ninja_shq(b, p);
	bufputc(b, '\n');
	free(p);
}

/* build/stack.env: the settings stages read that are not part of any key */
static void
writeenv(const char *kbin, const char *profs)
{
	struct buf env = {0};
	char *p;

	bufputs(&env, "# stack settings for ninja/stack-steps.sh, read by kiln-stage env; written by configure\n");
	kv_put(&env, "KILN_SRC", cf.srcdir);
	kv_put(&env, "B", absb);
	kv_put(&env, "KBIN", kbin);
	kv_put(&env, "PY", cf.python);
	kv_put(&env, "MIRROR", cf.mirror ? cf.mirror : "");
	kv_put(&env, "CACHE", cf.cache);
	kv_put(&env, "JOBS", cf.jobs);
	/* team caches: where they are changes no output, so they are settings, not key inputs */
	kv_put(&env, "GIT_CACHE", cf.gitcache);
	/* where the wheel stages build: a fixed folder gives nvcc the same source paths */
	kv_put(&env, "WORK_DIR", cf.workdir);
	kv_put(&env, "CACHE_REMOTE", cf.cacheremote);
	kv_put(&env, "CACHE_TRUSTED_KEYS", cf.trustedkeys ? cf.trustedkeys : "");
	kv_put(&env, "CACHE_SIGN_KEY", cf.signkey ? cf.signkey : "");
	kv_put(&env, "DISTRIBUTE", cf.distribute);
	kv_put(&env, "DISTRIBUTE_HOSTS", cf.disthosts);
	kv_put(&env, "ROCM_PATH", cf.rocm);
	/* --arch in the spellings its consumers want, beside the keys' ARCH (one space between
	   names; HACKING.md, "One spelling of an arch list"): no step converts one to another */
	p = archlist(",");
	kv_put(&env, "ARCH_ARG", p);   /* --arch's own: fatwheel, vllm-check, build-info */
	free(p);
	p = archlist(";");
	kv_put(&env, "ARCH_CMAKE", p);   /* a CMake list: PYTORCH_ROCM_ARCH, GPU_TARGETS */
	free(p);
	p = archcuda();
	kv_put(&env, "ARCH_CUDA", p);   /* TORCH_CUDA_ARCH_LIST */
	free(p);
	kv_put(&env, "BACKEND", backend_name(cf.backend));
	kv_put(&env, "PROFILES", profs);
	kv_put(&env, "PINS", pins.file);
	/* guard: a build's network attempt fails its stage; allow: --allow-network */
	kv_put(&env, "NETWORK", cf.allownetwork ? "allow" : "guard");
	p = xasprintf("%s/stack.env", absb);
	commit(p, &env, 0);
	free(p);
	buffree(&env);
}

/* stack.ninja's variables: the stage runner, the settings, keys, logs, the stage cache */
static void
stackvars(struct buf *b, const char *kbin)
{
	char *p;

	bufputs(b, "# Generated by configure (kiln-stage graph, tools/kiln-stage/graph.c): the stages of\n"
	           "# the stack. Each stage's inputs are in $bdir/keys/STAGE; its stamp in\n"
	           "# $bdir/stamp/STAGE; its log in $bdir/logs/STAGE.log.\n");
	qvar(b, "kstage", kbin, "/kiln-stage");
	qvar(b, "stackenv", absb, "/stack.env");
	qvar(b, "qkeys", absb, "/keys");
	qvar(b, "qlogs", absb, "/logs");
	bufputs(b, "stagecache =");
	if (cf.stagecache) {
		bufputc(b, ' ');
		p = xasprintf("--stage-cache=%s", cf.stagecache);
		ninja_shq(b, p);
		free(p);
		stagekeys(b);
	}
	bufputs(b, "\ninclude $srcdir/ninja/stack.ninja\n\n");
}

/* ROCm is missing for a GPU build: the stages that need it stop at rocm.missing with the
   reason; 1 when it is */
static int
rocmmissing(struct buf *b)
{
	char *al, *p;
	int missing;

	if (cf.backend != BACKEND_GFX || rocmsdk)
		return 0;
	missing = !rocmat(cf.rocm);
	if (missing) {
		al = archlist(",");
		bufputs(b, "# ROCm is missing: the stages that need it stop here with the reason\n"
		           "build $bdir/stamp/rocm.missing: missing\n  what = ");
		p = xasprintf("ROCm was not found at %s (no bin/hipcc, no llvm/bin/clang), and "
		              "--arch=%s builds for AMD GPUs. Install ROCm (https://rocm.docs.amd.com), "
		              "or rerun configure with --rocm-path=DIR, or --arch=cpu for a CPU-only stack.",
		              cf.rocm, al);
		ninja_shq(b, p);
		free(p);
		bufputs(b, "\n\n");
		free(al);
	}
	return missing;
}

/* " || TOOLS" the step runs (and rocm.missing where it needs ROCm and ROCm is missing) */
static void
orderonly(struct buf *b, const struct srec *s, char *const *tools, size_t ntools, int nocrocm)
{
	struct buf t = {0};

	tooldeps(&t, s->step, tools, ntools);
	if (nocrocm && needsrocm(s->step))
		bufputs(&t, " $bdir/stamp/rocm.missing");
	if (t.len)
		bufprintf(b, " ||%s", t.s);
	buffree(&t);
}

/* a quoted --out=DIR */
static void
outopt(struct buf *b, const struct srec *s)
{
	char *p = xasprintf("--out=%s", s->out);

	ninja_shq(b, p);
	free(p);
}

/* the stage's edge: parents as inputs (kiln-stage reads them from $in), the key file and
   the tools the step runs */
static void
stageedge(struct buf *b, const struct srec *s, char *const *tools, size_t ntools, int nocrocm)
{
	char *p;
	size_t j;

	bufprintf(b, "build $bdir/stamp/%s: %s", s->name, s->rule ? s->rule : "stage");
	for (j = 0; j < s->np; j++)
		bufprintf(b, " $bdir/stamp/%s", s->parent[j]);
	bufprintf(b, " | $bdir/keys/%s", s->name);
	orderonly(b, s, tools, ntools, nocrocm);
	bufprintf(b, "\n  stage = %s\n  step = %s\n  comp = %s\n", s->name, s->step, s->comp);
	if (s->rule && !strcmp(s->rule, "src") && depfile_safe(absb))
		bufprintf(b, "  srcdep = $bdir/src/%s.ref.d\n", s->comp);
	if (!s->out && !s->idfile && !s->idpath && !s->idkeys)
		return;
	bufputs(b, "  opts =");
	if (s->out) {
		bufputc(b, ' ');
		outopt(b, s);
	}
	if (s->idfile || s->idpath) {
		bufputc(b, ' ');
		p = s->idpath ? xasprintf("--id-file=%s/%s", absb, s->idpath)
		              : xasprintf("--id-file=%s/src/%s.id", absb, s->comp);
		ninja_shq(b, p);
		free(p);
	}
	if (s->idkeys)
		bufprintf(b, " --id-keys=%s", s->idkeys);
	bufputc(b, '\n');
}

/* NAME.verify for a stage with outputs: rebuild beside them and compare */
static void
verifyedge(struct buf *b, const struct srec *s, char *const *tools, size_t ntools)
{
	size_t j;

	bufprintf(b, "build %s.verify: verify | $bdir/stamp/%s", s->name, s->name);
	orderonly(b, s, tools, ntools, 0);
	bufprintf(b, "\n  stage = %s\n  step = %s\n  comp = %s\n  stamp = $bdir/stamp/%s\n",
	          s->name, s->step, s->comp, s->name);
	bufputs(b, "  parents =");
	for (j = 0; j < s->np; j++)
		bufprintf(b, " $bdir/stamp/%s", s->parent[j]);
	bufputs(b, "\n  opts = ");
	outopt(b, s);
	bufputc(b, '\n');
}

/* `stack`: the smoke test, the fat wheel, the image, and the source-only components */
static void
stacktarget(struct buf *b)
{
	size_t i;

	bufputs(b, "build stack: phony");
	for (i = 0; i < nstages; i++)
		if (!strcmp(stages[i].name, "stack.smoke") || !strcmp(stages[i].name, "stack.fat") ||
		    !strcmp(stages[i].name, "stack.image") ||
		    (!strcmp(stages[i].step, "patch") &&
		     !strcmp(pin(comp_find(stages[i].comp), "KIND"), "source")))
			bufprintf(b, " $bdir/stamp/%s", stages[i].name);
	bufputc(b, '\n');
}

static void
writestack(char *const *tools, size_t ntools, const char *profs)
{
	struct buf b = {0};
	char *kbin, *p;
	size_t i;
	int nocrocm;

	if (cf.kilnbin) {
		if (!(kbin = realpath(cf.kilnbin, NULL)))
			fail("KILN_BIN=%s: no such folder", cf.kilnbin);
	} else {
		kbin = xasprintf("%s/bin", absb);
	}
	writeenv(kbin, profs);
	stackvars(&b, kbin);
	nocrocm = rocmmissing(&b);
	for (i = 0; i < nstages; i++) {
		const struct srec *s = &stages[i];

		p = xasprintf("%s/keys/%s", absb, s->name);
		commit(p, &s->key, 0);
		free(p);
		stageedge(&b, s, tools, ntools, nocrocm);
		if (s->out)
			verifyedge(&b, s, tools, ntools);
		/* the name people type; ninja -t query NAME lists the tools it runs too */
		bufprintf(&b, "build %s: phony $bdir/stamp/%s", s->name, s->name);
		orderonly(&b, s, tools, ntools, 0);
		bufputs(&b, "\n\n");
	}
	stacktarget(&b);
	p = xasprintf("%s/stack.ninja", cf.builddir);
	commit(p, &b, 1);
	free(p);
	free(kbin);
	buffree(&b);
}

/* a stack without torch (--without=torch) holds only CMake components (the ggml track);
   any other component is a Python package built on torch */
static void
torchless(void)
{
	size_t i;

	if (non && on[0] == &comp_table[0])
		return;
	for (i = 0; i < non; i++)
		if (strcmp(on[i]->kind, "sdk") && strcmp(pin(on[i], "BUILD"), "cmake"))
			fail("%s: the stack drops torch, which the stack is built on (%s is built against "
			     "it); pin a prebuilt one with --pin torch=wheel:/path.whl or --pin torch=system "
			     "(only a stack of CMake components, C_BUILD=cmake, builds without torch)",
			     pins.file, on[i]->name);
}

/* the pins (the pins file, then --pin), the components the stack builds (on[]); the
   pins file becomes configure's input in planstack, after the tools' inputs */
static void
loadpins(void)
{
	char *pf, *err = NULL;
	size_t i;

	pf = cf.pinsfile ? xstrdup(cf.pinsfile) : xasprintf("%s/env/versions.env", cf.srcdir);
	if (pins_load(&pins, pf, &err) < 0)
		fail("%s", err);
	free(pf);
	for (i = 0; i < cf.npinover; i++)
		if (pins_override(&pins, cf.pinover[i], &err) < 0)
			fail("%s", err);
	complist(pins_stack(&pins, "WITH"), pins.file, 2);
	complist(pins_stack(&pins, "WITHOUT"), pins.file, -2);
	flashaiter();
	for (i = 0; i < comp_count; i++)
		if (wanted[i] > 0 || (wanted[i] == 0 && comp_table[i].isdefault))
			on[non++] = &comp_table[i];
	torchless();
}

/* component c's pins say what its kind needs: a source's URL and REF, a wheel's file */
static void
checkpins(const struct component *c)
{
	const char *k = pin(c, "KIND");
	struct stat st;

	if (!strcmp(k, "build") || !strcmp(k, "source")) {
		if (!*pin(c, "URL"))
			fail("%s: no %s_URL for component %s (add %s_URL=https://... or pin a prebuilt "
			     "wheel: --pin %s=wheel:/path.whl)", pins.file, c->name, c->name, c->name, c->name);
		if (!*pin(c, "REF"))
			fail("%s: no %s_REF for component %s (a tag, branch or commit)", pins.file,
			     c->name, c->name);
	}
	if (!strcmp(k, "wheel")) {
		if (!*pin(c, "WHEEL"))
			fail("%s: %s is a prebuilt wheel here (%s_KIND=wheel): name it with --pin "
			     "%s=wheel:/path/to/%s-VERSION-TAGS.whl", pins.file, c->name, c->name,
			     c->name, pin(c, "DIST"));
		if (stat(pin(c, "WHEEL"), &st) < 0)
			fail("%s: wheel pin %s: no such file", c->name, pin(c, "WHEEL"));
		checkpath(c->name, pin(c, "WHEEL"), 0);
	}
	if (*pin(c, "DIST") && !isdistname(pin(c, "DIST")))
		fail("%s: %s_DIST=%s is not a distribution name", pins.file, c->name, pin(c, "DIST"));
}

/* the profiles: env/arch/BACKEND.env, then env/arch/ARCH.env for each target, into
   *proflist; returns them "|"-separated (a path may hold spaces, never "|": conf.c
   refuses it), fresh */
static char *
profiles(char ***proflist, size_t *nprof)
{
	struct buf profs = {0};
	struct kvfile f;
	struct stat st;
	char *p, *err = NULL;
	const char *n;
	size_t i;

	*proflist = NULL;
	*nprof = 0;
	for (i = 0; i <= cf.narch; i++) {
		n = i == 0 ? backend_name(cf.backend) : cf.arch[i - 1];
		if (i > 0 && !strcmp(n, backend_name(cf.backend)))
			continue;
		p = xasprintf("%s/env/arch/%s.env", cf.srcdir, n);
		if (stat(p, &st) < 0) {
			free(p);
			continue;
		}
		if (kv_load(&f, p, &err) < 0)
			fail("%s (a profile envclean applies to the builds)", err);
		kv_free(&f);
		*proflist = xrealloc(*proflist, (*nprof + 1) * sizeof **proflist);
		(*proflist)[(*nprof)++] = p;
		bufprintf(&profs, "%s%s", profs.len ? "|" : "", p);
	}
	return bufdetach(&profs);
}

/* path is an input of configure's (its change reruns it), when it is there */
static void
regenif(char *path)
{
	struct stat st;

	if (stat(path, &st) == 0)
		addregen(path);
	free(path);
}

/* configure's stack inputs: the profiles, the pins, every patch folder */
static void
stackinputs(void)
{
	char **envs, *d = xasprintf("%s/env/arch", cf.srcdir);
	size_t i, n;

	envs = lsdir(d, ".env", 0, &n);
	for (i = 0; i < n; i++)
		regenif(xasprintf("%s/%s", d, envs[i]));
	strs_free(envs, n);
	free(d);
	regenif(xasprintf("%s/env/versions.env", cf.srcdir));
	regenif(xasprintf("%s/patches", cf.srcdir));
	for (i = 0; i < comp_count; i++)
		regenif(patchdir(&comp_table[i]));
}

/* whether there is a stack to build: an --arch and a pin file (a source tree without
   env/versions.env, a partial copy, has none) */
static int
hasstack(void)
{
	struct stat st;
	char *p;
	int r;

	if (!cf.narch || cf.pinsfile)
		return cf.narch > 0;
	p = xasprintf("%s/env/versions.env", cf.srcdir);
	r = stat(p, &st) == 0;
	free(p);
	return r;
}

/* the checks on the stack that start no process (the pins, the components they and
   --with/--without leave on), then the target Python's (one run of it): before the
   tools' probes (pkg-config, cc), so a refused configure starts none of them */
void
prestack(void)
{
	size_t i;

	if (!hasstack())
		return;
	loadpins();
	for (i = 0; i < non; i++)
		checkpins(on[i]);
	checkpython();
}

/* the stack's inputs (pins file, profiles, patch folders: prestack checked the pins),
   its profiles */
static char *
planstack(char ***proflist, size_t *nprof)
{
	char *profs;

	addregen(pins.file);
	profs = profiles(proflist, nprof);
	stackinputs();
	return profs;
}

/* the stack: checks, stage records, keys, stack.env and stack.ninja; the include of
   stack.ninja and the default targets go to b */
void
stack(struct buf *b, char *const *tools, size_t ntools)
{
	struct buf fb = {0};
	char *p, *k, *profs, **proflist;
	size_t nprof;

	if (!(absb = realpath(cf.builddir, NULL)) &&
	    (os_mkdirs(cf.builddir, 0777) < 0 || !(absb = realpath(cf.builddir, NULL))))
		fail("cannot create %s:", cf.builddir);
	p = xasprintf("%s/env/versions.env", cf.srcdir);
	if (!pins.file) {
		/* a source tree without env/versions.env (a partial copy, prestack's hasstack):
		   no stack to build */
		warn("warning: no pin file %s; the stack graph is empty", p);
		bufputs(&fb, "# no pin file: no stages\nbuild stack: phony\n");
		free(p);
		p = xasprintf("%s/stack.ninja", cf.builddir);
		commit(p, &fb, 1);
	} else {
		profs = planstack(&proflist, &nprof);
		pinfit();
		free(p);
		p = xasprintf("%s/keys", absb);
		k = xasprintf("%s/stamp", absb);
		if (os_mkdirs(p, 0777) < 0 || os_mkdirs(k, 0777) < 0)
			fail("cannot create %s:", p);
		free(k);
		rulehash = rulesdigest();
		mkstages(proflist, nprof);
		writestack(tools, ntools, profs);
		strs_free(proflist, nprof);
		free(profs);
	}
	free(p);
	buffree(&fb);
	bufputs(b, "\n# the stack: stages of each component (tools/kiln-stage/graph.c)\n"
	           "include $bdir/stack.ninja\n");
	bufputs(b, cf.kilnbin ? "default stack\n" : "default tools stack\n");
}
