/* envclean's sanitizing policy */
#include "policy.h"
#include "os.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kv.h"
#include "strv.h"
#include "util.h"

/* removed by default, with the reason -n prints */
static const struct rule {
	const char *name;
	const char *why;
} removed[] = {
	{"PYTHONPATH", "puts folders (often a source tree) before the installed packages"},
	{"PYTHONHOME", "moves the standard library away from the interpreter's own"},
	{"PYTHONSTARTUP", "runs a script in every interactive interpreter"},
	{"PYTHONUSERBASE", "points the user site at another folder"},
	{"PYTHONSAFEPATH", "drops the script's folder from sys.path; setup.py files import from their own folder"},
	{"PYTHONEXECUTABLE", "makes sys.executable name another program"},
	{"PYTHONPLATLIBDIR", "changes where the interpreter looks for its modules"},
	{"LD_PRELOAD", "injects libraries into every process"},
	{"LD_AUDIT", "injects auditing libraries into every process"},
	{"LD_LIBRARY_PATH", "reaches shared libraries (libtorch, libamdhip64, libamd_smi ...) other than the ones the packages ship (--keep LD_LIBRARY_PATH keeps it)"},
};

/* PIP_* settings that only touch the network or the display: every other PIP_* goes */
static const char *const pipkeep[] = {
	"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX",
	"PIP_TRUSTED_HOST", "PIP_CERT", "PIP_CLIENT_CERT", "PIP_PROXY", "PIP_TIMEOUT",
	"PIP_DEFAULT_TIMEOUT", "PIP_RETRIES", "PIP_CACHE_DIR", "PIP_NO_CACHE_DIR",
	"PIP_DISABLE_PIP_VERSION_CHECK", "PIP_PROGRESS_BAR", "PIP_NO_INPUT", "PIP_NO_COLOR",
	"PIP_QUIET", "PIP_VERBOSE", "PIP_ROOT_USER_ACTION", "PIP_KEYRING_PROVIDER",
};

/* what -i copies from the caller */
static const char *const allow[] = {
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "NO_COLOR", "LANG",
	"LANGUAGE", "LC_*", "TZ", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "http_proxy", "https_proxy", "no_proxy",
	"all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "SOURCE_DATE_EPOCH",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* length of the name part of "NAME=VALUE" */
static size_t
namelen(const char *kv)
{
	const char *eq = strchr(kv, '=');

	return eq ? (size_t)(eq - kv) : strlen(kv);
}

int
env_match(const char *pattern, const char *name)
{
	size_t n = strlen(pattern);

	if (n > 0 && pattern[n - 1] == '*')
		return strncmp(pattern, name, n - 1) == 0;
	return strcmp(pattern, name) == 0;
}

int
locale_utf8(const char *v)
{
	const char *dot;

	if (!v || !(dot = strchr(v, '.')))
		return 0;
	return strncasecmp(dot + 1, "utf-8", 5) == 0 || strncasecmp(dot + 1, "utf8", 4) == 0;
}

/* record one decision; why becomes owned by the record */
static void
note(struct envres *r, int action, const char *name, const char *value, char *why)
{
	struct change *c;

	r->ch = xgrow(r->ch, &r->cap, r->nch + 1, sizeof *r->ch);
	c = &r->ch[r->nch++];
	c->action = action;
	c->name = xstrdup(name);
	c->value = xstrdup(value ? value : "");
	c->why = why;
}

/* true if a --keep pattern matches name */
static int
kept(const struct policy *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->nkeep; i++)
		if (env_match(p->keep[i], name))
			return 1;
	return 0;
}

/* remove name if present, recording why (why is owned by the callee) */
static void
drop(struct envres *r, const char *name, char *why)
{
	const char *v = env_get(&r->env, name);

	if (!v) {
		free(why);
		return;
	}
	note(r, CH_REMOVE, name, v, why);
	env_unset(&r->env, name);
}

/* set name=value, recording why (owned by the callee) */
static void
assign(struct envres *r, const char *name, const char *value, char *why)
{
	note(r, CH_SET, name, value, why);
	env_set(&r->env, name, value);
}

