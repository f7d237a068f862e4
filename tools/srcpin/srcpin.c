/* srcpin: pinned sources on libgit2: a bare mirror per repository, pristine checkouts with
   submodules, patch series checked before they are applied, lock files of resolved pins */
#include "srcpin.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "json.h"
#include "kv.h"
#include "opt.h"

static void
usage(const char *err)
{
	opt_usage(err,
	          "usage: srcpin fetch NAME URL REF [--expect=SHA] [--cache=DIR] [--mirror=DIR]\n"
	          "       srcpin checkout NAME --commit SHA --into DIR [--submodules] [--force]\n"
	          "                       [--cache=DIR] [--mirror=DIR]\n"
	          "       srcpin checkout NAME URL REF --into DIR [--expect=SHA] [--submodules]\n"
	          "                       [--force] [--cache=DIR] [--mirror=DIR]\n"
	          "       srcpin patch DIR SERIESFILE [--allow-outside-symlinks]\n"
	          "       srcpin state [--json] [--check] [-v] DIR\n"
	          "       srcpin lock --pins FILE --out LOCKFILE [--patches=DIR] [--cache=DIR]\n"
	          "                   [--mirror=DIR]\n"
	          "       srcpin --version\n"
	          "options for every verb that fetches: [--rewrite=FROM=TO]... [--offline] [--update]\n"
	          "                                     [--allow-local-submodules]\n"
	          "exit: 0 ok, 1 verification failed (sha mismatch, patch does not apply,\n"
	          "      state --check not pristine), 2 usage or I/O error\n");
}

/* parsed command line */
struct args {
	struct spopts o;
	char *pos[4];
	size_t npos;
	const char *commit, *into, *expect, *pins, *out, *patches;
	int submodules, force, json, check, verbose;
};

static void
parse(struct args *a, int argc, char **argv)
{
	const char *v;
	int dashdash = 0;

	for (int i = 2; i < argc; i++) {
		const char *s = argv[i];
		if (dashdash || s[0] != '-' || !s[1]) {
			if (a->npos == 4)
				usage(xasprintf("unexpected argument '%s'", s));
			a->pos[a->npos++] = argv[i];
		} else if (strcmp(s, "--") == 0)
			dashdash = 1;
		else if ((v = opt_val(argc, argv, &i, "--cache", usage)))
			a->o.cache = v;
		else if ((v = opt_val(argc, argv, &i, "--mirror", usage)))
			a->o.mirror = v;
		else if ((v = opt_val(argc, argv, &i, "--rewrite", usage))) {
			if (!strchr(v, '=') || v[0] == '=')
				usage(xasprintf("--rewrite=%s: want FROM=TO (a URL prefix and its replacement)", v));
			a->o.rewrite = xrealloc(a->o.rewrite, (a->o.nrewrite + 1) * sizeof *a->o.rewrite);
			a->o.rewrite[a->o.nrewrite++] = (char *)v;
		} else if ((v = opt_val(argc, argv, &i, "--commit", usage)))
			a->commit = v;
		else if ((v = opt_val(argc, argv, &i, "--into", usage)))
			a->into = v;
		else if ((v = opt_val(argc, argv, &i, "--expect", usage)))
			a->expect = v;
		else if ((v = opt_val(argc, argv, &i, "--pins", usage)))
			a->pins = v;
		else if ((v = opt_val(argc, argv, &i, "--out", usage)))
			a->out = v;
		else if ((v = opt_val(argc, argv, &i, "--patches", usage)))
			a->patches = v;
		else if (strcmp(s, "--offline") == 0)
			a->o.offline = 1;
		else if (strcmp(s, "--update") == 0)
			a->o.update = 1;
		else if (strcmp(s, "--submodules") == 0)
			a->submodules = 1;
		else if (strcmp(s, "--force") == 0)
			a->force = 1;
		else if (strcmp(s, "--allow-local-submodules") == 0)
			a->o.allow_local_subs = 1;
		else if (strcmp(s, "--allow-outside-symlinks") == 0)
			a->o.allow_outside_links = 1;
		else if (strcmp(s, "--json") == 0)
			a->json = 1;
		else if (strcmp(s, "--check") == 0)
			a->check = 1;
		else if (strcmp(s, "-v") == 0 || strcmp(s, "--verbose") == 0)
			a->verbose = 1;
		else if (strcmp(s, "-q") == 0 || strcmp(s, "--quiet") == 0)
			a->o.progress = 0;
		else if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0)
			usage(NULL);
		else
			usage(xasprintf("unknown option '%s'", s));
	}
}

