# lib.sh: sourced by regress scripts. Gives a scratch folder $T (removed at exit), the
# tools under test first on PATH, and checks that print the lines tests/run.sh counts.
set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-t.XXXXXX") || exit 2
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
PATH=$KILN_BIN:$PATH
export PATH

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
# waitfor SECONDS CMD...: run CMD (quietly) every 0.1 s until it succeeds; fails when it has
# not within SECONDS (servers a test starts on a loaded host: give them a minute)
waitfor () { _wn=$(($1 * 10)); shift; _wi=0
	until "$@" >/dev/null 2>&1; do _wi=$((_wi + 1)); [ "$_wi" -lt "$_wn" ] || return 1; sleep 0.1; done; }
lines () { wc -l <"$1" | tr -d ' '; }
