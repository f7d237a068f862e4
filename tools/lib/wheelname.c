/* wheel and sdist file names, tags and project names (see wheelname.h) */
#include <stdlib.h>
#include <string.h>

#include "wheelname.h"

void
canonname(struct buf *b, const char *name, size_t n)
{
	size_t i;
	int dash = 0;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)name[i];
		if (c == '-' || c == '_' || c == '.') {
			dash = 1;
			continue;
		}
		if (dash)
			bufputc(b, '-');
		dash = 0;
		bufputc(b, c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	if (dash)
		bufputc(b, '-');
	if (!b->s)
		bufputs(b, "");
}

int
name_valid(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || !isalnumc(s[0]) || !isalnumc(s[n - 1]))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnumc(s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
			return 0;
	return 1;
}

int
name_isnormal(const char *s)
{
	size_t i;

	if (!*s)
		return 0;
	for (i = 0; s[i]; i++) {
		int c = (unsigned char)s[i];
		if (c == '-') {
			if (i == 0 || s[i - 1] == '-' || !s[i + 1])
				return 0;
		} else if (!isdig(c) && !(c >= 'a' && c <= 'z')) {
			return 0;
		}
	}
	return 1;
}

/* a Python identifier, ASCII form: [A-Za-z_][A-Za-z0-9_]*; bytes >= 0x80 are let
   through as letters (packaging accepts Unicode identifiers) */
static int
isident(const char *s, size_t n)
{
	size_t i;

	if (!n || isdig(s[0]))
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!isalnumc(c) && c != '_' && c < 0x80)
			return 0;
	}
	return 1;
}

/* sorted order of PEP 425: each part of a compressed set not below the one before */
static int
sortedparts(const char *const *v, size_t n)
{
	size_t k;

	for (k = 1; k < n; k++)
		if (strcmp(v[k - 1], v[k]) > 0)
			return 0;
	return 1;
}

int
wheeltags_parse(const char *s, int strict, struct wheeltag **tags, size_t *ntags, char **mem,
                const char **why)
{
	size_t n = strlen(s), i, k, np[3] = { 0, 0, 0 }, a, b, c, t;
	const char **part[3];
	const char **ptrs;
	char *m;
	int comp = 0;

	*tags = NULL;
	*ntags = 0;
	*mem = NULL;
	/* count the parts of each component */
	np[0] = 1;
	for (i = 0; i < n; i++) {
		if (s[i] == '-') {
			if (++comp > 2)
				break;
			np[comp] = 1;
		} else if (s[i] == '.') {
			np[comp]++;
		}
	}
	if (comp != 2) {
		*why = "the tag must have exactly three parts (python-abi-platform)";
		return -1;
	}
	/* one block: the parts' pointers, then the string split in place */
	ptrs = xmalloc((np[0] + np[1] + np[2]) * sizeof *ptrs + n + 1);
	m = (char *)(ptrs + np[0] + np[1] + np[2]);
	memcpy(m, s, n + 1);
	part[0] = ptrs;
	part[1] = ptrs + np[0];
	part[2] = ptrs + np[0] + np[1];
	comp = 0;
	k = 0;
	part[0][0] = m;
	for (i = 0; i <= n; i++) {
		if (i < n && m[i] != '-' && m[i] != '.')
			continue;
		if (m + i == part[comp][k]) {
			*why = "a tag part is empty";
			goto bad;
		}
		if (i == n)
			break;
		if (m[i] == '-') {
			comp++;
			k = 0;
		} else {
			k++;
		}
		m[i] = 0;
		part[comp][k] = m + i + 1;
	}
	for (k = 0; k < np[0]; k++)
		if (!isident(part[0][k], strlen(part[0][k]))) {
			*why = "the python tag is not an identifier";
			goto bad;
		}
	if (strict)
		for (c = 0; c < 3; c++)
			if (!sortedparts(part[c], np[c])) {
				*why = "compressed tag set parts are not in sorted order (PEP 425)";
				goto bad;
			}
	*ntags = np[0] * np[1] * np[2];
	*tags = xmalloc(*ntags * sizeof **tags);
	t = 0;
	for (a = 0; a < np[0]; a++)
		for (b = 0; b < np[1]; b++)
			for (c = 0; c < np[2]; c++) {
				(*tags)[t].py = part[0][a];
				(*tags)[t].abi = part[1][b];
				(*tags)[t].plat = part[2][c];
				t++;
			}
	*mem = (char *)ptrs; /* the strings live inside this block */
	return 0;
bad:
	free(ptrs);
	*ntags = 0;
	return -1;
}

void
wheelname_free(struct wheelname *w)
{
	free(w->arena);
	free(w->tags);
	free(w->mem);
	pep440_free(&w->ver);
	memset(w, 0, sizeof *w);
}

