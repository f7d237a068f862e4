/* do the pins fit together: the torch a vision or audio pin was made for, from the
   release table below, a wheel's METADATA or the installed distribution */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

#include "zip.h"

/* the version a pin stands for, when it can be known without fetching: a release tag
   (v2.8.0), a wheel's file name, or the installed distribution; NULL otherwise */
static char *
pinversion(const struct component *c, int dist)
{
	const char *k = pin(c, "KIND"), *r;
	const char *w, *b;
	size_t n;

	if (!strcmp(k, "system"))
		return dist >= 0 && *py.dists[dist][0] ? xstrdup(py.dists[dist][0]) : NULL;
	if (!strcmp(k, "wheel")) {
		w = pin(c, "WHEEL");
		b = strrchr(w, '/') ? strrchr(w, '/') + 1 : w;
		if (!(b = strchr(b, '-')))
			return NULL;
		b++;
		n = strcspn(b, "-");
		return xstrndup(b, n);
	}
	r = pin(c, "REF");
	if (r[0] == 'v' && isdig((unsigned char)r[1]) && strspn(r + 1, "0123456789.") == strlen(r + 1))
		return xstrdup(r + 1);
	return NULL;
}

/* major.minor of a version; "" when it has none */
static char *
majmin(const char *v)
{
	size_t n = strspn(v, "0123456789");

	if (!v[n] || v[n] != '.')
		return xstrdup("");
	n++;
	n += strspn(v + n, "0123456789");
	return xstrndup(v, n);
}

/* torchvision and torchaudio releases and the torch release each was made for */
static const struct { const char *comp, *minor, *torch; } against[] = {
	{"vision", "0.14", "1.13"}, {"vision", "0.15", "2.0"}, {"vision", "0.16", "2.1"},
	{"vision", "0.17", "2.2"}, {"vision", "0.18", "2.3"}, {"vision", "0.19", "2.4"},
	{"vision", "0.20", "2.5"}, {"vision", "0.21", "2.6"}, {"vision", "0.22", "2.7"},
	{"vision", "0.23", "2.8"}, {"vision", "0.24", "2.9"},
	{"vision", "0.25", "2.10"}, {"vision", "0.26", "2.11"},
	{"audio", "0.13", "1.13"}, {"audio", "2.0", "2.0"}, {"audio", "2.1", "2.1"},
	{"audio", "2.2", "2.2"}, {"audio", "2.3", "2.3"}, {"audio", "2.4", "2.4"},
	{"audio", "2.5", "2.5"}, {"audio", "2.6", "2.6"}, {"audio", "2.7", "2.7"},
	{"audio", "2.8", "2.8"}, {"audio", "2.9", "2.9"},
	{"audio", "2.10", "2.10"}, {"audio", "2.11", "2.11"},
};

static int
addbuf(void *ctx, const void *q, size_t n)
{
	bufadd(ctx, q, n);
	return 0;
}

/* the torch requirement of a wheel: its METADATA's "Requires-Dist: torch==X" */
static char *
wheeltorch(const char *path)
{
	struct zipin z;
	struct buf m = {0};
	char err[256], *r = NULL, *p, *e;
	size_t i;

	if (zip_open(&z, path, err, sizeof err) < 0)
		return NULL;
	for (i = 0; i < z.n; i++)
		if (endswith(z.e[i].name, ".dist-info/METADATA") && !strchr(strchr(z.e[i].name, '/') + 1, '/'))
			break;
	if (i < z.n && z.e[i].usize < (1 << 20) && zip_read(&z, &z.e[i], addbuf, &m, err, sizeof err) == 0) {
		bufputc(&m, 0);
		for (p = m.s; p && *p; p = e ? e + 1 : NULL) {
			e = strchr(p, '\n');
			if (startswith(p, "Requires-Dist: torch") && !isalnumc((unsigned char)p[20]) &&
			    p[20] != '-' && p[20] != '_') {
				struct buf v = {0};
				const char *q;
				for (q = p + 20; *q && *q != '\n' && *q != ';'; q++)
					if (*q != ' ' && *q != '(' && *q != ')')
						bufputc(&v, *q);
				r = bufdetach(&v);
				break;
			}
		}
	}
	buffree(&m);
	zip_close(&z);
	return r;
}

/* one warning line per vision/audio pin made for another torch than the torch pin */
void
pinfit(void)
{
	const struct component *t = &comp_table[0], *c;
	char *tv = pinversion(t, 0), *tm, *want = NULL, *cv, *cm;
	const char *req;
	size_t i, k;

	if (!tv)
		return;
	tm = majmin(tv);
	for (i = 1; i < non; i++) {
		c = on[i];
		if (strcmp(c->against, "torch"))
			continue;
		want = NULL;
		req = NULL;
		cv = NULL;
		if (!strcmp(pin(c, "KIND"), "wheel")) {
			want = wheeltorch(pin(c, "WHEEL"));
		} else if (!strcmp(pin(c, "KIND"), "system")) {
			k = !strcmp(c->name, "vision") ? 1 : 2;
			if (*py.dists[k][1])
				want = xstrdup(py.dists[k][1]);
		} else if ((cv = pinversion(c, -1))) {
			cm = majmin(cv);
			for (k = 0; k < sizeof against / sizeof against[0]; k++)
				if (!strcmp(against[k].comp, c->name) && !strcmp(against[k].minor, cm))
					req = against[k].torch;
			free(cm);
		}
		if (want) {
			/* ==2.8.0, >=2.8, ==2.8.0+rocm6.4: compare the first version's major.minor */
			const char *v = want + strspn(want, "torch=<>!~ ");
			char *wm = majmin(v);
			const char *w = pin(c, "WHEEL");
			if (*wm && strcmp(wm, tm))
				warn("warning: %s %s requires torch%s, but the torch pin is %s", c->name,
				     pin(c, "KIND")[0] == 's' ? "(installed)" : strrchr(w, '/') ?
				     strrchr(w, '/') + 1 : w, want, tv);
			free(wm);
			free(want);
		} else if (req && strcmp(req, tm)) {
			warn("warning: %s %s is made for torch %s, but the torch pin is %s", c->name,
			     pin(c, "REF"), req, tv);
		}
		free(cv);
	}
	free(tm);
	free(tv);
}
