# smoke.sh: stack.smoke: the installed stack imports, and its GPU code covers every
# --arch.
# sources: lib/base.sh
. "$steps/lib/base.sh"
step_smoke () {
	for m in $IMPORTS; do
		clean -- "$PY" -c "import $m; print('$m', getattr($m, '__version__', ''), $m.__file__)" ||
			die "$PY cannot import $m"
	done
	# (a stack of CMake components alone imports nothing: their C.smoke covers them)
	if [ "$BACKEND" != cpu ] && [ "$COVER" != no ] && [ -n "$IMPORTS" ]; then
		site=$(clean -- "$PY" -c 'import torch, os; print(os.path.dirname(torch.__file__))')
		for a in $ARCH; do
			clean -- gpucheck cover --target="$a" "$site" || die "torch's GPU code does not cover $a (above)"
		done
		step_smoke_wheels
		if clean -- gpucheck --arch >/dev/null 2>&1; then clean -- gpucheck smoke --python="$PY"; fi
	fi
}

# step_smoke_wheels: every other wheel the stack built or took ($B/wheels/*.picked) that
# carries GPU code must cover every --arch: vision's, audio's, flash-attention's, AITER's
# and vLLM's extensions, whose builds can drop a target silently (vLLM's CMake keeps only
# the arches it supports); a wheel without GPU code (triton's, a pure-Python one) is
# named. A wheel that lacks one fails the stage in one line naming the wheel, the files
# in it that lack the target (gpucheck cover's verdict lines) and the target.
step_smoke_wheels () {
	set +f
	set -- "$B"/wheels/*.picked
	set -f
	for p; do
		[ -f "$p" ] || continue
		case "${p##*/}" in torch.picked) continue ;; esac
		w=$(cat "$p")
		if ! clean -- gpucheck targets "$w" | grep -q ': [0-9]* bundles*, '; then
			echo "smoke: ${w##*/}: no GPU code"
			continue
		fi
		for a in $ARCH; do
			clean -- gpucheck cover --target="$a" "$w" >"$B/wheels/.smoke.out" && { cat "$B/wheels/.smoke.out"; continue; }
			cat "$B/wheels/.smoke.out"
			f=$(sed -n 's/^ *.*\.whl!\([^ ]*\): [0-9]* of [0-9]* bundles* lacks* it.*/\1/p' "$B/wheels/.smoke.out" | tr '\n' ' ' | sed 's/ $//')
			die "${w##*/} does not cover $a${f:+ (its $f lacks $a)} (above)"
		done
	done
}

