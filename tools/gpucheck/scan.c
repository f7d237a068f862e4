/* scanning inputs for GPU code: ELF files, raw bundles, wheels (read as zip archives in
   memory, never unpacked to disk) and folders */
#include "gpucheck.h"
#include "elffile.h"
#include "mapfile.h"
#include "os.h"
#include "strv.h"

#ifndef GPUCHECK_NO_LIBARCHIVE
#include <archive.h>
#include <archive_entry.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <dirent.h>
#include <unistd.h>

/* a folder is walked by this many threads at once (their reads overlap on the disk) */
#ifndef PEEK_THREADS
#define PEEK_THREADS 16
#endif
/* section tables and section-name tables larger than this are left to the full scan */
#define PEEK_MAXTAB (1 << 20)

/* only headers are read (ELF, section table, bundle entry tables, the first bytes of
   each code object): no read-around, or a cold 1 GB library is read almost whole (each
   fault would bring in read_ahead_kb around it, 8 MB on some disks). On the H100
   machine, MADV_NORMAL, SEQUENTIAL and WILLNEED each read 12 times the bytes and took
   2.7-3.5 s instead of 1.1-1.8 s for the venv (tests/real/gpu-runs/2026-11-25-h100). */
static void
gc_advise(const unsigned char *p, size_t n)
{
	madvise((void *)p, n, MADV_RANDOM);
}

static struct scanned *
addscanned(struct scanset *s, const char *path)
{
	struct scanned *f;

	s->f = xgrow(s->f, &s->cap, s->n + 1, sizeof *s->f);
	f = &s->f[s->n++];
	memset(f, 0, sizeof *f);
	f->path = xstrdup(path);
	return f;
}

/* scan bytes already in memory; explicit: the user named it, so non-ELF is an error.
   Returns 0, 1 if skipped (not GPU-capable input), -1 on error (printed). */
