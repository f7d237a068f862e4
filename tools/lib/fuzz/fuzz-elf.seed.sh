#!/bin/sh
# fuzz-elf.seed.sh DIR: write real ELF seeds into DIR: a shared library with DT_NEEDED,
# SONAME, RUNPATH and GLIBC version needs, a relocatable object, and a 32-bit object.
set -e
d=$1
printf '#include <stdio.h>\nint f(void) { return puts("x"); }\n' >"$d/s.c"
cc -shared -fPIC -Wl,-soname,libs.so.1 -Wl,-rpath,'$ORIGIN/../lib' -Wl,--enable-new-dtags \
	"$d/s.c" -o "$d/libs.so"
cc -shared -fPIC -Wl,--disable-new-dtags -Wl,-rpath,/opt/x "$d/s.c" -o "$d/librpath.so" -s
cc -c "$d/s.c" -o "$d/s64.o"
cc -m32 -c "$d/s.c" -o "$d/s32.o" 2>/dev/null || true
rm -f "$d/s.c"
