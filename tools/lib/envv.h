/* a child's environment: "NAME=VALUE" strings, NULL-terminated, in order */
#ifndef KILN_ENVV_H
#define KILN_ENVV_H

#include <stddef.h>

/* an environment as NULL-terminated "NAME=VALUE" strings, in order (v is what
   execve and proc_tofd's envp take once env_copy or env_set has run) */
struct envv {
	char **v;
	size_t n, cap;
};

/* the value of name in e, or NULL */
const char *env_get(const struct envv *e, const char *name);
/* set name=value (replacing in place, or appending) */
void env_set(struct envv *e, const char *name, const char *value);
/* remove name; returns 1 if it was there */
int env_unset(struct envv *e, const char *name);
/* copy a NULL-terminated "NAME=VALUE" array (entries without '=' are skipped) */
void env_copy(struct envv *e, char *const *src);
/* release all strings */
void env_free(struct envv *e);

#endif