static int
scanbytes(struct scanset *s, const char *path, const unsigned char *p, size_t n, int explicit)
{
	struct elf e;
	char *err = NULL;
	struct offopts o = {s->maxraw};
	struct offbytes in = {p, n, 0, "bundle"};
	struct scanned *f;
	int raw;

	raw = (n >= 24 && memcmp(p, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0) ||
	      (n >= 4 && memcmp(p, "CCOB", 4) == 0);
	if (explicit && ((n >= 4 && memcmp(p, "KPAK", 4) == 0) || endswith(path, ".kpack"))) {
		f = addscanned(s, path);
		return kp_archivefile(s, f, p, n);
	}
	if (!raw && !elf_is(p, n)) {
		if (!explicit)
			return 1;
		warn("%s: not an ELF file, offload bundle or wheel (offset 0)", path);
		s->errors++;
		return -1;
	}
	f = addscanned(s, path);
	if (!raw && n >= 20 && rd16(p + 18) == 0xe0) {
		/* an AMDGPU code object: its own header checks name the field */
		if (off_codeobj(p, n, &f->l, &err) < 0)
			goto bad;
		return 0;
	}
	if (raw) {
		if (off_hipfatbin(&in, &f->l, &o, &err) < 0)
			goto bad;
		return 0;
	}
	if (elf_open(&e, p, n, &err) < 0)
		goto bad;
	if (off_scanelf(&e, &f->l, &o, &err) < 0) {
		elf_close(&e);
		goto bad;
	}
	elf_close(&e);
	if (f->l.nhipk)
		return kp_library(s, f, p, n);
	return 0;
bad:
	warn("%s: %s", path, err);
	free(err);
	s->errors++;
	off_free(&f->l);
	free(f->path);
	s->n--;
	return -1;
}

#ifdef GPUCHECK_NO_LIBARCHIVE
/* a build without libarchive (a bare machine): wheels cannot be read */
static int
scanwheel(struct scanset *s, const char *path, int fd)
{
	(void)fd;
	warn("%s: this gpucheck was built without libarchive and cannot read wheels", path);
	s->errors++;
	return -1;
}
#else
/* a wheel being read member by member: the scan it counts errors in, its path, the
   archive, the most a member may inflate to, and the buffer the members go through */
struct wheelread {
	struct scanset *s;
	const char *path;
	struct archive *a;
	uint64_t max;
	unsigned char *buf;
	size_t cap;
};

/* the rest of the member at ae, after the len bytes already in w->buf, into w->buf: its
   length; 0 when it is over the --max-inflate cap (refused and counted: at most max + 1
   bytes are ever held, whatever its zip header says); -1 on a read error (counted) */
static int64_t
readmember(struct wheelread *w, struct archive_entry *ae, size_t len)
{
	struct scanset *s = w->s;
	const char *path = w->path;
	struct archive *a = w->a;
	unsigned char **buf = &w->buf;
	size_t *cap = &w->cap;
	uint64_t room, max = w->max;
	la_ssize_t r;

	if (archive_entry_size_is_set(ae) && (uint64_t)archive_entry_size(ae) > max) {
		warn("%s: member %s would decompress to %llu bytes, over the %llu-byte cap "
		     "(--max-inflate)", path, archive_entry_pathname(ae),
		     (unsigned long long)archive_entry_size(ae), (unsigned long long)max);
		s->errors++;
		return 0;
	}
	if (archive_entry_size_is_set(ae) && archive_entry_size(ae) > 4)
		*buf = xgrow(*buf, cap, (size_t)archive_entry_size(ae), 1);
	for (;;) {
		if (*cap - len < 1 << 16)
			*buf = xgrow(*buf, cap, len + (1 << 16), 1);
		room = len <= max ? max + 1 - len : 1;
		r = archive_read_data(a, *buf + len, *cap - len < room ? *cap - len : (size_t)room);
		if (r > 0 && len + (size_t)r > max) {
			warn("%s: member %s decompresses to more than the %llu-byte cap (--max-inflate)",
			     path, archive_entry_pathname(ae), (unsigned long long)max);
			s->errors++;
			return 0;
		}
		if (r < 0) {
			warn("%s: member %s: %s", path, archive_entry_pathname(ae), archive_error_string(a));
			s->errors++;
			return -1;
		}
		if (r == 0)
			return (int64_t)len;
		len += (size_t)r;
	}
}

/* Scan the ELF members of a wheel, each decompressed in memory, and its .kpack members
   (the archives its kpack'd libraries name): a member that says or turns out to be
   larger than the --max-inflate cap is refused before more is read. */
static int
scanwheel(struct scanset *s, const char *path, int fd)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ae;
	struct wheelread w = {s, path, a, s->maxraw ? s->maxraw : OFF_MAXRAW, NULL, 0};
	size_t len, first = s->n;
	int64_t got;
	la_ssize_t r;
	int rc = 0, ar;
	char *name;

	archive_read_support_format_zip_seekable(a);
	if (archive_read_open_fd(a, fd, 1 << 16) != ARCHIVE_OK) {
		warn("%s: not a readable wheel (%s)", path, archive_error_string(a));
		archive_read_free(a);
		s->errors++;
		return -1;
	}
	while ((ar = archive_read_next_header(a, &ae)) == ARCHIVE_OK) {
		if (archive_entry_filetype(ae) != AE_IFREG)
			continue;
		len = 0;
		/* read 4 bytes first: most members are not ELF and are skipped undecompressed */
		w.buf = xgrow(w.buf, &w.cap, 4, 1);
		while (len < 4 && (r = archive_read_data(a, w.buf + len, 4 - len)) > 0)
			len += (size_t)r;
		if (len < 4 || (memcmp(w.buf, "\177ELF", 4) != 0 && !endswith(archive_entry_pathname(ae), ".kpack")))
			continue;
		if ((got = readmember(&w, ae, len)) <= 0) {
			rc = -1;
			if (got < 0)
				goto out;
			continue;
		}
		name = xasprintf("%s!%s", path, archive_entry_pathname(ae));
		if (endswith(name, ".kpack") ? kp_wheelarchive(s, name, w.buf, (size_t)got) < 0
		                             : scanbytes(s, name, w.buf, (size_t)got, 0) < 0)
			rc = -1;
		free(name);
	}
	kp_wheeldone(s, first);
	if (ar != ARCHIVE_EOF) {
		warn("%s: bad zip archive (%s)", path, archive_error_string(a));
		s->errors++;
		rc = -1;
	}
out:
	free(w.buf);
	archive_read_free(a);
	return rc;
}
#endif

