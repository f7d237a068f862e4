/* the tree an archive declares, and its links resolved as the kernel resolves them
   (path_resolution(7): each part looked up in turn, a link's target put in its place
   relative to the link's folder, '..' of the top leaves it, at most 40 links per lookup),
   on names only: nothing on disk is read or followed */
#include "tartree.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Linux's MAXSYMLINKS: links one lookup may follow before ELOOP */
#define MAXHOPS 40

/* name without empty and "." parts (fresh); NULL when a part is ".." */
static char *
normname(const char *s)
{
	struct buf b = {0};
	size_t n;

	for (; *s; s += n) {
		while (*s == '/')
			s++;
		n = strcspn(s, "/");
		if (n == 0 || (n == 1 && s[0] == '.'))
			continue;
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			buffree(&b);
			return NULL;
		}
		if (b.len)
			bufputc(&b, '/');
		bufadd(&b, s, n);
	}
	return b.s ? bufdetach(&b) : xstrdup("");
}

int
tt_add(struct tartree *t, const char *name, int kind, const char *target, char **why)
{
	char *nm = normname(name);
	size_t tl = target ? strlen(target) : 0;

	if (!nm) {
		*why = xasprintf("member '%s' leaves the folder (a '..' part; refused)", name);
		return -1;
	}
	if (kind == TT_LINK && (!tl || target[0] == '/' || tl > TT_MAXTARGET)) {
		*why = xasprintf(!tl || target[0] == '/'
		                 ? "member '%s' is a link to '%.200s', outside the folder (refused)"
		                 : "member '%s' is a link to a target longer than 4095 bytes "
		                   "'%.40s...', which no link can hold (refused)", name, target ? target : "");
		free(nm);
		return -1;
	}
	t->bytes += strlen(nm) + tl + 2 + sizeof *t->v;
	if (t->bytes > TT_MAXBYTES) {
		*why = xasprintf("the member names and link targets pass %zu MiB at '%.200s' (refused)",
		                 TT_MAXBYTES >> 20, name);
		free(nm);
		return -1;
	}
	t->v = xgrow(t->v, &t->cap, t->n + 1, sizeof *t->v);
	t->v[t->n].name = nm;
	t->v[t->n].target = kind == TT_LINK ? xstrdup(target) : NULL;
	t->v[t->n++].kind = kind;
	t->sorted = 0;
	return 0;
}

/* by name; of equal names, a link first (a duplicate link is what lookups must see) */
static int
cmpnode(const void *a, const void *b)
{
	const struct ttnode *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : y->kind - x->kind;
}

static void
sortt(struct tartree *t)
{
	if (!t->sorted && t->n)
		qsort(t->v, t->n, sizeof *t->v, cmpnode);
	t->sorted = 1;
}

