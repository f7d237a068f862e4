/* fatwheel's shared declarations: the ELF facts it needs, the wheel, the libraries */
#ifndef FATWHEEL_FW_H
#define FATWHEEL_FW_H

#include "wheelname.h"
#include <stddef.h>
#include <stdint.h>

#include "util.h"
#include "zip.h"

/* what fatwheel needs to know about one ELF object */
struct elfinfo {
	int is64;
	uint16_t machine, type;
	char *soname, *rpath, *runpath;  /* NULL when absent */
	char **needed;
	size_t nneeded;
	int glibc;                       /* highest GLIBC_2.N needed, as N; -1 if none */
	int cxx;                         /* the lowest manylinux_2_N whose policy allows its
	                                    GLIBCXX_/CXXABI_ needs, as N; -1 if none */
	int dynamic;                     /* has a .dynamic section */
};

/* Parse an ELF image into info. Returns 0, or -1 with err set (not ELF, malformed). */
int elfinfo_read(struct elfinfo *info, const void *p, size_t n, char **err);
/* free the strings of info */
void elfinfo_free(struct elfinfo *info);

/* a parsed wheel file name: name-version(-build)?-pytag-abitag-plattag.whl */
struct whlname {
	struct wheelname n;                    /* pip's parse: canonical name, version */
	const char *name, *version, *build;    /* as written, in n; build NULL when absent */
	char *py, *abi, *plat;
};
/* Parse the base name of a wheel path as pip does (lib/wheelname) and keep its parts as
   written. Returns 0, or -1 with a static reason in *why. */
int whl_parse(struct whlname *w, const char *path, const char **why);
/* the file name for w with plat replaced (plat NULL keeps it) */
char *whl_fmt(const struct whlname *w, const char *plat);
void whl_free(struct whlname *w);

/* one RECORD line */
struct recline {
	char *path, *hash, *size;        /* hash and size may be "" */
	int seen;
};
/* Parse RECORD text (CSV: path,hash,size; quoted fields allowed). Returns 0, or -1 with
   err naming the line. */
int record_parse(const char *s, size_t n, struct recline **out, size_t *nout, char **err);
/* the record line for path, or NULL (lines sorted by record_parse) */
struct recline *record_find(struct recline *r, size_t n, const char *path);
void record_free(struct recline *r, size_t n);
/* append one RECORD line for path; hash32 NULL writes empty hash and size */
void record_line(struct buf *b, const char *path, const unsigned char *hash32, uint64_t size);

/* Rewrite the Tag: lines of WHEEL text to use plat (compressed plat sets expanded);
   returns the new text. */
char *wheel_retag(const char *s, size_t n, const char *plat);
/* the architecture suffix of a platform tag (linux_x86_64 -> x86_64), or NULL */
const char *plat_arch(const char *plat);

/* for a GLIBCXX_3.4.N or CXXABI_1.3.N version need: the glibc minor of the oldest
   manylinux policy (auditwheel 6.7.0's policy JSON) whose libstdc++ provides it; 1000 if
   none does; -1 for any other version name */
int policy_cxx(const char *ver);

/* true if soname is a library every manylinux platform provides (never bundled) */
int policy_system(const char *soname);

/* where libraries are searched besides the objects' own RPATH/RUNPATH (ldso.c gives the
   order) */
struct searchpath {
	char **dirs;                     /* --lib-path and --rocm, in the order given */
	size_t n, cap;
	char **env;                      /* LD_LIBRARY_PATH's folders */
	size_t nenv, envcap;
	int useenv;                      /* search them (default; --no-ld-library-path) */
	char **ldpaths;                  /* --ldpaths: instead of the cache and system folders */
	size_t nldpaths, ldcap;
	const char *cache;               /* --ld-so-cache FILE, or NULL for /etc/ld.so.cache */
	struct rocmtar *tar;             /* --rocm=TARBALL, or NULL */
	const struct zipin *wheel;       /* the wheel whose members an $ORIGIN entry of a
	                                    member reaches, or NULL */
	struct buf skipped;              /* files search_in passed over, as "; skipped PATH:
	                                    why" (reset by the caller) */
	const char *via;                 /* which search ldso_find's last hit came from
	                                    ("RPATH", "--lib-path", "LD_LIBRARY_PATH",
	                                    "RUNPATH", "ld.so.cache", "system", "--ldpaths") */
};
/* add a folder to a list (dirs/n/cap of a searchpath), once */
void search_add(char ***dirs, size_t *n, size_t *cap, const char *dir);
/* add the folders of a colon list (LD_LIBRARY_PATH form; an empty entry is ".") */
void search_addlist(char ***dirs, size_t *n, size_t *cap, const char *list);
/* Find name in dir: it must be an ELF file of the same class and machine as want (a
   file that is not is added to s->skipped). Returns the path (fresh string) or NULL. */
