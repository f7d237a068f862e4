# patch.sh: C.patch: the pinned commit, pristine, then the patch series.
# sources: lib/base.sh lib/src.sh
. "$steps/lib/base.sh"
. "$steps/lib/src.sh"
step_patch () {
	# back to the pinned commit, pristine, then the series: an edited patch is never
	# applied over its older self. A pristine tree may still carry an old series (its
	# SERIES_DIGEST): when this stage wants none, that tree is checked out afresh too
	# (srcpin patch itself starts afresh when it is given another series). A tree the
	# hipify stage hipified gives hipify-wrap's files back first (--undo: into its state
	# folder in .git, where checkout --force does not reach), so that stage puts back each
	# output whose bytes it makes again, mtime kept: compilers and caches see it unchanged
	if [ -f "$src/.git/kiln-hipify/manifest" ]; then
		clean -- hipify-wrap --undo "$src" || die "hipify-wrap --undo $src failed (above)"
	fi
	st=$(clean -- srcpin state "$src") || die "$src is not a srcpin checkout; run ninja $c.src"
	commit=$(printf '%s\n' "$st" | sed -n 's/^COMMIT=//p')
	[ -n "$commit" ] || die "$src is not a srcpin checkout; run ninja $c.src"
	have=$(printf '%s\n' "$st" | sed -n 's/^SERIES_DIGEST=//p')
	if ! printf '%s\n' "$st" | grep -qx 'PRISTINE=yes' || { [ "$SERIES" = none ] && [ -n "$have" ]; }; then
		clean -- srcpin checkout "$c" --commit "$commit" --into "$src" $(submodules) --force --cache="$GITC"
	fi
	if [ "$SERIES" != none ]; then
		clean -- srcpin patch "$src" "$SERIES_FILE" 2>"$B/src/$c.patch.err" || {
			cat "$B/src/$c.patch.err"
			die "$(sed -n 's/^srcpin: //p' "$B/src/$c.patch.err" | tail -n 1) [release $RELEASE; the series is made for ${RANGE:-every release}]: upstream may already carry this patch; drop it from $SERIES_FILE or move it to the folder of the releases it is for"
		}
	fi
	clean -- srcpin state "$src" | grep -E '^(URL|COMMIT|SERIES_DIGEST)=' | tr '\n' ' ' >"$B/src/$c.id"
	echo >>"$B/src/$c.id"
}

