/* every row of pypa/packaging 26.3's test vectors (tests/data/packaging-26.3.txt)
   against tools/lib/pep440, tools/lib/wheelname and wheelpick's tag orders */
#include <stdlib.h>
#include <string.h>

#include "pep440.h"
#include "target.h"
#include "test.h"
#include "util.h"
#include "wheelname.h"

/* decode Python's unicode_escape form (\t \n \r \\ \xHH \uHHHH) into UTF-8 */
static char *
unescape(const char *s)
{
	struct buf b = { 0 };

	bufputs(&b, "");
	while (*s) {
		unsigned long cp;
		char *end;
		char hex[5] = { 0 };
		if (*s != '\\' || !s[1]) {
			bufputc(&b, *s++);
			continue;
		}
		s++;
		switch (*s) {
		case 't': bufputc(&b, '\t'); s++; continue;
		case 'n': bufputc(&b, '\n'); s++; continue;
		case 'r': bufputc(&b, '\r'); s++; continue;
		case '\\': bufputc(&b, '\\'); s++; continue;
		case 'x': memcpy(hex, s + 1, 2); cp = strtoul(hex, &end, 16); s += 3; break;
		case 'u': memcpy(hex, s + 1, 4); cp = strtoul(hex, &end, 16); s += 5; break;
		default: bufputc(&b, '\\'); continue;
		}
		if (cp < 0x80) {
			bufputc(&b, (int)cp);
		} else if (cp < 0x800) {
			bufputc(&b, (int)(0xc0 | (cp >> 6)));
			bufputc(&b, (int)(0x80 | (cp & 0x3f)));
		} else {
			bufputc(&b, (int)(0xe0 | (cp >> 12)));
			bufputc(&b, (int)(0x80 | ((cp >> 6) & 0x3f)));
			bufputc(&b, (int)(0x80 | (cp & 0x3f)));
		}
	}
	return bufdetach(&b);
}

/* s with control characters shown as \xHH, for one-line messages (rotating buffers) */
static const char *
esc(const char *s)
{
	static char bufs[4][600];
	static int next;
	char *o = bufs[next++ & 3];
	size_t k = 0;

	for (; *s && k + 5 < sizeof bufs[0]; s++) {
		if ((unsigned char)*s < 0x20)
			k += (size_t)snprintf(o + k, 6, "\\x%02x", (unsigned char)*s);
		else
			o[k++] = *s;
	}
	o[k] = 0;
	return o;
}

/* one section: its header and rows (each row's TAB-separated fields, unescaped) */
struct row {
	char *f[6];
	int nf;
	int line;
};
struct section {
	char *head;
	struct row *r;
	size_t n, cap;
};

static struct section *secs;
static size_t nsecs, seccap;

static void
load(const char *text)
{
	const char *p = text;
	int line = 0;

	while (*p) {
		const char *e = strchr(p, '\n');
		char *l = xstrndup(p, e ? (size_t)(e - p) : strlen(p));
		line++;
		p = e ? e + 1 : p + strlen(p);
		if (startswith(l, "### ")) {
			secs = xgrow(secs, &seccap, nsecs + 1, sizeof *secs);
			memset(&secs[nsecs], 0, sizeof *secs);
			secs[nsecs++].head = l;
			continue;
		}
		if (!nsecs || !*l || startswith(l, "# ")) {
			free(l);
			continue;
		}
		{
			struct section *s = &secs[nsecs - 1];
			struct row *r;
			char *q = l, *t;
			s->r = xgrow(s->r, &s->cap, s->n + 1, sizeof *s->r);
			r = &s->r[s->n++];
			memset(r, 0, sizeof *r);
			r->line = line;
			while (r->nf < 6) {
				t = strchr(q, '\t');
				if (t)
					*t = 0;
				r->f[r->nf++] = unescape(q);
				if (!t)
					break;
				q = t + 1;
			}
			free(l);
		}
	}
}

static struct section *
find(const char *prefix)
{
	size_t k;

	for (k = 0; k < nsecs; k++)
		if (startswith(secs[k].head + 4, prefix))
			return &secs[k];
	printf("not ok section '%s' is missing from the vectors file\n", prefix);
	test_failed++;
	return NULL;
}

/* str(Version(s)), or "INVALID" */
static char *
norm(const char *s)
{
	struct pep440 v;
	struct buf b = { 0 };

	if (pep440_parses(&v, s) < 0)
		return xstrdup("INVALID");
	pep440_str(&b, &v);
	pep440_free(&v);
	return bufdetach(&b);
}

