#!/bin/sh
# fatwheel deflates a big new member in 1 MiB pieces on all its threads: the wheel is the
# same bytes whatever --jobs, its members inflate back right (unzip -t, Python's zipfile,
# the extension loads and answers), and a member below one piece is deflated whole.
. "$KILN_SRC/tests/lib.sh"
need gcc unzip python3
mkdir -p "$T/lib" "$T/w/big"
echo 'int priv(void) { return 7; }' >"$T/priv.c"
gcc -shared -fPIC -Wl,-soname,libpriv.so.1 -o "$T/lib/libpriv.so.1" "$T/priv.c"
# an extension of about 6 MB: a table of numbers, compressible but not trivially
python3 - >"$T/big.c" <<'EOF'
import random
r = random.Random(44)
print("int priv(void);")
print("const unsigned table[] = {")
for i in range(1500000 // 10):
    print(",".join(str(r.randrange(0, 1 << (i % 24 + 4))) for _ in range(10)) + ",")
print("};")
print("int answer(int i) { return priv() + (int)table[i]; }")
EOF
gcc -shared -fPIC -o "$T/w/big/_big.so" "$T/big.c" -L"$T/lib" -l:libpriv.so.1 || { notok "gcc builds the big extension"; exit 1; }
size=$(wc -c <"$T/w/big/_big.so")
[ "$size" -gt 3145728 ] && ok "the extension is over three pieces ($size bytes)" || notok "the extension is over three pieces ($size bytes)"
W=$(python3 "$KILN_SRC/tests/regress/toy-mkwheel.py" --tag=cp311-cp311-linux_x86_64 "$T" big 1.0 "" \
	big/_big.so="$T/w/big/_big.so") || { notok "toy-mkwheel.py writes the wheel"; exit 1; }
for j in 1 2 8; do
	mkdir -p "$T/o$j"
	check "--jobs=$j writes the wheel" fatwheel --jobs=$j --lib-path "$T/lib" "$W" -w "$T/o$j"
done
check "the same bytes with 1 and 2 threads" cmp "$T/o1/${W##*/}" "$T/o2/${W##*/}"
check "the same bytes with 1 and 8 threads" cmp "$T/o1/${W##*/}" "$T/o8/${W##*/}"
check "unzip -t: every member's CRC-32 holds" unzip -tq "$T/o8/${W##*/}"
check "Python's zipfile inflates every member with its CRC-32" python3 -c '
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None
assert z.getinfo("big/_big.so").compress_type == zipfile.ZIP_DEFLATED' "$T/o8/${W##*/}"
mkdir -p "$T/u" && (cd "$T/u" && unzip -q "$T/o8/${W##*/}")
readelf -d "$T/u/big/_big.so" >"$T/dyn"
has "the big extension was edited (an RPATH to the library folder)" "$T/dyn" 'Library rpath: [$ORIGIN/../big.libs]'
check "and loads with its bundled library, answering right" python3 -c '
import ctypes, sys
l = ctypes.CDLL(sys.argv[1]); assert l.answer(0) == 7 + ctypes.c_uint.in_dll(l, "table").value' "$T/u/big/_big.so"
# the stream has several pieces: an empty stored block (00 00 ff ff) ends each but the last
python3 - "$T/o8/${W##*/}" >"$T/pieces" <<'EOF'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); i = z.getinfo("big/_big.so")
f = open(sys.argv[1], "rb"); f.seek(i.header_offset + 26)
n, e = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
f.seek(n + e, 1); print(f.read(i.compress_size).count(b"\x00\x00\xff\xff"))
EOF
[ "$(cat "$T/pieces")" -ge 2 ] && ok "the member is several pieces joined ($(cat "$T/pieces") sync markers)" ||
	notok "the member is several pieces joined ($(cat "$T/pieces") sync markers)"
