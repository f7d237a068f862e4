/* patch series: reading and digesting a series, routing patch sections into submodules,
   checking every patch in memory before any file is written */
#include "srcpin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hash.h"

void
series_free(struct series *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->p[i].path);
		free(s->p[i].name);
		buffree(&s->p[i].text);
	}
	free(s->p);
	free(s->path);
	memset(s, 0, sizeof *s);
}

int
patchpath_ok(const char *p)
{
	const char *c = p;

	if (!*p || *p == '/' || strchr(p, '\\'))
		return 0;
	while (*c) {
		size_t n = strcspn(c, "/");
		if ((n == 2 && strncmp(c, "..", 2) == 0) || (n == 1 && *c == '.') || n == 0 ||
		    (n == 4 && strncasecmp(c, ".git", 4) == 0))
			return 0;
		c += n;
		if (*c == '/')
			c++;
	}
	return 1;
}

int
series_load(struct series *s, const char *path, char **err)
{
	struct buf text = {0};
	struct sha256 h;
	unsigned char d[32];
	char *dir, *slash, *line, *next;
	size_t cap = 0;
	int ln = 0;

	memset(s, 0, sizeof *s);
	s->path = xstrdup(path);
	if (readfile(path, &text, 16u << 20) < 0) {
		*err = xasprintf("%s: %s", path, strerror(errno));
		buffree(&text);
		series_free(s);
		return -1;
	}
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash)
		slash[1] = 0;
	else
		dir[0] = 0;
	sha256_init(&h);
	sha256_update(&h, "srcpin-series-v1\n", 17);
	sha256_update(&h, text.s ? text.s : "", text.len);
	bufputc(&text, 0);
	for (line = text.s; line && *line; line = next) {
		char *e, *hash, *name;
		struct patchfile *pf;
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		ln++;
		hash = strchr(line, '#');
		if (hash && (hash == line || hash[-1] == ' ' || hash[-1] == '\t'))
			*hash = 0;
		while (*line == ' ' || *line == '\t' || *line == '\r')
			line++;
		e = line + strlen(line);
		while (e > line && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			*--e = 0;
		if (!*line)
			continue;
		if (strpbrk(line, " \t")) {
			*err = xasprintf("%s:%d: '%s': one patch file name per line (options such as -p are "
			                 "not supported; make patches with git format-patch)", path, ln, line);
			goto fail;
		}
		if (!patchpath_ok(line)) {
			*err = xasprintf("%s:%d: '%s': patch names must be relative paths inside the "
			                 "series' folder", path, ln, line);
			goto fail;
		}
		name = xasprintf("%s%s", dir, line);
		s->p = xgrow(s->p, &cap, s->n + 1, sizeof *s->p);
		pf = &s->p[s->n];
		memset(pf, 0, sizeof *pf);
		pf->path = name;
		pf->name = xstrdup(line);
		pf->line = ln;
		s->n++;
		if (readfile(name, &pf->text, 256u << 20) < 0) {
			*err = xasprintf("%s:%d: %s: %s", path, ln, name, strerror(errno));
			goto fail;
		}
		{
			char hdr[64];
			int n = snprintf(hdr, sizeof hdr, "\n%zu\n", pf->text.len);
			sha256_update(&h, line, strlen(line));
			sha256_update(&h, hdr, (size_t)n);
			sha256_update(&h, pf->text.s ? pf->text.s : "", pf->text.len);
		}
	}
	sha256_final(&h, d);
	{
		struct buf hx = {0};
		hexenc(&hx, d, 32);
		memcpy(s->digest, hx.s, 65);
		buffree(&hx);
	}
	buffree(&text);
	free(dir);
	return 0;
fail:
	{
		unsigned char junk[32];
		sha256_final(&h, junk);
	}
	buffree(&text);
	free(dir);
	series_free(s); /* nothing half-loaded survives a failure */
	return -1;
}

/* true if the n-byte line p starts with s (the line need not be NUL-terminated) */
static int
linestarts(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);

	return n >= k && memcmp(p, s, k) == 0;
}

