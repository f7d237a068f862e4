# lib.sh: sourced by regress scripts. Gives a scratch folder $T (removed at exit), the
# tools under test first on PATH, and checks that print the lines tests/run.sh counts.
set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-t.XXXXXX") || exit 2
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
PATH=$KILN_BIN:$PATH
export PATH

ok () { echo "ok $*"; }
notok () { echo "not ok $*"; }
# skip_all REASON: skip the rest of this file, visibly
skip_all () { echo "skip ${0##*/}: $*"; exit 0; }
# need CMD...: skip the file unless every command exists
need () { for c; do command -v "$c" >/dev/null 2>&1 || skip_all "needs $c (./configure --install-deps installs it)"; done; }
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
lines () { wc -l <"$1" | tr -d ' '; }
