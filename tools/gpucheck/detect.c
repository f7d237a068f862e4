/* GPU detection: AMD from the KFD topology in sysfs, NVIDIA from /proc/driver/nvidia
   and, when present, libcuda.so.1 (opened at run time; no link-time CUDA dependency). */
#include "gpucheck.h"
#include "os.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FAIL(...) do { seterr(err, __VA_ARGS__); return -1; } while (0)

/* PCI device ids for kernels whose KFD lacks gfx_target_version (before 2021), and
   marketing names where the id names one product line */
static const struct {
	unsigned id;
	const char *target, *name;
} devids[] = {
	{0x7300, "gfx803", "AMD Radeon R9 Fury / Nano"},
	{0x67df, "gfx803", "AMD Radeon RX 470/480/570/580"},
	{0x6fdf, "gfx803", "AMD Radeon RX 580 2048SP"},
	{0x67ef, "gfx803", "AMD Radeon RX 460/560"},
	{0x699f, "gfx803", "AMD Radeon RX 550"},
	{0x6860, "gfx900", "AMD Radeon Instinct MI25"},
	{0x687f, "gfx900", "AMD Radeon RX Vega 56/64"},
	{0x15dd, "gfx902", "AMD Radeon Vega (Raven Ridge)"},
	{0x66a1, "gfx906", "AMD Radeon Instinct MI50/MI60"},
	{0x66af, "gfx906", "AMD Radeon VII"},
	{0x1636, "gfx90c", "AMD Radeon Graphics (Renoir)"},
	{0x1638, "gfx90c", "AMD Radeon Graphics (Cezanne)"},
	{0x738c, "gfx908", "AMD Instinct MI100"},
	{0x7408, "gfx90a", "AMD Instinct MI250X"},
	{0x740c, "gfx90a", "AMD Instinct MI250/MI250X"},
	{0x740f, "gfx90a", "AMD Instinct MI210"},
	{0x74a1, "gfx942", "AMD Instinct MI300X"},
	{0x731f, "gfx1010", "AMD Radeon RX 5600/5700"},
	{0x73bf, "gfx1030", "AMD Radeon RX 6800/6900"},
	{0x73df, "gfx1031", "AMD Radeon RX 6700/6750"},
	{0x73ff, "gfx1032", "AMD Radeon RX 6600"},
	{0x163f, "gfx1033", "AMD Custom GPU 0405 (Van Gogh)"},
	{0x743f, "gfx1034", "AMD Radeon RX 6400/6500"},
	{0x164d, "gfx1035", "AMD Radeon 680M (Rembrandt)"},
	{0x164e, "gfx1036", "AMD Radeon Graphics (Raphael)"},
	{0x744c, "gfx1100", "AMD Radeon RX 7900 XT/XTX"},
	{0x7448, "gfx1100", "AMD Radeon PRO W7900"},
	{0x747e, "gfx1101", "AMD Radeon RX 7700/7800"},
	{0x7480, "gfx1102", "AMD Radeon RX 7600"},
	{0x15bf, "gfx1103", "AMD Radeon 780M (Phoenix)"},
	{0x150e, "gfx1150", "AMD Radeon 890M (Strix Point)"},
	{0x1586, "gfx1151", "AMD Radeon 8060S (Strix Halo)"},
	{0x7590, "gfx1200", "AMD Radeon RX 9060"},
	{0x7550, "gfx1201", "AMD Radeon RX 9070"},
};

int
devid_lookup(unsigned devid, const char **target, const char **name)
{
	size_t i;

	for (i = 0; i < sizeof devids / sizeof devids[0]; i++)
		if (devids[i].id == devid) {
			*target = devids[i].target;
			*name = devids[i].name;
			return 0;
		}
	return -1;
}

void
gfxname(unsigned major, unsigned minor, unsigned step, char *buf, size_t len)
{
	snprintf(buf, len, "gfx%u%x%x", major, minor & 0xff, step & 0xff);
}

