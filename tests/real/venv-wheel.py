"""venv-wheel.py PYTHON DIST OUTDIR [LEVEL]: write OUTDIR/NAME.whl, the wheel of the
distribution DIST as it is installed for PYTHON (its RECORD lists the files), for
tests/real/gpu.sh's torchfat step: a real torch wheel without a network. The files
pip wrote itself (INSTALLER, REQUESTED, direct_url.json, RECORD, *.pyc) are left out;
RECORD is written anew with each file's sha256; the tag is the first Tag of WHEEL.
Members are deflated at LEVEL (default 6, what wheel and pip write), on all CPUs."""
import base64, csv, hashlib, os, struct, subprocess, sys, zlib
from concurrent.futures import ThreadPoolExecutor

py, dist, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
level = int(sys.argv[4]) if len(sys.argv) > 4 else 6
site, info = subprocess.check_output([py, "-c", """
import importlib.metadata as m, sys
d = m.distribution(sys.argv[1])
print(d.locate_file(""))
print(d._path)""", dist], text=True).split("\n")[:2]
skip = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}
names = []
with open(os.path.join(info, "RECORD"), newline="") as f:
    for row in csv.reader(f):
        n = row[0]
        if n.startswith("..") or n.startswith("/") or n.endswith(".pyc") or "__pycache__/" in n:
            continue
        if os.path.dirname(n) == os.path.basename(info) and os.path.basename(n) in skip:
            continue
        names.append(n)
tag = [l.split(":", 1)[1].strip() for l in open(os.path.join(info, "WHEEL")) if l.startswith("Tag:")][0]
meta = [l.split(":", 1)[1].strip() for l in open(os.path.join(info, "METADATA")) if l.startswith(("Name:", "Version:"))]
out = os.path.join(outdir, "%s-%s-%s.whl" % (meta[0].replace("-", "_"), meta[1], tag))
# dist-info last, as wheel writes it
names.sort(key=lambda n: (n.startswith(os.path.basename(info) + "/"), n))


def deflate(n):
    b = open(os.path.join(site, n), "rb").read()
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    z = c.compress(b) + c.flush()
    h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
    mode = os.stat(os.path.join(site, n)).st_mode & 0xFFFF
    return n.encode(), len(b), zlib.crc32(b), z, h, mode


# a plain ZIP (no ZIP64: the torch wheel stays under 4 GiB) written from the members the
# threads deflated; zipfile would deflate each again on one core
T, D = 0, (2026 - 1980) << 9 | 1 << 5 | 1
rec, cd, off = [], [], 0
with open(out + ".tmp", "wb") as f, ThreadPoolExecutor(os.cpu_count()) as ex:
    def put(n, usize, crc, z, mode):
        global off
        assert off + len(z) < 0xFFFFFFFF and usize < 0xFFFFFFFF, "needs ZIP64"
        f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, T, D, crc, len(z), usize, len(n), 0) + n + z)
        cd.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 3 << 8 | 20, 20, 0, 8, T, D, crc, len(z), usize,
                              len(n), 0, 0, 0, 0, mode << 16, off) + n)
        off += 30 + len(n) + len(z)
    for n, usize, crc, z, h, mode in ex.map(deflate, names):
        put(n, usize, crc, z, mode)
        rec.append("%s,sha256=%s,%d" % (n.decode(), h, usize))
    rn = os.path.basename(info) + "/RECORD"
    rb = ("\n".join(rec + [rn + ",,"]) + "\n").encode()
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    put(rn.encode(), len(rb), zlib.crc32(rb), c.compress(rb) + c.flush(), 0o100644)
    cdb = b"".join(cd)
    f.write(cdb + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(cd), len(cd), len(cdb), off, 0))
os.rename(out + ".tmp", out)
print(out)
