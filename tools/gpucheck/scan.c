/* scanning inputs for GPU code: ELF files, raw bundles, wheels (read as zip archives in
   memory, never unpacked to disk) and folders */
#include "gpucheck.h"
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* how many files ahead of the one being scanned have their headers read in, and how
   much of each file's end (section headers and names) is read in */
#define PREFETCH_AHEAD 256
#define PREFETCH_TAIL (64 << 10)

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
	char err[512];
	struct offopts o = {s->maxraw};
	struct scanned *f;
	int raw;

	raw = (n >= 24 && memcmp(p, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0) ||
	      (n >= 4 && memcmp(p, "CCOB", 4) == 0);
	if (!raw && !elf_is(p, n)) {
		if (!explicit)
			return 1;
		warn("%s: not an ELF file, offload bundle or wheel (offset 0)", path);
		s->errors++;
		return -1;
	}
	f = addscanned(s, path);
	if (raw) {
		if (off_hipfatbin(p, n, 0, "bundle", &f->l, &o, err, sizeof err) < 0)
			goto bad;
		return 0;
	}
	if (elf_open(&e, p, n, err, sizeof err) < 0)
		goto bad;
	if (off_scanelf(&e, &f->l, &o, err, sizeof err) < 0) {
		elf_close(&e);
		goto bad;
	}
	elf_close(&e);
	return 0;
bad:
	warn("%s: %s", path, err);
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
/* Scan the ELF members of a wheel, each decompressed in memory: a member that says or
   turns out to be larger than the --max-inflate cap is refused before more is read. */
static int
scanwheel(struct scanset *s, const char *path, int fd)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ae;
	unsigned char *buf = NULL;
	size_t cap = 0, len;
	uint64_t max = s->maxraw ? s->maxraw : OFF_MAXRAW, room;
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
		buf = xgrow(buf, &cap, 4, 1);
		while (len < 4 && (r = archive_read_data(a, buf + len, 4 - len)) > 0)
			len += (size_t)r;
		if (len < 4 || memcmp(buf, "\177ELF", 4) != 0)
			continue;
		if (archive_entry_size_is_set(ae) && (uint64_t)archive_entry_size(ae) > max) {
			warn("%s: member %s would decompress to %llu bytes, over the %llu-byte cap "
			     "(--max-inflate)", path, archive_entry_pathname(ae),
			     (unsigned long long)archive_entry_size(ae), (unsigned long long)max);
			s->errors++;
			rc = -1;
			continue;
		}
		if (archive_entry_size_is_set(ae) && archive_entry_size(ae) > 4)
			buf = xgrow(buf, &cap, (size_t)archive_entry_size(ae), 1);
		for (;;) {
			if (cap - len < 1 << 16)
				buf = xgrow(buf, &cap, len + (1 << 16), 1);
			/* never more than the cap, whatever the member's header said */
			room = len <= max ? max + 1 - len : 1;
			r = archive_read_data(a, buf + len, cap - len < room ? cap - len : (size_t)room);
			if (r > 0 && len + (size_t)r > max) {
				/* checked before reading on: at most max + 1 bytes are ever held */
				warn("%s: member %s decompresses to more than the %llu-byte cap (--max-inflate)",
				     path, archive_entry_pathname(ae), (unsigned long long)max);
				s->errors++;
				rc = -1;
				len = 0;
				break;
			}
			if (r < 0) {
				warn("%s: member %s: %s", path, archive_entry_pathname(ae),
				     archive_error_string(a));
				s->errors++;
				rc = -1;
				goto out;
			}
			if (r == 0)
				break;
			len += (size_t)r;
		}
		if (!len)
			continue;
		name = xasprintf("%s!%s", path, archive_entry_pathname(ae));
		if (scanbytes(s, name, buf, len, 0) < 0)
			rc = -1;
		free(name);
	}
	if (ar != ARCHIVE_EOF) {
		warn("%s: bad zip archive (%s)", path, archive_error_string(a));
		s->errors++;
		rc = -1;
	}
out:
	free(buf);
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
	char err[PATH_MAX + 128];
	int rc, fd;

	if ((fd = os_openreg(path, 0, NULL, err, sizeof err)) < 0) {
		warn("%s", err);
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
		madvise((void *)m.p, m.n, MADV_RANDOM);
	rc = scanbytes(s, path, m.p ? m.p : (const unsigned char *)"", m.n, explicit);
	map_close(&m);
	return rc < 0 ? -1 : 0;
}

/* the regular files of 4 bytes or more under dir, depth first in name order, appended
   to out (symbolic links, FIFOs and devices are left out); a folder that cannot be
   listed is warned about and counted */
static int
listtree(struct scanset *s, const char *dir, struct strv *out)
{
	struct strv names = {0};
	struct stat st;
	size_t i;
	char *p;
	int rc = 0;

	if (os_listdir(dir, &names) < 0) {
		warn("%s:", dir);
		s->errors++;
		return -1;
	}
	for (i = 0; i < names.n; i++) {
		p = xasprintf("%s/%s", dir, names.v[i]);
		if (lstat(p, &st) == 0) {
			if (S_ISDIR(st.st_mode)) {
				if (listtree(s, p, out) < 0)
					rc = -1;
			} else if (S_ISREG(st.st_mode) && st.st_size >= 4) {
				strv_add(out, p, 0);
			}
		}
		free(p);
	}
	strv_free(&names);
	return rc;
}

/* Ask the kernel to start reading, without waiting, what scanning path will touch
   first: its ELF header and its tail, where the section headers and their names lie.
   Reads of many small files then overlap instead of waiting one after another. */
static void
prefetch(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		posix_fadvise(fd, 0, 4096, POSIX_FADV_WILLNEED);
		if (st.st_size > 4096)
			posix_fadvise(fd, st.st_size > PREFETCH_TAIL ? st.st_size - PREFETCH_TAIL : 4096,
			              PREFETCH_TAIL, POSIX_FADV_WILLNEED);
	}
	close(fd);
}

/* scan every ELF file and wheel under dir, keeping the next PREFETCH_AHEAD files'
   headers on their way from the disk */
static int
scandir_(struct scanset *s, const char *dir)
{
	struct strv files = {0};
	size_t i, ahead = 0;
	int rc;

	rc = listtree(s, dir, &files);
	for (i = 0; i < files.n; i++) {
		for (; ahead < files.n && ahead < i + PREFETCH_AHEAD; ahead++)
			prefetch(files.v[ahead]);
		if (scanfile(s, files.v[i], 0) < 0)
			rc = -1;
	}
	strv_free(&files);
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
	}
	free(s->f);
	memset(s, 0, sizeof *s);
}
