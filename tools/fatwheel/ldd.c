/* fatwheel --ldd FILE: the closure ld.so would load for FILE, each library where
   fatwheel's search (ldso.c) finds it, in ld.so's breadth-first load order and in its
   trace format (ld.so --list, LD_TRACE_LOADED_OBJECTS=1), so the two can be compared */
#include "state.h"
#include "json.h"
#include "mapfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* one object of the closure */
struct obj {
	char *name;                 /* the name it was first needed as */
	char *path;                 /* NULL: not found */
	const char *via;            /* which search found it */
	struct elfinfo ei;
	int iself;
	dev_t dev;
	ino_t ino;
	char *origin;
	struct loader ld;
};

static struct obj **objs;
static size_t nobjs, objcap;

/* true if an object of the closure answers to name (the name it was loaded as, or its
   SONAME), as ld.so's _dl_name_match_p and its soname check */
static int
loaded(const char *name)
{
	size_t i;

	for (i = 0; i < nobjs; i++)
		if (strcmp(objs[i]->name, name) == 0 || (objs[i]->ei.soname && strcmp(objs[i]->ei.soname, name) == 0))
			return 1;
	return 0;
}

/* the object already loaded from the same file (device and inode), or NULL */
static struct obj *
samefile(const struct stat *st)
{
	size_t i;

	for (i = 0; i < nobjs; i++)
		if (objs[i]->path && objs[i]->dev == st->st_dev && objs[i]->ino == st->st_ino)
			return objs[i];
	return NULL;
}

/* append the object name found at path (NULL: not found), loaded by up */
static void
addobj(const char *name, char *path, const char *via, const struct loader *up)
{
	struct obj *o = xcalloc(1, sizeof *o);
	struct mapfile mf;
	struct stat st;

	o->name = xstrdup(name);
	o->path = path;
	o->via = via;
	if (path && stat(path, &st) == 0) {
		o->dev = st.st_dev;
		o->ino = st.st_ino;
	}
	if (path && map_open(&mf, path) == 0) {
		o->iself = elfinfo_read(&o->ei, mf.p, mf.n, NULL) == 0;
		if (!o->iself)
			elfinfo_free(&o->ei);
		map_close(&mf);
	}
	if (path) {
		o->origin = diskorigin(path);
		o->ld = (struct loader){&o->ei, o->origin, 0, up};
	}
	objs = xgrow(objs, &objcap, nobjs + 1, sizeof *objs);
	objs[nobjs++] = o;
}

/* each needed name of each object, breadth first, once */
static void
closure(struct searchpath *s)
{
	size_t i, k;
	struct stat st;
	const char *n;
	char *p;
	int inwheel;

	for (i = 0; i < nobjs; i++) {
		if (!objs[i]->iself)
			continue;
		for (k = 0; k < objs[i]->ei.nneeded; k++) {
			n = objs[i]->ei.needed[k];
			if (loaded(n))
				continue;
			if (strchr(n, '/')) { /* a path: ld.so opens it as it is */
				p = search_matches(n, objs[i]->ld.ei) ? xstrdup(n) : NULL;
				s->via = "path";
			} else {
				p = ldso_find(s, &objs[i]->ld, n, &inwheel);
			}
			if (p && stat(p, &st) == 0 && samefile(&st)) {
				free(p);
				continue;
			}
			addobj(n, p, p ? s->via : NULL, &objs[i]->ld);
		}
	}
}

static void
show(const char *file, int json)
{
	struct buf b = {0};
	struct json j;
	size_t i;

	if (!json) {
		for (i = 1; i < nobjs; i++)
			printf("\t%s => %s\n", objs[i]->name, objs[i]->path ? objs[i]->path : "not found");
		return;
	}
	json_init(&j, &b);
	json_obj(&j);
	json_kstr(&j, "file", file);
	json_key(&j, "libraries");
	json_arr(&j);
	for (i = 1; i < nobjs; i++) {
		json_obj(&j);
		json_kstr(&j, "name", objs[i]->name);
		json_kstr(&j, "path", objs[i]->path);
		json_kstr(&j, "via", objs[i]->via);
		json_end(&j);
	}
	json_end(&j);
	json_end(&j);
	printf("%s\n", b.s);
	buffree(&b);
}

int
ldd_main(struct searchpath *s, const char *file, int json)
{
	size_t i;
	int missing = 0;

	if (!search_matches(file, NULL))
		dien(EXIT_USAGE, "%s: not an ELF file (or not readable)", file);
	addobj(file, xstrdup(file), "argument", NULL);
	if (!objs[0]->iself)
		dien(EXIT_USAGE, "%s: not an ELF object fatwheel can read", file);
	closure(s);
	show(file, json);
	for (i = 0; i < nobjs; i++) {
		missing |= !objs[i]->path;
		free(objs[i]->name);
		free(objs[i]->path);
		free(objs[i]->origin);
		elfinfo_free(&objs[i]->ei);
		free(objs[i]);
	}
	free(objs);
	return missing ? EXIT_PROBLEM : 0;
}
