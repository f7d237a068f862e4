#!/bin/sh
# gpucheck smoke: a fresh interpreter with a timeout. Here (no GPU) Debian's torch 1.13.1
# imports and is CPU-only; a python without torch fails at import; a hung one times out.
. "$KILN_SRC/tests/lib.sh"
need python3
cd "$T" || exit 2
py=/usr/bin/python3; [ -x "$py" ] || py=$(command -v python3)
if "$py" -c 'import torch' 2>/dev/null; then
	exits "smoke on a CPU-only torch: exit 1" 1 gpucheck smoke --python="$py"
	has "torch imports" "$T/.out" "ok    import"
	has "CPU-only build is a failure with the reason" "$T/.out" "this torch is built for the CPU only"
	has "no GPU seen" "$T/.out" "torch sees no GPU"
	exits "smoke --json" 1 gpucheck smoke --json --python="$py"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] is False and d["checks"][0]["name"]=="import" and d["checks"][0]["ok"], d' "$T/.out" &&
		ok "smoke --json has the checks" || notok "smoke --json has the checks"
	python3 -c 'import json,sys; d={c["name"]: c for c in json.load(open(sys.argv[1]))["checks"]}; c=d["sdpa flash"]; assert c["status"]=="skip" and c["ok"] is True and "not available in torch 1." in c["text"], c' "$T/.out" &&
		ok "smoke --json: sdpa is a skip with the reason" || notok "smoke --json: sdpa is a skip with the reason"
	gpucheck smoke --python="$py" >plain
	if "$py" -c 'import torch.nn.functional as F, sys; sys.exit(hasattr(F, "scaled_dot_product_attention"))'; then
		has "a torch without SDPA says so, per check" plain "skip  sdpa can flash       not available in torch 1."
		has "the forced flash call too" plain "skip  sdpa flash           not available in torch 1."
	else
		has "a CPU torch with SDPA: the flash check needs a GPU" plain "skip  sdpa can flash       no GPU to run it on"
	fi
	lacks "no traceback" plain "Traceback"
else
	echo "skip torch checks: $py has no torch (apt-get install python3-torch)"
fi
"$py" -m venv --without-pip bare 2>/dev/null || "$py" -m venv bare
exits "smoke on a python without torch: exit 1" 1 gpucheck smoke --python="$T/bare/bin/python"
has "import failure with the error text" "$T/.out" "fail  import               ModuleNotFoundError: No module named 'torch'"
printf '#!/bin/sh\nexec sleep 30\n' >hang; chmod +x hang
exits "a hanging interpreter: exit 1 after the timeout" 1 gpucheck smoke --python="$T/hang" --timeout=1
has "the timeout is reported" "$T/.out" "timed out after 1 s"
printf '#!/bin/sh\necho "Segmentation fault" >&2; kill -SEGV $$\n' >crash; chmod +x crash
exits "a crashing interpreter: exit 1" 1 gpucheck smoke --python="$T/crash"
has "the signal is reported" "$T/.out" "died of signal 11"

# The GPU paths, here without a GPU: a toy torch package (the same attribute names as
# torch 2.x's) whose answers FAKE selects: a ROCm build on gfx1151 without the AOTriton
# experimental flag (flash refused, with the reason), a CUDA build on sm_90 whose
# SDPAParams takes the older six arguments, a CPU build of a torch with SDPA.
mkdir -p toy/torch/backends toy/torch/nn
cat >toy/torch/__init__.py <<'PY'
import os
from . import version, cuda, backends, nn
__version__ = '2.11.0'
float16 = 'float16'
class T:
    def cuda(self): return self
    def cpu(self): return self
    def __matmul__(self, o): return T()
def randn(*shape, device=None, dtype=None): return T()
def allclose(a, b, atol=0, rtol=0): return True
PY
cat >toy/torch/version.py <<'PY'
import os
hip = '7.0.51831' if os.environ['FAKE'] == 'hip' else None
cuda = '13.0' if os.environ['FAKE'] == 'cuda' else None
PY
cat >toy/torch/cuda.py <<'PY'
import os
class P:
    name = 'AMD Radeon 8060S' if os.environ['FAKE'] == 'hip' else 'NVIDIA H100'
    gcnArchName = 'gfx1151'
    major, minor = 9, 0
    total_memory = 64 << 30
