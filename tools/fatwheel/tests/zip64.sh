#!/bin/sh
# fatwheel and ZIP64: wheels made by Python's zipfile with ZIP64 records, repaired, and
# read back by Python's zipfile, unzip and fatwheel itself. The default tier needs
# ZIP64 for the member count (70000 members) and reads ZIP64 local extras. The optional
# tier slow (KILN_SLOW=1, as in elfedit.sh and team-distcc.sh; it needs 12 GiB free in
# $TMPDIR) adds a member over 4 GiB (deflated zeros: 18 MiB on disk) and an archive over
# 4 GiB (a stored member: 9 GiB): 100 CPU s and 2 minutes of disk writes on the project's
# 2-core machine, most of the file's time, so `ninja check` leaves it to a release run.
. "$KILN_SRC/tests/lib.sh"
need unzip
PY=/usr/bin/python3
[ -x $PY ] || skip_all "needs Debian's /usr/bin/python3"

# mkwheel OUT SPEC...: a wheel big-1.0 whose members follow SPEC words:
#   many:N (N tiny deflated members), zeros:N:deflate|store (N zero bytes, ZIP64 forced),
#   small (one member written with force_zip64)
mkwheel () {
	$PY - "$@" <<'EOF'
import sys, zipfile, hashlib, base64
out, specs = sys.argv[1], sys.argv[2:]
rec = []
def b64(d): return base64.urlsafe_b64encode(d).rstrip(b"=").decode()
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
    def put(name, data):
        z.writestr(name, data); rec.append("%s,sha256=%s,%d" % (name, b64(hashlib.sha256(data).digest()), len(data)))
    put("big/__init__.py", b"")
    for s in specs:
        p = s.split(":")
        if p[0] == "many":
            for i in range(int(p[1])): put("big/m/%05d.py" % i, b"x = %d\n" % i)
        elif p[0] == "small":
            data = b"small but ZIP64\n"
            with z.open("big/small.txt", "w", force_zip64=True) as f: f.write(data)
            rec.append("big/small.txt,sha256=%s,%d" % (b64(hashlib.sha256(data).digest()), len(data)))
        elif p[0] == "zeros":
            n = int(p[1]); chunk = bytes(1 << 24); h = hashlib.sha256()
            zi = zipfile.ZipInfo("big/zeros.bin"); zi.compress_type = zipfile.ZIP_DEFLATED if p[2] == "deflate" else zipfile.ZIP_STORED
            with z.open(zi, "w", force_zip64=True) as f:
                left = n
                while left:
                    k = min(left, len(chunk)); f.write(chunk[:k]); h.update(chunk[:k]); left -= k
            rec.append("big/zeros.bin,sha256=%s,%d" % (b64(h.digest()), n))
    put("big/after.txt", b"after the big member\n")
    d = "big-1.0.dist-info/"
    put(d + "METADATA", b"Metadata-Version: 2.1\nName: big\nVersion: 1.0\n")
    put(d + "WHEEL", b"Wheel-Version: 1.0\nGenerator: kiln-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr(d + "RECORD", "\n".join(rec + [d + "RECORD,,"]) + "\n")
EOF
}

# pycheck WHEEL: Python's zipfile lists it and reads the small members and RECORD
pycheck () {
	$PY - "$1" <<'EOF'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.read("big/after.txt") == b"after the big member\n"
n = z.namelist(); assert n[-1] == "big-1.0.dist-info/RECORD"
rec = z.read(n[-1]).decode().splitlines()
assert len(rec) == len(n), (len(rec), len(n))
print(len(n))
EOF
}

mkdir -p "$T/a" "$T/o"
check "python writes a 70000-member wheel with a ZIP64-forced member" mkwheel "$T/a/big-1.0-py3-none-any.whl" many:70000 small
check "fatwheel repairs it" fatwheel --plat=linux_x86_64 "$T/a/big-1.0-py3-none-any.whl" -w "$T/o"
O=$(cat "$T/.out")
run pycheck "$O"
same "Python's zipfile reads all members back" 70006 "$(cat "$T/.out")"
check "unzip -t accepts it" unzip -tq "$O"
check "the output has a ZIP64 end record and locator (70006 members)" $PY -c '
import sys
b = open(sys.argv[1], "rb").read()
e = b[-22:]; assert e[:4] == b"PK\5\6" and e[8:10] == b"\xff\xff", e
assert b[-42:-38] == b"PK\6\7" and b.rfind(b"PK\6\6") > 0' "$O"
check "fatwheel reads its own ZIP64 output back" fatwheel -n --plat=linux_x86_64 "$O" -w "$T/a"

# the over-4-GiB tier runs when asked (KILN_SLOW=1) and $TMPDIR has room for it
if [ "${KILN_SLOW:-0}" != 1 ]; then
	echo "skip optional tier slow: members and archives over 4 GiB (KILN_SLOW=1 runs them)"
	exit 0
fi
free_kib=$(df -Pk "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $4 }')
if [ "${free_kib:-0}" -lt $((12 * 1024 * 1024)) ]; then
	echo "skip optional tier slow: members and archives over 4 GiB need 12 GiB free in ${TMPDIR:-/tmp}"
	exit 0
fi
rm -rf "$T/a" "$T/o"
mkdir -p "$T/a" "$T/o"
check "python writes a wheel with a 4 GiB + 64 KiB deflated member" mkwheel "$T/a/big-1.0-py3-none-any.whl" zeros:4295032832:deflate
check "fatwheel repairs it" fatwheel --plat=linux_x86_64 "$T/a/big-1.0-py3-none-any.whl" -w "$T/o"
O=$(cat "$T/.out")
run pycheck "$O"
same "Python's zipfile reads it" 6 "$(cat "$T/.out")"
check "the member's ZIP64 extra holds exactly the overflowing size" $PY -c '
import sys, zipfile
i = zipfile.ZipFile(sys.argv[1]).getinfo("big/zeros.bin")
assert i.file_size == 4295032832 and i.extra[:4] == b"\1\0\10\0", i.extra' "$O"
check "unzip -t checks the 4 GiB member" unzip -tq "$O"
rm -rf "$T/a" "$T/o"
mkdir -p "$T/a" "$T/o"
free=$(df -Pk "$T" | awk 'NR==2 {print $4}')
if [ "$free" -lt 9500000 ]; then
	echo "skip optional tier slow: archive over 4 GiB needs 9 GiB free in $T"
	exit 0
fi
check "python writes a 4 GiB + 64 KiB stored member" mkwheel "$T/a/big-1.0-py3-none-any.whl" zeros:4295032832:store
check "fatwheel repairs it" fatwheel --plat=linux_x86_64 "$T/a/big-1.0-py3-none-any.whl" -w "$T/o"
O=$(cat "$T/.out")
rm -f "$T/a/big-1.0-py3-none-any.whl"
run pycheck "$O"
same "Python's zipfile reads the members past 4 GiB" 6 "$(cat "$T/.out")"
check "members past 4 GiB carry their offset in a ZIP64 extra" $PY -c '
import sys, zipfile
i = zipfile.ZipFile(sys.argv[1]).getinfo("big/after.txt")
assert i.header_offset > 2**32 and i.extra[:4] == b"\1\0\10\0", (i.header_offset, i.extra)' "$O"
check "fatwheel reads the big output back and checks every hash" fatwheel -n --plat=linux_x86_64 "$O" -w "$T/a"
