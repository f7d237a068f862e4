/* growable lists of owned strings */
#include "strv.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int
strv_has(const struct strv *l, const char *s)
{
	size_t k;

	for (k = 0; k < l->n; k++)
		if (!strcmp(l->v[k], s))
			return 1;
	return 0;
}

void
strv_add(struct strv *l, const char *s, int uniq)
{
	if (uniq && strv_has(l, s))
		return;
	l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = xstrdup(s);
}

void
strs_free(char **v, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		free(v[k]);
	free(v);
}

void
strv_free(struct strv *l)
{
	strs_free(l->v, l->n);
	memset(l, 0, sizeof *l);
}
