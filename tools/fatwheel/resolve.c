/* finding libraries the way ld.so does: folders, ld.so.cache, a ROCm tarball */
#include "fw.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elffile.h"
#include "wheelpath.h"
#include "os.h"

void
search_add(char ***dirs, size_t *n, size_t *cap, const char *dir)
{
	size_t i;

	if (!*dir)
		dir = ".";
	for (i = 0; i < *n; i++)
		if (strcmp((*dirs)[i], dir) == 0)
			return;
	*dirs = xgrow(*dirs, cap, *n + 1, sizeof **dirs);
	(*dirs)[(*n)++] = xstrdup(dir);
}

void
search_addlist(char ***dirs, size_t *n, size_t *cap, const char *list)
{
	const char *p = list, *c;
	char *d;

	while (p) {
		c = strchr(p, ':');
		d = xstrndup(p, c ? (size_t)(c - p) : strlen(p));
		search_add(dirs, n, cap, d);
		free(d);
		p = c ? c + 1 : NULL;
	}
}

int
search_matches(const char *path, const struct elfinfo *want)
{
	unsigned char h[64];
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	n = read(fd, h, sizeof h);
	close(fd);
	if (n < 20 || !elf_is(h, (size_t)n))
		return 0;
	if (!want)
		return 1;
	return (h[4] == 2) == (want->is64 != 0) && rd16(h + 18) == want->machine;
}

char *
search_in(struct searchpath *s, const char *dir, const char *name, const struct elfinfo *want)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct stat st;

	if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
		if (search_matches(p, want))
			return p;
		/* ld.so skips it too; say so if nothing else is found */
		bufprintf(&s->skipped, "; skipped %s: %s", p,
		          search_matches(p, NULL) ? "wrong ELF class or machine" : "not an ELF file");
	} else if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode)) {
		/* a FIFO, device or socket where a library should be: ld.so would block or
		   fail on it; it is bad input, not a miss */
		dien(EXIT_USAGE, "%s: is %s, not a library file", p, os_ftype(st.st_mode));
	}
	free(p);
	return NULL;
}

void
search_free(struct searchpath *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->dirs[i]);
	free(s->dirs);
	for (i = 0; i < s->nenv; i++)
		free(s->env[i]);
	free(s->env);
	for (i = 0; i < s->nldpaths; i++)
		free(s->ldpaths[i]);
	free(s->ldpaths);
	if (s->tar)
		rocmtar_close(s->tar);
	buffree(&s->skipped);
	memset(s, 0, sizeof *s);
}

/* --rocm=TARBALL ------------------------------------------------------------------ */

struct tarent {
	char *path;     /* member path without a leading "./" */
	char *link;     /* symlink target, or NULL for a regular file */
};

struct rocmtar {
	char *file;
	struct tarent *e;
	size_t n, cap;
};

static const char *
stripdot(const char *p)
{
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	return p;
}

static struct archive *
taropen(const char *path, char **err)
{
	struct archive *a;
	struct stat st;
	int fd;

	/* libarchive would open a FIFO blocking and wait for a writer */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		seterr(err, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		seterr(err, "%s", strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		seterr(err, "is %s, not a regular file", os_ftype(st.st_mode));
		close(fd);
		return NULL;
	}
	close(fd);
	a = archive_read_new();

	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
		seterr(err, "%s", archive_error_string(a));
		archive_read_free(a);
		return NULL;
	}
	return a;
}