int
gfxversion(const char *proc, char *buf, size_t len)
{
	size_t k, i;
	unsigned major = 0;
	char mn[2] = {0}, st[2] = {0};

	if (!startswith(proc, "gfx"))
		return -1;
	k = strlen(proc);
	if (k < 6 || k > 8 || !isxdigit((unsigned char)proc[k - 1]) || !isxdigit((unsigned char)proc[k - 2]))
		return -1;
	/* gfx + decimal major + one hex digit minor + one hex digit stepping */
	for (i = 3; i < k - 2; i++) {
		if (!isdigit((unsigned char)proc[i]))
			return -1;
		major = major * 10 + (unsigned)(proc[i] - '0');
	}
	mn[0] = proc[k - 2];
	st[0] = proc[k - 1];
	snprintf(buf, len, "%u.%lu.%lu", major, strtoul(mn, NULL, 16), strtoul(st, NULL, 16));
	return 0;
}

int
parse_override(const char *v, char *target, size_t len)
{
	unsigned major, minor, step;
	char dummy;

	if (sscanf(v, "%u.%u.%u%c", &major, &minor, &step, &dummy) != 3)
		return -1;
	if (major > 63 || minor > 255 || step > 255)
		return -1;
	gfxname(major, minor, step, target, len);
	return 0;
}

static void
addgpu(struct gpulist *l, const struct gpu *g)
{
	l->g = xgrow(l->g, &l->cap, l->n + 1, sizeof *l->g);
	l->g[l->n] = *g;
	l->g[l->n].index = (int)l->n;
	l->n++;
}

void
gpulist_free(struct gpulist *l)
{
	free(l->g);
	memset(l, 0, sizeof *l);
}

/* one KFD properties file: the keys we use */
struct kfdprops {
	uint64_t simd_count, simd_per_cu, gfx_target_version, device_id, vendor_id;
	uint64_t wave_front_size, heap_type, size_in_bytes;
	int has_gfxv, nlines;
};

/* the largest values a GPU reports; anything beyond is a forged or corrupt file */
#define KFD_MAXSIMD 65536u                 /* MI300X has 1216 */
#define KFD_MAXSIMDPERCU 16u               /* 4 on GCN/CDNA, 2 on RDNA */
#define KFD_MAXBANK ((uint64_t)1 << 50)    /* 1 PiB in one memory bank */

/* Numbers no GPU reports are bad input: a made-up target must not come out of them.
   gfx_target_version is major*10000 + minor*100 + stepping with major 1-63 and minor
   and stepping one hex digit each (0-15) in the target's name; 0 means not reported. */
static int
kfdrange(const char *path, const struct kfdprops *k, char **err)
{
	uint64_t v = k->gfx_target_version;

	if (k->simd_count > KFD_MAXSIMD)
		FAIL("%s: simd_count %llu is more than any GPU has (at most %u)", path,
		     (unsigned long long)k->simd_count, KFD_MAXSIMD);
	if (k->simd_per_cu > KFD_MAXSIMDPERCU)
		FAIL("%s: simd_per_cu %llu is more than any GPU has (at most %u)", path,
		     (unsigned long long)k->simd_per_cu, KFD_MAXSIMDPERCU);
	if (v && (v / 10000 == 0 || v / 10000 > 63 || v / 100 % 100 > 15 || v % 100 > 15))
		FAIL("%s: gfx_target_version %llu is not a GPU version (major 1-63, minor and "
		     "stepping 0-15: e.g. 110501 for gfx1151)", path, (unsigned long long)v);
	if (k->wave_front_size && k->wave_front_size != 32 && k->wave_front_size != 64)
		FAIL("%s: wave_front_size %llu is not 32 or 64", path, (unsigned long long)k->wave_front_size);
	if (k->device_id > 0xffff)
		FAIL("%s: device_id %llu is not a PCI device id (at most 65535)", path,
		     (unsigned long long)k->device_id);
	if (k->vendor_id > 0xffff)
		FAIL("%s: vendor_id %llu is not a PCI vendor id (at most 65535)", path,
		     (unsigned long long)k->vendor_id);
	if (k->size_in_bytes > KFD_MAXBANK)
		FAIL("%s: size_in_bytes %llu is more memory than a GPU has (at most 1 PiB a bank)", path,
		     (unsigned long long)k->size_in_bytes);
	return 0;
}

/* Parse "key value" lines, skipping lines that are not that shape (as the thunk does).
   Garbage (NUL or control bytes, numbers that overflow) is an error naming the offset. */
