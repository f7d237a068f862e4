/* pin files: read with kv.c, every key checked against the schema; patch series digests */
#include "seriesdigest.h"
#include "schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hash.h"
#include "kv.h"

static char **
slot(struct pins *p, const struct component *c, const struct pinkey *k)
{
	if (k->stack)
		return &p->stackv[k - pinkey_table];
	return &p->v[(size_t)(c - comp_table) * pinkey_count + (size_t)(k - pinkey_table)];
}

static void
setv(struct pins *p, const struct component *c, const char *key, const char *v)
{
	const struct pinkey *k = pinkey_find(key, c == NULL);
	char **s;

	if (!k && !c)
		k = pinkey_find(key, 2);  /* an image_ key */
	s = slot(p, c, k);

	free(*s);
	*s = v ? xstrdup(v) : NULL;
}

/* every valid full key (torch_URL ... stack_FAT), for the did-you-mean */
static const char *
suggestkey(const char *bad)
{
	static char *all[256];
	static size_t n;
	size_t i, k;

	if (!n)
		for (k = 0; k < pinkey_count; k++) {
			if (pinkey_table[k].stack) {
				all[n++] = xasprintf("%s_%s", pinkey_table[k].stack == 2 ? "image" : "stack",
				                     pinkey_table[k].key);
				continue;
			}
			for (i = 0; i < comp_count && n < sizeof all / sizeof all[0]; i++)
				all[n++] = xasprintf("%s_%s", comp_table[i].name, pinkey_table[k].key);
		}
	return closest(bad, (const char *const *)all, n, 3);
}

/* split COMPONENT_KEY: the component is what comes before the first '_' that only
   [A-Z0-9_] follows; returns the key row or NULL, with *c the component (NULL: stack_) */