/* the path after a/ or b/ in a header word, up to the end of the line (NUL-terminated copy) */
static char *
gitpath(const char *s, size_t n)
{
	if (n >= 2 && (s[0] == 'a' || s[0] == 'b') && s[1] == '/')
		return xstrndup(s + 2, n - 2);
	return xstrndup(s, n);
}

/* the index of the repository holding path: longest matching prefix in subs, or nsub */
static size_t
route(const char *path, char *const *subs, size_t nsub)
{
	size_t best = nsub, bestn = 0;

	for (size_t i = 0; i < nsub; i++) {
		size_t n = strlen(subs[i]);
		if (n > bestn && strncmp(path, subs[i], n) == 0 && path[n] == '/') {
			best = i;
			bestn = n;
		}
	}
	return best;
}

/* the old and new line counts of a hunk header "@@ -a[,b] +c[,d] @@" */
static void
hunklen(const char *p, long *oc, long *nc)
{
	char *e;

	*oc = *nc = 1;
	p += 2;
	while (*p == ' ')
		p++;
	if (*p++ != '-')
		return;
	strtol(p, &e, 10);
	if (*e == ',')
		*oc = strtol(e + 1, &e, 10);
	while (*e == ' ')
		e++;
	if (*e++ != '+')
		return;
	strtol(e, &e, 10);
	if (*e == ',')
		*nc = strtol(e + 1, &e, 10);
}

/* append a header line with the submodule prefix pre (with its '/') removed after lead */
static void
putstripped(struct buf *b, const char *line, size_t n, const char *lead, const char *pre)
{
	size_t ll = strlen(lead), pl = strlen(pre);

	if (pl && n >= ll + pl && strncmp(line, lead, ll) == 0 && strncmp(line + ll, pre, pl) == 0) {
		bufadd(b, line, ll);
		bufadd(b, line + ll + pl, n - ll - pl);
	} else
		bufadd(b, line, n);
}