/* scan a file that should be regular: a FIFO, device or socket (even one swapped in
   after the folder was listed) is an input error, never opened blocking */
static int
scanfile(struct scanset *s, const char *path, int explicit)
{
	struct mapfile m;
	char *err = NULL;
	int rc, fd;

	if ((fd = os_openreg(path, 0, NULL, &err)) < 0) {
		warn("%s", err);
		free(err);
		s->errors++;
		return -1;
	}
	if (endswith(path, ".whl")) {
		rc = scanwheel(s, path, fd);
		close(fd);
		return rc;
	}
	if (map_fd(&m, fd) < 0) {
		warn("%s:", path);
		close(fd);
		s->errors++;
		return -1;
	}
	close(fd);
	/* only headers are read (ELF, section table, bundle entry tables, the first bytes of
	   each code object): no read-around, or a cold 1 GB library is read almost whole
	   (each fault would bring in read_ahead_kb around it, 8 MB on some disks) */
	if (m.p)
		gc_advise(m.p, m.n);
	rc = scanbytes(s, path, m.p ? m.p : (const unsigned char *)"", m.n, explicit);
	map_close(&m);
	return rc < 0 ? -1 : 0;
}

/* Suffixes of files a folder scan never opens: source, text, data and image formats,
   which no toolchain makes into an ELF file or an offload bundle (not .a: glibc's
   libmcheck.a is an ELF object). Python's own files are most of a site-packages
   folder, Perl's and Free Pascal's of /usr/lib. */
static const char *const textsuffix[] = {
	".py", ".pyc", ".pyi", ".pyx", ".pxd", ".typed", ".h", ".hh", ".hpp", ".hxx", ".cuh",
	".inc", ".inl", ".c", ".cc", ".cpp", ".cu", ".txt", ".md", ".rst", ".json", ".yaml",
	".yml", ".toml", ".cfg", ".ini", ".xml", ".html", ".css", ".js", ".cmake", ".pc",
	".la", ".pl", ".pm", ".ph", ".pod", ".sh", ".csv", ".png", ".jpg", ".svg",
	".ppu", ".rsj", ".fpm", ".mo", ".po",
};

/* true if a folder scan need not open path, by its name alone */
static int
textname(const char *path)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	size_t i;

	if (!dot || (slash && dot < slash))
		return 0;
	for (i = 0; i < sizeof textsuffix / sizeof textsuffix[0]; i++)
		if (strcmp(dot, textsuffix[i]) == 0)
			return 1;
	return 0;
}

/* what a look at a file's headers decides */
enum {
	PEEK_SKIP,  /* not ELF, not a bundle, not a wheel: nothing to read */
	PEEK_EMPTY, /* a well-formed ELF file none of whose sections can hold GPU code */
	PEEK_SCAN,  /* anything else: scan it whole (malformed headers are reported there) */
};

