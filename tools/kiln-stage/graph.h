/* kiln-stage graph, configure's generator: what its modules share. conf.c reads the
   decisions and writes build.ninja and config.mk; graph.c turns the pins into one record
   per stage and writes the stack; python.c asks the target Python; fit.c checks that
   the pins fit together. */
#ifndef KILN_STAGE_GRAPH_H
#define KILN_STAGE_GRAPH_H

#include <stddef.h>

#include "schema.h"
#include "util.h"

/* what configure decided, as the generator's options */
struct config {
	const char *prog;        /* the name messages start with */
	const char *srcdir, *builddir, *prefix;
	const char *python;      /* the target interpreter (or the venv's, with --venv) */
	const char *basepy;      /* with --venv: the interpreter the venv is made from */
	const char *venv;        /* --venv=DIR or NULL */
	const char *rocm, *pinsfile, *cache, *stagecache, *mirror, *kilnbin;
	const char *cc, *cflags, *ldflags, *pkgconfig, *fuzzcc, *ninja;
	const char *jobs, *with, *without, *archarg;
	const char *image, *imagebase; /* --image=NAME[:TAG] (NULL: no stack.image), --image-base=REF */
	const char *trustedkeys; /* --cache-trusted-keys: NAME:BASE64 ... (signed manifests) */
	const char *signkey;     /* --cache-sign-key: the team's secret key file */
	char **pinover;          /* --pin NAME=REF, in order */
	size_t npinover;
	char **replay;           /* configure and its arguments as typed (--pin read from them) */
	size_t nreplay;
	char **arch;             /* the targets, in the order given */
	size_t narch;
	enum backend backend;
	/* team caches (issue 20): the shared git mirror folder, the compiler cache's remote
	   storage, the distributed compiler and its hosts ("" when not used) */
	const char *gitcache, *cacheremote, *distribute, *disthosts, *workdir;
	/* build requirements (the deps stages): --index-url (NULL: pip's own) or
	   --wheelhouse (NULL: none); --allow-mismatch: pins the matrix says do not go
	   together are a warning, not a refusal */
	const char *indexurl, *wheelhouse;
	int allowmismatch;
	/* --allow-network: the wheel and CMake stages run without the loopback proxy that
	   makes a network attempt fail the stage (kiln-stage netguard) */
	int allownetwork;
};

/* what the target Python says about itself (python.c's script) */
struct pyfacts {
	char *abi;          /* cpython-311 linux-x86_64 3.11.2 */
	char *torchdir;     /* the folder of an importable torch, or "" */
	int managed;        /* PEP 668: its stdlib has EXTERNALLY-MANAGED, outside a venv */
	char *version;      /* sys.version, for the venv key */
	char *dists[3][2];  /* torch, torchvision, torchaudio: version, its torch requirement */
};

extern struct config cf;
extern struct pyfacts py;
extern struct pins pins;                   /* the pins, after the file and --pin */
extern const struct component *on[16];     /* the components built, in table order */
extern size_t non;
extern int wanted[16];                     /* per component: 1 --with, -1 --without */

/* conf.c */
/* configure's one error line, then exit 2 at once (a one-shot process: what it had
   allocated is the operating system's to reclaim) */
void fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* a path option: any byte but newline; one that ninja names (ninjapath) also no '|' */
void checkpath(const char *opt, const char *v, int ninjapath);
/* one more input whose change reruns configure (each listed once) */
void addregen(const char *path);
/* the targets joined by sep, fresh: "," is --arch's spelling (config.mk, records,
   messages), ";" a CMake list */
char *archlist(const char *sep);
/* the targets as an arch list crosses the seam to the steps: one space between names
   (ARCH, AOTRITON_ARCH), fresh */
char *archwords(void);
/* the CUDA targets as TORCH_CUDA_ARCH_LIST spells them (sm_90a -> 9.0a, ";" between);
   "" for another backend; fresh */
char *archcuda(void);
/* mark the components of a comma or space separated list as wanted (1: --with, -1:
   --without) or, from a pin file, as 2 (stack_WITH) or -2 (stack_WITHOUT), which yield to
   the command line; what: for messages */
void complist(const char *list, const char *what, int value);
/* write path only if its content changed; says so on stdout when loud */
void commit(const char *path, const struct buf *b, int loud);
/* a word for a shell command line: as it is when that is safe, else quoted */
void shword(struct buf *b, const char *s);
/* mtime of path in ns, 0 if missing */
long long mtimens(const char *path);

/* python.c */
/* run argv; its stdout without trailing newlines in *out (fresh); 0 if it exited 0 */
int capture(char *const *argv, char **out);
/* line n (from 0) of text, fresh ("" past the end) */
char *line(const char *text, int n);
/* the target Python runs and takes pip installs (PEP 668), --venv is ours; fills py */
void checkpython(void);

/* fit.c */
/* one warning line per vision/audio pin made for another torch than the torch pin */
void pinfit(void);
/* the release a pin stands for (a version tag, a wheel's version), fresh, or NULL */
char *pin_release(const struct component *c);
/* the patch folder made for the pinned release: base when it holds a series itself, else
   its subfolder whose name is a range holding the release (2.8, 2.0-2.8, 2.14+), else
   base (no series: no patches); *range the subfolder's name or ""; fresh */
char *release_patches(const struct component *c, const char *base, char **range);

/* graph.c */
/* the value of component c's pin key (or its default) */
const char *pin(const struct component *c, const char *k);
/* the stack: stage records, key files, stack.env and stack.ninja; the include and the
   default targets go to b */
void stack(struct buf *b, char *const *tools, size_t ntools);
/* the stack's checks (pins, components, the target Python) when there is a stack (an
   --arch and a pin file), before any other probe; a refusal stops configure */
void prestack(void);

#endif