/* the first node whose name is >= s */
static size_t
lowbound(const struct tartree *t, const char *s)
{
	size_t lo = 0, hi = t->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(t->v[mid].name, s) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* the node named exactly path, or NULL */
static const struct ttnode *
exact(const struct tartree *t, const char *path)
{
	size_t i = lowbound(t, path);

	return i < t->n && !strcmp(t->v[i].name, path) ? &t->v[i] : NULL;
}

/* what path is in the unpacked tree: a member's kind, TT_DIR for the top and for a
   folder its members' names imply, -1 for nothing */
static int
kindof(const struct tartree *t, const char *path)
{
	const struct ttnode *e = exact(t, path);
	char *pre;
	size_t i;
	int k = -1;

	if (!*path)
		return TT_DIR;
	if (e)
		return e->kind;
	pre = xasprintf("%s/", path);
	i = lowbound(t, pre);
	if (i < t->n && startswith(t->v[i].name, pre))
		k = TT_DIR;
	free(pre);
	return k;
}

/* drop the last part of the path in b */
static void
popname(struct buf *b)
{
	char *s = b->len ? strrchr(b->s, '/') : NULL;

	b->len = s ? (size_t)(s - b->s) : 0;
	if (b->s)
		b->s[b->len] = 0;
}

/* the walk of tt_resolve: cur is the folder, rest what is left to look up */
struct walk {
	struct buf cur;
	char *rest;
	const char *via;   /* the last link followed */
	int hops;
};

/* put link e's target in place of the part just looked up; -1 with *why on a loop */
static int
follow(struct walk *w, const struct ttnode *e, const char *p, const char *name, char **why)
{
	char *r;

	if (++w->hops > MAXHOPS) {
		*why = xasprintf("member '%s' is a link that follows too many levels of links "
		                 "(a loop through '%s'; refused)", name, e->name);
		return -1;
	}
	popname(&w->cur);
	r = xasprintf("%s/%s", e->target, p);
	free(w->rest);
	w->rest = r;
	w->via = e->name;
	return 0;
}

int
tt_resolve(struct tartree *t, const char *name, char **res, char **why)
{
	const struct ttnode *e, *start;
	struct walk w = {{0}, NULL, NULL, 0};
	const char *p;
	size_t n;
	int k, r = -1;

	sortt(t);
	*res = NULL;
	if (!(start = exact(t, name)) || start->kind != TT_LINK) {
		*why = xasprintf("member '%s' is not a link", name);
		return -1;
	}
	bufputs(&w.cur, start->name);
	popname(&w.cur);
	w.rest = xstrdup(start->target);
	for (p = w.rest; *p;) {
		n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.')) {
			p += n + (p[n] == '/');
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (!w.cur.len) {
				*why = xasprintf("member '%s' is a link to '%.200s', outside the folder (%s%s%s"
				                 "refused)", name, start->target, w.via ? "through the link '" : "",
				                 w.via ? w.via : "", w.via ? "'; " : "");
				goto out;
			}
			popname(&w.cur);
			p += n + (p[n] == '/');
			continue;
		}
		if (w.cur.len)
			bufputc(&w.cur, '/');
		bufadd(&w.cur, p, n);
		p += n + (p[n] == '/');
		k = kindof(t, w.cur.s);
		if (k < 0 || (k == TT_FILE && *p)) {
			r = 1;   /* ENOENT or ENOTDIR: a dangling link, harmless */
			goto out;
		}
		if (k == TT_LINK) {
			e = exact(t, w.cur.s);
			if (follow(&w, e, p, name, why) < 0)
				goto out;
			p = w.rest;
		}
	}
	*res = xstrdup(w.cur.s ? w.cur.s : "");
	r = 0;
out:
	free(w.rest);
	buffree(&w.cur);
	return r;
}

/* -1 with *why when a proper prefix of name is a link */
static int
insidelink(const struct tartree *t, const char *name, char **why)
{
	const struct ttnode *e;
	char *pre = xstrdup(name), *s;

	while ((s = strrchr(pre, '/'))) {
		*s = 0;
		if ((e = exact(t, pre)) && e->kind == TT_LINK) {
			*why = xasprintf("member '%s' is inside the link '%s', so it would be made "
			                 "wherever that link points (refused)", name, pre);
			free(pre);
			return -1;
		}
	}
	free(pre);
	return 0;
}

int
tt_check(struct tartree *t, char **why)
{
	char *res;
	size_t i;
	int r;

	sortt(t);
	for (i = 0; i < t->n; i++)
		if (insidelink(t, t->v[i].name, why) < 0)
			return -1;
	for (i = 0; i < t->n; i++) {
		if (t->v[i].kind != TT_LINK || (i > 0 && !strcmp(t->v[i - 1].name, t->v[i].name)))
			continue;
		if ((r = tt_resolve(t, t->v[i].name, &res, why)) < 0)
			return -1;
		/* a resolved path is a member or a folder of the tree: a file or a folder,
		   never a device, FIFO or socket (unpack refuses those members) */
		free(res);
	}
	return 0;
}

void
tt_free(struct tartree *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].target);
	}
	free(t->v);
	memset(t, 0, sizeof *t);
}