/* pread exactly n bytes at off; 0 or -1 */
static int
preadall(int fd, void *buf, size_t n, uint64_t off)
{
	ssize_t r;
	size_t got = 0;

	while (got < n) {
		r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* true if section name nm (an offset into the name table str of n bytes) is one
   off_scanelf reads GPU code from */
static int
gpusecname(const unsigned char *str, uint64_t n, uint32_t nm)
{
	const char *name;

	if (nm >= n || !memchr(str + nm, 0, n - nm))
		return 0;
	name = (const char *)str + nm;
	return strcmp(name, ".hip_fatbin") == 0 || strcmp(name, ".nv_fatbin") == 0 ||
	       strcmp(name, "__nv_relfatbin") == 0 || startswith(name, "__CLANG_OFFLOAD_BUNDLE__") ||
	       strcmp(name, ".hipFatBinSegment") == 0 || strcmp(name, ".rocm_kpack_ref") == 0;
}

/* an ELF file's section header table, as its header gives it */
struct shtab {
	int is64;
	uint64_t shoff;
	uint32_t shnum, shentsize, shstrndx;
};

/* PEEK_EMPTY if no section of the table t (read with pread, as its name table) is a GPU
   code section with bytes; PEEK_SCAN for one, or for anything unusual */
static int
peeksections(int fd, uint64_t size, const struct shtab *t)
{
	int is64 = t->is64;
	uint64_t shoff = t->shoff;
	uint32_t shnum = t->shnum, shentsize = t->shentsize, shstrndx = t->shstrndx;
	unsigned char *tab, *str = NULL, *sh;
	uint64_t soff, ssz = 0;
	uint32_t i;
	int v = PEEK_SCAN;

	tab = xmalloc((size_t)shnum * shentsize);
	if (preadall(fd, tab, (size_t)shnum * shentsize, shoff) < 0)
		goto out;
	if (shstrndx && shstrndx < shnum) {
		sh = tab + (size_t)shstrndx * shentsize;
		soff = is64 ? rd64(sh + 24) : rd32(sh + 16);
		ssz = is64 ? rd64(sh + 32) : rd32(sh + 20);
		if (rd32(sh + 4) == 8 /* SHT_NOBITS */ || soff > size || ssz > size - soff || ssz > PEEK_MAXTAB)
			goto out;
		str = xmalloc(ssz ? (size_t)ssz : 1);
		if (preadall(fd, str, (size_t)ssz, soff) < 0)
			goto out;
	}
	for (i = 0; i < shnum; i++) {
		sh = tab + (size_t)i * shentsize;
		if (rd32(sh + 4) == 8 || (is64 ? rd64(sh + 32) : rd32(sh + 20)) == 0)
			continue;
		if (str && gpusecname(str, ssz, rd32(sh)))
			goto out;
	}
	v = PEEK_EMPTY;
out:
	free(tab);
	free(str);
	return v;
}

/* Decide, from the first 64 bytes, the section header table and the section-name table
   read with pread (never a mapping of the file, with read-ahead off), whether the file
   at path is worth a full scan; a file with a textname is not opened. Only PEEK_SKIP
   and PEEK_EMPTY are ever a shortcut, and only for headers elf_open would accept: the
   full scan decides everything else, errors included, exactly as before. */
static int
peek(const char *path)
{
	unsigned char h[64];
	struct stat st;
	uint64_t shoff, phoff, size;
	uint32_t shnum, phnum, shentsize, phentsize, shstrndx;
	int fd, is64, v = PEEK_SCAN;
	size_t n;

	if (textname(path))
		return PEEK_SKIP;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC)) < 0)
		return PEEK_SCAN;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		goto out;
	size = (uint64_t)st.st_size;
	if (size < 4) {
		v = PEEK_SKIP;
		goto out;
	}
	/* only headers are read: no read-around of each small read */
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	n = size < sizeof h ? (size_t)size : sizeof h;
	if (preadall(fd, h, n, 0) < 0)
		goto out;
	if (memcmp(h, "\177ELF", 4) != 0) {
		if (!(n >= 24 && memcmp(h, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0) &&
		    memcmp(h, "CCOB", 4) != 0 && !endswith(path, ".whl"))
			v = PEEK_SKIP;
		goto out;
	}
	if (n < 64 || (h[4] != 1 && h[4] != 2) || h[5] != 1)
		goto out;
	/* an AMDGPU code object file (.co, .hsaco, a kernel library's): scanned whole */
	if (rd16(h + 18) == 0xe0)
		goto out;
	is64 = h[4] == 2;
	if (is64) {
		phoff = rd64(h + 32), shoff = rd64(h + 40);
		phentsize = rd16(h + 54), phnum = rd16(h + 56);
		shentsize = rd16(h + 58), shnum = rd16(h + 60), shstrndx = rd16(h + 62);
	} else {
		phoff = rd32(h + 28), shoff = rd32(h + 32);
		phentsize = rd16(h + 42), phnum = rd16(h + 44);
		shentsize = rd16(h + 46), shnum = rd16(h + 48), shstrndx = rd16(h + 50);
	}
	if (phoff && phnum && (phentsize < (is64 ? 56u : 32u) || phoff > size ||
	                       (uint64_t)phnum * phentsize > size - phoff))
		goto out;
	if (shoff && (shnum == 0 || shstrndx == 0xffff))
		goto out; /* extended numbering: rare, left to the full scan */
	if (!shoff || !shnum) {
		v = PEEK_EMPTY;
		goto out;
	}
	if (shentsize < (is64 ? 64u : 40u) || shoff > size || (uint64_t)shnum * shentsize > size - shoff ||
	    (uint64_t)shnum * shentsize > PEEK_MAXTAB)
		goto out;
	v = peeksections(fd, size, &(struct shtab){is64, shoff, shnum, shentsize, shstrndx});
out:
	close(fd);
	return v;
}

