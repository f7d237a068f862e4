"""toy-mkwheel.py OUTDIR NAME VERSION REQUIRES [ARCNAME=PATH]...: a pure-Python wheel
(py3-none-any) holding the given files (a folder: its .py files, under ARCNAME/), with
Requires-Dist lines from REQUIRES ('|'-separated, "" for none), written deterministically.
For kiln's tests (the build requirements a test index serves); written for kiln."""
import base64, hashlib, os, re, sys, zipfile

out, name, ver, reqs = sys.argv[1:5]
files = {}
for a in sys.argv[5:]:
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
files[di + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: kiln-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
rec = []
path = os.path.join(out, "%s-%s-py3-none-any.whl" % (dist, ver))
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    for arc in sorted(files):
        zi = zipfile.ZipInfo(arc, (1980, 1, 1, 0, 0, 0))
        zi.external_attr = 0o644 << 16
        z.writestr(zi, files[arc], zipfile.ZIP_DEFLATED)
        h = base64.urlsafe_b64encode(hashlib.sha256(files[arc]).digest()).rstrip(b"=").decode()
        rec.append("%s,sha256=%s,%d" % (arc, h, len(files[arc])))
    rec.append(di + "/RECORD,,")
    zi = zipfile.ZipInfo(di + "/RECORD", (1980, 1, 1, 0, 0, 0))
    zi.external_attr = 0o644 << 16
    z.writestr(zi, "\n".join(rec) + "\n", zipfile.ZIP_DEFLATED)
print(path)