/* a NAME is a plain file name: it names the mirror folder */
static void
checkname(const char *name)
{
	if (!*name || strchr(name, '/') || name[0] == '.' || strlen(name) > 100)
		usage(xasprintf("'%s': NAME must be a plain name like torch or vision", name));
}

/* NAME URL REF of the command line into the mirror (--expect checked); the commit it
   resolves to in id */
static void
fetchpin(struct args *a, git_oid *id)
{
	char *dir;

	checkname(a->pos[0]);
	if (a->expect && (strlen(a->expect) < 7 || strlen(a->expect) > 40 ||
	                  strspn(a->expect, "0123456789abcdefABCDEF") != strlen(a->expect)))
		usage(xasprintf("--expect=%s: want a commit id (7 to 40 hex digits)", a->expect));
	dir = mirror_path(&a->o, a->pos[0]);
	mirror_fetch(&a->o, &(struct spmirror){a->pos[0], dir, a->pos[1]}, a->pos[2], id);
	free(dir);
	if (a->expect && strncasecmp(git_oid_tostr_s(id), a->expect, strlen(a->expect)) != 0)
		dien(EXIT_PROBLEM, "%s: %s: ref '%s' resolves to %s, not the expected %s", a->pos[0],
		     a->pos[1], a->pos[2], git_oid_tostr_s(id), a->expect);
}

static int
vfetch(struct args *a)
{
	git_oid id;

	if (a->npos != 3)
		usage("fetch needs NAME URL REF");
	fetchpin(a, &id);
	printf("%s\n", git_oid_tostr_s(&id));
	return EXIT_OK;
}

/* a checkout's cache: the recorded one unless --cache was given */
static void
usecache(struct args *a, int given, const struct spstate *s)
{
	if (!given && s->cache && *s->cache) {
		free((char *)a->o.cache);
		a->o.cache = xstrdup(s->cache);
	}
}

