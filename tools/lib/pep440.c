/* PEP 440 versions and specifiers (see pep440.h); written from PEP 440 and the
   behaviour of pypa/packaging 26.3 */
#include <stdlib.h>
#include <string.h>

#include "pep440.h"

static int
issep(int c)
{
	return c == '.' || c == '_' || c == '-';
}

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* bytes of one whitespace character (Python's str.isspace, UTF-8) at s, or 0 */
static size_t
wsfront(const unsigned char *s, size_t n)
{
	if (n >= 1 && ((s[0] >= 9 && s[0] <= 13) || (s[0] >= 0x1c && s[0] <= 0x20)))
		return 1;
	if (n >= 2 && s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0))
		return 2;
	if (n >= 3 && s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80)
		return 3;
	if (n >= 3 && s[0] == 0xe2 && s[1] == 0x80 &&
	    (s[2] <= 0x8a || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf) && s[2] >= 0x80)
		return 3;
	if (n >= 3 && s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f)
		return 3;
	if (n >= 3 && s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80)
		return 3;
	return 0;
}

/* bytes of one whitespace character ending at s+n, or 0 */
static size_t
wsback(const unsigned char *s, size_t n)
{
	size_t k;

	for (k = 1; k <= 3 && k <= n; k++)
		if (wsfront(s + n - k, k) == k)
			return k;
	return 0;
}

