/* gpucheck smoke: run a short check of an installed torch in a fresh interpreter */
#include "gpucheck.h"
#include "json.h"
#include "proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The check, run with python -c. Each result is one line: ok|fail|skip TAB name TAB text
   (skip: not run, and why; not a failure). Lines are flushed as they are made, so a hang
   or crash still shows how far it got. A torch without a GPU still reports which SDPA
   APIs it has; a torch older than them says so. */
static const char *const script[] = {
"import sys, warnings\n"
"def say(s, n, t):\n"
"    t = ' '.join(str(t).split())[:400]\n"
"    sys.stdout.write('%s\\t%s\\t%s\\n' % (s, n, t)); sys.stdout.flush()\n"
"def err(e):\n"
"    return '%s: %s' % (type(e).__name__, e)\n"
"def caught(w):\n"
"    return '; '.join(dict.fromkeys(' '.join(str(x.message).split()) for x in w))\n"
"try:\n"
"    import torch\n"
"    say('ok', 'import', 'torch %s from %s' % (torch.__version__, torch.__file__))\n"
"except BaseException as e:\n"
"    say('fail', 'import', err(e)); sys.exit(0)\n"
"tv = 'torch %s' % torch.__version__\n"
"hip = getattr(torch.version, 'hip', None); cuda = getattr(torch.version, 'cuda', None)\n"
"if hip: say('ok', 'backend', 'ROCm/HIP %s' % hip)\n"
"elif cuda: say('ok', 'backend', 'CUDA %s' % cuda)\n"
"else: say('fail', 'backend', 'this torch is built for the CPU only (torch.version.hip and torch.version.cuda are None)')\n"
"n = 0\n"
"try:\n"
"    n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
"except BaseException as e:\n"
"    say('fail', 'devices', err(e))\n"
"if n == 0:\n"
"    say('fail', 'devices', 'torch sees no GPU')\n"
"archs = []\n"
"for i in range(n):\n"
"    p = torch.cuda.get_device_properties(i)\n"
"    a = getattr(p, 'gcnArchName', '') if hip else 'sm_%d%d' % (p.major, p.minor)\n"
"    archs.append(a)\n"
"    say('ok', 'device %d' % i, '%s %s, %.1f GiB' % (p.name, a, p.total_memory / 2**30))\n"
"try:\n"
"    built = torch.cuda.get_arch_list() if n else []\n"
"    for i, a in enumerate(archs):\n"
"        base = a.split(':')[0]\n"
"        if hip: hit = [b for b in built if b.split(':')[0] == base]\n"
"        else:\n"
"            mm = int(base[3:]) if base[3:].isdigit() else 0\n"
"            hit = [b for b in built if b == base or (b.startswith('sm_') and b[3:].isdigit() and int(b[3:]) // 10 == mm // 10 and int(b[3:]) <= mm) or (b.startswith('compute_') and b[8:].isdigit() and int(b[8:]) <= mm)]\n"
"        say('ok' if hit else 'fail', 'arch %d' % i, '%s is in the arch list %s' % (a, ' '.join(built)) if hit else 'torch was built for %s, not for %s' % (' '.join(built) or 'nothing', a))\n"
"except BaseException as e:\n"
"    say('fail', 'arch', err(e))\n"
"if n:\n"
"    try:\n"
"        a = torch.randn(64, 64); b = torch.randn(64, 64)\n"
"        c = (a.cuda() @ b.cuda()).cpu(); torch.cuda.synchronize()\n"
"        ok = torch.allclose(c, a @ b, atol=1e-3, rtol=1e-3)\n"
"        say('ok' if ok else 'fail', 'matmul', '64x64 float32 on the GPU agrees with the CPU' if ok else 'the GPU result differs from the CPU result')\n"
"    except BaseException as e:\n"
"        say('fail', 'matmul', err(e))\n",
/* (two literals: each under the 4095 bytes C guarantees) */
"# SDPA, the way the gfx1151 guide validates it: the preferred ROCm flash-attention library,\n"
"# can_use_flash_attention / can_use_efficient_attention with their reasons (debug=True\n"
"# warns them), a call forced onto each backend\n"
"import torch.nn.functional as F\n"
"bc = getattr(torch.backends, 'cuda', None)\n"
"if not hasattr(F, 'scaled_dot_product_attention'):\n"
"    for name in ('sdpa fa library', 'sdpa can flash', 'sdpa can efficient', 'sdpa flash'):\n"
"        say('skip', name, 'not available in %s (scaled_dot_product_attention came in torch 2.0)' % tv)\n"
"    sys.exit(0)\n"
"f = getattr(bc, 'preferred_rocm_fa_library', None)\n"
"if not hip:\n"
"    say('skip', 'sdpa fa library', 'ROCm only; this torch is built for %s' % ('CUDA %s' % cuda if cuda else 'the CPU'))\n"
"elif f is None:\n"
"    say('skip', 'sdpa fa library', 'not available in %s (torch.backends.cuda.preferred_rocm_fa_library)' % tv)\n"
"else:\n"
"    try:\n"
"        v = f(); v = getattr(v, 'name', str(v).split('.')[-1])\n"
"        say('ok', 'sdpa fa library', '%s%s' % (v, ' (AOTriton unless TORCH_ROCM_FA_PREFER_CK=1)' if v == 'Default' else ''))\n"
"    except BaseException as e:\n"
"        say('fail', 'sdpa fa library', err(e))\n"
"if n == 0:\n"
"    for name in ('sdpa can flash', 'sdpa can efficient', 'sdpa flash'):\n"
"        say('skip', name, 'no GPU to run it on')\n"
"    sys.exit(0)\n"
"via = ' (AOTriton)' if hip else ''\n"
"q, k, v = (torch.randn(1, 4, 128, 64, device='cuda', dtype=torch.float16) for _ in range(3))\n"
"P = getattr(bc, 'SDPAParams', None)\n"
"params = None\n"
"if P is not None:\n"
"    for args in ((q, k, v, None, 0.0, False, False), (q, k, v, None, 0.0, False)):\n"
"        try:\n"
"            params = P(*args); break\n"
"        except TypeError:\n"
"            pass\n"
"for name, fn in (('sdpa can flash', 'can_use_flash_attention'), ('sdpa can efficient', 'can_use_efficient_attention')):\n"
"    g = getattr(bc, fn, None)\n"
"    if g is None or params is None:\n"
"        say('skip', name, 'not available in %s (torch.backends.cuda.%s)' % (tv, fn if g is None else 'SDPAParams'))\n"
"        continue\n"
"    try:\n"
"        with warnings.catch_warnings(record=True) as w:\n"
"            warnings.simplefilter('always')\n"
"            r = bool(g(params, True))\n"
"        say('ok' if r else 'fail', name, '%s(1x4x128x64 float16): %s%s' % (fn, r, ': ' + caught(w) if not r and w else via if r else ''))\n"
"    except BaseException as e:\n"
"        say('fail', name, err(e))\n"
"try:\n"
"    from torch.nn.attention import sdpa_kernel, SDPBackend\n"
"    bk = [('flash', SDPBackend.FLASH_ATTENTION), ('mem_efficient', SDPBackend.EFFICIENT_ATTENTION), ('math', SDPBackend.MATH)]\n"
"    ctx = lambda b: sdpa_kernel([b])\n"
"except ImportError:\n"
"    kw = {'flash': dict(enable_flash=True, enable_mem_efficient=False, enable_math=False), 'mem_efficient': dict(enable_flash=False, enable_mem_efficient=True, enable_math=False), 'math': dict(enable_flash=False, enable_mem_efficient=False, enable_math=True)}\n"
"    bk = [(x, x) for x in ('flash', 'mem_efficient', 'math')]\n"
"    ctx = lambda b: bc.sdp_kernel(**kw[b])\n"
"for name, b in bk:\n"
"    w = []\n"
"    try:\n"
"        with warnings.catch_warnings(record=True) as w:\n"
"            warnings.simplefilter('always')\n"
"            with ctx(b):\n"
"                o = F.scaled_dot_product_attention(q, k, v)\n"
"            torch.cuda.synchronize()\n"
"        say('ok', 'sdpa ' + name, 'a call forced onto this backend ran%s' % (via if name != 'math' else ''))\n"
"    except BaseException as e:\n"
"        say('fail', 'sdpa ' + name, err(e) + (' (' + caught(w) + ')' if w else ''))\n",
};

