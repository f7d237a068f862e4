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

/* the parts of a tag string while it is parsed: part[c][0..np[c]) of component c
   (python, abi, platform), pointing into one block with the string split in place */
struct tagparts {
	const char **part[3];
	size_t np[3];
};

/* count the dot-separated parts of each dash-separated component of s (n bytes) into
   tp->np; 0, or -1 with *why when there are not three components */
static int
countparts(const char *s, size_t n, struct tagparts *tp, const char **why)
{
	size_t i;
	int comp = 0;

	tp->np[0] = 1;
	tp->np[1] = tp->np[2] = 0;
	for (i = 0; i < n; i++) {
		if (s[i] == '-') {
			if (++comp > 2)
				break;
			tp->np[comp] = 1;
		} else if (s[i] == '.') {
			tp->np[comp]++;
		}
	}
	if (comp != 2) {
		*why = "the tag must have exactly three parts (python-abi-platform)";
		return -1;
	}
	return 0;
}

/* one block holding the parts' pointers, then a copy of s (n bytes) split in place at
   its dashes and dots; the parts point into it (tp->part). Returns the block (caller
   frees), or NULL with *why when a part is empty. */
static const char **
splitparts(const char *s, size_t n, struct tagparts *tp, const char **why)
{
	size_t np = tp->np[0] + tp->np[1] + tp->np[2], i, k = 0;
	const char **ptrs = xmalloc(np * sizeof *ptrs + n + 1);
	char *m = (char *)(ptrs + np);
	int comp = 0;

	memcpy(m, s, n + 1);
	tp->part[0] = ptrs;
	tp->part[1] = ptrs + tp->np[0];
	tp->part[2] = ptrs + tp->np[0] + tp->np[1];
	tp->part[0][0] = m;
	for (i = 0; i <= n; i++) {
		if (i < n && m[i] != '-' && m[i] != '.')
			continue;
		if (m + i == tp->part[comp][k]) {
			*why = "a tag part is empty";
			free(ptrs);
			return NULL;
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
		tp->part[comp][k] = m + i + 1;
	}
	return ptrs;
}

/* the python parts are identifiers and, with strict, each component's parts are sorted;
   0, or -1 with *why */
static int
checkparts(const struct tagparts *tp, int strict, const char **why)
{
	size_t k, c;

	for (k = 0; k < tp->np[0]; k++)
		if (!isident(tp->part[0][k], strlen(tp->part[0][k]))) {
			*why = "the python tag is not an identifier";
			return -1;
		}
	if (strict)
		for (c = 0; c < 3; c++)
			if (!sortedparts(tp->part[c], tp->np[c])) {
				*why = "compressed tag set parts are not in sorted order (PEP 425)";
				return -1;
			}
	return 0;
}

/* every python-abi-platform combination of the parts, in the order they are listed */
static void
expandparts(const struct tagparts *tp, struct tagset *ts)
{
	size_t a, b, c, t = 0;

	ts->ntags = tp->np[0] * tp->np[1] * tp->np[2];
	ts->tags = xmalloc(ts->ntags * sizeof *ts->tags);
	for (a = 0; a < tp->np[0]; a++)
		for (b = 0; b < tp->np[1]; b++)
			for (c = 0; c < tp->np[2]; c++) {
				ts->tags[t].py = tp->part[0][a];
				ts->tags[t].abi = tp->part[1][b];
				ts->tags[t].plat = tp->part[2][c];
				t++;
			}
}

int
wheeltags_parse(const char *s, int strict, struct tagset *ts, const char **why)
{
	size_t n = strlen(s);
	struct tagparts tp;
	const char **ptrs;

	memset(ts, 0, sizeof *ts);
	if (countparts(s, n, &tp, why) < 0 || !(ptrs = splitparts(s, n, &tp, why)))
		return -1;
	if (checkparts(&tp, strict, why) < 0) {
		free(ptrs);
		return -1;
	}
	expandparts(&tp, ts);
	ts->mem = (char *)ptrs; /* the strings live inside this block */
	return 0;
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
	struct tagset ts;
	const char *bs;
	char *m;
	int r;

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
	r = wheeltags_parse(w->tagstr, strict, &ts, why);
	w->tags = ts.tags;
	w->ntags = ts.ntags;
	w->mem = ts.mem;
	if (r < 0)
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
