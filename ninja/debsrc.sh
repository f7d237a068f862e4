#!/bin/sh
# debsrc.sh: local git mirrors of upstream releases, made from Debian's source packages.
#
#   sh ninja/debsrc.sh [OPTION]... PACKAGE VERSION GITDIR
#   sh ninja/debsrc.sh [OPTION]... SUITE PACKAGE/VERSION GITDIR
#       Gets PACKAGE's orig tarball and .dsc, checks them, and makes GITDIR a bare git
#       repository holding the tarball's tree as one commit, tagged vVERSION (VERSION
#       without Debian's +dfsg-style suffix). Prints the commit. The second form is the
#       first with --suite=SUITE (a pin debsrc:SUITE/PACKAGE/VERSION split at its first
#       slash, as the src stage does). A full Debian VERSION (2.6.0+dfsg-7, with the
#       revision) adds that revision's debian/ folder (its .debian.tar.*, checked the same
#       way) to the tree, its patches unapplied: Debian's quilt series, for srcpin.
#   sh ninja/debsrc.sh [OPTION]... --pins=FILE DIR
#       The same for every component of the pin file whose URL is
#       debsrc:[SUITE/]PACKAGE/VERSION: DIR/COMPONENT.git, the layout srcpin's --mirror=DIR
#       reads. A C_SHA in the file must be the commit made.
#
# Without a suite the system's apt finds the package (apt-get source --download-only,
# enabling deb-src lines when the system has none; root or sudo) and the tarball is
# checked against the .dsc. With --suite=SUITE (trixie, bookworm, ...) a private apt
# configuration in the cache reads that suite's Sources index from --archive (default
# $KILN_DEBIAN_MIRROR, else http://deb.debian.org/debian), its Release file checked with
# --keyring (default Debian's archive keyring; --keyring=none trusts an unsigned archive,
# such as a local one), on any Debian-like system and without root; the tarball and .dsc
# are checked against the index's SHA-256 (and the tarball against the .dsc). Downloads
# go to CACHE/.partial first: an interrupted one is resumed by the next run, and only
# checked files reach the cache and the mirror.
#
# The commit is a function of the tarball alone: fixed author and committer, the date of
# the tarball's newest file, a fixed message. So the same tarball gives the same commit on
# every machine, and a pin file can name it (C_SHA). An existing GITDIR whose tag is that
# commit is left alone (a second run costs milliseconds); any other GITDIR is an error.
# Tarballs are kept in --cache (default ${XDG_CACHE_HOME:-$HOME/.cache}/kiln/debsrc);
# folders in KILN_DEBSRC_PATH (colon-separated) are looked in first for PACKAGE_VERSION.orig.*
# and PACKAGE_*.dsc. Exit 0 ok, 1 a download or check failed, 2 usage.
set -u
prog=debsrc.sh
die () { printf '%s: %s\n' "$prog" "$*" >&2; exit 1; }
usage () {
	printf 'usage: %s [OPTION]... [SUITE] PACKAGE VERSION GITDIR\n       %s [OPTION]... --pins=FILE DIR\noptions: --cache=DIR --suite=SUITE --archive=URL --keyring=FILE|none\n' "$prog" "$prog" >&2
	exit 2
}

