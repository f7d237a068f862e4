/* wheel names, RECORD, WHEEL tags, ELF facts and the manylinux system-library policy */
#include "fw.h"
#include "elffile.h"
#include "hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
elfinfo_read(struct elfinfo *info, const void *p, size_t n, char **err)
{
	struct elf e;
	struct elfdyn d;
	size_t i;
	const char *v;
	int minor;

	memset(info, 0, sizeof *info);
	info->glibc = info->cxx = -1;
	if (!elf_is(p, n)) {
		seterr(err, "not an ELF file");
		return -1;
	}
	if (elf_open(&e, p, n, err) < 0)
		return -1;
	if (elf_dynamic(&e, &d, err) < 0) {
		elf_close(&e);
		return -1;
	}
	info->is64 = e.is64;
	info->machine = e.machine;
	info->type = e.type;
	info->dynamic = d.dynoff != 0;
	info->soname = d.soname ? xstrdup(d.soname) : NULL;
	info->rpath = d.rpath ? xstrdup(d.rpath) : NULL;
	info->runpath = d.runpath ? xstrdup(d.runpath) : NULL;
	info->nneeded = d.nneeded;
	info->needed = xcalloc(d.nneeded + 1, sizeof *info->needed);
	for (i = 0; i < d.nneeded; i++)
		info->needed[i] = xstrdup(d.needed[i]);
	for (i = 0; i < d.nverneed; i++) {
		v = d.verneed[i];
		if (startswith(v, "GLIBC_2.") && sscanf(v + 8, "%d", &minor) == 1 && minor > info->glibc)
			info->glibc = minor;
		if ((minor = policy_cxx(v)) > info->cxx)
			info->cxx = minor;
	}
	elf_dynfree(&d);
	elf_close(&e);
	return 0;
}

void
elfinfo_free(struct elfinfo *info)
{
	size_t i;

	for (i = 0; i < info->nneeded; i++)
		free(info->needed[i]);
	free(info->needed);
	free(info->soname);
	free(info->rpath);
	free(info->runpath);
	memset(info, 0, sizeof *info);
}

int
whl_parse(struct whlname *w, const char *path, const char **why)
{
	const char *base = strrchr(path, '/');
	const char *t, *d1, *d2;

	memset(w, 0, sizeof *w);
	base = base ? base + 1 : path;
	if (wheelname_parse(&w->n, base, 0, why) < 0)
		return -1;
	/* the tag set as written: PY-ABI-PLAT, each part maybe a '.'-joined set */
	t = w->n.tagstr;
	d1 = strchr(t, '-');
	d2 = d1 ? strchr(d1 + 1, '-') : NULL;
	if (!d2) {
		*why = "the tag set is not PY-ABI-PLATFORM";
		wheelname_free(&w->n);
		return -1;
	}
	w->name = w->n.rawname;
	w->version = w->n.verstr;
	w->build = w->n.hasbuild ? w->n.buildstr : NULL;
	w->py = xstrndup(t, (size_t)(d1 - t));
	w->abi = xstrndup(d1 + 1, (size_t)(d2 - d1 - 1));
	w->plat = xstrdup(d2 + 1);
	return 0;
}

char *
whl_fmt(const struct whlname *w, const char *plat)
{
	return xasprintf("%s-%s%s%s-%s-%s-%s.whl", w->name, w->version, w->build ? "-" : "",
	                 w->build ? w->build : "", w->py, w->abi, plat ? plat : w->plat);
}

void
whl_free(struct whlname *w)
{
	wheelname_free(&w->n);
	free(w->py);
	free(w->abi);
	free(w->plat);
	memset(w, 0, sizeof *w);
}

/* read one CSV field at *p (up to a comma or end of line); returns NULL on bad quoting */
static char *
csvfield(const char **p, const char *end)
{
	struct buf b = {0};
	const char *s = *p;

	bufputs(&b, "");
	if (s < end && *s == '"') {
		for (s++;; s++) {
			if (s >= end) {
				buffree(&b);
				return NULL;
			}
			if (*s == '"') {
				if (s + 1 < end && s[1] == '"') {
					bufputc(&b, '"');
					s++;
					continue;
				}
				s++;
				break;
			}
			bufputc(&b, *s);
		}
		if (s < end && *s != ',' && *s != '\n' && *s != '\r') {
			buffree(&b);
			return NULL;
		}
	} else {
		while (s < end && *s != ',' && *s != '\n' && *s != '\r')
			bufputc(&b, *s++);
	}
	*p = s;
	return bufdetach(&b);
}

static int
cmprec(const void *a, const void *b)
{
	return strcmp(((const struct recline *)a)->path, ((const struct recline *)b)->path);
}

