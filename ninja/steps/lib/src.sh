# lib/src.sh: a component's source: srcpin's fetch and checkout of the pin (srcfetch),
# where its objects come from (srcfrom), whether its ref may move (srcmoves), and the
# --submodules option (submodules). Sourced by the src, srctorch, srccheck, srcwatch and
# patch steps.

# submodules: srcpin's --submodules for the src and patch steps, unless C_SUBMODULES=no
# (the key's SUBMODULES line): then the submodule folders stay empty (flash_attn's
# cutlass, composable_kernel and third_party/aiter, which its Triton AMD build does not
# read; AITER comes as the aiter component)
submodules () { [ "${SUBMODULES:-yes}" = no ] || echo --submodules; }
# srcfetch: fetch the pin (URL, REF) and check out its commit into $src ($commit); the
# src step, and srctorch's after it resolved REF
srcfetch () {
	# debsrc:PACKAGE/VERSION: a Debian source package made into a local git mirror
	# (ninja/debsrc.sh), unless --mirror already holds this component
	url=$URL
	case "$URL" in
	debsrc:*)
		if [ -z "$MIRROR" ] || [ ! -d "$MIRROR/$c.git" ]; then
			pv=${URL#debsrc:}
			sh "$KILN_SRC/ninja/debsrc.sh" "${pv%%/*}" "${pv#*/}" "$B/debsrc/$c.git" >/dev/null ||
				die "could not make a git mirror of Debian's source package ${pv%%/*} ${pv#*/} (above)"
			url=$B/debsrc/$c.git
		fi ;;
	esac
	# fetch and checkout in one srcpin run (one libgit2 start); a commit other than the
	# pin's SHA stops it (exit 1) before the tree is touched
	rc=0
	commit=$(clean -- srcpin checkout "$c" "$url" "$REF" ${SHA:+"--expect=$SHA"} --into "$src" \
		$(submodules) --force --cache="$GITC") || rc=$?
	if [ "$rc" = 1 ] && [ -n "$SHA" ]; then
		commit=$(clean -- srcpin fetch "$c" "$url" "$REF" --offline --cache="$GITC")
		die "$REF of $URL is $commit, but the pin expects $SHA (update ${c}_SHA, or pin the commit)"
	fi
	[ "$rc" = 0 ] || die "srcpin could not fetch $REF from $url"
	printf '%s %s\n' "$URL" "$commit" >"$B/src/$c.id"
	# where the objects came from; build-info records it beside the URL
	srcfrom "$url"
	printf '%s\n' "$from" >"$B/src/$c.fetched"
	echo "fetched $commit from $from"
}

# srcfrom URL: sets from to where srcpin takes C's objects from: the --mirror copy it uses
# for the pin's URL (the order of srcpin(1)), or URL itself
srcfrom () {
	from=$1
	[ -n "$MIRROR" ] || return 0
	u=${URL#*://}; u=${u%/}; u=${u%.git}
	for d in "$MIRROR/$c.git" "$MIRROR/$c" "$MIRROR/$u.git" "$MIRROR/$u" "$MIRROR/${u#*/}.git" \
		"$MIRROR/${u#*/}" "$MIRROR/${u##*/}.git" "$MIRROR/${u##*/}"; do
		[ -e "$d" ] && { from=$d; return 0; }
	done
}

# srcmoves: whether the pin names a ref upstream may move (a tag or a branch): not a full
# commit, not one fixed by C_SHA (a moved tag then fails the pin's check), not debsrc:
srcmoves () {
	case "$URL:$REF" in
	debsrc:*|*:@torch) return 1 ;;
	esac
	[ -z "$SHA" ] && ! printf '%s' "$REF" | grep -qx '[0-9a-f]\{40\}'
}
