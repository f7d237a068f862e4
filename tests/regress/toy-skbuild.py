"""kiln's toy of scikit-build-core's PEP 517 backend (module scikit_build_core.build), for
tests/regress/graph-toy26.inc; written for kiln, no upstream code. Like the real one it
packs the package's files that .gitignore does not exclude (scikit-build-core honours
.gitignore, so a generated file there is dropped) plus each -Cwheel.force-include.SRC=DST,
and builds the compiled parts itself (here: cc, and ROCm's clang for the GPU code of each
csrc/*.hip for each PYTORCH_ROCM_ARCH target, run the way hipcc runs it: through
HIP_CLANG_LAUNCHER). The version is PYTORCH_BUILD_VERSION (torch's setting), else
version.txt. The wheel is written deterministically (sorted, SOURCE_DATE_EPOCH)."""
import base64, fnmatch, hashlib, os, subprocess, sys, sysconfig, time, tomllib, zipfile

FORCE = "wheel.force-include."


def _ignored(path, pats):
    parts = path.split("/")
    for p in pats:
        q = p.strip("/")
        if p.startswith("/"):
            heads = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
            if any(fnmatch.fnmatch(h, q) for h in heads):
                return True
        elif any(fnmatch.fnmatch(x, q) for x in parts) or fnmatch.fnmatch(path, q):
            return True
    return False


def get_requires_for_build_wheel(config_settings=None):
    return []


def _cc(args):
    cc = os.environ.get("CC", "cc").split()
    subprocess.check_call(cc + os.environ.get("CFLAGS", "").split() + args)


def _compile(pkg, bdir):
    """the library (with GPU code for each target) and the extension, into bdir"""
    lib = os.path.join(bdir, pkg, "lib")
    os.makedirs(lib, exist_ok=True)
    gpu = []
    arch, rocm = os.environ.get("PYTORCH_ROCM_ARCH"), os.environ.get("ROCM_PATH")
    if arch and rocm:
        # each csrc/*.hip as hipcc compiles it: HIP_CLANG_LAUNCHER (when set) runs ROCm's
        # clang, given absolute paths as CMake gives them, and no cuid of the toy's own: clang
        # hashes those paths into each object's __hip_cuid_ unless a -cuid reaches it
        launch = [os.environ["HIP_CLANG_LAUNCHER"]] if os.environ.get("HIP_CLANG_LAUNCHER") else []
        for k in sorted(f for f in os.listdir("csrc") if f.endswith(".hip")):
            o = os.path.abspath(os.path.join(bdir, k + ".o"))
            cmd = launch + [os.path.join(rocm, "llvm", "bin", "clang"), "-x", "hip", "-nogpulib", "-nogpuinc",
                            "-fPIC"] + os.environ.get("HIPFLAGS", "").split() + \
                ["-c", os.path.abspath(os.path.join("csrc", k)), "-o", o] + ["--offload-arch=" + a for a in arch.split(";")]
            print("toy-skbuild: " + " ".join(cmd), flush=True)
            subprocess.check_call(cmd)
            gpu.append(o)
        gpu.append("csrc/hipstub.c")
    _cc(["-shared", "-fPIC", "-O1", "-I" + pkg + "/include", "-Wl,-soname,lib%s_toy.so" % pkg,
         "-o", os.path.join(lib, "lib%s_toy.so" % pkg), "csrc/lib.c"] + gpu)
    ext = os.path.join(bdir, pkg, "_C" + sysconfig.get_config_var("EXT_SUFFIX"))
    _cc(["-shared", "-fPIC", "-O1", "-I" + pkg + "/include", "-I" + sysconfig.get_paths()["include"],
         "-o", ext, "csrc/module.c", "-L" + lib, "-l%s_toy" % pkg, "-Wl,-rpath,$ORIGIN/lib"])
    with open(os.path.join(bdir, pkg, "_arch.py"), "w") as f:
        f.write("ARCH = %r\n" % (arch or "cpu"))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    cs = config_settings or {}
    name = tomllib.load(open("pyproject.toml", "rb"))["project"]["name"]
    version = os.environ.get("PYTORCH_BUILD_VERSION") or open("version.txt").read().strip()
    pats = []
    if os.path.exists(".gitignore"):
        pats = [l.strip() for l in open(".gitignore") if l.strip() and not l.startswith("#")]
    bdir = os.path.join("build", "toy-skbuild")
    _compile(name, bdir)
    with open(os.path.join(bdir, name, "_version.py"), "w") as f:
        f.write("__version__ = %r\n" % version)
    files = {}
    for root, dirs, fs in os.walk(name):
        dirs.sort()
        for f in fs:
            rel = os.path.join(root, f)
            if not _ignored(rel, pats) and "__pycache__" not in rel:
                files[rel] = rel
    for root, dirs, fs in os.walk(os.path.join(bdir, name)):
        for f in fs:
            p = os.path.join(root, f)
            if not p.endswith(".o"):
                files[os.path.relpath(p, bdir)] = p
    for k, v in cs.items():
        if k.startswith(FORCE):
            files[v] = k[len(FORCE):]
    tag = "cp%d%d" % sys.version_info[:2]
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    di = "%s-%s.dist-info" % (name, version)
    meta = {di + "/METADATA": "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version),
            di + "/WHEEL": "Wheel-Version: 1.0\nGenerator: toy-skbuild\nRoot-Is-Purelib: false\n"
                           "Tag: %s-%s-%s\n" % (tag, tag, plat)}
    when = time.gmtime(max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800))[:6]
    whl = os.path.join(wheel_directory, "%s-%s-%s-%s-%s.whl" % (name, version, tag, tag, plat))
    record = []
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
        def put(arc, data, mode):
            zi = zipfile.ZipInfo(arc, when)
            zi.external_attr = mode << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
            h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (arc, h, len(data)))
        for arc in sorted(files):
            src = files[arc]
            put(arc, open(src, "rb").read(), 0o755 if os.access(src, os.X_OK) else 0o644)
        for arc in sorted(meta):
            put(arc, meta[arc].encode(), 0o644)
        record.append(di + "/RECORD,,")
        zi = zipfile.ZipInfo(di + "/RECORD", when)
        zi.external_attr = 0o644 << 16
        z.writestr(zi, "\n".join(record) + "\n", zipfile.ZIP_DEFLATED)
    return os.path.basename(whl)
