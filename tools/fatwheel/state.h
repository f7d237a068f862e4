/* fatwheel's state shared by its modules: the options, the input's members, the
   libraries being added, the plan */
#ifndef FATWHEEL_STATE_H
#define FATWHEEL_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "atomic.h"
#include "fw.h"

/* the edit planned for one object: its new RPATH (NULL: kept) and its DT_NEEDED renames
   oldn[i] -> newn[i] */
struct edplan {
	char *rpath;
	char **oldn, **newn;
	size_t nren;
};

/* a member of the input wheel */
struct member {
	struct zipent *e;
	int dist, skip, drop;       /* in .dist-info; not hashed (RECORD, folder); left out */
	unsigned char sha[32];
	int iself;
	struct elfinfo ei;
	char *err;                  /* what is wrong with it (bad), fresh */
	int bad;
	/* the edit, if any */
	int edit;
	struct edplan ed;
	struct buf data;            /* new content (edited or rewritten); for an ELF member
	                               kept from the check (inflated set), its bytes */
	int changed;
	int inflated;               /* data holds the member's inflated bytes */
	struct loader ld;           /* as a loader of libraries (plan) */
	char *origin;               /* its folder in the wheel */
};

/* a library or file being added */
struct lib {
	char *needed;               /* the name it is needed by (file name for includes) */
	char *from;                 /* path on disk, or tar:MEMBER */
	char *by;                   /* first user */
	char *member;               /* path inside the output wheel */
	char *soname;               /* new SONAME (soname hash), or NULL */
	int include, iself;
	int pending;                /* in the --rocm tarball, not read yet */
	int unread;                 /* on disk, not read yet */
	const char *sysby;          /* a system library that loads this one too, or NULL */
	const struct loader *up;    /* the object that loaded it first (ld.so's l_loader) */
	const char *via;            /* the search that found it (ldso_via), or NULL */
	struct loader ld;           /* as a loader of libraries */
	char *origin;               /* its folder on disk, or NULL (a --rocm tarball member) */
	struct elfinfo ei;
	struct edplan ed;
	struct buf data;
};

/* the default deflate level: libdeflate's lowest whose wheels are no bigger than zlib's
   level 6 (auditwheel's) on the same bytes (fatwheel.1 gives the figures) */
#define FW_LEVEL 5

/* the command line */
struct options {
	int dryrun, json, quiet, ldd, sonamehash, level, jobs, tty;
	int onlyplat, noupdate, repair;  /* auditwheel's --only-plat, --no-update-tags, `repair` */
	char *outdir, *in, *layout, *plat, *arch;
	char *libsdir;                   /* auditwheel's -L/--lib-sdir */
	char **exclude, **include;
	size_t nexclude, ninclude, xcap, icap;
	int *exused;                /* per --exclude: it matched something */
	struct searchpath sp;
};

/* one run of fatwheel: what main's command line asked for, the input, what is added,
   the plan and the output. main makes it (fw_init) and hands it to every module. */
struct fw {
	struct options opt;
	struct zipin zin;           /* the input wheel */
	struct member *mem;         /* its members, in archive order */
	size_t nmem;
	struct lib **libs;          /* what is added, in the order found */
	size_t nlibs, libcap;
	struct buf errors;          /* libraries not found, one line each */
	struct recline *rec;        /* the input's RECORD */
	size_t nrec;
	char *distinfo;             /* "name-ver.dist-info/" */
	struct member *wheelm, *recordm;
	struct whlname wn;          /* the input's file name */
	char *libdir, *newplat, *outname, *outpath;
	int glibcmax;               /* highest GLIBC_2.N needed, -1 if none */
	int cxxmax;                 /* manylinux_2_N the GLIBCXX/CXXABI needs ask for, -1 if none */
	struct atomic out;          /* the output being written */
	int outopen;
	size_t nout;                /* members written */
};

/* a run with nothing read yet */
void fw_init(struct fw *fw);

/* print progress on a terminal (throttled to once a second) */
void progress(struct fw *fw, const char *what, size_t done, size_t total, uint64_t bytes);
/* map the input, check every member against RECORD, read the ELF facts; dies on bad input */
void readinput(struct fw *fw);
/* true if s matches an --exclude pattern (whole, or its base name) */
int excluded(struct fw *fw, const char *s);
/* the non-included library bundled for a DT_NEEDED name (an alias included), or NULL */
struct lib *findlib(struct fw *fw, const char *needed);
/* One copy per soname, as ld.so loads one: libraries found under two names with the same
   SONAME become one (the second name an alias) when their bytes are the same; different
   bytes die (exit 1) naming both paths. */
void dedupe(struct fw *fw);
/* With --soname-hash: mark (sysby) each library that a manylinux system library the
   wheel loads also needs, directly or through others, as found on this machine; a
   renamed copy of it would be a second copy in the process. */
void sysshared(struct fw *fw);
/* free what dedupe and sysshared kept */
void closure_free(void);
/* the input member with this path, or NULL */
struct member *findmember(struct fw *fw, const char *name);
/* normalize a relative path ("a/b/../c" -> "a/c"); NULL if it climbs above the root */
char *normrel(const char *p);
/* expand $ORIGIN / ${ORIGIN} in one search-path entry */
char *expand_origin(const char *ent, const char *origin);
/* the folder of a file on disk, absolute (the current folder joined), as $ORIGIN */
char *diskorigin(const char *path);
/* the folder of a member path ("" at the top) */
char *memberdir(const char *name);
/* add the libraries the object ld needs (a wheel member or a file on disk), found where
   ld.so finds them; by names it in messages */
void resolveobj(struct fw *fw, const struct loader *ld, const char *by);
/* read and parse the libraries waiting on disk, in parallel */
void loadunread(struct fw *fw);
/* read the libraries waiting in the --rocm tarball, all in one pass */
void loadpending(struct fw *fw);
/* add an --include file or folder under the name rel */
void addinclude(struct fw *fw, const char *path, const char *rel);
/* resolve the closure, name the libraries, plan the edits and the platform tag */
void plan(struct fw *fw);
/* edit, deflate and write the output wheel atomically; dies on failure */
void execute(struct fw *fw);
/* free what execute kept */
void execute_free(struct fw *fw);

#endif
