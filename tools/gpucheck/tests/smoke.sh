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
exits "a missing interpreter: exit 2" 2 gpucheck smoke --python="$T/nope"
exits "smoke without --python: exit 2" 2 gpucheck smoke
