/* a child's environment as a list of "NAME=VALUE" strings */
#include "envv.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "util.h"

/* the index of name in e, or -1 */
static ssize_t
env_find(const struct envv *e, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, n) == 0 && e->v[i][n] == '=')
			return (ssize_t)i;
	return -1;
}

const char *
env_get(const struct envv *e, const char *name)
{
	ssize_t i = env_find(e, name);

	return i < 0 ? NULL : e->v[i] + strlen(name) + 1;
}

void
env_set(struct envv *e, const char *name, const char *value)
{
	ssize_t i = env_find(e, name);
	char *s = xasprintf("%s=%s", name, value);

	if (i >= 0) {
		free(e->v[i]);
		e->v[i] = s;
		return;
	}
	e->v = xgrow(e->v, &e->cap, e->n + 2, sizeof *e->v);
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
}

int
env_unset(struct envv *e, const char *name)
{
	ssize_t i = env_find(e, name);

	if (i < 0)
		return 0;
	free(e->v[i]);
	memmove(e->v + i, e->v + i + 1, (e->n - (size_t)i) * sizeof *e->v);
	e->n--;
	return 1;
}

void
env_copy(struct envv *e, char *const *src)
{
	for (; src && *src; src++) {
		if (!strchr(*src, '='))
			continue;
		e->v = xgrow(e->v, &e->cap, e->n + 2, sizeof *e->v);
		e->v[e->n++] = xstrdup(*src);
		e->v[e->n] = NULL;
	}
	if (!e->v) {
		e->v = xgrow(e->v, &e->cap, 1, sizeof *e->v);
		e->v[0] = NULL;
	}
}

void
env_free(struct envv *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	memset(e, 0, sizeof *e);
}