/* Scan the ELF file at path whole, as scanfile would, into l, printing nothing: 0, or
   -1 for anything scanfile must look at itself (not ELF, unreadable, malformed), l
   then empty. */
static int
quietscan(const char *path, uint64_t maxraw, struct offlist *l)
{
	struct mapfile m;
	struct elf e;
	struct offopts o = {maxraw};
	int fd, r;

	memset(l, 0, sizeof *l);
	if ((fd = os_openreg(path, 0, NULL, NULL)) < 0)
		return -1;
	r = map_fd(&m, fd);
	close(fd);
	if (r < 0)
		return -1;
	r = -1;
	if (m.p && elf_is(m.p, m.n)) {
		gc_advise(m.p, m.n);
		if (elf_open(&e, m.p, m.n, NULL) == 0) {
			r = off_scanelf(&e, l, &o, NULL);
			elf_close(&e);
		}
	}
	map_close(&m);
	if (r < 0)
		off_free(l);
	return r;
}

/* one file a folder walk found: its path, what peek said, and its bundles when a
   worker scanned it whole (PEEK_DONE); or a folder that could not be listed (err) */
enum { PEEK_DONE = PEEK_SCAN + 1, PEEK_ERR };
struct walkfile {
	char *path;
	int v;
	struct offlist l;
};
/* the shared state of a folder walk: folders to list and files to look at, files found */
struct walk {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char **todo;          /* a stack of work: "d" + folder or "f" + file */
	size_t ntodo, captodo;
	int busy;             /* workers on an item now */
	struct walkfile *f;
	size_t nf, capf;
	uint64_t maxraw;
};

/* record a file (or an error, v PEEK_ERR with the message as path) under the lock */
static void
walkadd(struct walk *w, char *path, int v, const struct offlist *l)
{
	pthread_mutex_lock(&w->mu);
	w->f = xgrow(w->f, &w->capf, w->nf + 1, sizeof *w->f);
	w->f[w->nf].path = path;
	w->f[w->nf].v = v;
	if (l)
		w->f[w->nf].l = *l;
	else
		memset(&w->f[w->nf].l, 0, sizeof w->f[w->nf].l);
	w->nf++;
	pthread_mutex_unlock(&w->mu);
}

/* look at one file: by its name, its headers, and whole if it may hold GPU code */
static void
walkfile(struct walk *w, char *path)
{
	struct offlist l;
	int v = peek(path);

	if (v == PEEK_SCAN && quietscan(path, w->maxraw, &l) == 0) {
		walkadd(w, path, PEEK_DONE, &l);
		return;
	}
	walkadd(w, path, v, NULL);
}

/* list one folder: its subfolders go on the stack, its regular files are looked at
   (the folder's own entry types decide; only unknown types are lstat'd; symbolic
   links, FIFOs and devices are left out) */
static void
walkdir(struct walk *w, char *dir)
{
	DIR *d;
	struct dirent *de;
	struct stat st;
	char *p, **items = NULL;
	size_t i, nit = 0, capit = 0;
	int isdir;

	if (!(d = opendir(dir))) {
		walkadd(w, xasprintf("%s: %s", dir, strerror(errno)), PEEK_ERR, NULL);
		free(dir);
		return;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR || de->d_type == DT_REG)
			isdir = de->d_type == DT_DIR;
		else if (de->d_type == DT_UNKNOWN && lstat(p, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			isdir = S_ISDIR(st.st_mode);
		else
			isdir = -1;
		if (isdir >= 0)
			items = xgrow(items, &capit, nit + 1, sizeof *items), items[nit++] = xasprintf("%c%s", isdir ? 'd' : 'f', p);
		free(p);
	}
	closedir(d);
	free(dir);
	/* every thread takes from the same stack, so one big flat folder (/usr/lib) is
	   looked at by all of them */
	pthread_mutex_lock(&w->mu);
	w->todo = xgrow(w->todo, &w->captodo, w->ntodo + nit + 1, sizeof *w->todo);
	for (i = 0; i < nit; i++)
		w->todo[w->ntodo++] = items[i];
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	free(items);
}

/* a walk worker: take work off the stack until none is left and no worker is busy
   (a busy one may still add more) */
static void *
walker(void *arg)
{
	struct walk *w = arg;
	char *it;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->ntodo == 0 && w->busy > 0)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->ntodo == 0)
			break;
		it = w->todo[--w->ntodo];
		w->busy++;
		pthread_mutex_unlock(&w->mu);
		if (it[0] == 'd')
			walkdir(w, xstrdup(it + 1));
		else
			walkfile(w, xstrdup(it + 1));
		free(it);
		pthread_mutex_lock(&w->mu);
		w->busy--;
		if (w->busy == 0 && w->ntodo == 0)
			pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* depth-first name order: paths compared with '/' below every other byte, so a
   folder's files come where the folder's name sorts */