/* names of every variable in e matching pattern (a fresh array of fresh strings) */
static char **
matching(const struct envv *e, const char *pattern, size_t *n)
{
	char **out = NULL, *name;
	size_t i, cap = 0;

	*n = 0;
	for (i = 0; i < e->n; i++) {
		name = xstrndup(e->v[i], namelen(e->v[i]));
		if (env_match(pattern, name)) {
			out = xgrow(out, &cap, *n + 1, sizeof *out);
			out[(*n)++] = name;
		} else {
			free(name);
		}
	}
	return out;
}

/* the Python environment a program or bin folder belongs to (venv or conda), or NULL */
static char *
envof(const char *bindir)
{
	struct stat st;
	char *prefix, *f;
	size_t n;

	if (!bindir || !(prefix = xstrdup(bindir)))
		return NULL;
	n = strlen(prefix);
	while (n > 1 && prefix[n - 1] == '/')
		prefix[--n] = 0;
	f = strrchr(prefix, '/');
	if (!f || f == prefix) {
		free(prefix);
		return NULL;
	}
	*f = 0;
	f = xasprintf("%s/pyvenv.cfg", prefix);
	if (stat(f, &st) == 0) {
		free(f);
		return prefix;
	}
	free(f);
	f = xasprintf("%s/conda-meta", prefix);
	if (stat(f, &st) == 0 && S_ISDIR(st.st_mode)) {
		free(f);
		return prefix;
	}
	free(f);
	free(prefix);
	return NULL;
}

/* the folder part of a path (fresh) */
static char *
dirpart(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? xstrndup(path, s == path ? 1 : (size_t)(s - path)) : xstrdup(".");
}

/* true if path is prefix or inside it */
static int
under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	return strncmp(path, prefix, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* remove PATH entries inside prefix; returns the number removed */
static int
strippath(struct envres *r, const char *prefix, const char *cwd)
{
	const char *path = env_get(&r->env, "PATH"), *p, *end;
	struct buf nb = {0};
	char *ent, *abs;
	int removed_n = 0;

	if (!path)
		return 0;
	for (p = path;; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		ent = xstrndup(p, (size_t)(end - p));
		abs = os_abspath(*ent ? ent : ".", cwd);
		if (under(abs, prefix)) {
			removed_n++;
		} else {
			if (nb.len)
				bufputc(&nb, ':');
			bufputs(&nb, ent);
		}
		free(ent);
		free(abs);
		if (!*end)
			break;
	}
	if (removed_n)
		assign(r, "PATH", nb.s ? nb.s : "",
		       xasprintf("without the bin folder of %s, another Python environment", prefix));
	buffree(&nb);
	return removed_n;
}

/* set by a --set or profile: exempt from the env-of-another-target rule */
static int
userset(const struct envres *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nch; i++)
		if (r->ch[i].action == CH_SET && strcmp(r->ch[i].name, name) == 0 &&
		    (startswith(r->ch[i].why, "profile ") || startswith(r->ch[i].why, "--set")))
			return 1;
	return 0;
}

/* apply --profile, --set and --unset in command-line order; -1 with *err on bad input */
static int
applyops(const struct policy *p, struct envres *r, char **err)
{
	struct kvfile kf;
	const char *eq;
	char **names, *name;
	size_t i, j, n;

	for (i = 0; i < p->nops; i++) {
		const struct envop *op = &p->ops[i];

		switch (op->kind) {
		case OP_PROFILE:
			if (kv_load(&kf, op->arg, err) < 0) {
				kv_free(&kf);
				return -1;
			}
			for (j = 0; j < kf.n; j++)
				assign(r, kf.v[j].key, kf.v[j].value,
				       xasprintf("profile %s:%d", op->arg, kf.v[j].line));
			kv_free(&kf);
			break;
		case OP_SET:
			eq = strchr(op->arg, '=');
			if (!eq || eq == op->arg) {
				*err = xasprintf("--set '%s': expected NAME=VALUE", op->arg);
				return -1;
			}
			name = xstrndup(op->arg, (size_t)(eq - op->arg));
			assign(r, name, eq + 1, xstrdup("--set"));
			free(name);
			break;
		case OP_UNSET:
			if (!*op->arg || strchr(op->arg, '=')) {
				*err = xasprintf("--unset '%s': expected a variable name", op->arg);
				return -1;
			}
			names = matching(&r->env, op->arg, &n);
			for (j = 0; j < n; j++)
				drop(r, names[j], xstrdup("--unset"));
			strs_free(names, n);
			break;
		}
	}
	return 0;
}

