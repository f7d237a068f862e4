#!/bin/sh
# stack-steps.sh STEP COMPONENT SETTINGS [STAMP]: the work of one stack stage. kiln-stage
# runs it (with KILN_STAGE, KILN_STAGE_OUT, the log as stdout and stderr) only when the
# stage's key changed. SETTINGS is $builddir/stack.env; the stage's key file holds its
# inputs. This file only dispatches: the step is ninja/steps/STEP.sh, which defines
# step_STEP and sources the helpers its "# sources:" line names (ninja/steps/lib/*.sh).
# A stage's key holds the digests of this file and ninja/stack.ninja (RULE), of its
# step's file (STEP_SH) and of exactly the files that step sources (LIB_NAME), so that
# editing one step reruns only its stages, and editing a helper only the steps using it.
#
# Nothing here reads SETTINGS or the key file as shell text: `kiln-stage env SETTINGS KEY
# -- sh stack-steps.sh ...` (the stage rule in stack.ninja) reads both with kv.c and hands
# each KEY=VALUE over as the environment variable KILN_K_KEY, with the names in KILN_KEYS.
# Below, each becomes a plain shell variable (B, PY, URL, REF, ...), not exported; a
# value is only ever expanded inside double quotes by the steps, never parsed.
set -eu
# lists ($ENV, $MODULES, $PROFILES ...) are split into words, never expanded as globs
# (PROFILES at "|", the others at white space)
set -f
step=$1 c=$2
case "$step" in
''|*[!a-z0-9]*) echo "kiln: bad step name '$step'" >&2; exit 2 ;;
esac
# the stamp, for the srccheck, srcwatch and imagecheck steps (their rules pass it after
# SETTINGS)
stampf=${4:-}
for k in ${KILN_KEYS:?run by kiln-stage env (see ninja/stack.ninja)}; do
	case "$k" in
	[A-Za-z_]*) ;;
	*) echo "kiln: bad setting name '$k'" >&2; exit 2 ;;
	esac
	unset "$k"
	eval "$k=\${KILN_K_$k}"
	unset "KILN_K_$k"
done
unset KILN_KEYS k
PATH=$KBIN:$PATH
export PATH
# srcpin reads the mirror folder from its environment: a path with spaces stays whole
if [ -n "$MIRROR" ]; then SRCPIN_MIRROR=$MIRROR; export SRCPIN_MIRROR; fi
src=$B/src/$c
# the git mirrors: one per repository in --git-cache, shared by every build folder
# (srcpin locks a mirror while it fetches); an older stack.env has none: the build folder's
GITC=${GIT_CACHE:-$B/git}
# the steps' folder: a step sources its helpers as "$steps/lib/NAME.sh"
steps=${0%/*}/steps
[ -f "$steps/$step.sh" ] || { echo "kiln: no step $steps/$step.sh" >&2; exit 2; }
. "$steps/$step.sh"
# one line: the step's file defines functions only, and sh has read all of it (and this
# file) before the step runs, so an edit during a long stage cannot make the shell read
# on into changed text
"step_$step"; exit $?