/* patch_split over text that has a NUL at text[len] (the line parsers rely on it) */
static int
patch_split1(const char *text, size_t len, char *const *subs, size_t nsub, struct buf *out,
             char **err)
{
	const char *p = text, *end = text + len;
	size_t cur = nsub + 1;   /* no section yet */
	char *pre = NULL;        /* "sub/" of the current section */
	int inhdr = 0, inbin = 0;
	long left_old = 0, left_new = 0;  /* lines still due in the current hunk */

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		if (n >= 11 && strncmp(p, "diff --git ", 11) == 0 && left_old <= 0 && left_new <= 0) {
			/* a new file section: route it by its a/ and b/ paths */
			const char *a = p + 11, *le = p + n, *bsp;
			char *pa, *pb;
			size_t ra, rb;
			while (le > a && (le[-1] == '\n' || le[-1] == '\r'))
				le--;
			bsp = NULL;
			for (const char *q = a; q + 3 <= le; q++)
				if (q[0] == ' ' && q[1] == 'b' && q[2] == '/') {
					bsp = q;
					break;
				}
			if (*a == '"' || !bsp) {
				*err = xasprintf("cannot read the file names of '%.*s'", (int)(le - p), p);
				free(pre);
				return -1;
			}
			pa = gitpath(a, (size_t)(bsp - a));
			pb = gitpath(bsp + 1, (size_t)(le - bsp - 1));
			if (!patchpath_ok(pa) || !patchpath_ok(pb)) {
				*err = xasprintf("%s: path escapes the source tree; refused",
				                 patchpath_ok(pa) ? pb : pa);
				free(pa);
				free(pb);
				free(pre);
				return -1;
			}
			ra = route(pa, subs, nsub);
			rb = route(pb, subs, nsub);
			if (ra != rb) {
				*err = xasprintf("%s -> %s: a rename across a submodule boundary cannot be applied",
				                 pa, pb);
				free(pa);
				free(pb);
				free(pre);
				return -1;
			}
			cur = ra;
			free(pre);
			pre = cur < nsub ? xasprintf("%s/", subs[cur]) : xstrdup("");
			bufprintf(&out[cur], "diff --git a/%s b/%s\n", pa + strlen(pre), pb + strlen(pre));
			free(pa);
			free(pb);
			inhdr = 1;
			inbin = 0;
		} else if (cur > nsub) {
			/* mail headers and message before the first section: not part of any diff */
		} else if (n >= 2 && strncmp(p, "@@", 2) == 0 && left_old <= 0 && left_new <= 0) {
			inhdr = 0;
			hunklen(p, &left_old, &left_new);
			bufadd(&out[cur], p, n);
		} else if (inhdr) {
			static const char *const leads[] = {"--- a/", "+++ b/", "rename from ", "rename to ",
			                                    "copy from ", "copy to "};
			const char *lead = NULL;
			for (size_t i = 0; i < sizeof leads / sizeof *leads; i++)
				if (linestarts(p, n, leads[i]))
					lead = leads[i];
			static const char *const ext[] = {"old mode ", "new mode ", "deleted file mode ",
			                                  "new file mode ", "similarity index ",
			                                  "dissimilarity index ", "index ", "Binary files ",
			                                  "GIT binary patch"};
			int known = lead != NULL;
			for (size_t i = 0; !known && i < sizeof ext / sizeof *ext; i++)
				known = linestarts(p, n, ext[i]);
			if (linestarts(p, n, "GIT binary patch"))
				inbin = 1;
			if (lead)
				putstripped(&out[cur], p, n, lead, pre);
			else if (known || inbin)
				bufadd(&out[cur], p, n);
			/* else: text after a section with no hunk (the signature): dropped */
		} else if (left_old > 0 || left_new > 0) {
			/* a hunk line: ' ' counts for both sides, '-' old, '+' new, '\' none */
			if (*p == ' ' || *p == '\n' || (*p == '\r' && n == 2)) {
				left_old--;
				left_new--;
			} else if (*p == '-')
				left_old--;
			else if (*p == '+')
				left_new--;
			bufadd(&out[cur], p, n);
		} else if (*p == '\\') {
			bufadd(&out[cur], p, n);   /* "\ No newline at end of file" */
		} else {
			/* after the last hunk: the format-patch signature ("-- ", version) or trailing
			   text; dropped */
		}
		p += n;
	}
	for (size_t i = 0; i <= nsub; i++)
		if (out[i].len)
			bufputc(&out[i], 0), out[i].len--;
	free(pre);
	return 0;
}

/* a repository taking part in the series: its prefix, state and tree in progress */
struct part {
	char *prefix;          /* "" for the top, "third_party/gloo" for a submodule */
	git_repository *r;
	struct spstate s;
	git_oid tree;
	int changed;
};
struct parts {
	struct part *v;
	size_t n, cap;
};

static int
gatherlink(const char *root, const git_tree_entry *e, void *payload)
{
	struct buf *b = payload;

	if (git_tree_entry_filemode(e) == GIT_FILEMODE_COMMIT)
		bufprintf(b, "%s%s%c", root, git_tree_entry_name(e), 0);
	return 0;
}

