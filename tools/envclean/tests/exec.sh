# envclean's exec path: plain exec (same pid), exit status and signals pass through,
# argv and environment values survive byte for byte, the policy removes, sets and keeps
# what envclean.1 says, -i, --profile, --set, --unset, --keep, --prepend-path, -n.
. "$KILN_SRC/tests/lib.sh"
unset PYTHONPATH PYTHONHOME LD_LIBRARY_PATH VIRTUAL_ENV PYTHONNOUSERSITE LC_ALL LC_CTYPE PYTHONDONTWRITEBYTECODE
unset CONDA_PREFIX CONDA_DEFAULT_ENV
export LANG=C

# --- plain exec: no process left between the caller and the command
envclean -- sh -c 'echo $$' >"$T/pid" &
bg=$!
wait $bg
same "exec: the command runs in envclean's own process (no fork)" "$bg" "$(cat "$T/pid")"

# --- exit status and signals pass through
exits "exit status 0 passes through" 0 envclean -- sh -c 'exit 0'
exits "exit status 42 passes through" 42 envclean -- sh -c 'exit 42'
exits "exit status 255 passes through" 255 envclean -- sh -c 'exit 255'
exits "a command killed by SIGTERM reports 128+15 to its parent" 143 envclean -- sh -c 'kill -TERM $$'
exits "a command killed by SIGKILL reports 128+9 to its parent" 137 envclean -- sh -c 'kill -KILL $$'
run sh -c 'envclean -- sh -c "kill -INT \$\$"; echo "status=$?"'
has "SIGINT: the parent shell sees the signal status" "$T/.out" "status=130"

# --- argv survives unchanged
set -- 'a b' "it's" '"double"' '' 'x=y' '$HOME' '*' 'tab	in' 'new
line' '--' '-n'
printf '[%s]\n' "$@" >"$T/want"
envclean -- printf '[%s]\n' "$@" >"$T/got"
check "argv with spaces, quotes, empty, glob, tab, newline, -- and -n survives" cmp "$T/want" "$T/got"
envclean printf '[%s]\n' "$@" >"$T/got2"
check "a command without -- takes the rest of argv as is" cmp "$T/want" "$T/got2"

# --- environment values survive
nl='one
two=three'
env "KEEPME=a=b=c" "MULTI=$nl" envclean -- sh -c 'printf "%s|" "$KEEPME"; printf "%s" "$MULTI"' >"$T/got"
printf 'a=b=c|%s' "$nl" >"$T/want"
check "values with '=' and newlines pass through byte for byte" cmp "$T/want" "$T/got"
envclean --set "NEW=x=1
y" -- sh -c 'printf "%s" "$NEW"' >"$T/got"
printf 'x=1\ny' >"$T/want"
check "--set NAME=VALUE keeps '=' and newlines in the value" cmp "$T/want" "$T/got"

# --- the default policy
env PYTHONPATH=/src PYTHONHOME=/h PYTHONSTARTUP=/s.py PYTHONUSERBASE=/u PYTHONSAFEPATH=1 \
	PYTHONEXECUTABLE=/x LD_PRELOAD= LD_LIBRARY_PATH=/opt/rocm/lib PIP_USER=1 PIP_TARGET=/t \
	PIP_NO_BUILD_ISOLATION=0 PIP_CONSTRAINT=/c.txt PIP_INDEX_URL=http://mirror/simple \
	PIP_CERT=/ca.pem KEEP_ME=1 envclean -- env >"$T/env"
for v in PYTHONPATH PYTHONHOME PYTHONSTARTUP PYTHONUSERBASE PYTHONSAFEPATH PYTHONEXECUTABLE \
	LD_PRELOAD LD_LIBRARY_PATH PIP_USER PIP_TARGET PIP_NO_BUILD_ISOLATION PIP_CONSTRAINT; do
	lacks "default: $v is removed" "$T/env" "$v="