/* one run of the check: its options, and the results as they are reported */
struct smoke {
	const char *python;
	int timeout, json, fails, lines;
	struct json js;
	struct buf b; /* the JSON document */
};

static void
smokeopts(struct smoke *k, int argc, char **argv)
{
	char *end;
	int i;

	for (i = 1; i < argc; i++) {
		if (gc_commonopt(argv[i]))
			continue;
		if (startswith(argv[i], "--python="))
			k->python = argv[i] + 9;
		else if (startswith(argv[i], "--timeout=")) {
			k->timeout = (int)strtol(argv[i] + 10, &end, 10);
			if (*end || k->timeout <= 0 || k->timeout > 86400)
				gc_usage("smoke: --timeout needs seconds (1-86400)");
		} else if (strcmp(argv[i], "--json") == 0)
			k->json = 1;
		else
			gc_usage("smoke: unknown option '%s'", argv[i]);
	}
	if (!k->python || !*k->python)
		gc_usage("smoke: name the interpreter with --python=PATH");
}

/* the script in a fresh interpreter, its stdout and stderr captured */
static void
runscript(const struct smoke *k, struct buf *out, struct buf *errout, struct procres *res)
{
	struct buf code = {0};
	char *cmd[6];
	size_t i;
	int rc;

	for (i = 0; i < sizeof script / sizeof script[0]; i++)
		bufputs(&code, script[i]);
	cmd[0] = (char *)k->python;
	cmd[1] = "-X";
	cmd[2] = "faulthandler";
	cmd[3] = "-c";
	cmd[4] = code.s;
	cmd[5] = NULL;
	rc = proc_capture(cmd, NULL, out, errout, 1 << 20, k->timeout * 1000, res);
	buffree(&code);
	if (rc < 0)
		die("smoke: cannot run %s:", k->python);
	if (res->notfound) {
		buffree(out);
		buffree(errout);
		die("smoke: --python=%s: cannot run it (%s)", k->python, strerror(res->err));
	}
}

