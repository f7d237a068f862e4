# lib/base.sh: what every step uses: say, die and clean. Sourced by a step
# (ninja/steps/NAME.sh), never run; defines functions only.

# say TEXT: one line on the log
say () { printf 'kiln: %s\n' "$*" >&2; }
# die TEXT: the stage fails in one line (exit 1); a build that reached for the network
# says so first (ng_blame, lib/netguard.sh, when that guard is running)
die () { [ -z "${ngpid:-}" ] || ng_blame; say "$KILN_STAGE: $*"; exit 1; }
# clean [ENVCLEAN-OPTION]... -- CMD...: CMD under envclean, starting from its allow-list
# (-i) plus the profiles: no caller variable (PIP_*, CFLAGS, CMAKE_*, SRCPIN_MIRROR ...)
# and no pip configuration file reaches it; the target Python's folder comes first on PATH
clean () {
	n=$#
	# PROFILES is a "|"-separated list (paths may hold spaces)
	o=$IFS IFS='|'
	for p in $PROFILES; do set -- "$@" --profile="$p"; done
	IFS=$o
	while [ "$n" -gt 0 ]; do set -- "$@" "$1"; shift; n=$((n - 1)); done
	# srcpin's mirror setting crosses the clean environment as a setting, not a word
	[ -z "${SRCPIN_MIRROR:-}" ] || set -- --set SRCPIN_MIRROR="$SRCPIN_MIRROR" "$@"
	# PY's folder without a dirname process (a stage calls clean tens of times)
	case "$PY" in */*) pydir=${PY%/*} ;; *) pydir=. ;; esac
	envclean -i --set PIP_CONFIG_FILE=/dev/null --prepend-path "${pydir:-/}" "$@"
}
