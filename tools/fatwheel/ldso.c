/* where ld.so loads a library from: glibc's search order, its ld.so.cache, its default
   folders and its $ORIGIN/$LIB/$PLATFORM. The order is glibc's _dl_map_object
   (elf/dl-load.c): the DT_RPATH of the loading object and of each object that loaded it,
   on up (none of it when the loading object has DT_RUNPATH), LD_LIBRARY_PATH, the loading
   object's own DT_RUNPATH, /etc/ld.so.cache, then the system folders. fatwheel puts its
   --lib-path/--rocm folders just before LD_LIBRARY_PATH. */
#include "state.h"
#include "mapfile.h"
#include "proc.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ld.so's own answers (ld.so --list-diagnostics, glibc 2.33 and later): its system
   folders, what $LIB and $PLATFORM expand to */
static struct {
	int read;
	char **dirs;
	size_t n, cap;
	char *lib, *platform;
} rtld;

/* the path of the ld.so this process runs under, from the loaded objects' list */
static int
rtldpath(struct dl_phdr_info *info, size_t size, void *ctx)
{
	const char *n = info->dlpi_name, *b;

	(void)size;
	b = n ? strrchr(n, '/') : NULL;
	if (b && (startswith(b + 1, "ld-linux") || startswith(b + 1, "ld.so") || startswith(b + 1, "ld64.so"))) {
		*(char **)ctx = xstrdup(n);
		return 1;
	}
	return 0;
}

/* the value of a diagnostics line KEY="VALUE", or NULL */
static char *
diagval(const char *line, const char *key)
{
	size_t k = strlen(key), n;

	if (strncmp(line, key, k) != 0 || line[k] != '=' || line[k + 1] != '"')
		return NULL;
	n = strlen(line + k + 2);
	if (n == 0 || line[k + 2 + n - 1] != '"')
		return NULL;
	return xstrndup(line + k + 2, n - 1);
}

/* fill rtld: ask ld.so once; a glibc older than 2.33 (no --list-diagnostics) gets the
   multiarch and lib64 folders glibc builds in by default */
static void
readrtld(void)
{
	static const char *fallback[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	                                 "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	                                 "/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL};
	char *argv[] = {NULL, "--list-diagnostics", NULL}, *p, *nl, *v;
	struct buf diag = {0};
	struct procres res;
	size_t i;

	if (rtld.read)
		return;
	rtld.read = 1;
	dl_iterate_phdr(rtldpath, &argv[0]);
	if (argv[0] && proc_capture(argv, NULL, &diag, NULL, 0, 10000, &res) == 0 && res.status == 0 && diag.s) {
		for (p = diag.s; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
			*nl = 0;
			if (startswith(p, "path.system_dirs[") && (v = strstr(p, "]=\"")) != NULL &&
			    (v = diagval(v + 1, "")) != NULL) {
				if (v[0] && v[strlen(v) - 1] == '/' && strlen(v) > 1)
					v[strlen(v) - 1] = 0;
				rtld.dirs = xgrow(rtld.dirs, &rtld.cap, rtld.n + 1, sizeof *rtld.dirs);
				rtld.dirs[rtld.n++] = v;
			} else if (!rtld.lib && (v = diagval(p, "dl_dst_lib")) != NULL) {
				rtld.lib = v;
			} else if (!rtld.platform && (v = diagval(p, "dl_platform")) != NULL) {
				rtld.platform = v;
			}
		}
	}
	buffree(&diag);
	free(argv[0]);
	for (i = 0; !rtld.n && fallback[i]; i++) {
		rtld.dirs = xgrow(rtld.dirs, &rtld.cap, i + 1, sizeof *rtld.dirs);
		rtld.dirs[i] = xstrdup(fallback[i]);
		if (!fallback[i + 1])
			rtld.n = i + 1;
	}
	if (!rtld.lib)
		rtld.lib = xstrdup("lib");
}

/* the value of the dynamic string token at s ($NAME or ${NAME}), its length in *k */
static const char *
dst(const char *s, const char *name, size_t *k)
{
	size_t n = strlen(name);

	if (s[0] != '$')
		return NULL;
	if (strncmp(s + 1, name, n) == 0 && !(s[1 + n] == '_' || (s[1 + n] >= 'A' && s[1 + n] <= 'Z') ||
	                                     (s[1 + n] >= 'a' && s[1 + n] <= 'z') || (s[1 + n] >= '0' && s[1 + n] <= '9'))) {
		*k = 1 + n;
		return name;
	}
	if (s[1] == '{' && strncmp(s + 2, name, n) == 0 && s[2 + n] == '}') {
		*k = 3 + n;
		return name;
	}
	return NULL;
}

