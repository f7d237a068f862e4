#!/bin/sh
# fuzz-zip.seed.sh DIR: real zip archives as seeds: a wheel-like archive made by
# Python's zipfile (deflated and stored members) and one forced to ZIP64 records.
set -e
python3 - "$1" <<'PY'
import sys, zipfile
d = sys.argv[1]
with zipfile.ZipFile(d + "/wheel.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("pkg/__init__.py", "x = 1\n" * 20)
    z.writestr("pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: py3-none-any\n")
    z.writestr(zipfile.ZipInfo("pkg/data.bin"), b"\0" * 64, zipfile.ZIP_STORED)
    z.writestr("pkg-1.0.dist-info/RECORD", "pkg/__init__.py,,\n")
with zipfile.ZipFile(d + "/zip64.zip", "w", zipfile.ZIP_DEFLATED, allowZip64=True) as z:
    with z.open("big.txt", "w", force_zip64=True) as f:
        f.write(b"abc" * 100)
# member names: spellings of one installed path, .data schemes, a symlink, a folder
# entry, control characters (each archive is one case, so a mutation reaches the checks)
names = [
    ("spell.zip", ["pkg/a.py", "pkg/./a.py"]),
    ("slash2.zip", ["pkg//a.py", "pkg/a.py"]),
    ("dotdot.zip", ["pkg/b/../a.py"]),
    ("purelib.zip", ["pkg/a.py", "pkg-1.0.data/purelib/pkg/a.py"]),
    ("platlib.zip", ["pkg-1.0.data/platlib/pkg/a.py", "pkg-1.0.data/purelib/pkg/a.py"]),
    ("scripts.zip", ["a-1.0.data/scripts/run", "b-1.0.data/scripts/run"]),
    ("fileanddir.zip", ["pkg/a", "pkg/a/b.py"]),
    ("ctrl.zip", ["pkg/a\x1b[31m.py"]),
    ("case.zip", ["pkg/A.py", "pkg/a.py"]),
]
for fn, ns in names:
    with zipfile.ZipFile(d + "/" + fn, "w", zipfile.ZIP_DEFLATED) as z:
        for n in ns:
            z.writestr(n, "x = 1\n")
with zipfile.ZipFile(d + "/symlink.zip", "w") as z:
    i = zipfile.ZipInfo("pkg/link.py")
    i.create_system = 3
    i.external_attr = 0o120777 << 16
    z.writestr(i, "target.py")
with zipfile.ZipFile(d + "/dirdata.zip", "w") as z:
    z.writestr(zipfile.ZipInfo("pkg/"), "hidden")
# a data descriptor (written to a stream that cannot seek)
import io
class NoSeek(io.RawIOBase):
    def __init__(self, f): self.f = f
    def writable(self): return True
    def write(self, b): return self.f.write(b)
with open(d + "/stream.zip", "wb") as raw:
    with zipfile.ZipFile(NoSeek(raw), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("pkg/a.py", "x = 1\n" * 10)
PY