/* add r (state s) at prefix, and its checked-out submodules recursively */
static void
gather(struct parts *ps, git_repository *r, struct spstate *s, const char *prefix)
{
	struct part *pt;
	git_tree *t;
	struct buf links = {0};
	size_t me;

	ps->v = xgrow(ps->v, &ps->cap, ps->n + 1, sizeof *ps->v);
	me = ps->n++;
	pt = &ps->v[me];
	pt->prefix = xstrdup(prefix);
	pt->r = r;
	pt->s = *s;
	pt->changed = 0;
	{
		/* the series applies to the pinned commit's tree, whatever the files are now */
		git_oid cid;
		git_commit *c;
		if (git_oid_fromstr(&cid, s->commit) < 0 || git_commit_lookup(&c, r, &cid) < 0)
			dien(EXIT_USAGE, "%s: %s: no finished checkout here; run srcpin checkout again",
			     s->name, git_repository_workdir(r));
		git_oid_cpy(&pt->tree, git_commit_tree_id(c));
		git_commit_free(c);
	}
	if (!s->submodules)
		return;
	if (git_tree_lookup(&t, r, &pt->tree) < 0)
		die("%s: tree %s cannot be read: %s", s->name, s->tree, gitmsg());
	git_tree_walk(t, GIT_TREEWALK_PRE, gatherlink, &links);
	git_tree_free(t);
	for (size_t off = 0; off < links.len; off += strlen(links.s + off) + 1) {
		const char *lp = links.s + off;
		char *dir = xasprintf("%s%s", git_repository_workdir(r), lp);
		char *np = *prefix ? xasprintf("%s/%s", prefix, lp) : xstrdup(lp);
		git_repository *sr;
		struct spstate ss;
		if (git_repository_open_ext(&sr, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0 ||
		    state_load(sr, &ss) < 0)
			die("%s: submodule %s is not checked out; run srcpin checkout --submodules", s->name,
			    np);
		ss.submodules = 1;
		gather(ps, sr, &ss, np);
		free(dir);
		free(np);
	}
	buffree(&links);
}

/* where apply stands, for the error message */
struct where {
	const char *file;
	const char *hunkhdr;
	size_t hdrlen;
	int hunk;
};

static int
delta_cb(const git_diff_delta *d, void *payload)
{
	struct where *w = payload;

	w->file = d->new_file.path ? d->new_file.path : d->old_file.path;
	if (!patchpath_ok(d->old_file.path) || !patchpath_ok(d->new_file.path))
		return -1;
	w->hunk = 0;
	w->hunkhdr = NULL;
	return 0;
}

static int
hunk_cb(const git_diff_hunk *h, void *payload)
{
	struct where *w = payload;

	w->hunk++;
	w->hunkhdr = h->header;
	w->hdrlen = h->header_len;
	while (w->hdrlen && (h->header[w->hdrlen - 1] == '\n' || h->header[w->hdrlen - 1] == '\r'))
		w->hdrlen--;
	return 0;
}

void
plan_free(struct spplan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->prefix[i]);
	free(p->prefix);
	free(p->tree);
	free(p->changed);
	memset(p, 0, sizeof *p);
}

/* the parts, the patch split and the patch file in flight, reachable for leak checkers
   when a patch fails and the process exits */
static struct parts gparts;
static struct buf *gout;

