# pick.sh: C.pick: the built wheel (or the pin's) that fits the target Python
# (wheelpick).
# sources: lib/base.sh
. "$steps/lib/base.sh"
step_pick () {
	if [ -n "${WHEEL:-}" ]; then from=$WHEEL; else from=$B/wheels/$c; fi
	w=$(clean -- wheelpick --python="$PY" --name "$DIST" "$from") ||
		die "no wheel in $from fits $PY (wheelpick -v --python=$PY $from says why)"
	mkdir -p "$B/wheels"
	printf '%s\n' "$w" >"$B/wheels/$c.picked.tmp"
	mv -f "$B/wheels/$c.picked.tmp" "$B/wheels/$c.picked"
	echo "picked $w"
}