static int
kfdparse(const char *path, struct kfdprops *k, char **err)
{
	struct buf b = {0};
	size_t i, ls, ke, vs, ve;
	uint64_t v;
	const char *s;

	memset(k, 0, sizeof *k);
	/* a FIFO or device planted in a captured tree must not hang or be read */
	if (os_readreg(path, 0, &b, 1 << 20, err) < 0)
		return -1;
	s = b.s ? b.s : "";
	for (i = 0; i < b.len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == 0 || (c < 32 && c != '\n' && c != '\t' && c != '\r') || c == 127) {
			buffree(&b);
			FAIL("%s: not a KFD properties file (byte 0x%02x at offset %zu)", path, c, i);
		}
	}
	for (ls = 0; ls < b.len; ls = ve + 1) {
		ve = ls;
		while (ve < b.len && s[ve] != '\n')
			ve++;
		ke = ls;
		while (ke < ve && (islower((unsigned char)s[ke]) || isdigit((unsigned char)s[ke]) || s[ke] == '_'))
			ke++;
		if (ke == ls || ke >= ve || s[ke] != ' ')
			continue;
		vs = ke + 1;
		if (vs >= ve || !isdigit((unsigned char)s[vs]))
			continue;
		v = 0;
		for (i = vs; i < ve && isdigit((unsigned char)s[i]); i++) {
			if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10) {
				buffree(&b);
				FAIL("%s: number too large at offset %zu", path, vs);
			}
			v = v * 10 + (uint64_t)(s[i] - '0');
		}
		if (i < ve && s[i] != '\r' && s[i] != ' ')
			continue;
		k->nlines++;
#define KEY(name) (ke - ls == sizeof #name - 1 && memcmp(s + ls, #name, ke - ls) == 0)
		if (KEY(simd_count))
			k->simd_count = v;
		else if (KEY(simd_per_cu))
			k->simd_per_cu = v;
		else if (KEY(gfx_target_version))
			k->gfx_target_version = v, k->has_gfxv = 1;
		else if (KEY(device_id))
			k->device_id = v;
		else if (KEY(vendor_id))
			k->vendor_id = v;
		else if (KEY(wave_front_size))
			k->wave_front_size = v;
		else if (KEY(heap_type))
			k->heap_type = v;
		else if (KEY(size_in_bytes))
			k->size_in_bytes = v;
#undef KEY
	}
	buffree(&b);
	if (k->nlines == 0)
		FAIL("%s: not a KFD properties file (no 'key value' line at offset 0)", path);
	return kfdrange(path, k, err);
}

static int
numcmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* the node numbers in a folder, sorted */
static long *
numdirs(const char *dir, size_t *n)
{
	struct strv names = {0};
	long *v = NULL;
	size_t cap = 0, i;
	char *end;

	*n = 0;
	if (os_listdir(dir, &names) < 0)
		return NULL;
	for (i = 0; i < names.n; i++) {
		if (!isdigit((unsigned char)names.v[i][0]))
			continue;
		long x = strtol(names.v[i], &end, 10);
		if (*end)
			continue;
		v = xgrow(v, &cap, *n + 1, sizeof *v);
		v[(*n)++] = x;
	}
	strv_free(&names);
	if (*n)
		qsort(v, *n, sizeof *v, numcmp);
	return v;
}

/* "amdgpu VERSION" from the module's version file, or "" */
static void
amdgpu_version(const char *sysfs, char *drv, size_t len)
{
	char *path = xasprintf("%s/module/amdgpu/version", sysfs);
	struct buf vb = {0};

	if (os_readreg(path, 0, &vb, 256, NULL) == 0 && vb.len) {
		snprintf(drv, len, "amdgpu %s", vb.s);
		strrtrim(drv, " \t\r\n");
	}
	free(path);
	buffree(&vb);
}

