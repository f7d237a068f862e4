"""rocm-wheels.py OUT VERSION [--index] PART:[ARC=PATH]...: ROCm wheels in the shape of
TheRock's multi-arch release (ROCm/TheRock RELEASES.md, "Installing multi-arch ROCm Python
packages"), for kiln's tests (rocm.sh, rocm-therock.sh); written for kiln.

  rocm                      the selector: the rocm-sdk command (`rocm-sdk path --root`),
                            Requires-Dist rocm-sdk-core, one extra per PART below
                            (libraries, devel, device-gfxNNNN) requiring its wheel
  rocm-sdk-core             share/therock/therock_manifest.json ({"rocm_version": VERSION})
  rocm-sdk-PART             the files given for PART (core, libraries, devel,
                            device-gfxNNNN), each ARC under _rocm_sdk_devel/, the root
                            `rocm-sdk path --root` names; executable when PATH is

A PART with no ARC=PATH is an empty wheel (an extra to resolve). With --index, the wheels
go to OUT/files and OUT/simple/NAME/index.html lists each name's files with their sha256
(PEP 503); else into OUT itself (pip --find-links)."""
import base64, hashlib, os, sys, zipfile

ROOT = "_rocm_sdk_devel"
MAIN = b'''import os, sys
def main():
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_rocm_sdk_devel")
    if sys.argv[1:] == ["path", "--root"]:
        print(root)
        return 0
    print("usage: rocm-sdk path --root", file=sys.stderr)
    return 2
'''


def b64(d):
    return base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()


def wheel(out, dist, version, files, meta="", execs=()):
    """a py3-none-any wheel of files ({arcname: bytes}) with METADATA, WHEEL and RECORD"""
    name = "%s-%s" % (dist, version)
    di = name + ".dist-info"
    files = dict(files)
    files[di + "/METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s"
                               % (dist.replace("_", "-"), version, meta)).encode()
    files[di + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: kiln-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    rec = ["%s,sha256=%s,%d" % (n, b64(d), len(d)) for n, d in files.items()]
    files[di + "/RECORD"] = ("\n".join(rec + [di + "/RECORD,,"]) + "\n").encode()
    path = os.path.join(out, name + "-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as z:
        for n in sorted(files):
            zi = zipfile.ZipInfo(n, (1980, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100755 if n in execs else 0o100644) << 16
            z.writestr(zi, files[n])
    return path


def parts(args):
    """{part: {arcname: (bytes, executable)}} from PART:[ARC=PATH] arguments"""
    got = {}
    for a in args:
        part, _, spec = a.partition(":")
        got.setdefault(part, {})
        if spec:
            arc, _, src = spec.partition("=")
            got[part][ROOT + "/" + arc] = (open(src, "rb").read(), os.access(src, os.X_OK))
    return got


def selector(out, version, names):
    """the rocm wheel: the rocm-sdk command and one extra per part"""
    meta = "Requires-Dist: rocm-sdk-core==%s\n" % version
    for p in names:
        if p != "core":
            meta += 'Provides-Extra: %s\nRequires-Dist: rocm-sdk-%s==%s; extra == "%s"\n' % (p, p, version, p)
    ep = "rocm-%s.dist-info/entry_points.txt" % version
    return wheel(out, "rocm", version, {"rocm_sdk/__init__.py": MAIN,
                                        ep: b"[console_scripts]\nrocm-sdk = rocm_sdk:main\n"}, meta)


def simple(top, wheels):
    """OUT/simple/NAME/index.html for each wheel in OUT/files"""
    for w in sorted(wheels):
        f = os.path.basename(w)
        n = f.split("-")[0].replace("_", "-")
        os.makedirs(os.path.join(top, "simple", n), exist_ok=True)
        h = hashlib.sha256(open(w, "rb").read()).hexdigest()
        with open(os.path.join(top, "simple", n, "index.html"), "a") as i:
            i.write('<a href="../../files/%s#sha256=%s">%s</a>\n' % (f, h, f))


def main(argv):
    index = "--index" in argv
    argv = [a for a in argv if a != "--index"]
    top, version = argv[0], argv[1]
    out = os.path.join(top, "files") if index else top
    os.makedirs(out, exist_ok=True)
    got = parts(argv[2:])
    core = got.setdefault("core", {})
    core[ROOT + "/share/therock/therock_manifest.json"] = (b'{"rocm_version": "%s"}\n' % version.encode(), False)
    wheels = [selector(out, version, got)]
    for p, files in got.items():
        execs = [n for n, (d, x) in files.items() if x]
        wheels.append(wheel(out, "rocm_sdk_" + p.replace("-", "_"), version,
                            {n: d for n, (d, x) in files.items()}, execs=execs))
    if index:
        simple(top, wheels)


main(sys.argv[1:])