static int
vcheckout(struct args *a, int cachegiven)
{
	git_repository *m;
	git_oid id;
	char *dir, *url = NULL, *into;
	int kind, e;

	if ((a->npos != 1 && a->npos != 3) || (a->npos == 1) != !!a->commit || !a->into)
		usage("checkout needs NAME --commit SHA --into DIR, or NAME URL REF --into DIR");
	checkname(a->pos[0]);
	if (!cachegiven) {
		/* an existing checkout remembers its cache */
		git_repository *r;
		struct spstate s;
		if (git_repository_open_ext(&r, a->into, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0) {
			if (state_load(r, &s) == 0) {
				usecache(a, 0, &s);
				state_free(&s);
			}
			git_repository_free(r);
		}
	}
	dir = mirror_path(&a->o, a->pos[0]);
	if (a->npos == 3) {
		/* fetch and checkout in one run: the pin's commit, printed as fetch prints it */
		fetchpin(a, &id);
		url = xstrdup(a->pos[1]);
	} else {
		if (!(m = mirror_open(dir)))
			die("%s: no mirror at %s; run srcpin fetch %s URL REF first", a->pos[0], dir, a->pos[0]);
		url = mirror_url(m);
		e = resolve_ref(m, a->commit, &id, &kind);
		git_repository_free(m);
		if (e == GIT_EAMBIGUOUS)
			die("%s: commit '%s' is ambiguous in %s; give more digits", a->pos[0], a->commit, dir);
		if (e < 0 && kind == 's' && strlen(a->commit) == GIT_OID_HEXSZ) {
			git_oid_fromstr(&id, a->commit);
			mirror_need(&a->o, a->pos[0], dir, url, &id);
		} else if (e < 0)
			die("%s: %s: commit '%s' is not in the mirror %s; run srcpin fetch first", a->pos[0],
			    url ? url : "?", a->commit, dir);
	}
	into = os_abspath(a->into, NULL);
	{
		char *mabs = os_abspath(dir, NULL);
		struct spcheckout w = {a->pos[0], url ? url : "", mabs, into, a->submodules, a->force};
		tree_checkout(&a->o, &w, &id);
		free(mabs);
	}
	if (a->npos == 3)
		printf("%s\n", git_oid_tostr_s(&id));
	free(into);
	free(url);
	free(dir);
	return EXIT_OK;
}

static int
vpatch(struct args *a, int cachegiven)
{
	struct series ser;
	struct spstate s;
	struct spplan plan;
	git_repository *r;
	char *err = NULL, *dir;
	git_oid id;

	if (a->npos != 2)
		usage("patch needs DIR SERIESFILE");
	if (series_load(&ser, a->pos[1], &err) < 0)
		die("%s", err);
	dir = os_abspath(a->pos[0], NULL);
	r = tree_open(dir, &s);
	usecache(a, cachegiven, &s);
	if (strcmp(s.series_digest, ser.digest) == 0 && tree_pristine(r, &s, NULL)) {
		/* exactly this series on a pristine tree: nothing to do */
		state_free(&s);
		git_repository_free(r);
		series_free(&ser);
		free(dir);
		return EXIT_OK;
	}
	if (!*s.commit)
		die("%s: the last checkout did not finish; run srcpin checkout again", dir);
	/* every patch is checked in memory first: a failure leaves the tree as it is */
	series_check(&a->o, r, &s, &ser, &plan);
	if (*s.series_digest || !tree_pristine(r, &s, NULL)) {
		/* another series, an edited patch, or a touched tree: back to the pinned commit */
		if (git_oid_fromstr(&id, s.commit) < 0)
			die("%s: bad COMMIT in its srcpin state", dir);
		git_repository_free(r);
		tree_checkout(&a->o, &(struct spcheckout){s.name, s.url, s.mirror, dir, s.submodules, 0},
		              &id);
	} else
		git_repository_free(r);
	series_write(&a->o, dir, &plan, &ser);
	plan_free(&plan);
	state_free(&s);
	series_free(&ser);
	free(dir);
	return EXIT_OK;
}

/* one submodule in state --json */
static void
jsonsub(const char *path, const struct spstate *ss, void *arg)
{
	struct json *j = arg;

	json_obj(j);
	json_kstr(j, "path", path);
	json_kstr(j, "commit", ss->commit);
	json_kstr(j, "url", ss->url);
	json_kstr(j, "tree", ss->tree);
	json_end(j);
}

static int
vstate(struct args *a)
{
	struct spstate s;
	struct buf why = {0};
	git_repository *r;
	int pristine;

	if (a->npos != 1)
		usage("state needs DIR");
	r = tree_open(a->pos[0], &s);
	/* the quick answer first; the slow comparison only to say what differs */
	pristine = tree_pristine(r, &s, NULL);
	if (!pristine && (a->json || a->verbose))
		tree_pristine(r, &s, &why);
	if (a->json) {
		struct buf b = {0};
		struct json j;
		json_init(&j, &b);
		json_obj(&j);
		json_kstr(&j, "name", s.name);
		json_kstr(&j, "url", s.url);
		json_kstr(&j, "commit", s.commit);
		json_kstr(&j, "tree", s.tree);
		json_kstr(&j, "series", s.series);
		json_kstr(&j, "series_digest", s.series_digest);
		json_kbool(&j, "submodules", s.submodules);
		json_kbool(&j, "pristine", pristine);
		json_kstr(&j, "difference", pristine ? NULL : why.s);
		json_kstr(&j, "cache", s.cache);
		json_kstr(&j, "mirror", s.mirror);
		json_key(&j, "submodules");
		json_arr(&j);
		tree_submodules(r, &s, "", jsonsub, &j);
		json_end(&j);
		json_end(&j);
		printf("%s\n", b.s);
		buffree(&b);
	} else {
		printf("NAME=%s\nURL=%s\nCOMMIT=%s\nSERIES_DIGEST=%s\nPRISTINE=%s\n", s.name, s.url,
		       s.commit, s.series_digest, pristine ? "yes" : "no");
	}
	if (!pristine && a->verbose && why.s)
		warn("%s: not pristine: %s", a->pos[0], why.s);
	buffree(&why);
	state_free(&s);
	git_repository_free(r);
	return a->check && !pristine ? EXIT_PROBLEM : EXIT_OK;
}

/* one pin of a pins file */
struct pin {
	char *name, *key, *url, *ref, *expect;
	char *series;   /* its patch series file, or NULL */
};

/* the series file of a pin: KEY_PATCHES (a folder, relative to the pins file) or, with
   --patches=DIR, DIR/NAME; NULL when there is none. Caller frees. */
static char *
pinseries(const struct args *a, const struct kvfile *f, const char *key, const char *name)
{
	char *k = xasprintf("%s_PATCHES", key), *dir, *p, *slash;
	const char *v = kv_get(f, k);
	struct stat st;

	free(k);
	if (v && *v) {
		if (*v == '/')
			dir = xstrdup(v);
		else {
			char *pf = xstrdup(a->pins);
			slash = strrchr(pf, '/');
			if (slash)
				*slash = 0;
			dir = xasprintf("%s/%s", slash ? pf : ".", v);
			free(pf);
		}
	} else if (a->patches)
		dir = xasprintf("%s/%s", a->patches, name);
	else
		return NULL;
	p = xasprintf("%s/series", dir);
	free(dir);
	if (stat(p, &st) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

/* the submodules the series at path moves, as comment lines of the lock: the last move of
   each path wins; dies (exit 2) when the series or a patch cannot be read */
static void
lockmoves(struct buf *out, const char *name, const char *path)
{
	struct series ser;
	struct linkmoves all = {0};
	char *err = NULL;

	if (series_load(&ser, path, &err) < 0)
		die("%s", err);
	for (size_t i = 0; i < ser.n; i++) {
		struct linkmoves mv = {0};
		struct buf one = {0};
		/* no submodule prefixes: each gitlink keeps its path from the top */
		struct splitspec sp = {NULL, 0, NULL};
		struct splitout so = {&one, &mv};
		if (patch_split(ser.p[i].text.s ? ser.p[i].text.s : "", ser.p[i].text.len, &sp, &so,
		                &err) < 0)
			die("%s: %s", ser.p[i].path, err);
		buffree(&one);
		for (size_t j = 0; j < mv.n; j++) {
			size_t k;
			for (k = 0; k < all.n && strcmp(all.v[k].path, mv.v[j].path); k++)
				;
			if (k == all.n) {
				all.v = xgrow(all.v, &all.cap, all.n + 1, sizeof *all.v);
				all.v[all.n].path = xstrdup(mv.v[j].path);
				memcpy(all.v[all.n].from, mv.v[j].from, sizeof mv.v[j].from);
				all.n++;
			}
			memcpy(all.v[k].to, mv.v[j].to, sizeof mv.v[j].to);
		}
		linkmoves_free(&mv);
	}
	if (all.n) {
		bufprintf(out, "# %s: the series %s (digest %s) moves submodules:\n", name, path,
		          ser.digest);
		for (size_t k = 0; k < all.n; k++)
			bufprintf(out, "#   %s %s\n", *all.v[k].to ? all.v[k].to : "removed", all.v[k].path);
	}
	linkmoves_free(&all);
	series_free(&ser);
}

static int
vlock(struct args *a)
{
	struct kvfile f = {0};
	struct pin *p = NULL;
	size_t n = 0, cap = 0, bad = 0;
	struct buf out = {0};
	char *err = NULL;

	if (a->npos || !a->pins || !a->out)
		usage("lock needs --pins FILE --out LOCKFILE");
	if (kv_load(&f, a->pins, &err) < 0)
		die("%s", err);
	for (size_t i = 0; i < f.n; i++) {
		const char *k = f.v[i].key, *url = f.v[i].value, *ref;
		size_t kl = strlen(k);
		char *pre, *name;
		if (kl <= 4 || strcmp(k + kl - 4, "_URL") != 0)
			continue;
		pre = xstrndup(k, kl - 4);
		{
			char *rk = xasprintf("%s_REF", pre), *sk = xasprintf("%s_SHA", pre);
			char *ck = xasprintf("%s_COMMIT", pre);
			char *kk = xasprintf("%s_KIND", pre);
			const char *kind = kv_get(&f, kk);
			free(kk);
			ref = kv_get(&f, rk);
			if (!*url || startswith(url, "wheel:") || strcmp(url, "system") == 0 ||
			    (kind && (strcmp(kind, "wheel") == 0 || strcmp(kind, "system") == 0)) ||
			    (ref && (startswith(ref, "wheel:") || strcmp(ref, "system") == 0))) {
				free(rk), free(sk), free(ck), free(pre);
				continue;   /* a prebuilt wheel or the system's copy: nothing to fetch */
			}
			if (!ref || !*ref)
				die("%s:%d: %s has no %s (the tag, branch or commit to pin)", a->pins,
				    f.v[i].line, k, rk);
			p = xgrow(p, &cap, n + 1, sizeof *p);
			p[n].key = pre;
			p[n].url = xstrdup(url);
			p[n].ref = xstrdup(ref);
			p[n].expect = kv_get(&f, ck) ? xstrdup(kv_get(&f, ck)) :
			              kv_get(&f, sk) ? xstrdup(kv_get(&f, sk)) : NULL;
			if (p[n].expect && !*p[n].expect) {
				free(p[n].expect);
				p[n].expect = NULL;
			}
			name = xstrdup(pre);
			for (char *c = name; *c; c++)
				*c = (char)tolower((unsigned char)*c);
			p[n].name = name;
			p[n].series = pinseries(a, &f, pre, name);
			n++;
			free(rk), free(sk), free(ck);
		}
	}
	if (!n)
		die("%s: no pins in it (want NAME_URL=... and NAME_REF=... lines)", a->pins);
	bufprintf(&out, "# srcpin lock of %s: the commit each pin resolved to\n", a->pins);
	for (size_t i = 0; i < n; i++) {
		char *dir = mirror_path(&a->o, p[i].name), *k;
		git_oid id;
		mirror_fetch(&a->o, &(struct spmirror){p[i].name, dir, p[i].url}, p[i].ref, &id);
		if (p[i].expect &&
		    (strlen(p[i].expect) < 7 ||
		     strncasecmp(git_oid_tostr_s(&id), p[i].expect, strlen(p[i].expect)) != 0)) {
			warn("%s: %s: ref '%s' resolves to %s, not the expected %s", p[i].name, p[i].url,
			     p[i].ref, git_oid_tostr_s(&id), p[i].expect);
			bad++;
		}
		/* kv_put: the quoting kv.c (configure's pin reader) reads back */
		k = xasprintf("%s_URL", p[i].key);
		kv_put(&out, k, p[i].url);
		free(k);
		k = xasprintf("%s_REF", p[i].key);
		kv_put(&out, k, p[i].ref);
		free(k);
		bufprintf(&out, "%s_COMMIT=%s\n", p[i].key, git_oid_tostr_s(&id));
		if (p[i].series)
			lockmoves(&out, p[i].name, p[i].series);
		free(dir);
	}
	if (bad)
		dien(EXIT_PROBLEM, "%s: %zu pin%s did not match the expected commit; %s not written",
		     a->pins, bad, bad > 1 ? "s" : "", a->out);
	if (writefile_ifchanged(a->out, out.s, out.len, 0644) < 0)
		die("%s: cannot write:", a->out);
	for (size_t i = 0; i < n; i++) {
		free(p[i].name);
		free(p[i].key);
		free(p[i].url);
		free(p[i].ref);
		free(p[i].expect);
		free(p[i].series);
	}
	free(p);
	buffree(&out);
	kv_free(&f);
	return EXIT_OK;
}

int
main(int argc, char **argv)
{
	static struct args a;   /* static: what it holds stays reachable when a verb exits */
	const char *verb;
	int cachegiven, rc;

	setprogname(argv[0]);
	if (argc < 2)
		usage("a verb is needed: fetch, checkout, patch, state or lock");
	verb = argv[1];
	if (!strcmp(verb, "-h") || !strcmp(verb, "--help") || !strcmp(verb, "help"))
		usage(NULL);
	if (opt_isversion(verb))
		opt_version();
	a.o.progress = isatty(2);
	parse(&a, argc, argv);
	cachegiven = a.o.cache != NULL;
	if (!a.o.cache)
		a.o.cache = getenv("SRCPIN_CACHE");
	if (!a.o.cache || !*a.o.cache)
		a.o.cache = "build/git";
	if (!a.o.mirror && getenv("SRCPIN_MIRROR") && *getenv("SRCPIN_MIRROR"))
		a.o.mirror = getenv("SRCPIN_MIRROR");
	if (a.o.mirror && access(a.o.mirror, F_OK) < 0)
		die("--mirror=%s:", a.o.mirror);
	{
		char *c = os_abspath(a.o.cache, NULL);
		a.o.cache = c;   /* kept for the process' life */
	}
	tls_init();
	if (!strcmp(verb, "fetch"))
		rc = vfetch(&a);
	else if (!strcmp(verb, "checkout"))
		rc = vcheckout(&a, cachegiven);
	else if (!strcmp(verb, "patch"))
		rc = vpatch(&a, cachegiven);
	else if (!strcmp(verb, "state"))
		rc = vstate(&a);
	else if (!strcmp(verb, "lock"))
		rc = vlock(&a);
	else
		usage(xasprintf("unknown verb '%s' (fetch, checkout, patch, state, lock)", verb));
	git_libgit2_shutdown();
	free((char *)a.o.cache);
	free(a.o.rewrite);
	if (fflush(stdout) == EOF)
		die("stdout:");
	return rc;
}
