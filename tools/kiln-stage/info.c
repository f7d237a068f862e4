/* build-info.json and OCI labels from the per-component records */
#include "info.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hash.h"
#include "json.h"
#include "kv.h"
#include "os.h"

struct rec {
	char *name;
	struct kvfile kv;
};

static int
cmprec(const void *a, const void *b)
{
	return strcmp(((const struct rec *)a)->name, ((const struct rec *)b)->name);
}

static void
freerecs(struct rec *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(r[i].name);
		kv_free(&r[i].kv);
	}
	free(r);
}

/* load the DIR/NAME.info records sorted by name; returns the count, or -1 with *err */
static long
loadrecs(const char *dir, struct rec **out, char **err)
{
	struct rec *r = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d;
	char *p;

	*out = NULL;
	if (!(d = opendir(dir))) {
		struct stat st;
		int en = errno;
		/* a FIFO or a file given as the record folder is named as such */
		if (en == ENOTDIR && stat(dir, &st) == 0)
			*err = xasprintf("%s: is %s, not a folder of records", dir, os_ftype(st.st_mode));
		else
			*err = xasprintf("%s: %s", dir, strerror(en));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !endswith(e->d_name, ".info"))
			continue;
		r = xgrow(r, &cap, n + 1, sizeof *r);
		p = xasprintf("%s/%s", dir, e->d_name);
		if (kv_load(&r[n].kv, p, err) < 0) {
			kv_free(&r[n].kv);
			free(p);
			closedir(d);
			freerecs(r, n);
			return -1;
		}
		free(p);
		r[n].name = xstrndup(e->d_name, strlen(e->d_name) - 5);
		n++;
	}
	closedir(d);
	if (n)
		qsort(r, n, sizeof *r, cmprec);
	*out = r;
	return (long)n;
}

/* the sha256 of the lock beside the records (DIR/../requirements.lock, which the install
   steps refresh with the records), fresh; NULL when there is none */
static char *
lockdigest(const char *dir)
{
	unsigned char d[32];
	struct buf h = {0};
	char *p = xasprintf("%s/../requirements.lock", dir);
	int r = sha256_file(p, d, NULL);

	free(p);
	if (r < 0)
		return NULL;
	bufputs(&h, "sha256:");
	hexenc(&h, d, 32);
	return bufdetach(&h);
}

int
info_json(const char *dir, struct buf *out, char **err)
{
	struct rec *r;
	struct json j;
	long n, i;
	size_t k;
	char *lk, *c;

	if ((n = loadrecs(dir, &r, err)) < 0)
		return -1;
	json_init(&j, out);
	json_obj(&j);
	json_kint(&j, "kiln_build_info", 1);
	json_key(&j, "components");
	json_obj(&j);
	for (i = 0; i < n; i++) {
		json_key(&j, r[i].name);
		json_obj(&j);
		for (k = 0; k < r[i].kv.n; k++) {
			lk = xstrdup(r[i].kv.v[k].key);
			for (c = lk; *c; c++)
				*c = (char)tolower((unsigned char)*c);
			json_kstr(&j, lk, r[i].kv.v[k].value);
			free(lk);
		}
		json_end(&j);
	}
	json_end(&j);
	if ((lk = lockdigest(dir))) {
		json_kstr(&j, "requirements_lock", lk);
		free(lk);
	}
	json_end(&j);
	bufputc(out, '\n');
	freerecs(r, (size_t)n);
	return 0;
}

/* one label in the chosen form; a value never holds a newline (kv.c reads lines) */
static void
label(struct buf *out, enum labelfmt fmt, const char *k1, const char *k2, const char *v)
{
	const char *p;

	if (!v || !*v)
		return;
	switch (fmt) {
	case LABEL_ARGS:
		bufprintf(out, "--label=%s%s=%s\n", k1, k2, v);
		break;
	case LABEL_FILE:
		bufprintf(out, "%s%s=%s\n", k1, k2, v);
		break;
	case LABEL_CONTAINERFILE:
		/* LABEL "key"="value": inside the quotes \ " and $ are escaped */
		bufprintf(out, "LABEL \"%s%s\"=\"", k1, k2);
		for (p = v; *p; p++) {
			if (*p == '\\' || *p == '"' || *p == '$')
				bufputc(out, '\\');
			bufputc(out, *p);
		}
		bufputs(out, "\"\n");
		break;
	}
}

int
info_labels(const char *dir, enum labelfmt fmt, struct buf *out, char **err)
{
	static const char *facts[][2] = {
		{"URL", "url"}, {"REF", "ref"}, {"COMMIT", "commit"},
		{"SERIES_DIGEST", "series_digest"}, {"VERSION", "version"},
		{"WHEEL_SHA256", "wheel_sha256"},
	};
	struct rec *r, *base;
	long n, i;
	size_t f;
	char *pre;

	if ((n = loadrecs(dir, &r, err)) < 0)
		return -1;
	if (n == 0) {
		*err = xasprintf("%s: no component records (*.info) yet; build the stack first", dir);
		free(r);
		return -1;
	}
	base = &r[0];
	for (i = 0; i < n; i++)
		if (strcmp(r[i].name, "torch") == 0)
			base = &r[i];
	label(out, fmt, "org.opencontainers.image.source", "", kv_get(&base->kv, "URL"));
	label(out, fmt, "org.opencontainers.image.revision", "", kv_get(&base->kv, "COMMIT"));
	label(out, fmt, "org.opencontainers.image.version", "", kv_get(&base->kv, "VERSION"));
	label(out, fmt, "kiln.arch", "", kv_get(&base->kv, "ARCH"));
	if ((pre = lockdigest(dir))) {
		label(out, fmt, "kiln.requirements_lock", "", pre);
		free(pre);
	}
	for (i = 0; i < n; i++) {
		pre = xasprintf("kiln.%s.", r[i].name);
		for (f = 0; f < sizeof facts / sizeof facts[0]; f++)
			label(out, fmt, pre, facts[f][1], kv_get(&r[i].kv, facts[f][0]));
		free(pre);
	}
	freerecs(r, (size_t)n);
	return 0;
}
