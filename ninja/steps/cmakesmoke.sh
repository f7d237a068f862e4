# cmakesmoke.sh: C.smoke for C_BUILD=cmake: C_CHECK, then gpucheck cover of the
# prefix's libraries.
# sources: lib/base.sh
. "$steps/lib/base.sh"
step_cmakesmoke () {
	# C_CHECK, the project's own check (ggml: test-backend-ops), from the prefix's bin/
	# with its lib/ on the loader's path; then, for AMD targets, gpucheck cover of the
	# prefix's libraries for every --arch (stack_COVER=no skips it)
	pfx=$B/prefix/$c
	if [ -n "$CHECK" ]; then
		set -- $CHECK
		[ -x "$pfx/bin/$1" ] || die "${c}_CHECK=$CHECK: $pfx/bin/$1 is not there"
		prog=$pfx/bin/$1
		shift
		set -- -- "$prog" "$@"
		# C_ENV reaches the check too (GGML_VK_VISIBLE_DEVICES=0 lets ggml use lavapipe)
		for e in $ENV; do set -- --set "$e" "$@"; done
		clean --set LD_LIBRARY_PATH="$pfx/lib" --prepend-path "$pfx/bin" "$@" ||
			die "${c}_CHECK failed: $CHECK (above)"
	fi
	[ "$BACKEND" = gfx ] && [ "$COVER" != no ] || return 0
	for a in $ARCH; do
		clean -- gpucheck cover --target="$a" "$pfx/lib" || die "$c's GPU code in $pfx/lib does not cover $a (above)"
	done
}