cache=${XDG_CACHE_HOME:-$HOME/.cache}/kiln/debsrc
pins= suite= archive=${KILN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
while [ $# -gt 0 ]; do
	case "$1" in
	--cache=*) cache=${1#*=} ;;
	--pins=*) pins=${1#*=} ;;
	--suite=*) suite=${1#*=} ;;
	--archive=*) archive=${1#*=} ;;
	--keyring=*) keyring=${1#*=} ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	-*) printf '%s: unknown option %s\n' "$prog" "$1" >&2; usage ;;
	*) break ;;
	esac
	shift
done
command -v git >/dev/null 2>&1 || die "needs git (apt-get install git)"

# sudo when not root
asroot () { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# enable deb-src for the system's Debian sources, once: a deb822 copy of each
# Types: deb file (or the deb lines of sources.list) with Types: deb-src
enable_debsrc () {
	out=/etc/apt/sources.list.d/kiln-deb-src.sources
	[ -f "$out" ] && return 0
	tmp=$(mktemp) || exit 1
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed -n '/^Types:.*deb-src/q1' "$f" || continue
		sed 's/^Types:.*/Types: deb-src/' "$f" >>"$tmp"; echo >>"$tmp"
	done
	[ -f /etc/apt/sources.list ] && grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' >"$tmp.list"
	if [ -s "$tmp" ]; then
		echo "$prog: enabling deb-src ($out)" >&2
		asroot cp "$tmp" "$out" && asroot chmod 644 "$out" || die "cannot write $out"
	elif [ -s "$tmp.list" ]; then
		out=/etc/apt/sources.list.d/kiln-deb-src.list
		echo "$prog: enabling deb-src ($out)" >&2
		asroot cp "$tmp.list" "$out" && asroot chmod 644 "$out" || die "cannot write $out"
	else
		rm -f "$tmp" "$tmp.list"
		die "no Debian sources to copy into a deb-src entry (add deb-src lines for your mirror)"
	fi
	rm -f "$tmp" "$tmp.list"
	asroot apt-get update -qq >&2 || die "apt-get update failed after adding $out"
}

# the orig tarball and .dsc of PACKAGE VERSION in a folder: sets orig and dsc
findin () {
	orig= dsc=
	for f in "$1/$2_$3".orig.tar.*; do [ -f "$f" ] && case "$f" in *.asc) ;; *) orig=$f ;; esac; done
	for f in "$1/$2_$3"-*.dsc "$1/$2_$3".dsc; do [ -f "$f" ] && dsc=$f; done
	[ -n "$orig" ] && [ -n "$dsc" ]
}

# fetch PACKAGE VERSION: sets orig and dsc, downloading into the cache when needed
fetch () {
	if [ -n "$suite" ]; then suitefetch "$1" "$2"; return; fi
	oldifs=$IFS; IFS=:
	for d in ${KILN_DEBSRC_PATH:-} "$cache"; do
		IFS=$oldifs
		[ -n "$d" ] && findin "$d" "$1" "$2" && return 0
	done
	IFS=$oldifs
	command -v apt-get >/dev/null 2>&1 || die "$1 $2: no orig tarball in $cache and no apt-get to download it"
	mkdir -p "$cache" || die "cannot create $cache"
	if ! apt-cache showsrc "$1" 2>/dev/null | grep -q '^Package:'; then
		enable_debsrc
	fi
	v=$(apt-cache showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' | while read -r x; do
		case "$x" in "$2"-*|"$2") echo "$x"; break ;; esac; done)
	[ -n "$v" ] || die "$1: Debian's archive has no source version $2 (apt-cache showsrc $1 lists: $(apt-cache showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' | tr '\n' ' '))"
	echo "$prog: apt-get source --download-only $1=$v" >&2
	# the Debian part (debian.tar.*) is not needed; a mirror that lacks it still
	# gives the orig tarball and .dsc, which is what the check below needs
	(cd "$cache" && apt-get source -qq --download-only "$1=$v" >&2) ||
		echo "$prog: apt-get source reported errors; using what it downloaded" >&2
	findin "$cache" "$1" "$2" || die "$1 $2: apt-get source did not download the orig tarball and .dsc into $cache"
}