static const struct pinkey *
splitkey(const char *full, const struct component **c)
{
	const char *u;
	char *name;

	for (u = strchr(full, '_'); u; u = strchr(u + 1, '_')) {
		if (!u[1] || strspn(u + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(u + 1))
			continue;
		name = xstrndup(full, (size_t)(u - full));
		*c = comp_find(name);
		if (strcmp(name, "stack") == 0) {
			free(name);
			*c = NULL;
			return pinkey_find(u + 1, 1);
		}
		if (strcmp(name, "image") == 0) {
			free(name);
			*c = NULL;
			return pinkey_find(u + 1, 2);
		}
		free(name);
		return *c ? pinkey_find(u + 1, 0) : NULL;
	}
	return NULL;
}

int
pins_load(struct pins *p, const char *path, char **err)
{
	struct kvfile f;
	const struct component *c;
	const struct pinkey *k;
	const char *why, *s;
	size_t i;

	memset(p, 0, sizeof *p);
	p->file = xstrdup(path);
	p->v = xcalloc(comp_count * pinkey_count, sizeof *p->v);
	p->stackv = xcalloc(pinkey_count, sizeof *p->stackv);
	if (kv_load(&f, path, err) < 0) {
		kv_free(&f);
		return -1;
	}
	for (i = 0; i < f.n; i++) {
		c = NULL;
		if (!(k = splitkey(f.v[i].key, &c))) {
			s = suggestkey(f.v[i].key);
			if (s)
				*err = xasprintf("%s:%d: unknown pin %s; did you mean %s?", path, f.v[i].line,
				                 f.v[i].key, s);
			else
				*err = xasprintf("%s:%d: unknown pin %s (keys are COMPONENT_KEY: see the "
				                 "comment at the top of env/versions.env)", path, f.v[i].line,
				                 f.v[i].key);
			kv_free(&f);
			return -1;
		}
		if ((why = pinkey_check(k->type, f.v[i].value))) {
			/* a value with credentials is not repeated */
			*err = xasprintf("%s:%d: %s%s%s: %s", path, f.v[i].line, f.v[i].key,
			                 k->type == KT_URL ? "" : "=", k->type == KT_URL ? "" : f.v[i].value, why);
			kv_free(&f);
			return -1;
		}
		setv(p, c, k->key, f.v[i].value);
	}
	kv_free(&f);
	return 0;
}

/* --pin rocm=URL[#sha256=HEX] (arg, the URL and digest r): the SDK tarball, its sha from
   the pin file or from here; 0, or -1 with *err */
static int
pinsdk(struct pins *p, const struct component *c, const char *arg, const char *r, char **err)
{
	const char *h = strstr(r, "#sha256="), *s;
	char *u = h ? xstrndup(r, (size_t)(h - r)) : xstrdup(r);

	if (h && pinkey_check(KT_SHA256, h + 8)) {
		*err = xasprintf("--pin %s: the #sha256= part is not a sha256", arg);
		free(u);
		return -1;
	}
	if ((s = pinkey_check(KT_URL, u))) {
		*err = xasprintf("--pin %s=...: the URL %s", c->name, s);
		free(u);
		return -1;
	}
	setv(p, c, "URL", u);
	setv(p, c, "KIND", "sdk");
	if (h)
		setv(p, c, "SHA256", h + 8);
	free(u);
	return 0;
}

int
pins_override(struct pins *p, const char *arg, char **err)
{
	const struct component *c;
	const char *eq = strchr(arg, '='), *r, *s;
	const char *names[16];
	struct stat st;
	char *n;
	size_t i;

	if (!eq || !eq[1]) {
		*err = xasprintf("--pin '%s' is not NAME=REF", arg);
		return -1;
	}
	n = xstrndup(arg, (size_t)(eq - arg));
	r = eq + 1;
	if (!(c = comp_find(n))) {
		for (i = 0; i < comp_count; i++)
			names[i] = comp_table[i].name;
		s = closest(n, names, comp_count, 3);
		*err = xasprintf("unknown component '%s' in --pin%s%s%s", n, s ? "; did you mean " : "",
		                 s ? s : "", s ? "?" : "");
		free(n);
		return -1;
	}
	free(n);
	if (strcmp(r, "system") == 0) {
		setv(p, c, "KIND", "system");
	} else if (startswith(r, "wheel:")) {
		if (stat(r + 6, &st) < 0 || !S_ISREG(st.st_mode)) {
			*err = xasprintf("--pin %s: no such file", arg);
			return -1;
		}
		setv(p, c, "KIND", "wheel");
		setv(p, c, "WHEEL", r + 6);
	} else if (!strcmp(c->kind, "sdk")) {
		return pinsdk(p, c, arg, r, err);
	} else {
		if ((s = pinkey_check(KT_TEXT, r))) {
			*err = xasprintf("--pin %s: the ref %s", arg, s);
			return -1;
		}
		setv(p, c, "REF", r);
		setv(p, c, "SHA", "");
		setv(p, c, "COMMIT", "");
	}
	return 0;
}

void
pins_set(struct pins *p, const struct component *c, const char *key, const char *v)
{
	setv(p, c, key, v);
}

const char *
pins_get(const struct pins *p, const struct component *c, const char *key)
{
	const struct pinkey *k = pinkey_find(key, 0);
	const char *v = p->v[(size_t)(c - comp_table) * pinkey_count + (size_t)(k - pinkey_table)];

	if (v)
		return v;
	if (!strcmp(key, "DEPS"))
		return c->deps;
	if (!strcmp(key, "DIST"))
		return c->dist;
	if (!strcmp(key, "IMPORT"))
		return c->import;
	if (!strcmp(key, "HIPIFY"))
		return c->hipify;
	if (!strcmp(key, "SUBDIR"))
		return c->subdir;
	if (!strcmp(key, "KIND"))
		return c->kind;
	if (!strcmp(key, "BUILD"))
		return comp_defbuild(c);
	return "";
}

const char *
pins_stack(const struct pins *p, const char *key)
{
	const struct pinkey *k = pinkey_find(key, 1);

	return p->stackv[k - pinkey_table] ? p->stackv[k - pinkey_table] : "";
}

const char *
pins_image(const struct pins *p, const char *key)
{
	const struct pinkey *k = pinkey_find(key, 2);

	return p->stackv[k - pinkey_table] ? p->stackv[k - pinkey_table] : "";
}

void
pins_free(struct pins *p)
{
	size_t i;

	if (p->v)
		for (i = 0; i < comp_count * pinkey_count; i++)
			free(p->v[i]);
	if (p->stackv)
		for (i = 0; i < pinkey_count; i++)
			free(p->stackv[i]);
	free(p->v);
	free(p->stackv);
	free(p->file);
	memset(p, 0, sizeof *p);
}

/* srcpin's series digest (tools/lib/seriesdigest.h), of dir/series and the patches it
   lists; "none" without a series; NULL with *err when a listed patch is missing */
char *
series_digest(const char *dir, char ***inputs, size_t *ninputs, char **err)
{
	struct buf text = {0}, pt = {0};
	struct sha256 h;
	char *sf, *line, *cur, *pf, hex[65];
	size_t cap = *ninputs;
	int ln = 0;

	sf = xasprintf("%s/series", dir);
	if (readfile(sf, &text, 16 << 20) < 0) {
		free(sf);
		buffree(&text);
		return xstrdup("none");
	}
	*inputs = xgrow(*inputs, &cap, *ninputs + 1, sizeof **inputs);
	(*inputs)[(*ninputs)++] = xstrdup(sf);
	seriesdigest_begin(&h, text.s, text.len);
	bufputc(&text, 0);
	for (cur = text.s; (line = series_next(&cur, &ln));) {
		pf = xasprintf("%s/%s", dir, line);
		bufreset(&pt);
		if (strpbrk(line, " \t") || readfile(pf, &pt, 256u << 20) < 0) {
			*err = xasprintf("%s: lists %s, which does not exist", sf, line);
			seriesdigest_end(&h, hex);
			free(pf);
			free(sf);
			buffree(&text);
			buffree(&pt);
			return NULL;
		}
		*inputs = xgrow(*inputs, &cap, *ninputs + 1, sizeof **inputs);
		(*inputs)[(*ninputs)++] = pf;
		seriesdigest_patch(&h, line, pt.s, pt.len);
	}
	seriesdigest_end(&h, hex);
	free(sf);
	buffree(&text);
	buffree(&pt);
	return xstrdup(hex);
}
