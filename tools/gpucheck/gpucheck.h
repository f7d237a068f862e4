/* gpucheck: shared declarations of its modules */
#ifndef GPUCHECK_H
#define GPUCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "offload.h"
#include "util.h"

/* one GPU found on this machine */
struct gpu {
	int index;            /* position in gpucheck's list */
	int node;             /* KFD node number (AMD) or /proc minor (NVIDIA) */
	const char *vendor;   /* "amd" or "nvidia" */
	char real[32];        /* the target the hardware is: gfx1151, sm_90; "" if unknown */
	char target[32];      /* the target the runtime uses (after an override) */
	char ovvar[48];       /* the override variable in effect, "" if none */
	char ovval[64];       /* its value */
	int ovbad;            /* the override is set but malformed */
	char name[128];       /* marketing name, "" if unknown */
	unsigned cus;         /* compute units / SMs, 0 if unknown */
	uint64_t vram;        /* bytes, 0 if unknown */
	char driver[64];      /* driver version, "" if unknown */
	unsigned devid;       /* PCI device id, 0 if unknown */
	unsigned wave;        /* wavefront size, 0 if unknown */
	char bus[32];         /* PCI bus id (NVIDIA), "" if unknown */
};

/* the GPUs found */
struct gpulist {
	struct gpu *g;
	size_t n, cap;
};

/* where detection reads from */
struct detectopts {
	const char *sysfs;    /* /sys or a captured tree */
	const char *procfs;   /* /proc or a captured tree; NULL to skip NVIDIA */
	int usecuda;          /* ask libcuda.so.1 for compute capabilities */
};

/* Find AMD GPUs in KFD sysfs and NVIDIA GPUs in procfs (+ libcuda). Returns 0, or -1
   with a message (file and offset) in err for unreadable or garbage files. */
int detect(struct gpulist *l, const struct detectopts *o, char **err);
/* release the list */
void gpulist_free(struct gpulist *l);
/* Parse an override value exactly as ROCm's thunk does ("%u.%u.%u", nothing after,
   major <= 63, minor and stepping <= 255) into the target name; returns 0 or -1. */
int parse_override(const char *v, char *target, size_t len);
/* the target name of gfx_target_version major.minor.stepping: gfx + major + hex + hex */
void gfxname(unsigned major, unsigned minor, unsigned step, char *buf, size_t len);
/* the HSA_OVERRIDE_GFX_VERSION value for an AMD processor name; returns 0 or -1 */
int gfxversion(const char *proc, char *buf, size_t len);
/* the device-id table: target and name for a PCI device id; returns 0 or -1 */
int devid_lookup(unsigned devid, const char **target, const char **name);

#include "kpack.h"
#include "mapfile.h"

/* a kpack archive read in this run (each read once, whoever references it) */
struct kparchive {
	char *path;           /* as first opened */
	char *canon;          /* realpath(3) of it (the loader's cache key), or the path */
	struct kpack k;
	int bad;              /* unreadable or malformed (reported, or why says so) */
	char *why;            /* cover: what is wrong with a bad archive (the loader skips it) */
	struct mapfile m;     /* its bytes, for fetching an entry later (files only) */
};
/* where a library's reference led: archive ar, from search path `path` (or one of the
   environment lists), standing for target `target` ("" for a path without @GFXARCH@) */
#define KP_ENVOVERRIDE ((size_t)-1)   /* ROCM_KPACK_PATH */
#define KP_ENVPREFIX ((size_t)-2)     /* ROCM_KPACK_PATH_PREFIX */
struct kpfound {
	int ar;
	size_t path;
	char target[96];
};
/* a kpack'd library: its reference and the archives found */
struct kplib {
	struct kpref ref;
	char *dir;            /* the library's folder, which relative paths start from */
	char *realdir;        /* the folder of its real path (the runtime's binary_path is
	                         the name /proc/self/maps gives, links resolved); NULL in a wheel */
	int inwheel;          /* a wheel member: its archives are the wheel's members */
	struct kpfound *found;
	size_t nfound, capfound;
};

/* one scanned input (a file, or a wheel member) */
struct scanned {
	char *path;           /* "f.so" or "x.whl!pkg/lib/f.so" */
	struct offlist l;
	struct kplib *kp;     /* NULL unless its code is in kpack archives */
	int cog;              /* a code-object file's library (cover_groups), else -1 */
};
/* all scanned inputs */
struct scanset {
	struct scanned *f;
	size_t n, cap;
	uint64_t maxraw;
	int errors;           /* inputs that could not be read */
	struct kparchive *ar; /* the kpack archives read */
	size_t nar, capar;
	char **cogname;       /* the libraries of code-object files (cover_groups) */
	size_t ncog;
	int kplazy;           /* cover: kpack archives are opened per device, as the loader
	                         does, and a bad one is skipped, not an input error */
	int kpfirst;          /* cover --kpack-loader=first: stop at the first archive that
	                         lists the target (rocm-kpack e348328) */
};
/* Scan one argument: an ELF file, a raw offload bundle, a wheel, or a folder (every
   ELF file and wheel under it, symlinks not followed). Errors are printed and counted.
   Returns 0, or -1 if the argument could not be read at all. */
int scan_arg(struct scanset *s, const char *arg);
/* release everything */
void scanset_free(struct scanset *s);

/* A kpack'd library f (HIPK wrappers found in its bytes p[0..n)): read its reference,
   the archives its search paths (and ROCM_KPACK_PATH, ROCM_KPACK_PATH_PREFIX) reach, and
   add one OFFB_KPACK bundle per wrapper with an entry per (archive, arch) holding its
   kernel. Errors are printed and counted; returns 0 or -1. */
int kp_library(struct scanset *s, struct scanned *f, const unsigned char *p, size_t n);
/* A .kpack archive named on the command line: one bundle per kernel key, one entry per
   arch. Errors are printed and counted; returns 0 or -1. */
int kp_archivefile(struct scanset *s, struct scanned *f, const unsigned char *p, size_t n);
/* A .kpack member of a wheel (path "x.whl!torch/.kpack/a.kpack"): read into the run's
   archives. Errors are printed and counted; returns 0 or -1. */
int kp_wheelarchive(struct scanset *s, const char *path, const unsigned char *p, size_t n);
/* After a wheel's members were read: resolve the references of its kpack'd libraries
   (s->f[from..]) against its archives (paths inside the wheel, ".." resolved) and add
   their bundles */
void kp_wheeldone(struct scanset *s, size_t from);
/* release a library's kpack state (NULL is fine) */
void kp_free(struct kplib *kp);

/* the verbs */
int cmd_detect(int argc, char **argv);
int cmd_targets(int argc, char **argv);
int cmd_cover(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_smoke(int argc, char **argv);

/* shared option state: where detection reads, and whether those were given */
extern const char *opt_sysfs, *opt_procfs;
extern int procset, sysfsset;
/* take --sysfs=, --proc= and --help from any verb's options; returns 1 if consumed */
int gc_commonopt(const char *arg);
/* take --max-inflate=BYTES (the one cap on every decompression: CCOBs and wheel
   members) into *max; returns 1 if consumed, exits 2 on a bad number */
int gc_maxinflate(const char *arg, uint64_t *max);
/* print the error (if any) and the synopsis; exit 2 (0 without an error) */
void gc_usage(const char *error, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* detect with the shared options; dies (exit 2) on garbage input */
void detect_or_die(struct gpulist *l);

#endif