done
has "default: PIP_INDEX_URL (network only) is kept" "$T/env" "PIP_INDEX_URL=http://mirror/simple"
has "default: PIP_CERT (network only) is kept" "$T/env" "PIP_CERT=/ca.pem"
has "default: other variables pass through" "$T/env" "KEEP_ME=1"
has "default: PYTHONNOUSERSITE=1 is set" "$T/env" "PYTHONNOUSERSITE=1"
has "default: LANG=C gets a UTF-8 LC_CTYPE" "$T/env" "LC_CTYPE=C.UTF-8"
lacks "default: PYTHONDONTWRITEBYTECODE is not set unless asked" "$T/env" "PYTHONDONTWRITEBYTECODE"
env LANG=en_US.UTF-8 envclean -- env >"$T/env"
lacks "a UTF-8 LANG is left alone" "$T/env" "LC_CTYPE="
env LC_ALL=POSIX LANG=en_US.UTF-8 envclean -- env >"$T/env"
has "a non-UTF-8 LC_ALL is replaced (it overrides LC_CTYPE)" "$T/env" "LC_ALL=C.UTF-8"
env LD_LIBRARY_PATH=/opt/rocm/lib envclean --keep LD_LIBRARY_PATH -- env >"$T/env"
has "--keep LD_LIBRARY_PATH keeps it" "$T/env" "LD_LIBRARY_PATH=/opt/rocm/lib"
env PIP_USER=1 PIP_TARGET=/t envclean --keep 'PIP_*' -- env >"$T/env"
has "--keep 'PIP_*' keeps every PIP_ variable" "$T/env" "PIP_TARGET=/t"
envclean --keep PYTHONNOUSERSITE -- env >"$T/env"
lacks "--keep PYTHONNOUSERSITE leaves it unset" "$T/env" "PYTHONNOUSERSITE"
envclean --set PYTHONDONTWRITEBYTECODE=1 -- env >"$T/env"
has "--set PYTHONDONTWRITEBYTECODE=1 when asked" "$T/env" "PYTHONDONTWRITEBYTECODE=1"
env GONE=1 envclean --unset GONE --unset PYTHONNOUSERSITE -- env >"$T/env"
lacks "--unset removes a variable" "$T/env" "GONE="
lacks "--unset removes a default setting too" "$T/env" "PYTHONNOUSERSITE="

# --- -i: empty plus the allow-list
env FOO=1 HOME=/home/x LC_MESSAGES=C SSL_CERT_FILE=/ca envclean -i -- env >"$T/env"
lacks "-i drops what is not on the allow-list" "$T/env" "FOO="
has "-i keeps HOME" "$T/env" "HOME=/home/x"
has "-i keeps PATH" "$T/env" "PATH=$PATH"
has "-i keeps LC_*" "$T/env" "LC_MESSAGES=C"
has "-i keeps SSL_CERT_FILE" "$T/env" "SSL_CERT_FILE=/ca"
has "-i still sets PYTHONNOUSERSITE" "$T/env" "PYTHONNOUSERSITE=1"
env FOO=1 BAR=2 envclean -i --keep FOO -- env >"$T/env"
has "-i --keep FOO copies FOO" "$T/env" "FOO=1"
lacks "-i --keep FOO still drops BAR" "$T/env" "BAR="

# --- profiles, in command-line order with --set and --unset
cat >"$T/gfx.env" <<'EOF'
# an arch profile
PYTORCH_ROCM_ARCH=gfx1151

export HSA_OVERRIDE_GFX_VERSION="11.5.1"
CMAKE_ARGS='-DX=1 -DY="2"'
EOF
envclean --profile "$T/gfx.env" -- env >"$T/env"
has "--profile sets KEY=VALUE" "$T/env" "PYTORCH_ROCM_ARCH=gfx1151"
has "--profile takes 'export KEY=\"...\"'" "$T/env" "HSA_OVERRIDE_GFX_VERSION=11.5.1"
has "--profile keeps single-quoted text as is" "$T/env" 'CMAKE_ARGS=-DX=1 -DY="2"'
envclean --profile "$T/gfx.env" --set PYTORCH_ROCM_ARCH=gfx1100 -- env >"$T/env"
has "--set after --profile wins" "$T/env" "PYTORCH_ROCM_ARCH=gfx1100"
envclean --set PYTORCH_ROCM_ARCH=gfx1100 --profile="$T/gfx.env" -- env >"$T/env"
has "--profile after --set wins (command-line order)" "$T/env" "PYTORCH_ROCM_ARCH=gfx1151"
envclean --profile "$T/gfx.env" --unset 'HSA_*' -- env >"$T/env"
lacks "--unset 'HSA_*' removes by prefix" "$T/env" "HSA_OVERRIDE_GFX_VERSION"
envclean --set PYTHONPATH=/mine -- env >"$T/env"
has "an explicit --set PYTHONPATH is honoured" "$T/env" "PYTHONPATH=/mine"

