#!/bin/sh
# fatwheel finds libraries where ld.so finds them. Each case builds small libraries with
# DT_RPATH/DT_RUNPATH, $ORIGIN, $LIB, $PLATFORM, LD_LIBRARY_PATH, wrong-machine decoys and
# missing names, and compares `fatwheel --ldd` with glibc's own answer (ld.so --list, what
# LD_TRACE_LOADED_OBJECTS=1 prints) line by line. Then the three ld.so.cache layouts
# (ldconfig -c old|new|compat) and a wheel whose library is only on LD_LIBRARY_PATH.
. "$KILN_SRC/tests/lib.sh"
need gcc readelf ldconfig unzip
RTLD=$(readelf -l /bin/sh | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
[ -x "$RTLD" ] || missing "needs glibc's ld.so (the interpreter of /bin/sh)"
LDCONFIG=$(command -v ldconfig)

# lib DIR NAME [NEEDED...] [-- LDFLAGS...]: DIR/NAME, a library with soname NAME whose
# function returns a number unique to DIR/NAME
n=0
lib () {
	_d=$1 _n=$2; shift 2
	_l= _f=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do _l="$_l -l:$1"; shift; done
	[ "${1:-}" = -- ] && { shift; _f="$*"; }
	mkdir -p "$_d"
	n=$((n + 1))
	echo "int f$n(void) { return $n; }" >"$T/src$n.c"
	# shellcheck disable=SC2086
	gcc -shared -fPIC -Wl,-soname,"$_n" -o "$_d/$_n" "$T/src$n.c" -L"$T/link" -Wl,--no-as-needed $_l $_f ||
		{ notok "gcc builds $_d/$_n"; exit 1; }
}
# link-time copies of every name, so gcc can link; never searched at run time
mkdir -p "$T/link"
for x in libfx.so.1 libfy.so.1 libfz.so.1 libfnope.so.1; do lib "$T/link" "$x"; done

# compare DESC FILE [ENV...]: fatwheel --ldd FILE and ld.so --list FILE under ENV agree;
# ld.so's own lines (vdso, the interpreter) and load addresses are left out
compare () {
	_desc=$1 _file=$2; shift 2
	env "$@" LD_TRACE_LOADED_OBJECTS=1 "$RTLD" "$_file" 2>&1 | grep -v -e 'linux-vdso' -e 'ld-linux' |
		sed 's/ (0x[0-9a-f]*)$//' >"$T/want"
	env "$@" fatwheel --ldd "$_file" 2>&1 | grep -v 'ld-linux' >"$T/got"
	if diff -u "$T/want" "$T/got" >"$T/diff"; then ok "$_desc"; else notok "$_desc"; sed 's/^/#   /' "$T/diff"; fi
}
rp () { echo "-Wl,--disable-new-dtags -Wl,-rpath,$1"; }
runp () { echo "-Wl,--enable-new-dtags -Wl,-rpath,$1"; }

for d in a b c d; do lib "$T/$d" libfx.so.1; lib "$T/$d" libfz.so.1; done

# 1-2: the object's own DT_RPATH and DT_RUNPATH
lib "$T/m1" main.so libfx.so.1 -- $(rp "$T/b:$T/a")
compare "DT_RPATH: its folders in order" "$T/m1/main.so"
lib "$T/m2" main.so libfx.so.1 -- $(runp "$T/c")
compare "DT_RUNPATH" "$T/m2/main.so"
# 3-4: LD_LIBRARY_PATH comes after DT_RPATH and before DT_RUNPATH
compare "DT_RPATH before LD_LIBRARY_PATH" "$T/m1/main.so" LD_LIBRARY_PATH="$T/d"
compare "LD_LIBRARY_PATH before DT_RUNPATH" "$T/m2/main.so" LD_LIBRARY_PATH="$T/d"
compare "LD_LIBRARY_PATH: an empty entry is the current folder" "$T/m2/main.so" LD_LIBRARY_PATH=":$T/d"
# 5: a library without paths is searched through its loader's DT_RPATH, on up
lib "$T/y1" libfy.so.1 libfz.so.1
lib "$T/m5" main.so libfy.so.1 -- $(rp "$T/y1:$T/c")
compare "the loader's DT_RPATH serves its libraries" "$T/m5/main.so"
# 6: a DT_RUNPATH on the library turns the chain off
lib "$T/y2" libfy.so.1 libfz.so.1 -- $(runp "$T/d")
lib "$T/m6" main.so libfy.so.1 -- $(rp "$T/y2:$T/c")
compare "a library's own DT_RUNPATH: no DT_RPATH of its loaders" "$T/m6/main.so"
# 7: DT_RUNPATH is the object's own only
lib "$T/m7" main.so libfy.so.1 -- $(runp "$T/y1:$T/c")
compare "DT_RUNPATH does not serve the object's libraries (not found)" "$T/m7/main.so"
# 8: a loader with DT_RUNPATH in the chain gives no DT_RPATH (it has none in effect)
lib "$T/y3" libfy.so.1 libfz.so.1
lib "$T/m8" main.so libfy.so.1 -- $(runp "$T/y3")
lib "$T/top" top.so libfx.so.1 -- -L"$T/m8" -l:main.so $(rp "$T/m8:$T/a")
compare "the chain goes on up past a DT_RUNPATH loader" "$T/top/top.so"
# 9-10: $ORIGIN and ${ORIGIN}
lib "$T/o/bin" main.so libfx.so.1 -- $(rp '$ORIGIN/../../b')
compare "\$ORIGIN" "$T/o/bin/main.so"
lib "$T/o2/bin" main.so libfx.so.1 -- $(runp '${ORIGIN}/../../c')
compare "\${ORIGIN}" "$T/o2/bin/main.so"
# 11-12: $LIB and $PLATFORM, as this ld.so expands them
dlib=$("$RTLD" --list-diagnostics 2>/dev/null | sed -n 's/^dl_dst_lib="\(.*\)"$/\1/p')
plat=$("$RTLD" --list-diagnostics 2>/dev/null | sed -n 's/^dl_platform="\(.*\)"$/\1/p')
[ -n "$dlib" ] && [ -n "$plat" ] || missing "needs glibc 2.33 or later (ld.so --list-diagnostics)"
lib "$T/dst/$dlib" libfx.so.1
lib "$T/dst/$plat" libfz.so.1
lib "$T/m11" main.so libfx.so.1 libfz.so.1 -- $(rp "$T/dst/\$LIB:$T/dst/\$PLATFORM")
compare "\$LIB ($dlib) and \$PLATFORM ($plat)" "$T/m11/main.so"
# 13: a library of another machine is passed over, as ld.so does
mkdir -p "$T/arm"
cp "$T/a/libfx.so.1" "$T/arm/libfx.so.1"
printf '\267\000' | dd of="$T/arm/libfx.so.1" bs=1 seek=18 conv=notrunc 2>/dev/null # EM_AARCH64
lib "$T/m13" main.so libfx.so.1 -- $(rp "$T/arm:$T/d")
compare "a library for another machine is passed over" "$T/m13/main.so"
# 14: not found anywhere, and a system library from ld.so.cache
lib "$T/m14" main.so libfnope.so.1 libfz.so.1 -- -lz $(rp "$T/b")
compare "a missing library, and libz from ld.so.cache" "$T/m14/main.so"
# 15: the same file reached under two names is one object
lib "$T/s" libfz.so.1
ln -s libfz.so.1 "$T/s/libfw.so.1"
lib "$T/link" libfw.so.1
lib "$T/m15" main.so libfz.so.1 libfw.so.1 -- $(rp "$T/s")
compare "one file under two names is loaded once" "$T/m15/main.so"
# --lib-path is searched where LD_LIBRARY_PATH is
LD_LIBRARY_PATH="$T/d" LD_TRACE_LOADED_OBJECTS=1 "$RTLD" "$T/m2/main.so" | sed 's/ (0x[0-9a-f]*)$//' | grep libfx >"$T/want"
fatwheel --ldd --no-ld-library-path --lib-path "$T/d" "$T/m2/main.so" | grep libfx >"$T/got"
same "--lib-path is searched before DT_RUNPATH" "$(cat "$T/want")" "$(cat "$T/got")"
LD_LIBRARY_PATH="$T/d" fatwheel --ldd --no-ld-library-path "$T/m2/main.so" | grep libfx >"$T/got"
same "--no-ld-library-path leaves LD_LIBRARY_PATH out" "	libfx.so.1 => $T/c/libfx.so.1" "$(cat "$T/got")"
LD_LIBRARY_PATH="$T/d" fatwheel --ldd --json "$T/m2/main.so" >"$T/j"
has "--ldd --json says which search found it" "$T/j" "\"name\":\"libfx.so.1\",\"path\":\"$T/d/libfx.so.1\",\"via\":\"LD_LIBRARY_PATH\""
exits "--ldd with a missing library exits 1" 1 fatwheel --ldd "$T/m14/main.so"
exits "--ldd on a file that is not ELF exits 2" 2 fatwheel --ldd "$T/src1.c"

# --- ld.so.cache in its three layouts ---------------------------------------------------
lib "$T/cached" libfq.so.1
lib "$T/link" libfq.so.1
lib "$T/mq" main.so libfq.so.1
echo "$T/cached" >"$T/ld.so.conf"
for fmt in old new compat; do
	if ! "$LDCONFIG" -X -c "$fmt" -f "$T/ld.so.conf" -C "$T/cache.$fmt" >"$T/ldc.log" 2>&1; then
		notok "ldconfig -c $fmt writes a cache"; sed 's/^/#   /' "$T/ldc.log"; continue
	fi
	want=$("$LDCONFIG" -p -C "$T/cache.$fmt" | sed -n 's/^	libfq\.so\.1 (.*) => //p' | head -n1)
	got=$(fatwheel --ldd --ld-so-cache "$T/cache.$fmt" "$T/mq/main.so" | sed -n 's/^	libfq\.so\.1 => //p')
	same "ld.so.cache, $fmt layout: the path ldconfig -p gives" "$want" "$got"
	same "ld.so.cache, $fmt layout: found in $T/cached" "$T/cached/libfq.so.1" "$got"
done
head -c 11 "$T/cache.old" | grep -q '^ld.so-1.7.0' && head -c 20 "$T/cache.new" | grep -q '^glibc-ld.so.cache1.1' &&
	head -c 11 "$T/cache.compat" | grep -q '^ld.so-1.7.0' && grep -q 'glibc-ld.so.cache1.1' "$T/cache.compat" &&
	ok "the three caches have the three layouts" || notok "the three caches have the three layouts"
printf 'not a cache at all, long enough to pass a size check\n' >"$T/cache.bad"
exits "--ld-so-cache with a file that is no cache exits 2" 2 fatwheel --ldd --ld-so-cache "$T/cache.bad" "$T/mq/main.so"
has "  and says what is wrong" "$T/.err" "not an ld.so.cache file"

# --- a wheel: the library only on LD_LIBRARY_PATH is bundled (auditwheel's way) ----------
mkdir -p "$T/w/demo" "$T/out"
lib "$T/w/demo" _ext.so libfx.so.1 -- $(runp '$ORIGIN/../../nvidia/x/lib')
W=$(python3 "$KILN_SRC/tests/regress/toy-mkwheel.py" --tag=cp311-cp311-linux_x86_64 "$T" demo 1.0 "" \
	demo/_ext.so="$T/w/demo/_ext.so")
exits "without LD_LIBRARY_PATH the library is not found (exit 1)" 1 env -u LD_LIBRARY_PATH fatwheel "$W" -w "$T/out"
has "  the message names it" "$T/.err" "libfx.so.1 needed by demo/_ext.so not found"
check "with LD_LIBRARY_PATH it is bundled" env LD_LIBRARY_PATH="$T/d" fatwheel "$W" -w "$T/out"
unzip -l "$T/out/${W##*/}" >"$T/list"
has "  the wheel holds it" "$T/list" "demo.libs/libfx.so.1"
exits "--no-ld-library-path turns LD_LIBRARY_PATH off" 1 env LD_LIBRARY_PATH="$T/d" fatwheel --no-ld-library-path "$W" -w "$T/out2"
check "the plan says which search found each library" env LD_LIBRARY_PATH="$T/d" fatwheel -n --json "$W" -w "$T/out3"
has "  LD_LIBRARY_PATH, in --json" "$T/.out" '"from":"'"$T"'/d/libfx.so.1","needed_by":"demo/_ext.so","found_via":"LD_LIBRARY_PATH"'
check "  and in the text plan" env LD_LIBRARY_PATH="$T/d" fatwheel -n "$W" -w "$T/out3"
has "  (text)" "$T/.out" "bundle   demo.libs/libfx.so.1 <- $T/d/libfx.so.1 ("
has "  (text, the search)" "$T/.out" "bytes, LD_LIBRARY_PATH), needed by demo/_ext.so"