char *
ldso_expand(const char *ent, const char *origin, int *usedorigin)
{
	struct buf b = {0};
	const char *s = ent;
	size_t k;

	*usedorigin = 0;
	bufputs(&b, "");
	while (*s) {
		if (dst(s, "ORIGIN", &k)) {
			if (!origin) {
				buffree(&b);
				return NULL;
			}
			bufputs(&b, origin);
			*usedorigin = 1;
		} else if (dst(s, "LIB", &k)) {
			readrtld();
			bufputs(&b, rtld.lib);
		} else if (dst(s, "PLATFORM", &k)) {
			readrtld();
			if (!rtld.platform) {
				buffree(&b);
				return NULL;
			}
			bufputs(&b, rtld.platform);
		} else {
			bufputc(&b, *s++);
			continue;
		}
		s += k;
	}
	return bufdetach(&b);
}

/* one lookup: the name, the class and machine it must have (the loading object's), and
   whether an $ORIGIN entry of a wheel member found it in the wheel */
struct ldq {
	const char *name;
	const struct elfinfo *want;
	int inwheel;
};

/* true if the wheel has a member called name */
static int
inthewheel(const struct zipin *z, const char *name)
{
	size_t i;

	for (i = 0; z && i < z->n; i++)
		if (strcmp(z->e[i].name, name) == 0)
			return 1;
	return 0;
}

/* look for q->name through one RPATH/RUNPATH list of the object ld: a folder on disk
   gives a path; an $ORIGIN folder of a wheel member sets q->inwheel when the wheel has
   the file */
static char *
trylist(struct searchpath *s, const char *list, const struct loader *ld, struct ldq *q)
{
	char *copy = xstrdup(list), *tok, *save = NULL, *dir, *full, *n, *p = NULL;
	const char *name = q->name;
	int orig;

	for (tok = strtok_r(copy, ":", &save); tok && !p && !q->inwheel; tok = strtok_r(NULL, ":", &save)) {
		if (!(dir = ldso_expand(tok, ld->origin, &orig)))
			continue;
		if (ld->inwheel && orig) {
			/* $ORIGIN of a wheel member is its folder in the wheel; a folder
			   outside the wheel is not there once installed elsewhere */
			if (dir[0] != '/') {
				full = xasprintf("%s/%s", dir, name);
				n = normrel(full);
				q->inwheel = n && inthewheel(s->wheel, n);
				free(n);
				free(full);
			}
		} else if (dir[0] == '/' || !ld->inwheel) {
			p = search_in(s, dir, name, q->want);
		}
		free(dir);
	}
	free(copy);
	return p;
}

/* look for q->name in folders, in order */
static char *
trydirs(struct searchpath *s, char **dirs, size_t n, const struct ldq *q)
{
	const char *name = q->name;
	size_t i;
	const char *m;
	char *p;

	for (i = 0; i < n; i++) {
		if (strcmp(dirs[i], "\001rocmtar") == 0) {
			if (s->tar && (m = rocmtar_find(s->tar, name)) != NULL)
				return xasprintf("tar:%s", m);
			continue;
		}
		if ((p = search_in(s, dirs[i], name, q->want)) != NULL)
			return p;
	}
	return NULL;
}

/* ldso_find for q */
static char *
find(struct searchpath *s, const struct loader *ld, struct ldq *q)
{
	const struct loader *l;
	char *p = NULL;

	/* an object's DT_RPATH counts only without a DT_RUNPATH beside it, and none of the
	   chain's when the loading object has a DT_RUNPATH */
	s->via = "RPATH";
	for (l = ld; !ld->ei->runpath && l && !p && !q->inwheel; l = l->up)
		if (l->ei->rpath && !l->ei->runpath)
			p = trylist(s, l->ei->rpath, l, q);
	if (p || q->inwheel)
		return p;
	s->via = "--lib-path";
	if ((p = trydirs(s, s->dirs, s->n, q)) != NULL)
		return p;
	s->via = "LD_LIBRARY_PATH";
	if (s->useenv && (p = trydirs(s, s->env, s->nenv, q)) != NULL)
		return p;
	s->via = "RUNPATH";
	if (ld->ei->runpath && ((p = trylist(s, ld->ei->runpath, ld, q)) || q->inwheel))
		return p;
	s->via = "--ldpaths";
	if (s->nldpaths) /* instead of the cache and the system folders */
		return trydirs(s, s->ldpaths, s->nldpaths, q);
	s->via = "ld.so.cache";
	if ((p = ldcache_find(s, q->name, q->want)) != NULL)
		return p;
	s->via = "system";
	readrtld();
	return trydirs(s, rtld.dirs, rtld.n, q);
}

char *
ldso_find(struct searchpath *s, const struct loader *ld, const char *name, int *inwheel)
{
	struct ldq q = {name, ld->ei, 0};
	char *p = find(s, ld, &q);

	*inwheel = q.inwheel;
	return p;
}

void
ldso_free(void)
{
	size_t i;

	for (i = 0; i < rtld.n; i++)
		free(rtld.dirs[i]);
	free(rtld.dirs);
	free(rtld.lib);
	free(rtld.platform);
	memset(&rtld, 0, sizeof rtld);
}