# --- --prepend-path, VIRTUAL_ENV of another environment
PY=$(command -v python3) || PY=
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; fi
if [ -n "$PY" ] && "$PY" -c 'import venv' 2>/dev/null; then
	"$PY" -m venv --without-pip "$T/v1" && "$PY" -m venv --without-pip "$T/v2" || exit 2
	env VIRTUAL_ENV="$T/v1" PATH="$T/v1/bin:$PATH" envclean --prepend-path "$T/v2/bin" -- \
		sh -c 'command -v python; echo "$VIRTUAL_ENV"; echo "$PATH"' >"$T/got"
	same "--prepend-path puts the venv's python first" "$T/v2/bin/python" "$(sed -n 1p "$T/got")"
	same "--prepend-path of a venv sets VIRTUAL_ENV to it" "$T/v2" "$(sed -n 2p "$T/got")"
	lacks "the other venv's bin leaves PATH" "$T/got" "$T/v1/bin"
	env VIRTUAL_ENV="$T/v1" PATH="$T/v1/bin:$PATH" envclean -- "$T/v2/bin/python" -c \
		'import os; print(os.environ.get("VIRTUAL_ENV"))' >"$T/got"
	same "VIRTUAL_ENV of another env than the command's is removed" "None" "$(cat "$T/got")"
	env VIRTUAL_ENV="$T/v1" PATH="$T/v1/bin:$PATH" envclean -- python -c \
		'import os, sys; print(os.environ.get("VIRTUAL_ENV"), sys.prefix)' >"$T/got"
	same "VIRTUAL_ENV of the command's own env is kept" "$T/v1 $T/v1" "$(cat "$T/got")"
	env CONDA_PREFIX=/opt/conda CONDA_DEFAULT_ENV=base PATH="/opt/conda/bin:$PATH" \
		envclean -- "$T/v2/bin/python" -c 'import os; print(sorted(k for k in os.environ if k.startswith("CONDA")), "/opt/conda" in os.environ["PATH"])' >"$T/got"
	same "CONDA_* of another env leave, with its PATH entries" "[] False" "$(cat "$T/got")"
else
	echo "skip --prepend-path and venv tests: needs python3 with venv"
fi

# --- -n / --explain
exits "-n exits 0" 0 env PYTHONPATH=/src envclean -n -- sh -c "touch '$T/ran'"
[ -e "$T/ran" ] && notok "-n ran the command" || ok "-n does not run the command"
has "-n shows the removal with its value" "$T/.out" "remove PYTHONPATH=/src  # "
has "-n shows the settings" "$T/.out" "set    PYTHONNOUSERSITE=1  # default"
has "-n shows what passes through" "$T/.out" "keep   HOME="
has "-n shows the command it would exec, quoted" "$T/.out" "exec  $(command -v sh) -c 'touch '\\''$T/ran'\\'''"
exits "-n --json exits 0" 0 env PYTHONPATH=/src envclean -n --json --set 'A=1' -- true
cp "$T/.out" "$T/explain.json"
if command -v python3 >/dev/null 2>&1; then
	check "-n --json lists changes, command and the final env" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
acts = {(c["action"], c["name"]) for c in d["changes"]}
assert ("remove", "PYTHONPATH") in acts and ("set", "A") in acts, acts
assert d["command"] == ["true"] and d["program"].endswith("/true"), d
assert "A=1" in d["env"] and not any(e.startswith("PYTHONPATH=") for e in d["env"])
' "$T/explain.json"
fi
exits "-n without a command prints the policy" 0 envclean -n
has "-n without a command still lists removals and settings" "$T/.out" "PYTHONNOUSERSITE=1"

# --- not found, not executable
exits "command not found exits 127" 127 envclean -- no-such-command-kiln
has "command not found says so" "$T/.err" "envclean: no-such-command-kiln: command not found"
exits "a missing path exits 127" 127 envclean -- "$T/nope/cmd"
printf 'echo hi\n' >"$T/noexec"
chmod 644 "$T/noexec"
exits "a file that is not executable exits 126" 126 envclean -- "$T/noexec"
mkdir -p "$T/bin1"
cp "$T/noexec" "$T/bin1/noexec-kiln"
exits "a PATH hit that is not executable exits 126" 126 envclean --prepend-path "$T/bin1" -- noexec-kiln
has "a PATH hit that is not executable says permission denied" "$T/.err" "noexec-kiln: permission denied"
