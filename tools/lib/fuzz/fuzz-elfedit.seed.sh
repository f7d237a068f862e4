#!/bin/sh
# fuzz-elfedit.seed.sh DIR: real ELF seeds for fuzz-elfedit, each behind its two bytes of
# edit list: gcc-built shared objects (DT_NEEDED, SONAME, RUNPATH or RPATH, version
# needs), Debian's own libz (a real distribution library with version definitions), and
# clang-19 + lld objects for aarch64 and i686 (another layout, ELF32).
set -e
d=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
printf '#include <stdio.h>\n#include <zlib.h>\nint f(void) { return puts(zlibVersion()); }\n' >"$t/s.c"
printf 'int f(void) { return 1; }\n' >"$t/a.c"
cc -shared -fPIC -Wl,-soname,libs.so.1 -Wl,-rpath,'$ORIGIN/../lib' -Wl,--enable-new-dtags \
	"$t/s.c" -o "$t/runpath.so" -lz
cc -shared -fPIC -Wl,--disable-new-dtags -Wl,-rpath,/opt/x "$t/s.c" -o "$t/rpath.so" -s -lz
cc -shared -fPIC "$t/s.c" -o "$t/bare.so" -s -lz
for a in aarch64 i686; do
	clang-19 --target=$a-linux-gnu -nostdlib -shared -fuse-ld=lld -fPIC "$t/a.c" \
		-Wl,-soname,liba.so.1 -o "$t/lld-$a.so" 2>/dev/null || true
done
z=$(readlink -f "$(cc -print-file-name=libz.so)")
[ -f "$z" ] && cp "$z" "$t/debian-libz.so"
i=0
for f in "$t"/*.so; do
	for e in '\017\010' '\033\300' '\022\003' '\010\004'; do
		i=$((i + 1))
		{ printf "$e"; cat "$f"; } >"$d/seed-$i-${f##*/}"
	done
done