struct rocmtar *
rocmtar_open(const char *path, char **err)
{
	struct archive *a = taropen(path, err);
	struct archive_entry *ent;
	struct rocmtar *t;
	const char *p, *l;
	int r;

	if (!a)
		return NULL;
	t = xcalloc(1, sizeof *t);
	t->file = xstrdup(path);
	while ((r = archive_read_next_header(a, &ent)) == ARCHIVE_OK) {
		p = stripdot(archive_entry_pathname(ent));
		if (archive_entry_filetype(ent) != AE_IFREG && archive_entry_filetype(ent) != AE_IFLNK)
			continue;
		/* only library folders: .../lib/NAME or .../lib64/NAME */
		l = strrchr(p, '/');
		if (!l || !(l - p >= 3 && (strncmp(l - 3, "lib", 3) == 0 || (l - p >= 5 && strncmp(l - 5, "lib64", 5) == 0))))
			continue;
		t->e = xgrow(t->e, &t->cap, t->n + 1, sizeof *t->e);
		t->e[t->n].path = xstrdup(p);
		t->e[t->n].link = archive_entry_filetype(ent) == AE_IFLNK && archive_entry_symlink(ent)
		                  ? xstrdup(archive_entry_symlink(ent)) : NULL;
		t->n++;
	}
	if (r != ARCHIVE_EOF) {
		seterr(err, "%s", archive_error_string(a));
		archive_read_free(a);
		rocmtar_close(t);
		return NULL;
	}
	archive_read_free(a);
	return t;
}

static struct tarent *
tarlookup(struct rocmtar *t, const char *path)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->e[i].path, path) == 0)
			return &t->e[i];
	return NULL;
}

const char *
rocmtar_find(struct rocmtar *t, const char *name)
{
	struct tarent *e = NULL;
	size_t i, nl = strlen(name), pl;
	const char *p;
	char *target;
	int hops;

	for (i = 0; i < t->n && !e; i++) {
		p = t->e[i].path;
		pl = strlen(p);
		if (pl > nl && p[pl - nl - 1] == '/' && strcmp(p + pl - nl, name) == 0)
			e = &t->e[i];
	}
	for (hops = 0; e && e->link && hops < 16; hops++) {
		/* links leaving the library folder are not followed */
		if (e->link[0] == '/' || strstr(e->link, ".."))
			return NULL;
		target = xasprintf("%.*s/%s", (int)(strrchr(e->path, '/') - e->path), e->path, e->link);
		e = tarlookup(t, target);
		free(target);
	}
	if (!e || e->link)
		return NULL;
	return e->path;
}

int
rocmtar_readmany(struct rocmtar *t, const char **members, struct buf **outs, size_t n, char **err)
{
	struct archive *a = taropen(t->file, err);
	struct archive_entry *ent;
	char chunk[1 << 16];
	la_ssize_t k;
	size_t i, left = n;
	const char *p;
	int r;

	if (!a)
		return -1;
	for (i = 0; i < n; i++)
		bufreset(outs[i]);
	while (left && (r = archive_read_next_header(a, &ent)) == ARCHIVE_OK) {
		p = stripdot(archive_entry_pathname(ent));
		for (i = 0; i < n; i++)
			if (strcmp(p, members[i]) == 0 && outs[i]->len == 0)
				break;
		if (i == n)
			continue;
		while ((k = archive_read_data(a, chunk, sizeof chunk)) > 0)
			bufadd(outs[i], chunk, (size_t)k);
		if (k < 0) {
			seterr(err, "%s: %s", members[i], archive_error_string(a));
			archive_read_free(a);
			return -1;
		}
		bufputs(outs[i], "");
		left--;
		/* the same member asked for twice (two sonames, one file) */
		for (size_t j = i + 1; j < n; j++) {
			if (strcmp(members[j], members[i]) == 0 && outs[j]->len == 0) {
				bufadd(outs[j], outs[i]->s, outs[i]->len);
				left--;
			}
		}
	}
	if (left) {
		seterr(err, "%s", r == ARCHIVE_EOF ? "a member vanished between two passes" : archive_error_string(a));
		archive_read_free(a);
		return -1;
	}
	archive_read_free(a);
	return 0;
}

void
rocmtar_close(struct rocmtar *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->e[i].path);
		free(t->e[i].link);
	}
	free(t->e);
	free(t->file);
	free(t);
}