char *search_in(struct searchpath *s, const char *dir, const char *name, const struct elfinfo *want);
/* true if path is a regular ELF file of want's class and machine (any ELF if want is NULL) */
int search_matches(const char *path, const struct elfinfo *want);
void search_free(struct searchpath *s);

/* an object whose DT_NEEDED entries are looked up, and the object that loaded it (ld.so's
   l_loader), whose DT_RPATH is searched too, and so on up */
struct loader {
	const struct elfinfo *ei;
	const char *origin;              /* $ORIGIN: its folder (in the wheel when inwheel); NULL
	                                    when it has none (a --rocm tarball member) */
	int inwheel;
	const struct loader *up;
};
/* Where ld.so loads name from for the object ld (ldso.c has the order; s->via says which
   search found it). Returns a fresh path ("tar:MEMBER" for a --rocm tarball), or NULL:
   *inwheel is then 1 when an $ORIGIN entry of a wheel member reaches a member of
   s->wheel, 0 when nothing has it. */
char *ldso_find(struct searchpath *s, const struct loader *ld, const char *name, int *inwheel);
/* one RPATH/RUNPATH entry with $ORIGIN (origin), $LIB and $PLATFORM expanded, as ld.so
   does; *usedorigin says whether $ORIGIN was in it. NULL when a token has no value. */
char *ldso_expand(const char *ent, const char *origin, int *usedorigin);
/* the path ld.so.cache gives for name, checked against want's class and machine, or NULL */
char *ldcache_find(struct searchpath *s, const char *name, const struct elfinfo *want);
/* free what ldso.c and ldcache.c keep */
void ldso_free(void);
void ldcache_free(void);
/* fatwheel --ldd FILE: print where ld.so loads each library of FILE's closure from;
   returns the exit status */
int ldd_main(struct searchpath *s, const char *file, int json);

/* --rocm=TARBALL: a release tarball read in place with libarchive */
struct rocmtar;
/* index the tarball's library folders; returns NULL with err set on failure */
struct rocmtar *rocmtar_open(const char *path, char **err);
/* the tarball member that provides name in a lib folder (symlinks followed), or NULL */
const char *rocmtar_find(struct rocmtar *t, const char *name);
/* read the bytes of n members (library folder paths from rocmtar_find) into outs[i], in
   one pass over the tarball; returns 0 or -1 with err */
int rocmtar_readmany(struct rocmtar *t, const char **members, struct buf **outs, size_t n,
                     char **err);
void rocmtar_close(struct rocmtar *t);

/* Edit one ELF image in memory (tools/lib/elfedit): ed's soname (NULL: keep), renames
   of DT_NEEDED (oldn[i] -> newn[i]), and rpath (NULL: keep) set as DT_RPATH with
   DT_RUNPATH removed; the result is read back with fatwheel's ELF reader and checked.
   Returns 0, or -1 with *err set (data may then be half edited). */
struct elfedits;
int elf_editbuf(struct buf *data, const struct elfedits *ed, char **err);
/* fatwheel --edit-elf [edits] IN OUT: the same edits on a file; returns the exit status */
int editelf_main(int argc, char **argv);

/* Inflate a whole member into out with libdeflate (out gets usize bytes, NUL added),
   checking its size and CRC-32. Returns 0, or -1 with err set. */
int fast_inflate(const struct zipin *z, const struct zipent *e, struct buf *out, char **err);
/* raw deflate of n bytes at level (1-12) into out with libdeflate; sets *crc */
void fast_deflate(const void *p, size_t n, int level, struct buf *out, uint32_t *crc);
/* the piece size a big member is deflated in (pdeflate.c): fixed, so that the bytes out
   do not depend on the number of threads; 1 MiB pieces cost 0.15% (libLLVM) to 0.46%
   (librocsparse) in size */
#define FW_PIECE ((size_t)1 << 20)
/* how fast_pdeflate deflates: at level, on up to nthreads threads, in pieces of piece
   bytes */
struct pdeflate {
	int level, nthreads;
	size_t piece;
};
/* raw deflate of n bytes into out as how says, the pieces joined into one stream; sets
   *crc. The same bytes for any how->nthreads. */
void fast_pdeflate(const void *p, size_t n, const struct pdeflate *how, struct buf *out, uint32_t *crc);
/* CRC-32 (libdeflate's, carry-less multiply where the CPU has it) */
uint32_t fast_crc(const void *p, size_t n);

/* run fn(ctx, i) for i in [0, n) on up to nthreads threads */
void pfor(size_t n, int nthreads, void (*fn)(void *ctx, size_t i), void *ctx);

#endif