/* read decimal digits at s[*i]; 1 if some were read, 0 if none, -1 on overflow */
static int
number(const char *s, size_t n, size_t *i, uint64_t *out)
{
	uint64_t v = 0;
	size_t j = *i;

	if (j >= n || !isdig(s[j]))
		return 0;
	for (; j < n && isdig(s[j]); j++) {
		unsigned d = (unsigned)(s[j] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*i = j;
	*out = v;
	return 1;
}

/* case-insensitive match of the word w at s[i] */
static int
word(const char *s, size_t n, size_t i, const char *w)
{
	size_t k, l = strlen(w);

	if (n - i < l)
		return 0;
	for (k = 0; k < l; k++)
		if (lower((unsigned char)s[i + k]) != w[k])
			return 0;
	return 1;
}

int
pep440_preletter(const char *s, size_t n)
{
	static const struct { const char *w; int k; } tab[] = {
		{ "alpha", PEP440_A }, { "a", PEP440_A }, { "beta", PEP440_B }, { "b", PEP440_B },
		{ "preview", PEP440_RC }, { "pre", PEP440_RC }, { "c", PEP440_RC },
		{ "rc", PEP440_RC },
	};
	size_t k;

	for (k = 0; k < sizeof tab / sizeof tab[0]; k++)
		if (strlen(tab[k].w) == n && word(s, n, 0, tab[k].w))
			return tab[k].k;
	return -1;
}

/* the longest-first alternation of the regex at s[i]: returns the word's length or 0 */
static size_t
alt(const char *s, size_t n, size_t i, const char *const *ws)
{
	int c = i < n ? lower((unsigned char)s[i]) : 0;

	if (!(c >= 'a' && c <= 'z'))
		return 0;
	for (; *ws; ws++)
		if ((*ws)[0] == c && word(s, n, i, *ws))
			return strlen(*ws);
	return 0;
}

void
pep440_free(struct pep440 *v)
{
	free(v->rel);
	free(v->loc);
	free(v->mem);
	memset(v, 0, sizeof *v);
}

/* split the local label s[0..n) (already validated) into segments */
static void
setlocal(struct pep440 *v, const char *s, size_t n)
{
	size_t i, k, nseg = 1;
	char *m;

	for (i = 0; i < n; i++)
		nseg += issep(s[i]);
	v->loc = xcalloc(nseg, sizeof *v->loc);
	v->mem = m = xmalloc(n + 1 + nseg);
	v->nloc = 0;
	for (i = 0; i < n;) {
		size_t j = i;
		int num = 1;
		struct pep440_seg *sg = &v->loc[v->nloc++];

		while (j < n && !issep(s[j])) {
			num &= isdig(s[j]);
			j++;
		}
		k = i;
		if (num)
			while (k + 1 < j && s[k] == '0')
				k++;
		sg->isnum = num;
		sg->s = m;
		for (; k < j; k++)
			*m++ = (char)lower((unsigned char)s[k]);
		*m++ = 0;
		i = j + 1;
	}
}

int
pep440_parse(struct pep440 *v, const char *s, size_t n)
{
	static const char *const prew[] = { "alpha", "a", "beta", "b", "preview", "pre", "c",
	                                    "rc", NULL };
	static const char *const postw[] = { "post", "rev", "r", NULL };
	static const char *const devw[] = { "dev", NULL };
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, j, l, cap = 0;
	uint64_t x;
	int r;

	memset(v, 0, sizeof *v);
	while (n && (l = wsfront(u, n))) {
		s += l; u += l; n -= l;
	}
	while (n && (l = wsback(u, n)))
		n -= l;
	if (i < n && (s[i] == 'v' || s[i] == 'V'))
		i++;
	/* epoch: digits followed by '!' */
	j = i;
	while (j < n && isdig(s[j]))
		j++;
	if (j > i && j < n && s[j] == '!') {
		if (number(s, n, &i, &v->epoch) < 0)
			goto bad;
		i++;
	}
	/* release */
	for (;;) {
		if ((r = number(s, n, &i, &x)) <= 0)
			goto bad;
		v->rel = xgrow(v->rel, &cap, v->nrel + 1, sizeof *v->rel);
		v->rel[v->nrel++] = x;
		if (i + 1 < n && s[i] == '.' && isdig(s[i + 1]))
			i++;
		else
			break;
	}
	/* pre-release: [._-]? letter [._-]? digits? */
	j = i + (i < n && issep(s[i]));
	if ((l = alt(s, n, j, prew))) {
		v->pre = pep440_preletter(s + j, l);
		i = j + l;
		if (i < n && issep(s[i]))
			i++;
		if (number(s, n, &i, &v->pren) < 0)
			goto bad;
	}
	/* post-release: -N, or [._-]? post|rev|r [._-]? digits? */
	if (i + 1 < n && s[i] == '-' && isdig(s[i + 1])) {
		i++;
		v->haspost = 1;
		if (number(s, n, &i, &v->post) < 0)
			goto bad;
	} else {
		j = i + (i < n && issep(s[i]));
		if ((l = alt(s, n, j, postw))) {
			v->haspost = 1;
			i = j + l;
			if (i < n && issep(s[i]))
				i++;
			if (number(s, n, &i, &v->post) < 0)
				goto bad;
		}
	}
	/* development release */
	j = i + (i < n && issep(s[i]));
	if ((l = alt(s, n, j, devw))) {
		v->hasdev = 1;
		i = j + l;
		if (i < n && issep(s[i]))
			i++;
		if (number(s, n, &i, &v->dev) < 0)
			goto bad;
	}
	/* local label: + alnum+ ([._-] alnum+)* */
	if (i < n && s[i] == '+') {
		size_t st = ++i;
		for (;;) {
			j = i;
			while (i < n && isalnumc(s[i]))
				i++;
			if (i == j)
				goto bad;
			if (i < n && issep(s[i]))
				i++;
			else
				break;
		}
		if (i != n)
			goto bad;
		setlocal(v, s + st, n - st);
	}
	if (i != n)
		goto bad;
	return 0;
bad:
	pep440_free(v);
	return -1;
}

int
pep440_parses(struct pep440 *v, const char *s)
{
	return pep440_parse(v, s, strlen(s));
}

void
pep440_copy(struct pep440 *dst, const struct pep440 *src)
{
	size_t k, total = 0;
	char *m;

	*dst = *src;
	dst->rel = xmalloc(src->nrel * sizeof *src->rel);
	memcpy(dst->rel, src->rel, src->nrel * sizeof *src->rel);
	dst->loc = NULL;
	dst->mem = NULL;
	if (!src->nloc)
		return;
	for (k = 0; k < src->nloc; k++)
		total += strlen(src->loc[k].s) + 1;
	dst->loc = xcalloc(src->nloc, sizeof *dst->loc);
	dst->mem = m = xmalloc(total);
	for (k = 0; k < src->nloc; k++) {
		size_t l = strlen(src->loc[k].s) + 1;
		memcpy(m, src->loc[k].s, l);
		dst->loc[k].isnum = src->loc[k].isnum;
		dst->loc[k].s = m;
		m += l;
	}
}

static int
cmpu(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* length of the release without trailing zeros */
static size_t
trimlen(const struct pep440 *v)
{
	size_t k = v->nrel;

	while (k && v->rel[k - 1] == 0)
		k--;
	return k;
}

/* packaging's suffix key: (pre_rank, pre_n, post_rank, post_n, dev_rank, dev_n) */
static void
suffix(const struct pep440 *v, int64_t r[3], uint64_t nn[3])
{
	if (!v->pre && !v->haspost && v->hasdev)
		r[0] = -1;
	else if (!v->pre)
		r[0] = 3;
	else
		r[0] = v->pre - 1;
	nn[0] = v->pre ? v->pren : 0;
	r[1] = v->haspost;
	nn[1] = v->haspost ? v->post : 0;
	r[2] = v->hasdev ? 0 : 1;
	nn[2] = v->hasdev ? v->dev : 0;
}

int
pep440_cmppublic(const struct pep440 *a, const struct pep440 *b)
{
	size_t la = trimlen(a), lb = trimlen(b), k;
	int64_t ra[3], rb[3];
	uint64_t na[3], nb[3];
	int c;

	if ((c = cmpu(a->epoch, b->epoch)))
		return c;
	for (k = 0; k < la && k < lb; k++)
		if ((c = cmpu(a->rel[k], b->rel[k])))
			return c;
	if (la != lb)
		return la < lb ? -1 : 1;
	suffix(a, ra, na);
	suffix(b, rb, nb);
	for (k = 0; k < 3; k++) {
		if (ra[k] != rb[k])
			return ra[k] < rb[k] ? -1 : 1;
		if ((c = cmpu(na[k], nb[k])))
			return c;
	}
	return 0;
}

/* compare two local segments: strings sort below numbers */
static int
cmpseg(const struct pep440_seg *a, const struct pep440_seg *b)
{
	size_t la, lb;
	int c;

	if (a->isnum != b->isnum)
		return a->isnum ? 1 : -1;
	if (a->isnum) {
		la = strlen(a->s);
		lb = strlen(b->s);
		if (la != lb)
			return la < lb ? -1 : 1;
	}
	c = strcmp(a->s, b->s);
	return c < 0 ? -1 : c > 0;
}

int
pep440_cmp(const struct pep440 *a, const struct pep440 *b)
{
	size_t k;
	int c;

	if ((c = pep440_cmppublic(a, b)))
		return c;
	for (k = 0; k < a->nloc && k < b->nloc; k++)
		if ((c = cmpseg(&a->loc[k], &b->loc[k])))
			return c;
	if (a->nloc != b->nloc)
		return a->nloc < b->nloc ? -1 : 1;
	return 0;
}

void
pep440_base(struct buf *b, const struct pep440 *v)
{
	size_t k;

	if (v->epoch)
		bufprintf(b, "%llu!", (unsigned long long)v->epoch);
	for (k = 0; k < v->nrel; k++)
		bufprintf(b, "%s%llu", k ? "." : "", (unsigned long long)v->rel[k]);
	if (!b->s)
		bufputs(b, "");
}

void
pep440_public(struct buf *b, const struct pep440 *v)
{
	static const char *const pre[] = { "", "a", "b", "rc" };

	pep440_base(b, v);
	if (v->pre)
		bufprintf(b, "%s%llu", pre[v->pre], (unsigned long long)v->pren);
	if (v->haspost)
		bufprintf(b, ".post%llu", (unsigned long long)v->post);
	if (v->hasdev)
		bufprintf(b, ".dev%llu", (unsigned long long)v->dev);
}

void
pep440_local(struct buf *b, const struct pep440 *v)
{
	size_t k;

	for (k = 0; k < v->nloc; k++) {
		if (k)
			bufputc(b, '.');
		bufputs(b, v->loc[k].s);
	}
	if (!b->s)
		bufputs(b, "");
}

void
pep440_str(struct buf *b, const struct pep440 *v)
{
	pep440_public(b, v);
	if (v->nloc) {
		bufputc(b, '+');
		pep440_local(b, v);
	}
}

int
pep440_isprerelease(const struct pep440 *v)
{
	return v->pre || v->hasdev;
}

int
pep440_ispostrelease(const struct pep440 *v)
{
	return v->haspost;
}

/* ---- specifiers ---------------------------------------------------------------------- */

const char *
pep440_opstr(enum pep440_op op)
{
	static const char *const s[] = { "~=", "==", "!=", "<=", ">=", "<", ">", "===" };
	return s[op];
}

void
pep440_spec_free(struct pep440_spec *sp)
{
	free(sp->text);
	pep440_free(&sp->v);
	memset(sp, 0, sizeof *sp);
}

/* ASCII whitespace or a Unicode space at s */
static size_t
wsat(const char *s, size_t n)
{
	return wsfront((const unsigned char *)s, n);
}

int
pep440_spec_parse(struct pep440_spec *sp, const char *s, size_t n, const char **why)
{
	static const struct { const char *t; enum pep440_op op; } ops[] = {
		{ "===", PEP440_ARB }, { "~=", PEP440_COMPAT }, { "==", PEP440_EQ },
		{ "!=", PEP440_NE }, { "<=", PEP440_LE }, { ">=", PEP440_GE }, { "<", PEP440_LT },
		{ ">", PEP440_GT },
	};
	const unsigned char *u;
	size_t k, l, vn;
	const char *vs;

	memset(sp, 0, sizeof *sp);
	while (n && (l = wsat(s, n))) {
		s += l; n -= l;
	}
	u = (const unsigned char *)s;
	while (n && (l = wsback(u, n)))
		n -= l;
	for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
		if (n >= strlen(ops[k].t) && !memcmp(s, ops[k].t, strlen(ops[k].t)))
			break;
	if (k == sizeof ops / sizeof ops[0]) {
		*why = "no operator (use one of == != <= >= < > ~= ===)";
		return -1;
	}
	sp->op = ops[k].op;
	vs = s + strlen(ops[k].t);
	vn = n - strlen(ops[k].t);
	while (vn && (l = wsat(vs, vn))) {
		vs += l; vn -= l;
	}
	if (!vn) {
		*why = "no version after the operator";
		return -1;
	}
	if (sp->op == PEP440_ARB) {
		for (k = 0; k < vn; k++)
			if (wsat(vs + k, vn - k) || vs[k] == ';' || vs[k] == ')') {
				*why = "=== takes one word without spaces, ';' or ')'";
				return -1;
			}
		sp->text = xstrndup(vs, vn);
		return 0;
	}
	/* the spec grammar is the version grammar without inner whitespace */
	for (k = 0; k < vn; k++)
		if (wsat(vs + k, vn - k)) {
			*why = "space inside the version";
			return -1;
		}
	if (vn >= 2 && vs[vn - 2] == '.' && vs[vn - 1] == '*') {
		if (sp->op != PEP440_EQ && sp->op != PEP440_NE) {
			*why = "a .* wildcard is only allowed with == and !=";
			return -1;
		}
		sp->wildcard = 1;
		vn -= 2;
	}
	if (pep440_parse(&sp->v, vs, vn) < 0) {
		*why = "not a valid PEP 440 version";
		return -1;
	}
	sp->haslocal = sp->v.nloc > 0;
	if (sp->wildcard && (sp->v.pre || sp->v.haspost || sp->v.hasdev || sp->haslocal)) {
		*why = "a .* wildcard follows the release numbers only (==2.6.*)";
		goto bad;
	}
	if (sp->haslocal && sp->op != PEP440_EQ && sp->op != PEP440_NE) {
		*why = "a local label (+...) is only allowed with == and !=";
		goto bad;
	}
	if (sp->op == PEP440_COMPAT && sp->v.nrel < 2) {
		*why = "~= needs at least two release numbers (~=2.6)";
		goto bad;
	}
	sp->text = xstrndup(vs, vn + 2 * sp->wildcard);
	return 0;
bad:
	pep440_free(&sp->v);
	return -1;
}

void
pep440_specset_free(struct pep440_specset *ss)
{
	size_t k;

	for (k = 0; k < ss->n; k++)
		pep440_spec_free(&ss->s[k]);
	free(ss->s);
	ss->s = NULL;
	ss->n = 0;
}

int
pep440_specset_parse(struct pep440_specset *ss, const char *s, const char **why, size_t *at)
{
	size_t cap = 0, i = 0, j, k;
	int blank = 1;

	ss->s = NULL;
	ss->n = 0;
	for (k = 0; s[k]; k++)
		if (!wsat(s + k, strlen(s + k)))
			blank = 0;
	if (blank)
		return 0;
	for (;;) {
		for (j = i; s[j] && s[j] != ','; j++)
			;
		for (k = i; k < j && wsat(s + k, j - k); k++)
			;
		if (k < j) {
			/* blank clauses are ignored, as packaging's SpecifierSet does */
			ss->s = xgrow(ss->s, &cap, ss->n + 1, sizeof *ss->s);
			if (pep440_spec_parse(&ss->s[ss->n], s + i, j - i, why) < 0) {
				*at = i;
				pep440_specset_free(ss);
				return -1;
			}
			ss->n++;
		}
		if (!s[j])
			break;
		i = j + 1;
	}
	return 0;
}

/* v with the dev number set (and nothing else after the release unless keep) */
static void
mkbound(struct pep440 *out, const struct pep440 *v, size_t nrel, int bumplast)
{
	memset(out, 0, sizeof *out);
	out->epoch = v->epoch;
	out->nrel = nrel;
	out->rel = xmalloc((nrel ? nrel : 1) * sizeof *out->rel);
	memcpy(out->rel, v->rel, nrel * sizeof *out->rel);
	if (bumplast && nrel)
		out->rel[nrel - 1]++;
	out->hasdev = 1;
	out->dev = 0;
}

/* same epoch, release (ignoring trailing zeros) and pre-release as v */
static int
samefamily(const struct pep440 *p, const struct pep440 *v)
{
	size_t lp = trimlen(p), lv = trimlen(v), k;

	if (p->epoch != v->epoch || lp != lv)
		return 0;
	for (k = 0; k < lp; k++)
		if (p->rel[k] != v->rel[k])
			return 0;
	return p->pre == v->pre && (!p->pre || p->pren == v->pren);
}

static int
lowercaseeq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (lower((unsigned char)*a) != lower((unsigned char)*b))
			return 0;
	return !*a && !*b;
}

int
pep440_spec_contains(const struct pep440_spec *sp, const struct pep440 *p, const char *raw)
{
	const struct pep440 *v = &sp->v;
	struct pep440 lo, hi;
	int r;

	switch (sp->op) {
	case PEP440_ARB:
		return raw && lowercaseeq(raw, sp->text);
	case PEP440_GE:
		return pep440_cmp(p, v) >= 0;
	case PEP440_LE:
		return pep440_cmppublic(p, v) <= 0;
	case PEP440_EQ:
	case PEP440_NE:
		if (sp->wildcard) {
			/* [V.dev0, V'.dev0) where V' bumps the last release number */
			mkbound(&lo, v, v->nrel, 0);
			mkbound(&hi, v, v->nrel, 1);
			r = pep440_cmp(p, &lo) >= 0 && pep440_cmp(p, &hi) < 0;
			pep440_free(&lo);
			pep440_free(&hi);
		} else if (sp->haslocal) {
			r = pep440_cmp(p, v) == 0;
		} else {
			r = pep440_cmppublic(p, v) == 0;
		}
		return sp->op == PEP440_EQ ? r : !r;
	case PEP440_COMPAT:
		if (pep440_cmp(p, v) < 0)
			return 0;
		mkbound(&hi, v, v->nrel - 1, 1);
		r = pep440_cmp(p, &hi) < 0;
		pep440_free(&hi);
		return r;
	case PEP440_LT:
		if (pep440_isprerelease(v))
			return pep440_cmp(p, v) < 0;
		/* <V excludes V's own pre-releases: compare with V.dev0 */
		pep440_copy(&lo, v);
		lo.hasdev = 1;
		lo.dev = 0;
		r = pep440_cmp(p, &lo) < 0;
		pep440_free(&lo);
		return r;
	case PEP440_GT:
		if (v->hasdev || v->haspost) {
			/* >V.devN: at least V.dev(N+1); >V.postN: at least V.post(N+1).dev0 */
			pep440_copy(&lo, v);
			if (v->hasdev) {
				lo.dev++;
			} else {
				lo.post++;
				lo.hasdev = 1;
				lo.dev = 0;
			}
			r = pep440_cmp(p, &lo) >= 0;
			pep440_free(&lo);
			return r;
		}
		/* >V excludes V, V+local and V's post-releases */
		return pep440_cmp(p, v) > 0 && !samefamily(p, v);
	}
	return 0;
}

int
pep440_specset_contains(const struct pep440_specset *ss, const struct pep440 *v,
                        const char *raw)
{
	size_t k;

	for (k = 0; k < ss->n; k++)
		if (!pep440_spec_contains(&ss->s[k], v, raw))
			return 0;
	return 1;
}

int
pep440_spec_pre(const struct pep440_spec *sp)
{
	struct pep440 v;
	int r;

	if (sp->op == PEP440_NE || sp->wildcard)
		return 0;
	if (sp->op == PEP440_ARB) {
		if (pep440_parses(&v, sp->text) < 0)
			return 0;
		r = pep440_isprerelease(&v);
		pep440_free(&v);
		return r;
	}
	return pep440_isprerelease(&sp->v);
}

int
pep440_specset_pre(const struct pep440_specset *ss)
{
	size_t k;

	for (k = 0; k < ss->n; k++)
		if (pep440_spec_pre(&ss->s[k]))
			return 1;
	return 0;
}
