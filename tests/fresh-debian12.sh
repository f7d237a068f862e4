#!/bin/sh
# fresh-debian12.sh [--mirror=URL] [--keep] [COMMIT]: the README's test command on a fresh
# Debian 12 machine, as CI runs it. mmdebstrap makes a minbase Debian 12 (only git and
# ca-certificates added), the commit (HEAD by default) is cloned into a `mktemp -d` folder
# inside it (0700), and `sh .ci/run` (./configure --install-deps && ninja check) runs there
# as root in a mount namespace of its own. Prints the run's output; ends with the count
# and how long the install and the tests took. Exit: .ci/run's status, 2 when the machine
# cannot be made. Needs root, mmdebstrap, unshare and the Debian mirror; about 15 minutes
# on an idle 2-core machine (a 250 MB base, then about 1.5 GB of packages).
# --keep leaves the machine at $TMPDIR/kiln-fresh.XXXXXX (printed) instead of removing it.
set -u
mirror=http://deb.debian.org/debian keep=
while [ $# -gt 0 ]; do
	case "$1" in
	--mirror=*) mirror=${1#*=} ;;
	--keep) keep=1 ;;
	-h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "fresh-debian12.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
src=$(cd "$(dirname "$0")/.." && pwd) || exit 2
commit=$(git -C "$src" rev-parse --verify "${1:-HEAD}^{commit}") ||
	{ echo "fresh-debian12.sh: ${1:-HEAD} is not a commit of $src" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "fresh-debian12.sh: needs root (mmdebstrap, chroot and mounts)" >&2; exit 2; }
for c in mmdebstrap unshare chroot git; do
	command -v "$c" >/dev/null 2>&1 || { echo "fresh-debian12.sh: needs $c (apt-get install mmdebstrap)" >&2; exit 2; }
done

R=$(mktemp -d "${TMPDIR:-/tmp}/kiln-fresh.XXXXXX") || exit 2
[ -n "$keep" ] && echo "fresh-debian12.sh: the machine stays at $R" ||
	trap 'rm -rf "$R"' EXIT INT TERM
t0=$(date +%s)
mmdebstrap --quiet --variant=minbase --include=git,ca-certificates --components=main bookworm "$R/root" \
	"deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
	"deb ${mirror%/debian}/debian-security bookworm-security main" ||
	{ echo "fresh-debian12.sh: mmdebstrap could not make Debian 12 from $mirror" >&2; exit 2; }
mkdir -p "$R/root/srv" && git clone -q --bare --no-local "$src" "$R/root/srv/kiln.git" &&
	git -C "$R/root/srv/kiln.git" update-ref refs/heads/fresh "$commit" &&
	cp /etc/resolv.conf "$R/root/etc/resolv.conf" || exit 2
echo "fresh-debian12.sh: Debian 12 minbase in $(($(date +%s) - t0)) s; testing $(git -C "$src" rev-parse --short "$commit")"

# the machine's root is a mount point of its own (podman and unshare -m remount it), with
# /proc, /sys, /dev and a fresh /run; all of it goes with the namespace
unshare -m sh -s "$R/root" <<'EOF'
r=$1
mount --make-rprivate / && mount --bind "$r" "$r" && mount -t proc proc "$r/proc" &&
	mount --rbind /sys "$r/sys" && mount --rbind /dev "$r/dev" && mount -t tmpfs tmpfs "$r/run" || exit 2
exec chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin sh -c '
D=$(mktemp -d) && git clone -q -b fresh /srv/kiln.git "$D/kiln" && cd "$D/kiln" || exit 2
echo "fresh-debian12.sh: clone in $D (mode $(stat -c %a "$D"))"
t=$(date +%s)
sh .ci/run
rc=$?
echo "fresh-debian12.sh: .ci/run exited $rc after $(($(date +%s) - t)) s"
exit $rc'
EOF
