"""toy-mkwheel.py [--tag=TAG] [--level=N] OUTDIR NAME VERSION REQUIRES [ARCNAME=PATH]...:
a wheel holding the given files (a folder: its .py files, under ARCNAME/), with
Requires-Dist lines from REQUIRES ('|'-separated, "" for none), written deterministically.
TAG is its PY-ABI-PLATFORM tag (default py3-none-any, a pure-Python wheel; another
platform, e.g. cp311-cp311-linux_x86_64, writes Root-Is-Purelib: false), N the deflate
level (default zlib's). For kiln's tests (the build requirements a test index serves, the
platform wheels fatwheel reads); written for kiln."""
import base64, hashlib, os, re, sys, zipfile

args = sys.argv[1:]
tag, level = "py3-none-any", None
while args and args[0].startswith("--"):
    a = args.pop(0)
    if a.startswith("--tag=") and a.count("-") == 4:
        tag = a[6:]
    elif a.startswith("--level=") and a[8:].isdigit():
        level = int(a[8:])
    else:
        sys.exit("toy-mkwheel.py: bad option %s (--tag=PY-ABI-PLATFORM, --level=N)" % a)
out, name, ver, reqs = args[:4]
files = {}
for a in args[4:]:
    arc, _, src = a.partition("=")
    if os.path.isdir(src):
        for root, dirs, fs in os.walk(src):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for f in fs:
                if f.endswith(".py") or f == "py.typed":
                    p = os.path.join(root, f)
                    files[arc + "/" + os.path.relpath(p, src)] = open(p, "rb").read()
    else:
        files[arc] = open(src, "rb").read()
dist = re.sub(r"[-_.]+", "_", name)
di = "%s-%s.dist-info" % (dist, ver)
meta = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, ver)
meta += "".join("Requires-Dist: %s\n" % r for r in reqs.split("|") if r)
files[di + "/METADATA"] = meta.encode()
purelib = "true" if tag.split("-")[2] == "any" else "false"
files[di + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: kiln-test\nRoot-Is-Purelib: %s\nTag: %s\n"
                        % (purelib, tag)).encode()
rec = []
path = os.path.join(out, "%s-%s-%s.whl" % (dist, ver, tag))
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    for arc in sorted(files):
        zi = zipfile.ZipInfo(arc, (1980, 1, 1, 0, 0, 0))
        zi.external_attr = 0o644 << 16
        z.writestr(zi, files[arc], zipfile.ZIP_DEFLATED, level)
        h = base64.urlsafe_b64encode(hashlib.sha256(files[arc]).digest()).rstrip(b"=").decode()
        rec.append("%s,sha256=%s,%d" % (arc, h, len(files[arc])))
    rec.append(di + "/RECORD,,")
    zi = zipfile.ZipInfo(di + "/RECORD", (1980, 1, 1, 0, 0, 0))
    zi.external_attr = 0o644 << 16
    z.writestr(zi, "\n".join(rec) + "\n", zipfile.ZIP_DEFLATED, level)
print(path)
