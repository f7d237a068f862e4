#!/bin/sh
# deps: env/deps/ names every package the tests need, so that `./configure --install-deps`
# on a fresh machine is enough for `ninja check`. Every command a test asks for with
# `need` (tests/, tools/*/tests/), other than kiln's own tools, is checked here against
# dpkg: the package that owns it must be in env/deps/debian-*.txt, pulled in by one that
# is (Depends, Pre-Depends), or Essential. Every distro's list names make and fincore's
# package, the two that a minimal image lacks and that this check first found missing.
. "$KILN_SRC/tests/lib.sh"
command -v dpkg-query >/dev/null 2>&1 ||
	optional non-debian "the package check reads dpkg's database; this host has none"
need apt-cache

# the commands the tests need (kiln's own tools come from the build)
for f in "$KILN_SRC"/tests/*.sh "$KILN_SRC"/tests/regress/*.sh "$KILN_SRC"/tests/regress/*.inc \
	"$KILN_SRC"/tools/*/tests/*.sh "$KILN_SRC"/tools/*/tests/*.inc; do
	[ -f "$f" ] && [ "${f##*/}" != lib.sh ] && sed -n 's/^[[:space:]]*need \([^#;|&]*\).*/\1/p' "$f"
done | tr -s ' \t' '\n\n' | sed '/^$/d' | sort -u >"$T/cmds"
check "the tests name commands with need" test "$(lines "$T/cmds")" -ge 30

# the packages env/deps/debian-*.txt installs, and everything they depend on
sed 's/#.*//' "$KILN_SRC"/env/deps/debian-build.txt "$KILN_SRC"/env/deps/debian-test.txt |
	tr -s ' \t' '\n\n' | sed '/^$/d' | sort -u >"$T/listed"
xargs apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
	--no-replaces --no-enhances <"$T/listed" 2>/dev/null | sed -n 's/^\([^ <][^ :]*\).*/\1/p' |
	sort -u >"$T/closure"
check "apt-cache resolves the lists' dependencies" test "$(lines "$T/closure")" -gt "$(lines "$T/listed")"

# owner CMD: the Debian package that owns the command: the one first on PATH, else the
# system's (/usr/bin, /usr/sbin: a pyenv shim may come first); usrmerge: dpkg may know
# /bin/X for /usr/bin/X
owner () {
	for p in "$(command -v "$1")" "/usr/bin/$1" "/usr/sbin/$1"; do
		case "$p" in /*) [ -e "$p" ] || continue ;; *) continue ;; esac
		for q in "$p" "$(readlink -f "$p")" "${p#/usr}" "$(readlink -f "$p" | sed 's|^/usr||')"; do
			o=$(dpkg-query -S "$q" 2>/dev/null | sed -n '1s/^\([^:,]*\).*: .*/\1/p')
			[ -n "$o" ] && { echo "$o"; return 0; }
		done
	done
	return 1
}

nown=0
while IFS= read -r c; do
	[ -d "$KILN_SRC/tools/$c" ] && continue
	if ! pkg=$(owner "$c"); then
		notok "'need $c': no installed package owns it"
		continue
	fi
	nown=$((nown + 1))
	if grep -qx "$pkg" "$T/closure" || grep -qx "$pkg" "$T/listed"; then
		ok "need $c: $pkg is installed by env/deps/debian-*.txt"
	elif [ "$(dpkg-query -W -f='${Essential}' "$pkg" 2>/dev/null)" = yes ]; then
		ok "need $c: $pkg is Essential"
	else
		notok "need $c: its package $pkg is in no env/deps/debian-*.txt and is not Essential"
	fi
done <"$T/cmds"
check "commands were checked against their packages" test "$nown" -ge 20

# the two a minimal image lacks, which the Debian lists name: every distro's list does
for dist in debian fedora arch suse; do
	sed 's/#.*//' "$KILN_SRC/env/deps/$dist-test.txt" | tr -s ' \t' '\n\n' >"$T/$dist.list"
	check "$dist's test list names make" grep -qx make "$T/$dist.list"
	case $dist in debian) u=util-linux-extra ;; *) u=util-linux ;; esac
	check "$dist's test list names $u (fincore)" grep -qx "$u" "$T/$dist.list"
done