# --- a suite through a private apt configuration (--suite) ---------------------------------
aptdir=
# suiteapt: the suite's apt folder in the cache (sources.list, lists, partial downloads)
suiteapt () {
	case "$suite" in ''|*[!A-Za-z0-9._-]*) die "--suite=$suite: expected a suite name such as trixie" ;; esac
	case "$archive" in http://*|https://*|file:/*) ;; *) die "--archive=$archive: expected an http://, https:// or file:/ URL" ;; esac
	case "$archive$keyring" in *[[:space:]]*|*]*) die "--archive and --keyring cannot hold spaces or ']' (apt's sources.list)" ;; esac
	[ "$keyring" = none ] || [ -f "$keyring" ] ||
		die "--keyring=$keyring: no such file (apt-get install debian-archive-keyring, or name the archive's keyring)"
	command -v apt-get >/dev/null 2>&1 || die "--suite=$suite needs apt-get (Debian's apt)"
	aptdir=$cache/apt/$suite-$(printf '%s %s %s\n' "$archive" "$suite" "$keyring" | sha256sum | cut -c1-12)
	mkdir -p "$aptdir/lists/partial" "$aptdir/archives/partial" "$aptdir/parts" "$cache/.partial" ||
		die "cannot create $aptdir"
	if [ "$keyring" = none ]; then o='trusted=yes'; else o="signed-by=$keyring"; fi
	printf 'deb-src [%s] %s %s main\n' "$o" "${archive%/}" "$suite" >"$aptdir/sources.list.tmp" &&
		mv -f "$aptdir/sources.list.tmp" "$aptdir/sources.list" || die "cannot write $aptdir/sources.list"
}
# papt apt-get|apt-cache ARG...: apt with the suite's sources and state only (the system's
# apt.conf.d, a proxy say, still applies); root downloads as root (the cache is not _apt's)
papt () {
	a=$1; shift
	set -- -o "Dir::Etc::SourceList=$aptdir/sources.list" -o "Dir::Etc::SourceParts=$aptdir/parts" \
		-o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir" -o "Dir::Cache::pkgcache=" \
		-o "Dir::Cache::srcpkgcache=" -o "Acquire::Languages=none" "$@"
	[ "$(id -u)" = 0 ] && set -- -o "APT::Sandbox::User=root" "$@"
	"$a" "$@"
}
# firsterr LOG: apt's first error line, for a one-line message
firsterr () { sed -n 's/^E: //p' "$1" | head -n 1 | cut -c1-300; }
# srcrec PACKAGE VERSION: the index's record of PACKAGE whose version is VERSION or VERSION-*
srcrec () {
	papt apt-cache showsrc "$1" 2>/dev/null | awk -v p="$1" -v v="$2" 'BEGIN { RS = "" }
		index("\n" $0 "\n", "\nPackage: " p "\n") {
			x = $0; sub(/^(.*\n)?Version: /, "", x); sub(/\n.*/, "", x)
			if (x == v || index(x, v "-") == 1) { print; exit }
		}'
}
# idxsum NAME: the SHA-256 the record ($rec) gives for the file NAME
idxsum () {
	printf '%s\n' "$rec" | sed -n '/^Checksums-Sha256:/,/^[^ ]/p' | awk -v n="$1" '$3 == n { print $1 }'
}
# checkidx FILE [HINT]: FILE's SHA-256 is the index's
checkidx () {
	want=$(idxsum "${1##*/}")
	[ -n "$want" ] || die "$suite's Sources index lists no ${1##*/} for $pkgv"
	got=$(sha256sum "$1" | cut -c1-64)
	[ "$want" = "$got" ] || die "$1: SHA-256 $got, but $suite's Sources index ($archive) says $want${2:-}"
}
# suitefetch PACKAGE VERSION: sets orig, checked against the suite's index (whose Release
# file apt checked with the keyring: the .dsc adds nothing, and mirrors may lack it). The
# download (apt-helper, through the same apt) goes to $cache/.partial, where the next run
# resumes an interrupted one; only a checked tarball is moved into the cache.
suitefetch () {
	suiteapt
	pkgv="$1 $2"
	rec=$(srcrec "$1" "$2")
	if [ -z "$rec" ]; then
		# a refreshed index; apt's complaint (an error, or a warning such as a bad
		# signature, after which apt keeps the old index) is the answer when the package
		# is still not found
		papt apt-get -q update >"$aptdir/update.log" 2>&1
		urc=$?
		rec=$(srcrec "$1" "$2")
		if [ -z "$rec" ] && { [ "$urc" != 0 ] || grep -q '^[EW]: ' "$aptdir/update.log"; }; then
			die "$suite ($archive): apt-get update: $(sed -n 's/^[EW]: //p' "$aptdir/update.log" | head -n 1 | cut -c1-300)"
		fi
	fi
	if [ -z "$rec" ]; then
		have=$(papt apt-cache showsrc "$1" 2>/dev/null | awk -v p="$1" 'BEGIN { RS = "" }
			index("\n" $0 "\n", "\nPackage: " p "\n") { x = $0; sub(/^(.*\n)?Version: /, "", x); sub(/\n.*/, "", x); printf "%s ", x }')
		[ -n "$have" ] || die "$1: $suite ($archive) has no source package $1"
		die "$1: $suite has no source version $2 (it has ${have% })"
	fi
	n=$(printf '%s\n' "$rec" | sed -n '/^Checksums-Sha256:/,/^[^ ]/p' |
		awk -v n="$1_$2.orig.tar." 'index($3, n) == 1 && $3 !~ /\.asc$/ { print $3; exit }')
	[ -n "$n" ] || die "$1 $2: $suite's Sources index lists no orig tarball $1_$2.orig.tar.*"
	dsc=
	idxget "$1" "$2" "$n"
	orig=$file
}

# idxget PACKAGE VERSION NAME: sets file, the file NAME of the index's record ($rec) found
# in KILN_DEBSRC_PATH or the cache, or downloaded into the cache, checked against the index
idxget () {
	n=$3
	dir=$(printf '%s\n' "$rec" | sed -n 's/^Directory: //p')
	file=
	oldifs=$IFS; IFS=:
	for d in ${KILN_DEBSRC_PATH:-} "$cache"; do
		IFS=$oldifs
		if [ -n "$d" ] && [ -f "$d/$n" ]; then
			file=$d/$n
			checkidx "$file" " (remove it to download again)"
			return 0
		fi
	done
	IFS=$oldifs
	want=$(idxsum "$n")
	p=$cache/.partial
	[ -f "$p/$n" ] && echo "$prog: $suite: resuming $n ($(wc -c <"$p/$n") bytes there)" >&2 ||
		echo "$prog: $suite: downloading $n" >&2
	if ! papt /usr/lib/apt/apt-helper -q download-file "${archive%/}/$dir/$n" "$p/$n" "SHA256:$want" >"$p/$n.log" 2>&1; then
		if grep -q 'Hash Sum mismatch' "$p/$n.log"; then
			# a whole file that is not the index's: nothing to resume
			rm -f "$p/$n" "$p/$n".FAILED "$p/$n.log"
			die "${archive%/}/$dir/$n is not the tarball $suite's Sources index names (its SHA-256 is not $want); the archive or a proxy serves another file"
		fi
		die "$1 $2: the download of ${archive%/}/$dir/$n failed ($(firsterr "$p/$n.log")); run again to resume it"
	fi
	checkidx "$p/$n"
	mv -f "$p/$n" "$cache/$n" || die "cannot move $p/$n into $cache"
	rm -f "$p/$n.log"
	file=$cache/$n
}

# debfetch PACKAGE VERSION: sets debtar, the Debian part (debian.tar.*) of a full Debian
# version (2.6.0+dfsg-7): from the suite's index (checked there), or beside its .dsc in
# KILN_DEBSRC_PATH or the cache (checked against the .dsc)
debfetch () {
	if [ -n "$suite" ]; then
		rec=$(srcrec "$1" "$2")
		printf '%s\n' "$rec" | grep -qx "Version: $2" || die "$1: $suite has no source version $2"
		n=$(printf '%s\n' "$rec" | sed -n '/^Checksums-Sha256:/,/^[^ ]/p' |
			awk -v n="$1_$2.debian.tar." 'index($3, n) == 1 { print $3; exit }')
		[ -n "$n" ] || die "$1 $2: $suite's Sources index lists no $1_$2.debian.tar.*"
		idxget "$1" "$2" "$n"
		debtar=$file
		return 0
	fi
	debtar= dsc=
	oldifs=$IFS; IFS=:
	for d in ${KILN_DEBSRC_PATH:-} "$cache"; do
		IFS=$oldifs
		[ -n "$d" ] && [ -f "$d/$1_$2.dsc" ] || continue
		dsc=$d/$1_$2.dsc
		for f in "$d/$1_$2".debian.tar.*; do [ -f "$f" ] && debtar=$f; done
		break
	done
	IFS=$oldifs
	[ -n "$debtar" ] || die "$1 $2: no $1_$2.dsc and $1_$2.debian.tar.* in ${KILN_DEBSRC_PATH:+$KILN_DEBSRC_PATH or }$cache (or use --suite=SUITE)"
	want=$(sed -n '/^Checksums-Sha256:/,/^[^ ]/p' "$dsc" | awk -v n="${debtar##*/}" '$3 == n { print $1 }')
	[ "$want" = "$(sha256sum "$debtar" | cut -c1-64)" ] || die "$debtar: its SHA-256 is not the one $dsc gives"
}

# check the orig tarball's SHA-256 against the .dsc's Checksums-Sha256
verify () {
	n=${orig##*/}
	want=$(sed -n '/^Checksums-Sha256:/,/^[^ ]/p' "$dsc" | awk -v n="$n" '$3 == n { print $1 }')
	[ -n "$want" ] || die "$dsc: no SHA-256 for $n"
	got=$(sha256sum "$orig" | cut -c1-64)
	[ "$want" = "$got" ] || die "$orig: SHA-256 $got, but $dsc says $want (remove it to download again)"
}

# mirror PACKAGE VERSION GITDIR: make or check GITDIR; prints the commit
mirror () {
	pkg=$1 ver=$2 gd=$3
	# a full Debian version (2.6.0+dfsg-7): the orig tarball of its upstream part, and the
	# Debian part (debian/, its patches unapplied) in the tree too
	up=$ver deb=
	case "$ver" in *-*) up=${ver%-*} deb=$ver ;; esac
	tag=v${up%%[+~]*}
	if [ -d "$gd" ]; then
		have=$(git --git-dir="$gd" rev-parse -q --verify "refs/tags/$tag^{commit}" 2>/dev/null) ||
			die "$gd exists but has no tag $tag (remove it, or name another folder)"
		what=$(git --git-dir="$gd" config kiln.debsrc 2>/dev/null)
		[ "$what" = "$pkg $ver" ] || die "$gd exists but was not made from $pkg $ver by $prog (remove it)"
		echo "$have"
		return 0
	fi
	# what an interrupted run left (its process gone) is removed; the mirror itself is only
	# ever moved into place whole
	for x in "$gd".tmp.*; do
		[ -d "$x" ] && ! kill -0 "${x##*.}" 2>/dev/null && rm -rf "$x"
	done
	fetch "$pkg" "$up"
	[ -z "$deb" ] || debfetch "$pkg" "$deb"
	if [ -n "$suite" ]; then got=$(sha256sum "$orig" | cut -c1-64); else verify; fi
	tmp=$gd.tmp.$$
	rm -rf "$tmp"
	trap 'rm -rf "$tmp"' EXIT INT TERM
	mkdir -p "$tmp/tree" || die "cannot create $tmp"
	tar -xf "$orig" -C "$tmp/tree" --strip-components=1 --no-same-owner ||
		die "$orig: tar cannot extract it"
	if [ -n "$deb" ]; then
		rm -rf "$tmp/tree/debian" && tar -xf "$debtar" -C "$tmp/tree" --no-same-owner ||
			die "$debtar: tar cannot extract it"
		got="$got, ${debtar##*/} SHA-256 $(sha256sum "$debtar" | cut -c1-64)"
	fi
	# the commit's date: the tarball's newest file (deterministic, and near the release)
	date=$(find "$tmp/tree" -type f -printf '%T@\n' | sort -n | tail -n 1 | cut -d. -f1)
	[ -n "$date" ] || die "$orig: no files in it"
	g () {
		GIT_DIR="$tmp/repo.git" GIT_WORK_TREE="$tmp/tree" GIT_CONFIG_NOSYSTEM=1 HOME="$tmp" \
		GIT_AUTHOR_NAME=kiln-debsrc GIT_AUTHOR_EMAIL=kiln-debsrc@invalid \
		GIT_COMMITTER_NAME=kiln-debsrc GIT_COMMITTER_EMAIL=kiln-debsrc@invalid \
		GIT_AUTHOR_DATE="@$date +0000" GIT_COMMITTER_DATE="@$date +0000" git "$@"
	}
	git init -q --bare "$tmp/repo.git" >/dev/null || die "git init failed in $tmp"
	g config core.autocrlf false
	g config core.fileMode true
	g config core.symlinks true
	# -f: the tarball's files are the release, even those its .gitignore names
	g add -A -f . || die "git add failed in $tmp"
	tree=$(g write-tree) || die "git write-tree failed"
	commit=$(printf '%s %s\n\nThe upstream tree of Debian'"'"'s %s (SHA-256 %s), made by kiln'"'"'s debsrc.sh.\n' \
		"$pkg" "$ver" "${orig##*/}" "$got" | g commit-tree "$tree") || die "git commit-tree failed"
	g update-ref "refs/heads/main" "$commit"
	g symbolic-ref HEAD refs/heads/main
	g tag "$tag" "$commit"
	g config kiln.debsrc "$pkg $ver"
	g gc -q --prune=now >&2 2>/dev/null || true
	rm -f "$tmp/repo.git/index"
	mkdir -p "$(dirname "$gd")"
	mv "$tmp/repo.git" "$gd" || die "cannot move the mirror into $gd"
	rm -rf "$tmp"
	trap - EXIT INT TERM
	echo "$commit"
}

if [ -n "$pins" ]; then
	[ $# = 1 ] || usage
	[ -f "$pins" ] || die "$pins: no such file"
	dir=$1
	n=0
	dsuite=$suite
	# C_URL=debsrc:[SUITE/]PACKAGE/VERSION lines (quotes allowed); the file is read, never run
	for l in $(sed -n "s/^[ 	]*\([a-z_]*\)_URL=[\"']\{0,1\}debsrc:\([^\"' 	#]*\).*/\1=\2/p" "$pins"); do
		c=${l%%=*} pv=${l#*=}
		suite=$dsuite
		case "$pv" in */*/*) suite=${pv%%/*} pv=${pv#*/} ;; esac
		pkg=${pv%%/*} ver=${pv#*/}
		[ -n "$pkg" ] && [ -n "$ver" ] && [ "$pkg" != "$pv" ] ||
			die "$pins: ${c}_URL=debsrc:${l#*=}: expected debsrc:[SUITE/]PACKAGE/VERSION"
		sha=$(mirror "$pkg" "$ver" "$dir/$c.git") || exit 1
		want=$(sed -n "s/^[ 	]*${c}_SHA=[\"']\{0,1\}\([0-9a-f]*\).*/\1/p" "$pins" | tail -n 1)
		case "$sha" in
		"$want"*) ;;
		*) die "$pins: ${c}_SHA=$want, but $pkg $ver makes commit $sha (is the tarball another one?)" ;;
		esac
		echo "$c $sha $dir/$c.git"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || die "$pins: no C_URL=debsrc:[SUITE/]PACKAGE/VERSION pins"
	exit 0
fi
[ $# = 3 ] || usage
# SUITE PACKAGE/VERSION GITDIR: a package name and a Debian version never hold a slash
case "$2" in
*/*/*) usage ;;
?*/?*) suite=$1; set -- "${2%%/*}" "${2#*/}" "$3" ;;
esac
mirror "$1" "$2" "$3"