static int
walkcmp(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)((const struct walkfile *)a)->path;
	const unsigned char *y = (const unsigned char *)((const struct walkfile *)b)->path;
	unsigned cx, cy;

	for (;; x++, y++) {
		cx = *x == '/' ? 1 : *x;
		cy = *y == '/' ? 1 : *y;
		if (cx != cy || !cx)
			return (int)cx - (int)cy;
	}
}

/* Scan every ELF file and wheel under dir. Threads list its folders and look at every
   file as they find it: headers only (by name and pread), and whole the ELF files that
   may hold GPU code, so a cold disk serves many reads at once; then, in depth-first name
   order, the results are recorded, the other ELF files as holding none, and the rest
   (wheels, raw bundles, kpack'd libraries, files with errors to report) scanned here. */
static int
scandir_(struct scanset *s, const char *dir)
{
	struct walk w;
	pthread_t th[PEEK_THREADS];
	size_t i, nth = 0;
	int rc = 0;

	memset(&w, 0, sizeof w);
	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	w.maxraw = s->maxraw;
	w.todo = xgrow(w.todo, &w.captodo, 1, sizeof *w.todo);
	w.todo[w.ntodo++] = xasprintf("d%s", dir);
	for (; nth < PEEK_THREADS; nth++)
		if (pthread_create(&th[nth], NULL, walker, &w) != 0)
			break;
	walker(&w);
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	if (w.nf)
		qsort(w.f, w.nf, sizeof *w.f, walkcmp);
	for (i = 0; i < w.nf; i++) {
		struct walkfile *f = &w.f[i];

		if (f->v == PEEK_ERR) {
			warn("%s", f->path);
			s->errors++;
			rc = -1;
		} else if (f->v == PEEK_EMPTY) {
			addscanned(s, f->path);
		} else if (f->v == PEEK_DONE && !f->l.nhipk) {
			addscanned(s, f->path)->l = f->l;
			f->l.b = NULL, f->l.e = NULL, f->l.hipk = NULL;
		} else if (f->v == PEEK_DONE || f->v == PEEK_SCAN) {
			if (scanfile(s, f->path, 0) < 0)
				rc = -1;
		}
		off_free(&f->l);
		free(f->path);
	}
	free(w.f);
	free(w.todo);
	pthread_mutex_destroy(&w.mu);
	pthread_cond_destroy(&w.cv);
	return rc;
}

int
scan_arg(struct scanset *s, const char *arg)
{
	struct stat st;

	if (stat(arg, &st) < 0) {
		warn("%s:", arg);
		s->errors++;
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return scandir_(s, arg);
	return scanfile(s, arg, 1);
}

void
scanset_free(struct scanset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->f[i].path);
		off_free(&s->f[i].l);
		kp_free(s->f[i].kp);
	}
	free(s->f);
	for (i = 0; i < s->nar; i++) {
		free(s->ar[i].path);
		free(s->ar[i].canon);
		free(s->ar[i].why);
		map_close(&s->ar[i].m);
		kpack_free(&s->ar[i].k);
	}
	free(s->ar);
	for (i = 0; i < s->ncog; i++)
		free(s->cogname[i]);
	free(s->cogname);
	memset(s, 0, sizeof *s);
}