static void
t_versions(void)
{
	struct section *s = find("VERSIONS");
	struct pep440 *v;
	size_t i, j;

	if (!s)
		return;
	v = xcalloc(s->n, sizeof *v);
	for (i = 0; i < s->n; i++)
		CHECK(pep440_parses(&v[i], s->r[i].f[0]) == 0, "VERSIONS line %d: '%s' parses",
		      s->r[i].line, esc(s->r[i].f[0]));
	for (i = 0; i < s->n; i++) {
		int ok = pep440_cmp(&v[i], &v[i]) == 0;
		for (j = 0; j < s->n; j++) {
			int c = pep440_cmp(&v[i], &v[j]);
			if ((i < j && c >= 0) || (i > j && c <= 0) || (i == j && c))
				ok = 0;
		}
		CHECK(ok, "VERSIONS line %d: '%s' sorts strictly between its neighbours and equals "
		      "only itself", s->r[i].line, esc(s->r[i].f[0]));
	}
	for (i = 0; i < s->n; i++)
		pep440_free(&v[i]);
	free(v);
}

/* build a version from packaging's from_parts dict text */
static int
fromparts(const char *d, struct pep440 *v)
{
	const char *p;
	char letter[16];
	uint64_t rel[16];
	int n = 0;

	memset(v, 0, sizeof *v);
	if (!(p = strstr(d, "'release': (")))
		return -1;
	p += 12;
	while (*p && *p != ')') {
		rel[n++] = strtoull(p, (char **)&p, 10);
		while (*p == ',' || *p == ' ')
			p++;
	}
	v->nrel = (size_t)n;
	v->rel = xmalloc(n * sizeof *v->rel);
	memcpy(v->rel, rel, n * sizeof *v->rel);
	if ((p = strstr(d, "'epoch': ")) && p[9] != 'N')
		v->epoch = strtoull(p + 9, NULL, 10);
	if ((p = strstr(d, "'pre': (")) && sscanf(p + 8, "'%15[^']', %llu", letter,
	                                          (unsigned long long *)&v->pren) == 2) {
		v->pre = pep440_preletter(letter, strlen(letter));
		if (v->pre < 0)
			return -1;
	}
	if ((p = strstr(d, "'post': ")) && p[8] != 'N') {
		v->haspost = 1;
		v->post = strtoull(p + 8, NULL, 10);
	}
	if ((p = strstr(d, "'dev': ")) && p[7] != 'N') {
		v->hasdev = 1;
		v->dev = strtoull(p + 7, NULL, 10);
	}
	if ((p = strstr(d, "'local': '"))) {
		/* a local label is parsed the way Version parses it */
		struct pep440 l;
		char *s = xasprintf("0+%.*s", (int)strcspn(p + 10, "'"), p + 10);
		int r = pep440_parses(&l, s);
		free(s);
		if (r < 0)
			return -1;
		v->loc = l.loc;
		v->nloc = l.nloc;
		v->mem = l.mem;
		l.loc = NULL;
		l.mem = NULL;
		pep440_free(&l);
	}
	return 0;
}

