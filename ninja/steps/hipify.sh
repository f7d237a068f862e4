# hipify.sh: C.hipify: hipify-wrap on the patched tree.
# sources: lib/base.sh
. "$steps/lib/base.sh"
step_hipify () {
	# the patch stage left the tree pristine + series; --reset lets hipify-wrap put it
	# back the same way (srcpin checkout, then the series) before it hipifies again
	set -- --project="$PROJECT" --python="$PY" --reset --log "$B/logs/$c.hipify-run.log"
	[ "$SERIES" != none ] && set -- "$@" --series="$SERIES_FILE"
	if [ "$PROJECT" = generic ]; then
		[ -n "$CMD" ] || die "${c}_HIPIFY=generic needs ${c}_HIPIFY_CMD, the command that hipifies the tree"
		clean -- hipify-wrap "$@" "$src${SUBDIR:+/$SUBDIR}" -- sh -c "$CMD"
	else
		clean -- hipify-wrap "$@" "$src${SUBDIR:+/$SUBDIR}"
	fi
}