/* a node's identity: target, name and size, from its properties and gpucheck's table */
static void
amdgpu_from(struct gpu *g, const struct kfdprops *k, long id, const char *drv)
{
	const char *t = NULL, *nm = NULL;

	memset(g, 0, sizeof *g);
	g->vendor = "amd";
	g->node = (int)id;
	g->devid = (unsigned)k->device_id;
	g->wave = (unsigned)k->wave_front_size;
	if (k->simd_per_cu)
		g->cus = (unsigned)(k->simd_count / k->simd_per_cu);
	devid_lookup(g->devid, &t, &nm);
	if (k->has_gfxv && k->gfx_target_version) {
		uint64_t v = k->gfx_target_version;

		gfxname((unsigned)(v / 10000), (unsigned)(v / 100 % 100), (unsigned)(v % 100),
		        g->real, sizeof g->real);
	} else if (t) {
		snprintf(g->real, sizeof g->real, "%.*s", (int)sizeof g->real - 1, t);
	}
	if (nm)
		snprintf(g->name, sizeof g->name, "%.*s", (int)sizeof g->name - 1, nm);
	snprintf(g->driver, sizeof g->driver, "%.*s", (int)sizeof g->driver - 1, drv);
}

/* VRAM: the frame-buffer heaps (public 1, private 2) of the node's banks */
static int
amdgpu_vram(struct gpu *g, const char *nodes, long id, char **err)
{
	char *bdir = xasprintf("%s/%ld/mem_banks", nodes, id), *path = NULL;
	size_t nb, j;
	long *banks = numdirs(bdir, &nb);
	struct kfdprops mk;
	int rc = 0;

	for (j = 0; j < nb && rc == 0; j++) {
		free(path);
		path = xasprintf("%s/%ld/properties", bdir, banks[j]);
		if (kfdparse(path, &mk, err) < 0) {
			rc = -1;
			break;
		}
		if (mk.heap_type == 1 || mk.heap_type == 2)
			g->vram += mk.size_in_bytes;
		if (g->vram > KFD_MAXBANK) {
			seterr(err, "%s: size_in_bytes: the node's banks add up to more memory than "
			       "a GPU has (at most 1 PiB)", path);
			rc = -1;
		}
	}
	free(path);
	free(banks);
	free(bdir);
	return rc;
}

/* overrides, exactly as the thunk reads them: the per-node one first */
static void
amdgpu_override(struct gpu *g, long id)
{
	char pn[48];
	const char *ov;

	snprintf(pn, sizeof pn, "HSA_OVERRIDE_GFX_VERSION_%ld", id);
	ov = getenv(pn);
	if (!ov) {
		snprintf(pn, sizeof pn, "HSA_OVERRIDE_GFX_VERSION");
		ov = getenv(pn);
	}
	snprintf(g->target, sizeof g->target, "%.*s", (int)sizeof g->target - 1, g->real);
	if (!ov)
		return;
	snprintf(g->ovvar, sizeof g->ovvar, "%.*s", (int)sizeof g->ovvar - 1, pn);
	snprintf(g->ovval, sizeof g->ovval, "%.*s", (int)sizeof g->ovval - 1, ov);
	if (parse_override(ov, g->target, sizeof g->target) < 0) {
		g->ovbad = 1;
		snprintf(g->target, sizeof g->target, "%.*s", (int)sizeof g->target - 1, g->real);
	}
}

static int
detect_amd(struct gpulist *l, const char *sysfs, char **err)
{
	char *nodes = xasprintf("%s/class/kfd/kfd/topology/nodes", sysfs), *path;
	char drv[64] = "";
	long *ids;
	size_t n, i;
	struct kfdprops k;
	struct gpu g;
	int rc = 0;

	ids = numdirs(nodes, &n);
	amdgpu_version(sysfs, drv, sizeof drv);
	for (i = 0; i < n && rc == 0; i++) {
		path = xasprintf("%s/%ld/properties", nodes, ids[i]);
		rc = kfdparse(path, &k, err);
		free(path);
		if (rc < 0 || k.simd_count == 0)
			continue; /* unreadable, or a CPU node */
		amdgpu_from(&g, &k, ids[i], drv);
		if ((rc = amdgpu_vram(&g, nodes, ids[i], err)) < 0)
			continue;
		amdgpu_override(&g, ids[i]);
		addgpu(l, &g);
	}
	free(ids);
	free(nodes);
	return rc;
}