static void
t_version_tables(void)
{
	struct section *s;
	struct pep440 v, w;
	struct buf b = { 0 };
	size_t i;

	if ((s = find("test_version.py::test_from_parts")))
		for (i = 0; i < s->n; i++) {
			int ok = fromparts(s->r[i].f[0], &v) == 0 && pep440_parses(&w, s->r[i].f[1]) == 0;
			CHECK(ok && pep440_cmp(&v, &w) == 0, "from_parts line %d: %s == Version('%s')",
			      s->r[i].line, esc(s->r[i].f[0]), esc(s->r[i].f[1]));
			pep440_free(&v);
			pep440_free(&w);
		}
	if ((s = find("test_version.py::test_pickle_roundtrip")))
		for (i = 0; i < s->n; i++) {
			char *a = norm(s->r[i].f[0]), *c = norm(a);
			int ok = pep440_parses(&v, a) == 0 && pep440_parses(&w, c) == 0 &&
			         pep440_cmp(&v, &w) == 0 && !strcmp(a, c);
			CHECK(ok, "round trip line %d: '%s' -> '%s' -> '%s'", s->r[i].line, esc(s->r[i].f[0]), a, c);
			pep440_free(&v);
			pep440_free(&w);
			free(a);
			free(c);
		}
	if ((s = find("test_version.py::test_invalid_versions")))
		for (i = 0; i < s->n; i++) {
			int r = pep440_parses(&v, s->r[i].f[0]);
			CHECK(r < 0, "invalid line %d: '%s' is rejected", s->r[i].line, esc(s->r[i].f[0]));
			if (r == 0)
				pep440_free(&v);
		}
	if ((s = find("test_version.py::test_non_string_versions_raise_invalid_version")))
		printf("# n/a: %zu rows of test_non_string_versions (lines %d-%d): C takes only strings, "
		       "so a non-string argument cannot be passed\n", s->n, s->r[0].line,
		       s->r[s->n - 1].line);
	{
		static const char *const strsec[] = { "test_version.py::test_normalized_versions",
		                                      "test_version.py::test_version_str_repr" };
		int k;
		for (k = 0; k < 2; k++)
			if ((s = find(strsec[k])))
				for (i = 0; i < s->n; i++) {
					char *got = norm(s->r[i].f[0]);
					CHECK_STR(got, s->r[i].f[1], "%s line %d: str(Version('%s'))", strsec[k] + 17,
					          s->r[i].line, esc(s->r[i].f[0]));
					free(got);
				}
	}
	{
		static const char *const props[] = { "public", "base_version", "epoch", "release",
		                                     "local", "pre", "is_prerelease", "dev",
		                                     "is_devrelease", "post", "is_postrelease" };
		size_t k;
		char head[96];
		for (k = 0; k < sizeof props / sizeof props[0]; k++) {
			snprintf(head, sizeof head, "test_version.py::test_version_%s ", props[k]);
			if (!(s = find(head)))
				continue;
			for (i = 0; i < s->n; i++) {
				const char *p = props[k];
				char *got;
				size_t j;
				bufreset(&b);
				if (pep440_parses(&v, s->r[i].f[0]) < 0) {
					bufputs(&b, "INVALID");
				} else if (!strcmp(p, "public")) {
					pep440_public(&b, &v);
				} else if (!strcmp(p, "base_version")) {
					pep440_base(&b, &v);
				} else if (!strcmp(p, "epoch")) {
					bufprintf(&b, "%llu", (unsigned long long)v.epoch);
				} else if (!strcmp(p, "release")) {
					bufputc(&b, '(');
					for (j = 0; j < v.nrel; j++)
						bufprintf(&b, "%s%llu", j ? ", " : "", (unsigned long long)v.rel[j]);
					bufputs(&b, v.nrel == 1 ? ",)" : ")");
				} else if (!strcmp(p, "local")) {
					if (v.nloc)
						pep440_local(&b, &v);
					else
						bufputs(&b, "None");
				} else if (!strcmp(p, "pre")) {
					static const char *const l[] = { "", "a", "b", "rc" };
					if (v.pre)
						bufprintf(&b, "('%s', %llu)", l[v.pre], (unsigned long long)v.pren);
					else
						bufputs(&b, "None");
				} else if (!strcmp(p, "is_prerelease")) {
					bufputs(&b, pep440_isprerelease(&v) ? "True" : "False");
				} else if (!strcmp(p, "dev")) {
					if (v.hasdev)
						bufprintf(&b, "%llu", (unsigned long long)v.dev);
					else
						bufputs(&b, "None");
				} else if (!strcmp(p, "is_devrelease")) {
					bufputs(&b, v.hasdev ? "True" : "False");
				} else if (!strcmp(p, "post")) {
					if (v.haspost)
						bufprintf(&b, "%llu", (unsigned long long)v.post);
					else
						bufputs(&b, "None");
				} else {
					bufputs(&b, pep440_ispostrelease(&v) ? "True" : "False");
				}
				pep440_free(&v);
				got = bufdetach(&b);
				CHECK_STR(got, s->r[i].f[1], "%s line %d: Version('%s').%s", p, s->r[i].line,
				          esc(s->r[i].f[0]), p);
				free(got);
			}
		}
	}
	{
		static const char *const py[] = {
			"test_version.py::test_dunder_op_returns_notimplemented",
			"test_version.py::test_compare_other",
			"test_version.py::test_base_version_notimplemented_with_non_base_version" };
		size_t k;
		for (k = 0; k < 3; k++)
			if ((s = find(py[k])))
				printf("# n/a: %zu rows of %s (lines %d-%d): Python's NotImplemented protocol "
				       "for comparisons with non-Version objects has no C counterpart\n", s->n,
				       py[k] + 17, s->r[0].line, s->r[s->n - 1].line);
	}
	buffree(&b);
}