def is_available(): return os.environ['FAKE'] != 'cpu'
def device_count(): return 1
def get_device_properties(i): return P()
def get_arch_list(): return ['gfx1151'] if os.environ['FAKE'] == 'hip' else ['sm_90']
def synchronize(): pass
PY
cat >toy/torch/backends/__init__.py <<'PY'
from . import cuda
PY
cat >toy/torch/backends/cuda.py <<'PY'
import os, warnings
FAKE = os.environ['FAKE']
class B:
    name = 'AOTriton'
def preferred_rocm_fa_library(backend=None): return B()
class SDPAParams:
    def __init__(self, q, k, v, mask, dropout, causal, *gqa):
        if gqa and FAKE == 'cuda': raise TypeError('takes 6 arguments')
def can_use_flash_attention(params, debug=False):
    if FAKE == 'hip':
        warnings.warn('Flash attention was not compiled for current AMD GPU architecture. Attempting to run on architecture gfx1151')
        return False
    return True
def can_use_efficient_attention(params, debug=False): return True
PY
cat >toy/torch/nn/__init__.py <<'PY'
from . import functional, attention
PY
cat >toy/torch/nn/attention.py <<'PY'
import contextlib
class SDPBackend:
    FLASH_ATTENTION, EFFICIENT_ATTENTION, MATH = 'flash', 'efficient', 'math'
current = []
@contextlib.contextmanager
def sdpa_kernel(b):
    current[:] = b
    yield
    current[:] = []
PY
cat >toy/torch/nn/functional.py <<'PY'
import os, warnings
def scaled_dot_product_attention(q, k, v):
    from .attention import current
    if os.environ['FAKE'] == 'hip' and current == ['flash']:
        warnings.warn('Flash attention was not compiled for current AMD GPU architecture')
        raise RuntimeError('No available kernel. Aborting execution.')
    return q
PY
FAKE=hip PYTHONPATH=$T/toy exits "toy ROCm torch on gfx1151 without flash: exit 1" 1 gpucheck smoke --python="$py"
has "the preferred ROCm flash-attention library" "$T/.out" "ok    sdpa fa library      AOTriton"
has "can_use_flash_attention False with torch's reason" "$T/.out" "fail  sdpa can flash       can_use_flash_attention(1x4x128x64 float16): False: Flash attention was not compiled for current AMD GPU architecture"
has "can_use_efficient_attention True" "$T/.out" "ok    sdpa can efficient   can_use_efficient_attention(1x4x128x64 float16): True (AOTriton)"
has "the forced flash call fails with the reason" "$T/.out" "fail  sdpa flash           RuntimeError: No available kernel. Aborting execution. (Flash attention was not compiled"
has "the forced efficient call runs" "$T/.out" "ok    sdpa mem_efficient   a call forced onto this backend ran (AOTriton)"
FAKE=cuda PYTHONPATH=$T/toy exits "toy CUDA torch on sm_90: exit 0" 0 gpucheck smoke --python="$py"
has "fa library is ROCm only" "$T/.out" "skip  sdpa fa library      ROCm only; this torch is built for CUDA 13.0"
has "six-argument SDPAParams still checked" "$T/.out" "ok    sdpa can flash       can_use_flash_attention(1x4x128x64 float16): True"
has "forced flash on CUDA" "$T/.out" "ok    sdpa flash           a call forced onto this backend ran"
FAKE=cuda PYTHONPATH=$T/toy exits "toy CUDA torch --json: exit 0" 0 gpucheck smoke --json --python="$py"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s={c["name"]: c["status"] for c in d["checks"]}; assert d["ok"] and s["sdpa fa library"]=="skip" and s["sdpa can flash"]=="ok" and s["sdpa can efficient"]=="ok" and s["sdpa flash"]=="ok", s' "$T/.out" &&
	ok "smoke --json carries each sdpa line" || notok "smoke --json carries each sdpa line"
FAKE=cpu PYTHONPATH=$T/toy exits "toy CPU torch 2.x: exit 1" 1 gpucheck smoke --python="$py"
has "no GPU: the SDPA checks are skipped with the reason" "$T/.out" "skip  sdpa can flash       no GPU to run it on"
has "CPU build: fa library is ROCm only" "$T/.out" "skip  sdpa fa library      ROCm only; this torch is built for the CPU"
lacks "toy runs print no traceback" "$T/.out" "Traceback"
exits "a missing interpreter: exit 2" 2 gpucheck smoke --python="$T/nope"
exits "smoke without --python: exit 2" 2 gpucheck smoke