/* copy n bytes of s to *m as a NUL-terminated string; returns it */
static char *
carve(char **m, const char *s, size_t n)
{
	char *r = *m;

	memcpy(r, s, n);
	r[n] = 0;
	*m += n + 1;
	return r;
}

int
wheelname_parse(struct wheelname *w, const char *file, int strict, const char **why)
{
	size_t n = strlen(file), i, dashes = 0, d[5], nd = 0, k;
	const char *bs;
	char *m;

	memset(w, 0, sizeof *w);
	if (n < 4 || strcmp(file + n - 4, ".whl") != 0) {
		*why = "the extension is not .whl";
		return -1;
	}
	n -= 4;
	for (i = 0; i < n; i++)
		if (file[i] == '-') {
			if (nd < 5)
				d[nd++] = i;
			dashes++;
		}
	if (dashes != 4 && dashes != 5) {
		*why = "wrong number of parts (want NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl)";
		return -1;
	}
	/* name: [\w._]+ with no "__" */
	if (d[0] == 0) {
		*why = "the project name is empty";
		return -1;
	}
	for (i = 0; i < d[0]; i++) {
		unsigned char c = (unsigned char)file[i];
		if (!isalnumc(c) && c != '_' && c != '.' && c < 0x80) {
			*why = "the project name has a character other than letters, digits, '_', '.'";
			return -1;
		}
		if (c == '_' && i + 1 < d[0] && file[i + 1] == '_') {
			*why = "the project name has '__'";
			return -1;
		}
	}
	/* every string of the name lives in one block: raw name, canonical name, version,
	   build tag, build rest, tag string (each at most n bytes, parts of the name but the
	   canonical one) */
	w->arena = m = xmalloc(3 * n + 8);
	w->rawname = carve(&m, file, d[0]);
	w->name = m;
	{
		int dash = 0;
		for (i = 0; i < d[0]; i++) {
			int c = (unsigned char)file[i];
			if (c == '-' || c == '_' || c == '.') {
				dash = 1;
				continue;
			}
			if (dash)
				*m++ = '-';
			dash = 0;
			*m++ = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
		}
		if (dash)
			*m++ = '-';
		*m++ = 0;
	}
	w->verstr = carve(&m, file + d[0] + 1, d[1] - d[0] - 1);
	if (pep440_parse(&w->ver, w->verstr, d[1] - d[0] - 1) < 0) {
		*why = "the version is not a valid PEP 440 version";
		goto bad;
	}
	if (dashes == 5) {
		const char *bt = file + d[1] + 1;
		size_t bl = d[2] - d[1] - 1;
		uint64_t v = 0;
		for (k = 0; k < bl && isdig(bt[k]); k++) {
			unsigned dg = (unsigned)(bt[k] - '0');
			if (v > (UINT64_MAX - dg) / 10) {
				*why = "the build number is too large";
				goto bad;
			}
			v = v * 10 + dg;
		}
		if (k == 0) {
			*why = "the build tag does not start with a digit";
			goto bad;
		}
		w->hasbuild = 1;
		w->buildnum = v;
		w->buildstr = carve(&m, bt, bl);
		w->buildrest = carve(&m, bt + k, bl - k);
		bs = file + d[2] + 1;
	} else {
		w->buildstr = carve(&m, "", 0);
		w->buildrest = carve(&m, "", 0);
		bs = file + d[1] + 1;
	}
	w->tagstr = carve(&m, bs, (size_t)(file + n - bs));
	if (wheeltags_parse(w->tagstr, strict, &w->tags, &w->ntags, &w->mem, why) < 0)
		goto bad;
	return 0;
bad:
	wheelname_free(w);
	return -1;
}

int
sdistname_parse(const char *file, char **name, struct pep440 *v, const char **why)
{
	size_t n = strlen(file), i, dash;
	struct buf b = { 0 };
	int found = 0;

	*name = NULL;
	if (n >= 7 && !strcmp(file + n - 7, ".tar.gz"))
		n -= 7;
	else if (n >= 4 && !strcmp(file + n - 4, ".zip"))
		n -= 4;
	else {
		*why = "the extension is not .tar.gz or .zip";
		return -1;
	}
	dash = 0;
	for (i = 0; i < n; i++)
		if (file[i] == '-') {
			dash = i;
			found = 1;
		}
	if (!found) {
		*why = "no '-' between the name and the version";
		return -1;
	}
	if (dash == 0) {
		*why = "the project name is empty";
		return -1;
	}
	if (pep440_parse(v, file + dash + 1, n - dash - 1) < 0) {
		*why = "the version is not a valid PEP 440 version";
		return -1;
	}
	canonname(&b, file, dash);
	*name = bufdetach(&b);
	return 0;
}