/* the text after "key:" on a line of an NVIDIA information file */
static void
infoval(const char *text, const char *key, char *out, size_t len)
{
	const char *s = text, *e;
	size_t k = strlen(key);

	out[0] = 0;
	for (; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
		if (strncmp(s, key, k) != 0 || s[k] != ':')
			continue;
		s += k + 1;
		while (*s == ' ' || *s == '\t')
			s++;
		e = strchr(s, '\n');
		if (!e)
			e = s + strlen(s);
		snprintf(out, len, "%.*s", (int)(e - s), s);
		strrtrim(out, " \t\r\n");
		return;
	}
}

typedef int (*cuInit_t)(unsigned);
typedef int (*cuDeviceGetCount_t)(int *);
typedef int (*cuDeviceGet_t)(int *, int);
typedef int (*cuDeviceGetAttribute_t)(int *, int, int);
typedef int (*cuDeviceGetName_t)(char *, int, int);
typedef int (*cuDeviceTotalMem_t)(size_t *, int);
typedef int (*cuDeviceGetPCIBusId_t)(char *, int, int);

/* fill compute capability, SMs, memory from libcuda, matching devices by PCI bus id;
   devices CUDA sees that /proc did not list are added */
static void
cuda_fill(struct gpulist *l, size_t first)
{
	void *h;
	cuInit_t init;
	cuDeviceGetCount_t count;
	cuDeviceGet_t get;
	cuDeviceGetAttribute_t attr;
	cuDeviceGetName_t name;
	cuDeviceTotalMem_t mem;
	cuDeviceGetPCIBusId_t bus;
	int n = 0, i, dev, ma, mi, sm;
	size_t j, tm;
	char bid[32], nm[128];
	struct gpu g, *p;

	/* every device, whatever CUDA_VISIBLE_DEVICES hides (gpucheck env reports that) */
	unsetenv("CUDA_VISIBLE_DEVICES");
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	init = (cuInit_t)dlsym(h, "cuInit");
	count = (cuDeviceGetCount_t)dlsym(h, "cuDeviceGetCount");
	get = (cuDeviceGet_t)dlsym(h, "cuDeviceGet");
	attr = (cuDeviceGetAttribute_t)dlsym(h, "cuDeviceGetAttribute");
	name = (cuDeviceGetName_t)dlsym(h, "cuDeviceGetName");
	mem = (cuDeviceTotalMem_t)dlsym(h, "cuDeviceTotalMem_v2");
	bus = (cuDeviceGetPCIBusId_t)dlsym(h, "cuDeviceGetPCIBusId");
	if (!init || !count || !get || !attr || init(0) != 0 || count(&n) != 0)
		n = 0;
	for (i = 0; i < n; i++) {
		if (get(&dev, i) != 0 || attr(&ma, 75, dev) != 0 || attr(&mi, 76, dev) != 0)
			continue;
		bid[0] = 0;
		if (bus && bus(bid, sizeof bid, dev) != 0)
			bid[0] = 0;
		p = NULL;
		for (j = first; j < l->n; j++)
			if (bid[0] && strcasecmp(l->g[j].bus, bid) == 0)
				p = &l->g[j];
		if (!p) {
			memset(&g, 0, sizeof g);
			g.vendor = "nvidia";
			g.node = -1;
			snprintf(g.bus, sizeof g.bus, "%.*s", (int)sizeof g.bus - 1, bid);
			if (l->n > first)
				snprintf(g.driver, sizeof g.driver, "%.*s", (int)sizeof g.driver - 1, l->g[first].driver);
			addgpu(l, &g);
			p = &l->g[l->n - 1];
		}
		snprintf(p->real, sizeof p->real, "sm_%d%d", ma, mi);
		snprintf(p->target, sizeof p->target, "%.*s", (int)sizeof p->target - 1, p->real);
		if (attr(&sm, 16, dev) == 0)
			p->cus = (unsigned)sm;
		if (mem && mem(&tm, dev) == 0)
			p->vram = tm;
		if (!p->name[0] && name && name(nm, sizeof nm, dev) == 0)
			snprintf(p->name, sizeof p->name, "%.*s", (int)sizeof p->name - 1, nm);
		p->wave = 32;
	}
	/* libcuda stays loaded: unloading a driver library is not safe */
}

/* hand the message e on to the caller's err (or free it when err is NULL); returns -1 */
static int
errmove(char **err, char *e)
{
	if (err)
		*err = e;
	else
		free(e);
	return -1;
}

