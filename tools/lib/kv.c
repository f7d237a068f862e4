/* KEY=VALUE file parser */
#include "kv.h"
#include "os.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int
iskeystart(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int
iskeychar(int c)
{
	return iskeystart(c) || (c >= '0' && c <= '9');
}

/* parse one value (after '=') up to end; returns NULL with *why set on error */
static char *
parsevalue(const char *p, const char *end, const char **why)
{
	struct buf v = {0};
	char q;

	while (p < end) {
		if (*p == '"' || *p == '\'') {
			q = *p++;
			while (p < end && *p != q) {
				if (q == '"' && *p == '\\' && p + 1 < end &&
				    strchr("\"\\$`", p[1])) {
					p++;
				} else if (q == '"' && (*p == '$' || *p == '`')) {
					/* sh would expand it: refuse rather than read it differently */
					*why = "shell expansion is not supported (write the value out)";
					buffree(&v);
					return NULL;
				}
				bufputc(&v, *p++);
			}
			if (p >= end) {
				*why = q == '"' ? "unterminated \" quote" : "unterminated ' quote";
				buffree(&v);
				return NULL;
			}
			p++;
		} else if (*p == ' ' || *p == '\t') {
			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			if (p < end && *p != '#') {
				*why = "unquoted space in value (quote it)";
				buffree(&v);
				return NULL;
			}
			break;
		} else if (*p == '$' || *p == '`') {
			*why = "shell expansion is not supported (write the value out)";
			buffree(&v);
			return NULL;
		} else {
			bufputc(&v, *p++);
		}
	}
	return bufdetach(&v);
}

int
kv_parse(struct kvfile *f, const char *name, const char *text, size_t len, char **err)
{
	const char *p = text, *end = text + len, *eol, *k, *why;
	char *val;
	int line = 0;

	memset(f, 0, sizeof *f);
	f->path = xstrdup(name);
	*err = NULL;
	while (p < end) {
		line++;
		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if (memchr(p, 0, (size_t)(eol - p))) {
			*err = xasprintf("%s:%d: NUL byte in line", name, line);
			return -1;
		}
		while (p < eol && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (eol > p && eol[-1] == '\r')
			eol--;
		if (p == eol || *p == '#')
			goto next;
		if ((size_t)(eol - p) > 7 && memcmp(p, "export", 6) == 0 &&
		    (p[6] == ' ' || p[6] == '\t')) {
			p += 6;
			while (p < eol && (*p == ' ' || *p == '\t'))
				p++;
		}
		k = p;
		if (p == eol || !iskeystart((unsigned char)*p)) {
			*err = xasprintf("%s:%d: expected KEY=VALUE, got '%.*s'", name, line,
			                 (int)(eol - k > 60 ? 60 : eol - k), k);
			return -1;
		}
		while (p < eol && iskeychar((unsigned char)*p))
			p++;
		if (p >= eol || *p != '=') {
			*err = xasprintf("%s:%d: expected KEY=VALUE, got '%.*s'", name, line,
			                 (int)(eol - k > 60 ? 60 : eol - k), k);
			return -1;
		}
		why = NULL;
		val = parsevalue(p + 1, eol, &why);
		if (!val) {
			*err = xasprintf("%s:%d: %s", name, line, why);
			return -1;
		}
		f->v = xgrow(f->v, &f->cap, f->n + 1, sizeof *f->v);
		f->v[f->n].key = xstrndup(k, (size_t)(p - k));
		f->v[f->n].value = val;
		f->v[f->n].line = line;
		f->n++;
	next:
		p = eol;
		while (p < end && *p != '\n')
			p++;
		if (p < end)
			p++;
	}
	return 0;
}

int
kv_load(struct kvfile *f, const char *path, char **err)
{
	struct buf b = {0};
	int r;

	/* a FIFO or device named as a profile must not hang or be read as text */
	if (os_readreg(path, 0, &b, 16 << 20, err) < 0) {
		memset(f, 0, sizeof *f);
		buffree(&b);
		return -1;
	}
	r = kv_parse(f, path, b.s, b.len, err);
	buffree(&b);
	return r;
}

const char *
kv_get(const struct kvfile *f, const char *key)
{
	size_t i;

	for (i = f->n; i-- > 0;)
		if (strcmp(f->v[i].key, key) == 0)
			return f->v[i].value;
	return NULL;
}

void
kv_free(struct kvfile *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->v[i].key);
		free(f->v[i].value);
	}
	free(f->v);
	free(f->path);
	memset(f, 0, sizeof *f);
}

void
kv_put(struct buf *b, const char *key, const char *value)
{
	bufprintf(b, "%s=\"", key);
	for (; *value; value++) {
		if (*value == '\n') {
			bufputc(b, ' ');
			continue;
		}
		if (strchr("\\\"$`", *value))
			bufputc(b, '\\');
		bufputc(b, *value);
	}
	bufputs(b, "\"\n");
}
