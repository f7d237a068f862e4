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
PY