/* the driver version from procfs's driver/nvidia/version into drv: 1, 0 when there is no
   NVIDIA driver, -1 with *err for a file that is not its version file */
static int
nvdriver(const char *procfs, char *drv, size_t len, char **err)
{
	char *path = xasprintf("%s/driver/nvidia/version", procfs), *e = NULL;
	struct buf b = {0};
	const char *s;
	int rc = 1;

	if (os_readreg(path, 0, &b, 1 << 16, &e) < 0) {
		free(path);
		buffree(&b);
		/* no NVIDIA driver; but a FIFO or device in its place is bad input */
		if (errno == EINVAL || errno == EISDIR)
			return errmove(err, e);
		free(e);
		return 0;
	}
	/* "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  580.159.04  ...":
	   the version is the first word of digits and dots on that line */
	s = b.s ? strstr(b.s, "NVRM version:") : NULL;
	if (!s) {
		rc = seterr(err, "%s: not an NVIDIA driver version file (no 'NVRM version:' at offset 0)", path);
	} else {
		for (s += 13; *s && *s != '\n'; s += strcspn(s, " \t\n")) {
			s += strspn(s, " \t");
			if (isdigit((unsigned char)s[0]) && strchr(s, '.') && strspn(s, "0123456789.") > 2 &&
			    strspn(s, "0123456789.") == strcspn(s, " \t\n")) {
				snprintf(drv, len, "%.*s", (int)strcspn(s, " \t\n"), s);
				break;
			}
		}
		if (!drv[0])
			rc = seterr(err, "%s: no version number on its NVRM line (offset %zu)", path,
			            (size_t)(strstr(b.s, "NVRM version:") - b.s));
	}
	buffree(&b);
	free(path);
	return rc;
}

/* one GPU of procfs's driver/nvidia/gpus: its information file at path into l; 0, 1 when
   it cannot be read (skipped), -1 with *err for a bad one */
static int
nvgpu(struct gpulist *l, const char *path, const char *bus, const char *drv, char **err)
{
	struct buf b = {0};
	char minor[16], *e = NULL;
	struct gpu g;

	if (os_readreg(path, 0, &b, 1 << 16, &e) < 0) {
		buffree(&b);
		if (errno == EINVAL || errno == EISDIR)
			return errmove(err, e);
		free(e);
		return 1;
	}
	memset(&g, 0, sizeof g);
	g.vendor = "nvidia";
	infoval(b.s ? b.s : "", "Model", g.name, sizeof g.name);
	infoval(b.s ? b.s : "", "Device Minor", minor, sizeof minor);
	buffree(&b);
	if (!g.name[0])
		return seterr(err, "%s: no 'Model:' line (offset 0)", path);
	g.node = minor[0] ? atoi(minor) : -1;
	snprintf(g.bus, sizeof g.bus, "%.*s", (int)sizeof g.bus - 1, bus);
	snprintf(g.driver, sizeof g.driver, "%.*s", (int)sizeof g.driver - 1, drv);
	addgpu(l, &g);
	return 0;
}

static int
detect_nvidia(struct gpulist *l, const char *procfs, int usecuda, char **err)
{
	char *path, *gdir, drv[64] = "";
	DIR *d;
	struct dirent *de;
	size_t first = l->n;
	int rc;

	if ((rc = nvdriver(procfs, drv, sizeof drv, err)) <= 0)
		return rc;
	gdir = xasprintf("%s/driver/nvidia/gpus", procfs);
	d = opendir(gdir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s/information", gdir, de->d_name);
		rc = nvgpu(l, path, de->d_name, drv, err);
		free(path);
		if (rc < 0) {
			closedir(d);
			free(gdir);
			return -1;
		}
	}
	if (d)
		closedir(d);
	free(gdir);
	if (usecuda)
		cuda_fill(l, first);
	return 0;
}

int
detect(struct gpulist *l, const struct detectopts *o, char **err)
{
	size_t i;

	if (detect_amd(l, o->sysfs, err) < 0)
		return -1;
	if (o->procfs && detect_nvidia(l, o->procfs, o->usecuda, err) < 0)
		return -1;
	for (i = 0; i < l->n; i++)
		l->g[i].index = (int)i;
	return 0;
}
