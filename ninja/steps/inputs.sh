# inputs.sh: C.inputs: C_INPUTS, the archives a build would download, fetched and
# checked here.
# sources: lib/base.sh
. "$steps/lib/base.sh"

# step_inputs: C_INPUTS, the archives the build would download, fetched here instead (a
# stage of their own, before the build's network is cut) and checked against their
# sha256, each unpacked whole into $B/inputs/SHA256
step_inputs () {
	mkdir -p "$B/inputs" || die "cannot create $B/inputs"
	for w in $INPUTS; do
		n=${w%%=*} u=${w#*=}
		h=${u##*#sha256=} u=${u%#sha256=*}
		case "$u" in /*) u=file://$u ;; esac
		d=$B/inputs/$h
		if [ -d "$d" ]; then
			say "$n: $u is in $d"
			continue
		fi
		kiln-stage fetch "$u" --sha256="$h" -o "$d.tar" || die "$n: cannot fetch $u (its sha256 must be $h)"
		kiln-stage unpack "$d.tar" --into="$d" --sha256="$h" || die "$n: cannot unpack $u"
		rm -f "$d.tar"
		say "$n: $u unpacked into $d"
	done
}