/* put the --prepend-path folders first on PATH, once each; -1 with *err if one is not a folder */
static int
prepend(const struct policy *p, struct envres *r, char **err)
{
	const char *path = env_get(&r->env, "PATH"), *q, *end;
	struct buf nb = {0};
	struct stat st;
	char **abs = xcalloc(p->nprepend + 1, sizeof *abs), *ent, *a;
	size_t i, k;
	int dup;

	if (!p->nprepend) {
		free(abs);
		return 0;
	}
	for (i = 0; i < p->nprepend; i++) {
		abs[i] = os_abspath(p->prepend[i], p->cwd);
		if (stat(abs[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
			*err = xasprintf("--prepend-path %s: %s", p->prepend[i],
			                 stat(abs[i], &st) < 0 ? strerror(errno) : "not a folder");
			for (k = 0; k <= i; k++)
				free(abs[k]);
			free(abs);
			buffree(&nb);
			return -1;
		}
		if (nb.len)
			bufputc(&nb, ':');
		bufputs(&nb, abs[i]);
	}
	for (q = path; q && *q;) {
		end = strchr(q, ':');
		if (!end)
			end = q + strlen(q);
		ent = xstrndup(q, (size_t)(end - q));
		a = os_abspath(*ent ? ent : ".", p->cwd);
		for (dup = 0, k = 0; k < p->nprepend; k++)
			dup |= strcmp(a, abs[k]) == 0;
		if (!dup) {
			bufputc(&nb, ':');
			bufputs(&nb, ent);
		}
		free(ent);
		free(a);
		q = *end ? end + 1 : end;
	}
	assign(r, "PATH", nb.s, xstrdup("--prepend-path"));
	buffree(&nb);
	for (k = 0; k < p->nprepend; k++)
		free(abs[k]);
	free(abs);
	return 0;
}

/* the environment the command runs in decides which VIRTUAL_ENV / CONDA_* are foreign */
static void
foreign(const struct policy *p, struct envres *r)
{
	const char *v;
	char *venv, *conda, *target = NULL, *t, *prog, *d, *a, *cfg, **names;
	size_t i, n;

	v = env_get(&r->env, "VIRTUAL_ENV");
	venv = v ? xstrdup(v) : NULL;
	v = env_get(&r->env, "CONDA_PREFIX");
	conda = v ? xstrdup(v) : NULL;
	for (i = 0; i < p->nprepend && !target; i++) {
		a = os_abspath(p->prepend[i], p->cwd);
		t = envof(a);
		free(a);
		if (!t)
			continue;
		target = t;
		cfg = xasprintf("%s/pyvenv.cfg", t);
		if (access(cfg, F_OK) == 0 && (!venv || strcmp(venv, t) != 0) &&
		    !kept(p, "VIRTUAL_ENV") && !userset(r, "VIRTUAL_ENV"))
			assign(r, "VIRTUAL_ENV", t,
			       xasprintf("--prepend-path %s is this venv's bin folder", p->prepend[i]));
		free(cfg);
	}
	if (!target && p->cmd && (prog = os_findprog(p->cmd, env_get(&r->env, "PATH") ? env_get(&r->env, "PATH") : OS_DEFPATH, p->cwd))) {
		a = os_abspath(prog, p->cwd);
		d = dirpart(a);
		target = envof(d);
		free(d);
		free(a);
		free(prog);
	}
	r->target = target;
	if (target && venv && strcmp(venv, target) != 0 && !kept(p, "VIRTUAL_ENV") &&
	    !userset(r, "VIRTUAL_ENV")) {
		v = env_get(&r->env, "VIRTUAL_ENV");
		if (v && strcmp(v, venv) == 0)
			drop(r, "VIRTUAL_ENV", xasprintf("another environment than the command's (%s)", target));
		strippath(r, venv, p->cwd);
	}
	if (target && conda && strcmp(conda, target) != 0 && !kept(p, "CONDA_PREFIX") &&
	    !userset(r, "CONDA_PREFIX")) {
		names = matching(&r->env, "CONDA_*", &n);
		for (i = 0; i < n; i++)
			if (!kept(p, names[i]) && !userset(r, names[i]))
				drop(r, names[i],
				     xasprintf("conda environment %s leaks into a build for %s", conda, target));
		strs_free(names, n);
		strippath(r, conda, p->cwd);
	}
	free(venv);
	free(conda);
}

int
policy_apply(const struct policy *p, char *const *envp, struct envres *r, char **err)
{
	struct envv orig = {0};
	const char *ctype, *v;
	char **names, *name;
	size_t i, j, n;

	memset(r, 0, sizeof *r);
	*err = NULL;
	env_copy(&orig, envp);
	env_copy(&r->env, NULL);

	/* the base: everything, or the allow-list with -i */
	for (i = 0; i < orig.n; i++) {
		int ok = !p->empty;

		name = xstrndup(orig.v[i], namelen(orig.v[i]));
		for (j = 0; !ok && j < NELEM(allow); j++)
			ok = env_match(allow[j], name);
		if (!ok && kept(p, name))
			ok = 1;
		if (ok)
			env_set(&r->env, name, orig.v[i] + strlen(name) + 1);
		else
			note(r, CH_REMOVE, name, orig.v[i] + strlen(name) + 1,
			     xstrdup("-i: not on the allow-list"));
		free(name);
	}

	/* the default removals */
	for (i = 0; i < NELEM(removed); i++)
		if (!kept(p, removed[i].name))
			drop(r, removed[i].name, xstrdup(removed[i].why));
	names = matching(&r->env, "PIP_*", &n);
	for (i = 0; i < n; i++) {
		int net = 0;

		for (j = 0; j < NELEM(pipkeep); j++)
			net |= strcmp(pipkeep[j], names[i]) == 0;
		if (!net && !kept(p, names[i]))
			drop(r, names[i], xstrdup("a pip setting that changes what a build installs or where"));
	}
	strs_free(names, n);

	/* the default settings */
	if (!kept(p, "PYTHONNOUSERSITE"))
		assign(r, "PYTHONNOUSERSITE", "1",
		       xstrdup("default: packages in the user site (~/.local) stay out of the build"));
	ctype = env_get(&r->env, "LC_ALL");
	if (!ctype || !*ctype)
		ctype = env_get(&r->env, "LC_CTYPE");
	if (!ctype || !*ctype)
		ctype = env_get(&r->env, "LANG");
	if (!locale_utf8(ctype) && !kept(p, "LC_ALL") && !kept(p, "LC_CTYPE")) {
		char *why = xasprintf("default: the character set of '%s' is not UTF-8 (hipify and "
		                      "setup.py files read UTF-8 sources)", ctype && *ctype ? ctype : "C");
		if ((v = env_get(&r->env, "LC_ALL")) && *v)
			assign(r, "LC_ALL", "C.UTF-8", why);
		else
			assign(r, "LC_CTYPE", "C.UTF-8", why);
	}

	if (applyops(p, r, err) < 0 || prepend(p, r, err) < 0) {
		env_free(&orig);
		return -1;
	}
	foreign(p, r);
	if (p->cmd)
		if (!(r->cmdpath = os_findprog(p->cmd, env_get(&r->env, "PATH") ? env_get(&r->env, "PATH") : OS_DEFPATH, p->cwd)))
			r->cmderr = errno;

	/* what passed through unchanged */
	for (i = 0; i < r->env.n; i++) {
		name = xstrndup(r->env.v[i], namelen(r->env.v[i]));
		v = env_get(&orig, name);
		if (v && strcmp(v, r->env.v[i] + strlen(name) + 1) == 0) {
			int touched = 0;

			for (j = 0; j < r->nch; j++)
				touched |= strcmp(r->ch[j].name, name) == 0;
			if (!touched)
				note(r, CH_KEEP, name, v,
				     xstrdup(kept(p, name) ? "--keep" : p->empty ? "-i allow-list" : "passed through"));
		}
		free(name);
	}
	env_free(&orig);
	return 0;
}

void
envres_free(struct envres *r)
{
	size_t i;

	for (i = 0; i < r->nch; i++) {
		free(r->ch[i].name);
		free(r->ch[i].value);
		free(r->ch[i].why);
	}
	free(r->ch);
	env_free(&r->env);
	free(r->cmdpath);
	free(r->target);
	memset(r, 0, sizeof *r);
}
