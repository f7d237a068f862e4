# lib.sh: sourced by regress scripts. Gives a scratch folder $T (removed at exit), the
# tools under test first on PATH, and checks that print the lines tests/run.sh counts.
set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-t.XXXXXX") || exit 2
# at_exit CMD: shell text run when the file ends (the last given first), before $T goes:
# a test stops its servers this way. A signal ends the file (129, 130, 143): a trap that
# only cleaned up would let the file go on in a removed folder (on a busy host with
# PIDs wrapping at 32768, a kill by an old process id can reach a test's shell)
_atexit=:
at_exit () { _atexit="$1; $_atexit"; }
# once the file is ending, a second signal must not cut its cleanup short: timeout(1)
# sends TERM to the file and then to its whole process group, and on a loaded machine the
# second can land inside this trap, where `exit 143` would end it before the rm (the
# runner.sh case "the stopped file's folder is removed", red in a loaded fresh clone)
trap 'trap "" HUP INT TERM; eval "$_atexit"; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
# python3 is Debian's in every test and what the tests start (the oracles and servers are
# written for it; --install-deps installs it): a python3 earlier on PATH may be a version
# manager's shim (pyenv's is a bash script: 0.56 CPU s a start against 0.04 for the
# interpreter itself, and the suite starts python3 hundreds of times)
if [ -x /usr/bin/python3 ] && mkdir "$T/.path" && ln -s /usr/bin/python3 "$T/.path/python3"; then
	PATH=$T/.path:$PATH
fi
# and rustup's proxies (~/.cargo/bin) are left off PATH: pip starts `rustc --version` for
# its user-agent line on every command when shutil.which("rustc") finds one (user_agent in
# pip/_internal/network/session.py of pip 23.0.1, Debian 12's python3-pip-whl, which the
# tests' venvs get), through the proxy: two processes and 0.1 CPU s a pip run; no test
# needs rustc (graph-vllm.sh makes its own)
_p= _ifs=$IFS IFS=:; set -f
for _d in $PATH; do
	case "$_d" in */.cargo/bin | */.cargo/bin/) ;; *) _p=${_p:+$_p:}$_d ;; esac