static void
t_names(void)
{
	struct section *s;
	struct buf b = { 0 };
	size_t i;

	if ((s = find("test_utils.py::test_canonicalize_name ")))
		for (i = 0; i < s->n; i++) {
			bufreset(&b);
			canonname(&b, s->r[i].f[0], strlen(s->r[i].f[0]));
			CHECK(name_valid(s->r[i].f[0]), "canonicalize_name line %d: '%s' is a valid name",
			      s->r[i].line, esc(s->r[i].f[0]));
			CHECK_STR(b.s, s->r[i].f[1], "canonicalize_name line %d: '%s'", s->r[i].line,
			          esc(s->r[i].f[0]));
		}
	if ((s = find("test_utils.py::test_canonicalize_name_invalid")))
		for (i = 0; i < s->n; i++) {
			bufreset(&b);
			canonname(&b, s->r[i].f[0], strlen(s->r[i].f[0]));
			CHECK(!name_valid(s->r[i].f[0]), "canonicalize_name_invalid line %d: rejected "
			      "when validating", s->r[i].line);
			CHECK_STR(b.s, s->r[i].f[1], "canonicalize_name_invalid line %d: canonical form",
			          s->r[i].line);
		}
	if ((s = find("test_utils.py::test_is_normalized_name")))
		for (i = 0; i < s->n; i++)
			CHECK(name_isnormal(s->r[i].f[1]) && (!strcmp(s->r[i].f[0], s->r[i].f[1]) ||
			      !name_isnormal(s->r[i].f[0])), "is_normalized_name line %d: '%s' / '%s'",
			      s->r[i].line, esc(s->r[i].f[0]), esc(s->r[i].f[1]));
	if ((s = find("test_utils.py::test_canonicalize_version_no_strip_trailing_zero")))
		for (i = 0; i < s->n; i++) {
			char *got = norm(s->r[i].f[0]);
			CHECK_STR(got, s->r[i].f[0], "canonicalize_version(strip_trailing_zero=False) "
			          "line %d", s->r[i].line);
			free(got);
		}
	buffree(&b);
}

static int
bystr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
t_wheelnames(void)
{
	struct section *s;
	struct wheelname w;
	struct pep440 v;
	const char *why;
	char *nm;
	size_t i, k;

	if ((s = find("test_utils.py::test_parse_wheel_invalid_filename")))
		for (i = 0; i < s->n; i++) {
			int r = wheelname_parse(&w, s->r[i].f[0], 0, &why);
			CHECK(r < 0, "invalid wheel name line %d: '%s' is rejected", s->r[i].line,
			      esc(s->r[i].f[0]));
			if (r == 0)
				wheelname_free(&w);
		}
	if ((s = find("test_utils.py::test_parse_wheel_unsorted_tags_valid_by_default")))
		for (i = 0; i < s->n; i++) {
			int r = wheelname_parse(&w, s->r[i].f[0], 0, &why);
			CHECK(r == 0, "unsorted tags line %d: '%s' is valid by default", s->r[i].line,
			      s->r[i].f[0]);
			wheelname_free(&w);
		}
	if ((s = find("test_utils.py::test_parse_wheel_unsorted_tags_invalid_with_validate")))
		for (i = 0; i < s->n; i++) {
			int r = wheelname_parse(&w, s->r[i].f[0], 1, &why);
			CHECK(r < 0, "unsorted tags line %d: '%s' is rejected when validating order",
			      s->r[i].line, esc(s->r[i].f[0]));
			wheelname_free(&w);
		}
	if ((s = find("test_utils.py::test_parse_sdist_invalid_filename")))
		for (i = 0; i < s->n; i++) {
			int r = sdistname_parse(s->r[i].f[0], &nm, &v, &why);
			CHECK(r < 0, "invalid sdist name line %d: '%s' is rejected", s->r[i].line,
			      s->r[i].f[0]);
			if (r == 0) {
				free(nm);
				pep440_free(&v);
			}
		}
	if ((s = find("test_utils.py::test_parse_wheel_filename ")))
		for (i = 0; i < s->n; i++) {
			struct buf b = { 0 }, vs = { 0 };
			char **tags;
			int ok = wheelname_parse(&w, s->r[i].f[0], 0, &why) == 0;
			if (ok) {
				tags = xcalloc(w.ntags, sizeof *tags);
				for (k = 0; k < w.ntags; k++)
					tags[k] = xasprintf("%s-%s-%s", w.tags[k].py, w.tags[k].abi, w.tags[k].plat);
				qsort(tags, w.ntags, sizeof *tags, bystr);
				pep440_str(&vs, &w.ver);
				bufprintf(&b, "%s\t%s\t", w.name, vs.s);
				if (w.hasbuild)
					bufprintf(&b, "(%llu, '%s')\t", (unsigned long long)w.buildnum, w.buildrest);
				else
					bufputs(&b, "()\t");
				for (k = 0; k < w.ntags; k++) {
					bufprintf(&b, "%s%s", k ? " " : "", tags[k]);
					free(tags[k]);
				}
				free(tags);
				wheelname_free(&w);
			} else {
				bufputs(&b, "INVALID");
			}
			{
				struct buf wb = { 0 };
				bufprintf(&wb, "%s\t%s\t%s\t%s", s->r[i].f[1], s->r[i].f[2], s->r[i].f[3],
				          s->r[i].nf > 4 ? s->r[i].f[4] : "");
				CHECK_STR(b.s, wb.s, "parse_wheel_filename line %d: name, version, build, sorted "
				          "tags of '%s'", s->r[i].line, esc(s->r[i].f[0]));
				buffree(&wb);
			}
			buffree(&b);
			buffree(&vs);
		}
}

