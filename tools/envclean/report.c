/* envclean --check: the findings, and their printing as lines or JSON */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkint.h"
#include "json.h"

/* record one finding; its text and fix become owned by it */
void
addfinding(struct state *st, const struct newfinding *nf)
{
	int level = nf->level;
	const char *kind = nf->kind, *module = nf->module, *p1 = nf->p1, *p2 = nf->p2;
	char *text = nf->text, *fix = nf->fix;
	struct finding *f;

	st->f = xgrow(st->f, &st->fcap, st->nf + 1, sizeof *st->f);
	f = &st->f[st->nf++];
	memset(f, 0, sizeof *f);
	f->level = level;
	f->kind = kind;
	f->module = module ? xstrdup(module) : NULL;
	f->text = text;
	f->fix = fix;
	if (p1)
		push(&f->paths, &f->npaths, p1);
	if (p2)
		push(&f->paths, &f->npaths, p2);
}

/* print the findings: lines (notes only with -v) or one JSON object */
void
report(struct state *st)
{
	struct buf b = {0};
	struct json j;
	size_t i, k;

	if (st->o->json) {
		json_init(&j, &b);
		json_obj(&j);
		json_kstr(&j, "python", st->pr.executable);
		json_kstr(&j, "version", st->pr.version);
		json_kstr(&j, "prefix", st->pr.prefix);
		json_kstr(&j, "cwd", st->pr.cwd);
		json_kbool(&j, "user_site_enabled", st->pr.user_site_enabled);
		json_key(&j, "modules");
		json_arr(&j);
		for (i = 0; i < st->nmods; i++) {
			struct modres *m = &st->mods[i];
			int first = 1;

			json_obj(&j);
			json_kstr(&j, "name", m->name);
			json_key(&j, "copies");
			json_arr(&j);
			for (k = 0; k < m->nc; k++) {
				struct copy *c = &m->c[k];
				char *o = origintext(st, c);

				json_obj(&j);
				json_kstr(&j, "path", c->path);
				json_kstr(&j, "kind", kindname[c->kind]);
				json_kstr(&j, "origin", o);
				json_kstr(&j, "sys_path_entry", c->kind == K_EDIT ? NULL : st->e[c->entry].path);
				json_kstr(&j, "metadata", c->meta);
				json_kbool(&j, "imported", first && c->kind != K_NS);
				json_end(&j);
				if (c->kind != K_NS)
					first = 0;
				free(o);
			}
			json_end(&j);
			json_end(&j);
		}
		json_end(&j);
		json_key(&j, "sys_path");
		json_arr(&j);
		for (i = 0; i < st->ne; i++) {
			json_obj(&j);
			json_kstr(&j, "path", st->e[i].path);
			json_kstr(&j, "origin", origname[st->e[i].origin]);
			json_end(&j);
		}
		json_end(&j);
		json_key(&j, "findings");
		json_arr(&j);
		for (i = 0; i < st->nf; i++) {
			struct finding *f = &st->f[i];

			json_obj(&j);
			json_kstr(&j, "level", f->level == L_PROBLEM ? "problem" : "note");
			json_kstr(&j, "kind", f->kind);
			json_kstr(&j, "module", f->module);
			json_kstr(&j, "message", f->text);
			json_kstr(&j, "fix", f->fix);
			json_kstrs(&j, "paths", f->paths, f->npaths);
			json_end(&j);
		}
		json_end(&j);
		json_end(&j);
		bufputc(&b, '\n');
	} else {
		for (i = 0; i < st->nf; i++) {
			struct finding *f = &st->f[i];

			if (f->level == L_NOTE && !st->o->verbose)
				continue;
			bufprintf(&b, "%s%s; fix: %s\n", f->level == L_NOTE ? "note: " : "", f->text, f->fix);
		}
	}
	fwrite(b.s ? b.s : "", 1, b.len, stdout);
	fflush(stdout);
	buffree(&b);
}
