/* hipify's per-file statuses: the driver that reports them, and counting them */
#include "result.h"

#include <errno.h>
#include <string.h>

#include "util.h"

const char hw_driver[] =
"import importlib.util, json, os, runpy, sys\n"
"preset, root, hipdir, result = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]\n"
"os.chdir(root)\n"
"if preset == 'vision':\n"
"    # torch's hipify package on its own, as build_amd.py loads it: the folder the key\n"
"    # digests, without importing torch (seconds of CPU for a text rewrite)\n"
"    s = importlib.util.spec_from_file_location('hipify', os.path.join(hipdir, '__init__.py'),\n"
"                                               submodule_search_locations=[hipdir])\n"
"    sys.modules['hipify'] = importlib.util.module_from_spec(s)\n"
"    s.loader.exec_module(sys.modules['hipify'])\n"
"    from hipify import hipify_python as hp\n"
"    res = hp.hipify(project_directory=root, output_directory=root,\n"
"                    includes='torchvision/csrc/ops/cuda/*', show_detailed=True,\n"
"                    is_pytorch_extension=True)\n"
"elif preset == 'torch':\n"
"    script = os.path.join(root, 'tools', 'amd_build', 'build_amd.py')\n"
"    sys.argv = [script] + sys.argv[5:]\n"
"    runpy.run_path(script, run_name='__main__')\n"
"    hp = sys.modules.get('hipify.hipify_python') or sys.modules.get('torch.utils.hipify.hipify_python')\n"
"    res = hp.HIPIFY_FINAL_RESULT if hp else {}\n"
"else:\n"
"    sys.exit('unknown preset ' + preset)\n"
"with open(result + '.tmp', 'w', encoding='utf-8') as f:\n"
"    for src, r in (res or {}).items():\n"
"        if isinstance(r, dict):\n"
"            dst, st = r.get('hipified_path'), r.get('status')\n"
"        else:\n"
"            dst, st = getattr(r, 'hipified_path', None), getattr(r, 'status', None)\n"
"        f.write(json.dumps({'src': str(src), 'dst': None if dst is None else str(dst), 'status': str(st)}) + '\\n')\n"
"os.replace(result + '.tmp', result)\n";

/* does [s, s+n) contain the string w */
static int
has(const char *s, size_t n, const char *w)
{
	size_t wl = strlen(w), i;

	for (i = 0; i + wl <= n; i++)
		if (memcmp(s + i, w, wl) == 0)
			return 1;
	return 0;
}

void
tally_status(struct tally *t, const char *s, size_t n)
{
	t->total++;
	if (n == 4 && memcmp(s, "[ok]", 4) == 0)
		t->hipified++;
	else if (has(s, n, "no changes") || has(s, n, "already hipified"))
		t->unchanged++;
	else if (has(s, n, "no permissions"))
		t->failed++;
	else if (has(s, n, "[ignored") || has(s, n, "[skipped"))
		t->skipped++;
	else
		t->failed++;
}

long
tally_json(const char *s, size_t n, struct tally *t)
{
	const char *line = s, *end = s + n, *nl, *k, *q;
	long count = 0;
	static const char key[] = "\"status\": \"";

	for (; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			nl = end;
		/* the status is the last field json.dumps writes; statuses hold no quotes */
		for (k = NULL, q = line; q + sizeof(key) - 1 <= nl; q++)
			if (memcmp(q, key, sizeof(key) - 1) == 0)
				k = q + sizeof(key) - 1;
		if (!k)
			continue;
		for (q = k; q < nl && *q != '"'; q++)
			;
		if (q == nl)
			continue;
		tally_status(t, k, (size_t)(q - k));
		count++;
	}
	return count;
}

long
tally_log(const char *s, size_t n, struct tally *t)
{
	const char *line = s, *end = s + n, *nl, *e, *b;
	long count = 0;

	for (; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			nl = end;
		e = nl;
		while (e > line && (e[-1] == '\r' || e[-1] == ' '))
			e--;
		if (e == line || e[-1] != ']' || !has(line, (size_t)(e - line), " -> "))
			continue;
		for (b = e - 1; b > line && *b != '['; b--)
			;
		if (*b != '[' || b == line || b[-1] != ' ')
			continue;
		tally_status(t, b, (size_t)(e - b));
		count++;
	}
	return count;
}

static long
tallyfile(const char *path, struct tally *t, long (*f)(const char *, size_t, struct tally *))
{
	struct buf b = {0};
	long r;

	if (readfile(path, &b, 0) < 0)
		return -1;
	r = f(b.s ? b.s : "", b.len, t);
	buffree(&b);
	return r;
}

long
tally_jsonfile(const char *path, struct tally *t)
{
	return tallyfile(path, t, tally_json);
}

long
tally_logfile(const char *path, struct tally *t)
{
	return tallyfile(path, t, tally_log);
}
