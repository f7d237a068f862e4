# srccheck.sh: not a stage's step: the src rule (ninja/stack.ninja) runs it before
# kiln-stage run.
# sources: lib/base.sh lib/src.sh
. "$steps/lib/base.sh"
. "$steps/lib/src.sh"

# step_srccheck, step_srcwatch: not a stage's steps: the src rule (ninja/stack.ninja) runs
# srccheck before kiln-stage run and srcwatch after it, each time ninja runs a C.src edge.
# A tag or branch pin names whatever commit upstream gives it now: srccheck asks upstream
# (srcpin fetch, which says a moved tag in one line) and, when the commit is not the one
# the stamp's ID records, removes the stamp with that line as the reason (STAMP.why, the
# stage summary's note), so that the stage checks out the new commit and its new ID reruns
# the stages under it. A fetch that fails removes the stamp too: the stage's own fetch
# then says what is wrong (a tag deleted upstream), never nothing. (Two ninja runs in one
# build folder may check at once: their files are their own, by process id.)
step_srccheck () {
	KILN_STAGE=$c.src
	st=${stampf:?srccheck STEP COMP SETTINGS STAMP}
	[ -f "$st" ] && srcmoves || return 0
	# a stamp made for other inputs (a pin bumped): kiln-stage run says why and reruns it
	kiln-stage run -n --key="$B/keys/$c.src" --stamp="$st" "$c.src" 2>/dev/null || return 0
	id=$(sed -n 's/^ID=//p' "$st" | tr -d "\"'")
	if now=$(clean -- srcpin fetch "$c" "$URL" "$REF" --cache="$GITC" 2>"$st.err.$$"); then
		why=$(sed -n 's/^srcpin: \(.*moved upstream: .*\)/\1/p' "$st.err.$$" | head -n 1)
		grep -v '^srcpin: .*moved upstream: ' "$st.err.$$" >&2 || :
		[ "$now" != "${id##* }" ] || { rm -f "$st.err.$$"; return 0; }
		why=${why:-"$REF of $URL is now $now, not ${id##* }"}
	else
		why="srcpin could not fetch $REF again: $(tail -n 1 "$st.err.$$")"
	fi
	rm -f "$st.err.$$"
	printf '%s\n' "$why" >"$st.why"
	rm -f "$st"
}