/* compare a generated list with a section's rows, one check per row */
static void
samelist(const char *what, struct section *s, const struct strv *got)
{
	size_t i;

	CHECK_INT(got->n, s->n, "%s: %zu entries", what, s->n);
	for (i = 0; i < s->n; i++)
		CHECK_STR(i < got->n ? got->v[i] : NULL, s->r[i].f[0], "%s line %d: entry %zu", what,
		          s->r[i].line, i);
}

static void
t_tags(void)
{
	struct section *s;
	struct strv abis = { 0 }, plats = { 0 }, got = { 0 };
	static const int glibc[] = { 17, 28, 36 };
	size_t i, k;

	if ((s = find("cpython_tags((3,11), ['cp311d','cp311'], ['plat1','plat2'])"))) {
		strv_add(&abis, "cp311d", 0);
		strv_add(&abis, "cp311", 0);
		strv_add(&plats, "plat1", 0);
		strv_add(&plats, "plat2", 0);
		tags_cpython(&got, 3, 11, &abis, &plats);
		samelist("cpython_tags 3.11", s, &got);
		strv_free(&abis);
		strv_free(&got);
	}
	if ((s = find("cpython_tags((3,13), ['cp313t'], ['plat1'])"))) {
		struct strv p1 = { 0 };
		strv_add(&abis, "cp313t", 0);
		strv_add(&p1, "plat1", 0);
		tags_cpython(&got, 3, 13, &abis, &p1);
		samelist("cpython_tags 3.13t", s, &got);
		strv_free(&abis);
		strv_free(&p1);
		strv_free(&got);
	}
	if ((s = find("compatible_tags((3,3), 'cp33', ['plat1','plat2'])"))) {
		tags_compatible(&got, 3, 3, "cp33", &plats);
		samelist("compatible_tags 3.3", s, &got);
		strv_free(&got);
	}
	strv_free(&plats);
	for (k = 0; k < 3; k++) {
		char head[96];
		snprintf(head, sizeof head, "_linux_platforms() on x86_64 glibc 2.%d", glibc[k]);
		if (!(s = find(head)))
			continue;
		plats_linux(&got, "linux_x86_64", 64, &(struct libcver){2, glibc[k], 0, 0},
		            ORDER_PACKAGING);
		samelist(head + 4, s, &got);
		strv_free(&got);
		/* pip's order is the same list with linux_x86_64 moved last */
		plats_linux(&got, "linux_x86_64", 64, &(struct libcver){2, glibc[k], 0, 0}, ORDER_PIP);
		{
			int ok = got.n == s->n && !strcmp(got.v[got.n - 1], "linux_x86_64");
			for (i = 1; ok && i < s->n; i++)
				ok = !strcmp(got.v[i - 1], s->r[i].f[0]);
			CHECK(ok, "glibc 2.%d: --tag-order=pip puts linux_x86_64 after every manylinux tag",
			      glibc[k]);
		}
		strv_free(&got);
	}
	if ((s = find("Full ordered supported-tag list for cp311 on x86_64 glibc 2.28"))) {
		/* through the same path wheelpick takes: target_tags and its rank index */
		struct target t = { 0 };
		int ok = 1;
		t.impl = xstrdup("cp");
		t.major = 3;
		t.minor = 11;
		t.nodot = xstrdup("311");
		t.order = ORDER_PACKAGING;
		target_setabis(&t, "cp311");
		plats_linux(&t.plats, "linux_x86_64", 64, &(struct libcver){2, 28, 0, 0},
		            ORDER_PACKAGING);
		target_tags(&t);
		samelist("cp311 glibc 2.28 tag order", s, &t.tags);
		for (i = 0; i < s->n; i++) {
			char *x = xstrdup(s->r[i].f[0]), *d1 = strchr(x, '-'), *d2 = strchr(d1 + 1, '-');
			*d1 = *d2 = 0;
			if (target_rank(&t, x, d1 + 1, d2 + 1) != (long)i)
				ok = 0;
			free(x);
		}
		CHECK(ok, "cp311 glibc 2.28: the rank index gives every tag its line index");
		CHECK_INT(target_rank(&t, "cp312", "cp312", "linux_x86_64"), -1,
		          "cp311 glibc 2.28: cp312 is not supported");
		target_free(&t);
	}
}

