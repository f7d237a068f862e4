# cmakeinstall.sh: C.install for C_BUILD=cmake: the tarball C.build made, unpacked into
# $B/prefix/C.
# sources: lib/base.sh
. "$steps/lib/base.sh"
step_cmakeinstall () {
	# the tarball C.build made, unpacked into $B/prefix/C (the prefix other stages
	# consume: CMAKE_PREFIX_PATH, pkg-config --define-prefix, $ORIGIN RPATHs), whole:
	# unpacked beside it and renamed into place; then C's build-info record
	set +f
	set -- "$B/cmake/$c"/*.tar.gz
	set -f
	[ $# = 1 ] && [ -f "$1" ] || die "$B/cmake/$c holds no tarball (or several); run ninja $c.build"
	pfx=$B/prefix/$c
	rm -rf "$pfx.new" "$pfx.old" && mkdir -p "$pfx.new" && tar -xzf "$1" -C "$pfx.new" || die "cannot unpack $1 into $p.new"
	[ ! -e "$pfx" ] || mv "$pfx" "$pfx.old" || die "cannot move the old $pfx aside"
	mv "$pfx.new" "$pfx" && rm -rf "$pfx.old" || die "cannot rename $pfx.new to $pfx"
	mkdir -p "$B/info"
	{
		echo "COMPONENT=$c"
		[ -d "$src" ] && clean -- srcpin state "$src" 2>/dev/null | grep -E '^(URL|COMMIT|SERIES_DIGEST)='
		[ -f "$B/src/$c.fetched" ] && echo "FETCHED_FROM=$(cat "$B/src/$c.fetched")"
		n=${1##*/}
		echo "VERSION=$(printf '%s' "${n#"$c"-}" | sed 's/\.tar\.gz$//')"
		echo "TARBALL=$n"
		echo "TARBALL_SHA256=$(sha256sum "$1" | cut -c1-64)"
		echo "PREFIX=$pfx"
		echo "ARCH=$ARCH_ARG"
	} | kiln-stage kv -o "$B/info/$c.info"
	kiln-stage info -o "$B/build-info.json" "$B/info"
	echo "installed ${1##*/} into $pfx"
}

