/* installed paths of wheel members (see wheelpath.h) */
#include "wheelpath.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int
wheelpath_norm(struct buf *b, const char *p)
{
	const char *s = p, *c;
	size_t len;

	bufreset(b);
	bufputs(b, "");
	if (*p == '/')
		return -1;
	while (*s) {
		c = strchr(s, '/');
		len = c ? (size_t)(c - s) : strlen(s);
		if (len == 0 || (len == 1 && s[0] == '.')) {
			/* "a//b", "a/./b" */
		} else if (len == 2 && s[0] == '.' && s[1] == '.') {
			char *l;
			if (!b->len)
				return -1;
			l = strrchr(b->s, '/');
			b->len = l ? (size_t)(l - b->s) : 0;
			b->s[b->len] = 0;
		} else {
			if (b->len)
				bufputc(b, '/');
			bufadd(b, s, len);
		}
		s += len;
		if (*s == '/')
			s++;
	}
	if (!b->len)
		bufputs(b, ".");
	return 0;
}

char *
wheelpath_key(const char *name)
{
	struct buf b = {0};
	const char *slash = strchr(name, '/'), *rest, *s2;
	char *r;

	if (wheelpath_norm(&b, name) < 0) {
		buffree(&b);
		return NULL;
	}
	/* pip tells a .data member by the first component as written, then splits the
	   normalised path into NAME.data / SCHEME / REST */
	if (slash && (size_t)(slash - name) >= 5 && strncmp(slash - 5, ".data", 5) == 0 &&
	    (rest = strchr(b.s, '/')) && (s2 = strchr(rest + 1, '/')) && s2[1]) {
		size_t sl = (size_t)(s2 - rest - 1);
		if ((sl == 7 && !strncmp(rest + 1, "purelib", 7)) ||
		    (sl == 7 && !strncmp(rest + 1, "platlib", 7)))
			r = xstrdup(s2 + 1);
		else  /* '\001' never starts a root key: safe names have no control bytes */
			r = xasprintf("\001%.*s/%s", (int)sl, rest + 1, s2 + 1);
		buffree(&b);
		return r;
	}
	return bufdetach(&b);
}

struct keyed {
	char *key;
	size_t i;
};

static int
bykey(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;
	int c = strcmp(a->key, b->key);

	return c ? c : a->i < b->i ? -1 : a->i > b->i;
}

static int
keycmp(const void *k, const void *y)
{
	return strcmp(k, ((const struct keyed *)y)->key);
}

int
wheelpath_clash(char *const *names, size_t n, size_t *a, size_t *b)
{
	struct keyed *k = xmalloc((n ? n : 1) * sizeof *k), *hit;
	size_t nk = 0, i;
	char *p;
	int r = 0;

	for (i = 0; i < n; i++) {
		if (endswith(names[i], "/"))
			continue;
		if (!(k[nk].key = wheelpath_key(names[i]))) {
			*a = i;
			r = -1;
			goto out;
		}
		k[nk++].i = i;
	}
	qsort(k, nk, sizeof *k, bykey);
	for (i = 1; i < nk && !r; i++) {
		if (!strcmp(k[i - 1].key, k[i].key)) {
			*a = k[i - 1].i;
			*b = k[i].i;
			r = 1;
		}
	}
	/* a file where another member needs a folder: "a/b" and "a/b/c" */
	for (i = 0; i < nk && !r; i++) {
		for (p = strchr(k[i].key, '/'); p && !r; p = strchr(p + 1, '/')) {
			char *dir = xstrndup(k[i].key, (size_t)(p - k[i].key));
			if ((hit = bsearch(dir, k, nk, sizeof *k, keycmp))) {
				*a = hit->i;
				*b = k[i].i;
				r = 1;
			}
			free(dir);
		}
	}
out:
	for (i = 0; i < nk; i++)
		free(k[i].key);
	free(k);
	return r;
}

char *
wheelpath_clashmsg(char *const *names, int r, size_t a, size_t b)
{
	char *ka, *kb, *m;

	if (r < 0)
		return xasprintf("unsafe member path '%s' (it leaves the install folder)", names[a]);
	ka = wheelpath_key(names[a]);
	kb = wheelpath_key(names[b]);
	if (ka && kb && !strcmp(ka, kb))
		m = xasprintf("members '%s' and '%s' install to the same path%s%s%s", names[a],
		              names[b], ka[0] == 1 ? "" : " '", ka[0] == 1 ? "" : ka, ka[0] == 1 ? "" : "'");
	else
		m = xasprintf("member '%s' installs a file where '%s' needs a folder", names[a],
		              names[b]);
	free(ka);
	free(kb);
	return m;
}

int
wheelpath_plainname(const char *s)
{
	const unsigned char *p;

	if (!*s || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (p = (const unsigned char *)s; *p; p++)
		if (*p == '/' || *p == '\\' || *p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

void
wheelpath_escape(struct buf *b, const char *s)
{
	const unsigned char *p;

	bufputs(b, "");
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p >= 0x7f || *p == '\\')
			bufprintf(b, "\\x%02x", *p);
		else
			bufputc(b, *p);
	}
}