/* one result: STATUS, NAME and TEXT */
static void
result(struct smoke *k, const char *status, const char *name, const char *text)
{
	k->lines++;
	k->fails += strcmp(status, "fail") == 0;
	if (!k->json) {
		printf("%-4s  %-20s %s\n", status, name, text);
		return;
	}
	json_obj(&k->js);
	json_kstr(&k->js, "name", name);
	json_kbool(&k->js, "ok", strcmp(status, "fail") != 0);
	json_kstr(&k->js, "status", status);
	json_kstr(&k->js, "text", text);
	json_end(&k->js);
}

/* the script's result lines (ok|fail|skip TAB name TAB text); other lines are what the
   import printed */
static void
results(struct smoke *k, char *out)
{
	char *line, *next, *t1, *t2;

	for (line = out; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		t1 = strchr(line, '\t');
		t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (!t2 || (strncmp(line, "ok\t", 3) != 0 && strncmp(line, "fail\t", 5) != 0 &&
			    strncmp(line, "skip\t", 5) != 0))
			continue;
		*t1++ = 0;
		*t2++ = 0;
		result(k, line, t1, t2);
	}
}

/* an interpreter that timed out, died, failed or printed nothing: one failed result, with
   the last line of its stderr (where it died) */
static void
death(struct smoke *k, const struct procres *res, const char *errout)
{
	char why[160];
	const char *tail = errout ? errout : "";
	size_t tl = strlen(tail), i;

	while (tl && tail[tl - 1] == '\n')
		tl--;
	for (i = tl; i > 0 && tail[i - 1] != '\n'; i--)
		;
	if (res->timedout)
		snprintf(why, sizeof why, "timed out after %d s", k->timeout);
	else if (res->status > 128)
		snprintf(why, sizeof why, "the interpreter died of signal %d", res->status - 128);
	else if (res->status)
		snprintf(why, sizeof why, "the interpreter exited %d", res->status);
	else
		snprintf(why, sizeof why, "the interpreter printed no result");
	k->fails++;
	if (!k->json) {
		printf("fail  %-20s %s%s%.*s\n", "interpreter", why, tl > i ? ": " : "", (int)(tl - i), tail + i);
		return;
	}
	json_obj(&k->js);
	json_kstr(&k->js, "name", "interpreter");
	json_kbool(&k->js, "ok", 0);
	json_kstr(&k->js, "text", why);
	json_kstr(&k->js, "stderr", tail + i);
	json_end(&k->js);
}

int
cmd_smoke(int argc, char **argv)
{
	struct smoke k = {.timeout = 120};
	struct buf out = {0}, errout = {0};
	struct procres res;

	smokeopts(&k, argc, argv);
	runscript(&k, &out, &errout, &res);
	if (k.json) {
		json_init(&k.js, &k.b);
		json_obj(&k.js);
		json_kstr(&k.js, "python", k.python);
		json_key(&k.js, "checks");
		json_arr(&k.js);
	}
	results(&k, out.s);
	if (res.timedout || res.status != 0 || k.lines == 0)
		death(&k, &res, errout.s);
	if (k.json) {
		json_end(&k.js);
		json_kbool(&k.js, "ok", k.fails == 0);
		json_end(&k.js);
		printf("%s\n", k.b.s);
	}
	buffree(&k.b);
	buffree(&out);
	buffree(&errout);
	return k.fails ? EXIT_PROBLEM : EXIT_OK;
}