int
record_parse(const char *s, size_t n, struct recline **out, size_t *nout, char **err)
{
	const char *p = s, *end = s + n;
	struct recline *r = NULL;
	size_t cnt = 0, cap = 0, line = 0, i;
	char *f[3];
	int k;

	while (p < end) {
		line++;
		if (*p == '\n' || *p == '\r') {
			p++;
			continue;
		}
		for (k = 0; k < 3; k++) {
			f[k] = csvfield(&p, end);
			if (!f[k])
				goto bad;
			if (k < 2) {
				if (p >= end || *p != ',') {
					free(f[k]);
					goto bad;
				}
				p++;
			}
		}
		if (p < end && *p != '\n' && *p != '\r') {
			for (k = 0; k < 3; k++)
				free(f[k]);
			goto bad;
		}
		r = xgrow(r, &cap, cnt + 1, sizeof *r);
		r[cnt].path = f[0];
		r[cnt].hash = f[1];
		r[cnt].size = f[2];
		r[cnt].seen = 0;
		cnt++;
		while (p < end && (*p == '\r'))
			p++;
		if (p < end && *p == '\n')
			p++;
	}
	qsort(r, cnt, sizeof *r, cmprec);
	for (i = 1; i < cnt; i++) {
		if (strcmp(r[i - 1].path, r[i].path) == 0) {
			seterr(err, "RECORD lists '%s' twice", r[i].path);
			record_free(r, cnt);
			return -1;
		}
	}
	*out = r;
	*nout = cnt;
	return 0;
bad:
	while (k-- > 0)
		free(f[k]);
	seterr(err, "RECORD line %zu is not path,hash,size", line);
	record_free(r, cnt);
	return -1;
}

struct recline *
record_find(struct recline *r, size_t n, const char *path)
{
	struct recline key = {0};

	key.path = (char *)path;
	return n ? bsearch(&key, r, n, sizeof *r, cmprec) : NULL;
}

void
record_free(struct recline *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(r[i].path);
		free(r[i].hash);
		free(r[i].size);
	}
	free(r);
}

void
record_line(struct buf *b, const char *path, const unsigned char *hash32, uint64_t size)
{
	const char *c;

	if (strpbrk(path, ",\"\r\n")) {
		bufputc(b, '"');
		for (c = path; *c; c++) {
			if (*c == '"')
				bufputc(b, '"');
			bufputc(b, *c);
		}
		bufputc(b, '"');
	} else {
		bufputs(b, path);
	}
	if (hash32) {
		bufputs(b, ",sha256=");
		b64url(b, hash32, 32);
		bufprintf(b, ",%llu\n", (unsigned long long)size);
	} else {
		bufputs(b, ",,\n");
	}
}

const char *
plat_arch(const char *plat)
{
	static const char *arches[] = {"x86_64", "aarch64", "i686", "ppc64le", "s390x",
	                               "armv7l", "riscv64", "ppc64", NULL};
	size_t i, ln = strlen(plat), la;

	for (i = 0; arches[i]; i++) {
		la = strlen(arches[i]);
		if (ln > la && plat[ln - la - 1] == '_' && strcmp(plat + ln - la, arches[i]) == 0)
			return arches[i];
	}
	return NULL;
}

char *
wheel_retag(const char *s, size_t n, const char *plat)
{
	struct buf out = {0}, seen = {0};
	const char *p = s, *end = s + n, *nl, *last;
	char *tag, *line;

	bufputs(&out, "");
	bufputs(&seen, "\n");
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		line = xstrndup(p, nl ? (size_t)(nl - p) : (size_t)(end - p));
		p = nl ? nl + 1 : end;
		if (startswith(line, "Tag:") && (last = strrchr(line, '-')) != NULL) {
			/* keep python-abi, replace the platform; drop duplicates */
			tag = xasprintf("%.*s-%s%s", (int)(last - line), line, plat,
			                endswith(line, "\r") ? "\r" : "");
			free(line);
			line = xasprintf("\n%s\n", tag);
			if (!strstr(seen.s, line)) {
				bufputs(&seen, line + 1);
				bufputs(&out, tag);
				bufputc(&out, '\n');
			}
			free(tag);
		} else {
			bufputs(&out, line);
			if (nl)
				bufputc(&out, '\n');
		}
		free(line);
	}
	buffree(&seen);
	return bufdetach(&out);
}

/* libraries the manylinux policies (PEP 513, 571, 599, 600) let a wheel assume: the
   lib_whitelist every manylinux policy of auditwheel 6.7.0 shares (libz, libanl and
   libatomic included), and the dynamic loaders */
int
policy_system(const char *soname)
{
	static const char *sys[] = {
		"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0",
		"libgcc_s.so.1", "libstdc++.so.6", "libnsl.so.1", "libutil.so.1",
		"libresolv.so.2", "libX11.so.6", "libXext.so.6", "libXrender.so.1",
		"libICE.so.6", "libSM.so.6", "libGL.so.1", "libgobject-2.0.so.0", "libz.so.1",
		"libanl.so.1", "libatomic.so.1",
		"libgthread-2.0.so.0", "libglib-2.0.so.0", "ld-linux-x86-64.so.2",
		"ld-linux-aarch64.so.1", "ld-linux.so.2", "ld64.so.2", "ld64.so.1",
		"ld-linux-armhf.so.3", "ld-linux-riscv64-lp64d.so.1", "linux-vdso.so.1", NULL,
	};
	size_t i;

	for (i = 0; sys[i]; i++)
		if (strcmp(sys[i], soname) == 0)
			return 1;
	return 0;
}