void
series_check(git_repository *r, struct spstate *s, const struct series *ser, struct spplan *plan)
{
	struct parts *ps = &gparts;
	char **subs;
	size_t nsub;

	memset(ps, 0, sizeof *ps);
	gather(ps, r, s, "");
	/* subs[k] is the prefix of part k+1; the top part is index nsub in patch_split */
	nsub = ps->n - 1;
	subs = xcalloc(nsub + 1, sizeof *subs);
	for (size_t k = 0; k < nsub; k++)
		subs[k] = ps->v[k + 1].prefix;
	for (size_t i = 0; i < ser->n; i++) {
		const struct patchfile *pf = &ser->p[i];
		char *err = NULL;
		int any = 0;
		gout = xcalloc(nsub + 1, sizeof *gout);
		if (patch_split(pf->text.s ? pf->text.s : "", pf->text.len, subs, nsub, gout, &err) < 0)
			dien(EXIT_USAGE, "%s: %s", pf->path, err);
		for (size_t k = 0; k <= nsub; k++) {
			struct part *pt = &ps->v[k == nsub ? 0 : k + 1];
			git_apply_options ao;
			git_apply_options_init(&ao, GIT_APPLY_OPTIONS_VERSION);
			struct where w = {0};
			git_diff *d;
			git_tree *t;
			git_index *idx;
			if (!gout[k].len)
				continue;
			any = 1;
			if (git_diff_from_buffer(&d, gout[k].s, gout[k].len) < 0)
				dien(EXIT_USAGE, "%s: not a patch git can read: %s", pf->path, gitmsg());
			for (size_t j = 0; j < git_diff_num_deltas(d); j++) {
				const git_diff_delta *dl = git_diff_get_delta(d, j);
				if (!patchpath_ok(dl->old_file.path) || !patchpath_ok(dl->new_file.path))
					dien(EXIT_USAGE, "%s: %s%s%s: path escapes the source tree; refused", pf->path,
					     pt->prefix, *pt->prefix ? "/" : "", dl->new_file.path);
			}
			ao.delta_cb = delta_cb;
			ao.hunk_cb = hunk_cb;
			ao.payload = &w;
			if (git_tree_lookup(&t, pt->r, &pt->tree) < 0)
				die("%s: tree cannot be read: %s", pt->s.name, gitmsg());
			if (git_apply_to_tree(&idx, pt->r, t, d, &ao) < 0) {
				const char *f = w.file ? w.file : "?";
				if (w.hunk)
					dien(EXIT_PROBLEM, "%s: %s%s%s: hunk %d (%.*s) does not apply to %s (%s)",
					     pf->path, pt->prefix, *pt->prefix ? "/" : "", f, w.hunk, (int)w.hdrlen,
					     w.hunkhdr, pt->s.commit, gitmsg());
				dien(EXIT_PROBLEM, "%s: %s%s%s: does not apply to %s (%s)", pf->path, pt->prefix,
				     *pt->prefix ? "/" : "", f, pt->s.commit, gitmsg());
			}
			if (git_index_write_tree_to(&pt->tree, idx, pt->r) < 0)
				die("%s: cannot store the patched tree: %s", pt->s.name, gitmsg());
			pt->changed = 1;
			git_index_free(idx);
			git_tree_free(t);
			git_diff_free(d);
		}
		for (size_t k = 0; k <= nsub; k++)
			buffree(&gout[k]);
		free(gout);
		gout = NULL;
		if (!any)
			dien(EXIT_USAGE, "%s: no 'diff --git' section in it (listed at %s:%d)", pf->path,
			     ser->path, pf->line);
	}
	plan->n = ps->n;
	plan->prefix = xcalloc(ps->n, sizeof *plan->prefix);
	plan->tree = xcalloc(ps->n, sizeof *plan->tree);
	plan->changed = xcalloc(ps->n, sizeof *plan->changed);
	for (size_t k = 0; k < ps->n; k++) {
		plan->prefix[k] = ps->v[k].prefix;
		git_oid_tostr(plan->tree[k], sizeof plan->tree[k], &ps->v[k].tree);
		plan->changed[k] = ps->v[k].changed;
		if (k) {
			state_free(&ps->v[k].s);
			git_repository_free(ps->v[k].r);
		}
	}
	free(ps->v);
	memset(ps, 0, sizeof *ps);
	free(subs);
}

void
series_write(const char *dir, const struct spplan *plan, const struct series *ser)
{
	/* submodules first, the top state (with the series digest) last */
	for (size_t k = plan->n; k-- > 0;) {
		char *wd = *plan->prefix[k] ? xasprintf("%s/%s", dir, plan->prefix[k]) : xstrdup(dir);
		struct spstate s;
		git_repository *r = tree_open(wd, &s);
		if (plan->changed[k]) {
			git_checkout_options co;
			git_oid id;
			git_tree *t;
			git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
			co.checkout_strategy = GIT_CHECKOUT_FORCE;
			if (git_oid_fromstr(&id, plan->tree[k]) < 0 || git_tree_lookup(&t, r, &id) < 0)
				die("%s: tree cannot be read: %s", s.name, gitmsg());
			if (git_checkout_tree(r, (git_object *)t, &co) < 0)
				die("%s: %s: cannot write the patched files: %s", s.name, wd, gitmsg());
			git_tree_free(t);
		}
		free(s.tree);
		s.tree = xstrdup(plan->tree[k]);
		if (k == 0) {
			free(s.series);
			free(s.series_digest);
			s.series = abspath(ser->path);
			s.series_digest = xstrdup(ser->digest);
		}
		state_save(r, &s);
		state_free(&s);
		git_repository_free(r);
		free(wd);
	}
}

int
patch_split(const char *text, size_t len, char *const *subs, size_t nsub, struct buf *out,
            char **err)
{
	char *copy = xstrndup(text, len);
	int r = patch_split1(copy, len, subs, nsub, out, err);

	free(copy);
	return r;
}
