# fat.sh: stack.fat: fatwheel bundles each built wheel's libraries.
# sources: lib/base.sh
. "$steps/lib/base.sh"
step_fat () {
	for k in $COMPONENTS; do
		w=$(cat "$B/wheels/$k.picked")
		set -- -q
		[ "$BACKEND" = gfx ] && set -- "$@" --rocm="$ROCM_PATH" --arch="$ARCH_ARG"
		[ "$k" = torch ] && set -- "$@" --layout=pkg:torch/lib
		clean -- fatwheel "$@" "$w" -w "$KILN_STAGE_OUT" || die "fatwheel could not bundle $w"
	done
}

