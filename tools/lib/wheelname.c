/* wheel and sdist file names, tags and project names (see wheelname.h) */
#include <stdlib.h>
#include <string.h>

#include "wheelname.h"

static int
isdig(int c)
{
	return c >= '0' && c <= '9';
}

static int
isalnumc(int c)
{
	return isdig(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

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

/* split s[0..n) on '.', into parts (pointers into s); returns the count, -1 if a part is
   empty; with strict, -2 if the parts are not sorted */
static long
splitdots(const char *s, size_t n, const char ***parts, size_t **lens, int strict)
{
	size_t i, st = 0, cnt = 0, cap = 0, lcap = 0;

	*parts = NULL;
	*lens = NULL;
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (i == st)
			return -1;
		*parts = xgrow(*parts, &cap, cnt + 1, sizeof **parts);
		*lens = xgrow(*lens, &lcap, cnt + 1, sizeof **lens);
		(*parts)[cnt] = s + st;
		(*lens)[cnt] = i - st;
		if (strict && cnt) {
			size_t pl = (*lens)[cnt - 1], l = i - st, m = pl < l ? pl : l;
			int c = memcmp((*parts)[cnt - 1], s + st, m);
			if (c > 0 || (c == 0 && pl > l))
				return -2;
		}
		cnt++;
		st = i + 1;
	}
	return (long)cnt;
}

int
wheeltags_parse(const char *s, int strict, struct wheeltag **tags, size_t *ntags, char **mem,
                const char **why)
{
	const char **p[3] = { 0 };
	size_t *l[3] = { 0 }, n[3] = { 0 }, i, a, b, c, total;
	const char *comp[3];
	size_t compn[3];
	const char *d1, *d2;
	char *m;
	long r;
	int k, ret = -1;

	*tags = NULL;
	*ntags = 0;
	*mem = NULL;
	d1 = strchr(s, '-');
	d2 = d1 ? strchr(d1 + 1, '-') : NULL;
	if (!d1 || !d2 || strchr(d2 + 1, '-')) {
		*why = "the tag must have exactly three parts (python-abi-platform)";
		return -1;
	}
	comp[0] = s; compn[0] = (size_t)(d1 - s);
	comp[1] = d1 + 1; compn[1] = (size_t)(d2 - d1 - 1);
	comp[2] = d2 + 1; compn[2] = strlen(d2 + 1);
	for (k = 0; k < 3; k++) {
		r = splitdots(comp[k], compn[k], &p[k], &l[k], strict);
		if (r == -1) {
			*why = "a tag part is empty";
			goto out;
		}
		if (r == -2) {
			*why = "compressed tag set parts are not in sorted order (PEP 425)";
			goto out;
		}
		n[k] = (size_t)r;
	}
	for (i = 0; i < n[0]; i++)
		if (!isident(p[0][i], l[0][i])) {
			*why = "the python tag is not an identifier";
			goto out;
		}
	*ntags = n[0] * n[1] * n[2];
	*tags = xcalloc(*ntags, sizeof **tags);
	total = 0;
	for (k = 0; k < 3; k++)
		for (i = 0; i < n[k]; i++)
			total += l[k][i] + 1;
	*mem = m = xmalloc(total);
	{
		const char **st[3];
		for (k = 0; k < 3; k++) {
			st[k] = xcalloc(n[k], sizeof *st[k]);
			for (i = 0; i < n[k]; i++) {
				memcpy(m, p[k][i], l[k][i]);
				m[l[k][i]] = 0;
				st[k][i] = m;
				m += l[k][i] + 1;
			}
		}
		i = 0;
		for (a = 0; a < n[0]; a++)
			for (b = 0; b < n[1]; b++)
				for (c = 0; c < n[2]; c++) {
					(*tags)[i].py = st[0][a];
					(*tags)[i].abi = st[1][b];
					(*tags)[i].plat = st[2][c];
					i++;
				}
		for (k = 0; k < 3; k++)
			free(st[k]);
	}
	ret = 0;
out:
	for (k = 0; k < 3; k++) {
		free(p[k]);
		free(l[k]);
	}
	if (ret < 0)
		*ntags = 0;
	return ret;
}

void
wheelname_free(struct wheelname *w)
{
	free(w->name);
	free(w->rawname);
	free(w->verstr);
	free(w->buildrest);
	free(w->tagstr);
	free(w->tags);
	free(w->mem);
	pep440_free(&w->ver);
	memset(w, 0, sizeof *w);
}

int
wheelname_parse(struct wheelname *w, const char *file, int strict, const char **why)
{
	size_t n = strlen(file), i, dashes = 0, d[5], nd = 0;
	const char *bs;
	struct buf b = { 0 };
	int dots_only = 1;

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
		dots_only &= c == '.' || c == '_';
	}
	(void)dots_only;
	w->rawname = xstrndup(file, d[0]);
	canonname(&b, file, d[0]);
	w->name = bufdetach(&b);
	w->verstr = xstrndup(file + d[0] + 1, d[1] - d[0] - 1);
	if (pep440_parses(&w->ver, w->verstr) < 0) {
		*why = "the version is not a valid PEP 440 version";
		goto bad;
	}
	if (dashes == 5) {
		const char *bt = file + d[1] + 1;
		size_t bl = d[2] - d[1] - 1, k = 0;
		uint64_t v = 0;
		while (k < bl && isdig(bt[k])) {
			unsigned dg = (unsigned)(bt[k] - '0');
			if (v > (UINT64_MAX - dg) / 10) {
				*why = "the build number is too large";
				goto bad;
			}
			v = v * 10 + dg;
			k++;
		}
		if (k == 0) {
			*why = "the build tag does not start with a digit";
			goto bad;
		}
		w->hasbuild = 1;
		w->buildnum = v;
		w->buildrest = xstrndup(bt + k, bl - k);
		bs = file + d[2] + 1;
	} else {
		w->buildrest = xstrdup("");
		bs = file + d[1] + 1;
	}
	w->tagstr = xstrndup(bs, (size_t)(file + n - bs));
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