done
IFS=$_ifs PATH=$_p; set +f
unset _p _d _ifs
PATH=$KILN_BIN:$PATH
export PATH
# a HOME of the test's own, without the user's XDG folders: what the tools keep there (the
# git cache, wheelpick's answers, pip's and ccache's caches) goes with $T, and no
# configuration of the user's reaches a test. The download caches a test keeps across runs
# on purpose (large, made once) stay in the user's cache folder, unless given.
_uc=${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/kiln
: "${KILN_DEBSRC_CACHE:=$_uc/debsrc}" "${KILN_ROCM_DEBIAN_CACHE:=$_uc/rocm-debian}"
: "${KILN_IMAGE_BASE_CACHE:=$_uc/image-base}" "${KILN_REAL_ROOT_CACHE:=$_uc/real-root}"
export KILN_DEBSRC_CACHE KILN_ROCM_DEBIAN_CACHE KILN_IMAGE_BASE_CACHE KILN_REAL_ROOT_CACHE
HOME=$T/home
export HOME
unset XDG_CACHE_HOME XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME _uc
mkdir -p "$HOME"

ok () { echo "ok $*"; }
notok () { echo "not ok $*"; }
# missing REASON: a dependency the README's test command installs is absent: that is a
# failure, not a skip (./configure --install-deps installs every test package), so the
# rest of this file does not run and the runner counts one failure with the reason
missing () { echo "not ok ${0##*/}: missing test dependency: $* (./configure --install-deps installs it)"; exit 1; }
# skip_all REASON: kept for old callers; the same as missing
skip_all () { missing "$@"; }
# optional TIER REASON: skip the rest of this file because an explicitly optional tier
# (upstream snapshots, release-length fuzzing, GPU-only checks, ...) is not enabled here;
# the only kind of skip the runner and CI accept
optional () { t=$1; shift; echo "skip ${0##*/}: optional tier $t: $*"; exit 0; }
# optional_case TIER REASON: one skipped case of an optional tier, the file goes on
optional_case () { t=$1; shift; echo "skip optional tier $t: $*"; }
# need CMD...: every command must exist, or the file fails with the install hint
need () { for c; do command -v "$c" >/dev/null 2>&1 || missing "needs $c"; done; }
# show the captured output of the last run, indented, after a failure
_show () { [ -s "$T/.out" ] && sed -n '1,30s/^/#   out: /p' "$T/.out"; [ -s "$T/.err" ] && sed -n '1,30s/^/#   err: /p' "$T/.err"; return 0; }

# run CMD...: run it, keep stdout in $T/.out, stderr in $T/.err, status in $rc
run () { "$@" >"$T/.out" 2>"$T/.err"; rc=$?; return 0; }
# check DESC CMD...: CMD must exit 0
check () { d=$1; shift; run "$@"; if [ "$rc" = 0 ]; then ok "$d"; else notok "$d (exit $rc)"; _show; fi; }
# exits DESC STATUS CMD...: CMD must exit with STATUS
exits () { d=$1; want=$2; shift 2; run "$@"; if [ "$rc" = "$want" ]; then ok "$d"; else notok "$d (exit $rc, want $want)"; _show; fi; }
# same DESC WANT GOT: two strings must be equal
same () { if [ "$2" = "$3" ]; then ok "$1"; else notok "$1"; printf '#   want: %s\n#   got:  %s\n' "$2" "$3"; fi; }
# has DESC FILE TEXT: FILE must contain the fixed string TEXT
has () { if grep -qF -- "$3" "$2"; then ok "$1"; else notok "$1 (no '$3' in ${2##*/})"; sed -n '1,20s/^/#   /p' "$2"; fi; }
# lacks DESC FILE TEXT: FILE must not contain TEXT
lacks () { if grep -qF -- "$3" "$2"; then notok "$1 ('$3' in ${2##*/})"; sed -n '1,20s/^/#   /p' "$2"; else ok "$1"; fi; }
# lines FILE: number of lines
# shq TEXT: TEXT as one single-quoted shell word, for scripts and Makefiles a test writes
shq () { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
lines () { wc -l <"$1" | tr -d ' '; }

# Servers a test starts (nginx, redis, distccd, ...) on loopback ports. A port is asked of
# the kernel (bind to port 0) and passed to the server; another process may take it in
# between, and a connect() that works may reach that other process: so a server is ready
# only when the kernel says that it, its own process, listens on its port (listens), and a
# server that exits first lost the port or failed, which startserver sees at once.
# freeport: a TCP port on 127.0.0.1 that was free a moment ago
freeport () { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# listens PID PORT: exit 0 when process PID (or a child of it) has a TCP socket listening
# on PORT (/proc/net/tcp* and its fds), 1 when not yet, 2 when PID is gone or a zombie;
# waitlisten PID PORT: poll until PID listens on PORT (0); 1 as soon as PID has exited (no
# clock: a server that hangs without listening is ended by the runner's limit for the file).
# Both are ninja/listens.py, which the sccache step uses too.
listens () { python3 "$KILN_SRC/ninja/listens.py" "$1" "$2"; }
waitlisten () { python3 "$KILN_SRC/ninja/listens.py" --wait "$1" "$2"; }
# startserver TRIES START: run START PORT (a function that starts a server on PORT in the
# background and sets SERVER_PID to its process) with a fresh freeport until that server
# listens there; one that exits first (it lost the port to another process, or failed) is
# started again on another port, TRIES times in all. Sets SERVER_PORT; 1 when it failed.
startserver () { _st=0
	while [ "$_st" -lt "$1" ]; do
		SERVER_PORT=$(freeport) || return 1
		SERVER_PID=
		"$2" "$SERVER_PORT"
		waitlisten "$SERVER_PID" "$SERVER_PORT" && return 0
		wait "$SERVER_PID" 2>/dev/null
		_st=$((_st + 1))
	done
	return 1; }
# stagesin NINJAFILE STAGE...: one check per stage: the stack graph has it
stagesin () { _nf=$1; shift; for _s; do has "the graph has $_s" "$_nf" "build $_s: phony"; done; }
# after NINJAFILE LATER EARLIER: LATER's stamp edge depends on EARLIER's stamp
after () {
	if grep "^build \$bdir/stamp/$2: " "$1" | grep -q "stamp/$3\( \|\$\)"; then ok "$2 comes after $3"
	else notok "$2 comes after $3"; grep "^build \$bdir/stamp/$2: " "$1" | sed 's/^/#   /'; fi
}
# startredis: a redis-server on a free loopback port (startserver), stopped at exit, that
# answers PING; sets port and rpid. Keeps nothing on disk (no RDB, no AOF)
_redis () { redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no --dir "$T" >"$T/redis.log" 2>&1 & SERVER_PID=$!; }
startredis () {
	rpid=
	at_exit 'kill $rpid 2>/dev/null; wait $rpid 2>/dev/null'
	startserver 5 _redis || { sed 's/^/#   /' "$T/redis.log"; notok "redis-server did not start"; exit 1; }
	port=$SERVER_PORT rpid=$SERVER_PID
	check "redis-server answers PING" redis-cli -p "$port" ping
}
# ksrc_copy: a private copy at KSRC=$T/src of what configure reads, so that work elsewhere
# in the checkout (new tools, edited profiles) does not regenerate the graph under the
# test; a fixed git identity, no system git config, HOME=$T/home
ksrc_copy () {
	KSRC=$T/src
	mkdir -p "$KSRC/tools"
	cp -R "$KILN_SRC/configure" "$KILN_SRC/ninja" "$KILN_SRC/env" "$KILN_SRC/mk" "$KSRC/" || exit 2
	cp -R "$KILN_SRC/tools/lib" "$KSRC/tools/" || exit 2
	export GIT_AUTHOR_NAME=kiln GIT_AUTHOR_EMAIL=kiln@example.invalid
	export GIT_COMMITTER_NAME=kiln GIT_COMMITTER_EMAIL=kiln@example.invalid
	export GIT_CONFIG_NOSYSTEM=1 HOME=$T/home
	mkdir -p "$HOME"
}
# alive PID: the process is there and not a zombie left to its reaper
alive () { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) [ZX] ' "/proc/$1/stat" 2>/dev/null; }
# waitalive "PID..." CMD...: run CMD (quietly) every 0.1 s until it succeeds; fails at once
# when one of the PIDs (a server, or the build that is to reach a point) has ended first.
# No clock: on a loaded host the build only takes longer to get there; one that hangs is
# ended by the runner's limit for the file (tests/run.sh, KILN_TEST_TIMEOUT)
waitalive () { _wp=$1; shift
	until "$@" >/dev/null 2>&1; do
		for _p in $_wp; do alive "$_p" || return 1; done
		sleep 0.1
	done; }
# venv_new PY DIR [WHEEL...]: what `PY -m venv DIR` makes (pip and setuptools from
# ensurepip), with the WHEELs installed offline. Made for real once per test run and then
# copied: with KILN_VENV_CACHE set (tests/run.sh sets it), the first call for PY and those
# wheels makes a template there (under a lock), and each call makes a `--without-pip` venv
# at DIR, copies the template's site-packages into it and points its scripts (pip, wheel)
# at DIR's python: 0.4 CPU seconds instead of 7 (ensurepip and pip's own install). A DIR
# a script's first line cannot carry as it is (a byte other than [A-Za-z0-9._/+-], or
# over 100 bytes: pip would write a /bin/sh launcher) is made the slow way.
venv_new () { _vp=$1 _vd=$2; shift 2
	case "$_vd" in /*) ;; *) _vd=$PWD/$_vd ;; esac
	case "$_vd" in *[!A-Za-z0-9._/+-]*) _vslow "$_vp" "$_vd" "$@"; return ;; esac
	if [ -z "${KILN_VENV_CACHE:-}" ] || [ "${#_vd}" -gt 100 ]; then
		_vslow "$_vp" "$_vd" "$@"; return
	fi
	_vt=$KILN_VENV_CACHE/$(printf '%s\n' "$_vp" "$@" | cksum | tr ' ' -)
	mkdir -p "$KILN_VENV_CACHE" &&
		flock "$_vt.lock" sh -c 't=$1 inc=$2 py=$3; shift 3
			[ -f "$t/.made" ] || { rm -rf "$t" && . "$inc" && _vslow "$py" "$t" "$@" && : >"$t/.made"; }' \
			sh "$_vt" "$KILN_SRC/tests/venv.inc" "$_vp" "$@" >"$T/.venv.log" 2>&1 || return 1
	"$_vp" -m venv --without-pip "$_vd" || return 1
	for _vs in "$_vt"/lib/python*/site-packages; do
		cp -a "$_vs/." "$_vd/${_vs#"$_vt"/}/" || return 1
	done
	for _vs in "$_vt"/bin/*; do
		[ -e "$_vd/bin/${_vs##*/}" ] && continue
		head -n 1 "$_vs" | grep -q "^#!$_vt/bin/python" || continue
		{ printf '#!%s/bin/%s\n' "$_vd" "$(head -n 1 "$_vs" | sed 's|.*/bin/||')"; tail -n +2 "$_vs"; } >"$_vd/bin/${_vs##*/}" &&
			chmod 755 "$_vd/bin/${_vs##*/}" || return 1
	done
}
. "$KILN_SRC/tests/venv.inc"