static void
t_extra(void)
{
	struct section *s;
	struct pep440 a, b;
	size_t i, j;

	if ((s = find("EXTRA (computed with packaging 26.3"))) {
		for (i = 0; i < s->n; i++) {
			int ok = pep440_parses(&a, s->r[i].f[0]) == 0;
			for (j = i + 1; ok && j < s->n; j++) {
				ok = pep440_parses(&b, s->r[j].f[0]) == 0 && pep440_cmp(&a, &b) <= 0;
				pep440_free(&b);
			}
			CHECK(ok, "local-label order line %d: '%s' sorts at or below every later row",
			      s->r[i].line, esc(s->r[i].f[0]));
			pep440_free(&a);
		}
	}
	if ((s = find("EXTRA equalities"))) {
		for (i = 0; i < s->n; i++) {
			int ok = pep440_parses(&a, s->r[i].f[0]) == 0 && pep440_parses(&b, s->r[i].f[1]) == 0;
			int eq = ok && pep440_cmp(&a, &b) == 0;
			CHECK(ok && eq == !strcmp(s->r[i].f[2], "True"), "equality line %d: '%s' == '%s' is %s",
			      s->r[i].line, esc(s->r[i].f[0]), esc(s->r[i].f[1]), esc(s->r[i].f[2]));
			pep440_free(&a);
			pep440_free(&b);
		}
	}
	if ((s = find("test_specifiers.py::test_specifiers"))) {
		for (i = 0; i < s->n; i++) {
			struct pep440_spec sp;
			const char *why;
			int ok = pep440_parses(&a, s->r[i].f[0]) == 0 &&
			         pep440_spec_parse(&sp, s->r[i].f[1], strlen(s->r[i].f[1]), &why) == 0;
			int got = ok && pep440_spec_contains(&sp, &a, s->r[i].f[0]);
			CHECK(ok && got == !strcmp(s->r[i].f[2], "True"), "specifier line %d: '%s' in '%s' "
			      "is %s", s->r[i].line, esc(s->r[i].f[0]), esc(s->r[i].f[1]), esc(s->r[i].f[2]));
			if (ok)
				pep440_spec_free(&sp);
			pep440_free(&a);
		}
		CHECK_INT(s->n, 188, "all 188 specifier triples were read");
	}
}

int
main(void)
{
	const char *src = getenv("KILN_SRC");
	char *path = xasprintf("%s/tests/data/packaging-26.3.txt", src ? src : ".");
	struct buf text = { 0 };
	size_t k, i;
	int f;

	if (readfile(path, &text, 0) < 0) {
		printf("not ok vectors: %s: cannot read the project's copy of the vectors\n", path);
		free(path);
		return 1;
	}
	load(text.s);
	t_versions();
	t_version_tables();
	t_names();
	t_wheelnames();
	t_tags();
	t_extra();
	for (k = 0; k < nsecs; k++) {
		for (i = 0; i < secs[k].n; i++)
			for (f = 0; f < secs[k].r[i].nf; f++)
				free(secs[k].r[i].f[f]);
		free(secs[k].r);
		free(secs[k].head);
	}
	free(secs);
	buffree(&text);
	free(path);
	return TEST_DONE();
}
