#!/bin/sh
# install.sh SRCDIR BUILDDIR PREFIX: install the tools and their man pages under
# $DESTDIR$PREFIX (bin/ and share/man/man1/).
set -eu
srcdir=$1 builddir=$2 prefix=$3
bindir=${DESTDIR:-}$prefix/bin
mandir=${DESTDIR:-}$prefix/share/man/man1
mkdir -p "$bindir" "$mandir"
for b in "$builddir"/bin/*; do
	[ -f "$b" ] || continue
	t=${b##*/}
	install -m 755 "$b" "$bindir/$t"
	[ -f "$srcdir/tools/$t/$t.1" ] && install -m 644 "$srcdir/tools/$t/$t.1" "$mandir/$t.1"
	echo "installed $bindir/$t"
done
