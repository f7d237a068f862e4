#!/usr/bin/python3
"""Write kpack'd libraries and .kpack archives the way ROCm's rocm-kpack does, for
gpucheck's tests (the format: rocm-systems shared/kpack/docs/multi_arch_packaging_with_kpack.md,
python/rocm_kpack/elf/kpack_transform.py, runtime/src/toc_parser.cpp and loader.cpp).

  kpackify.py lib IN OUT KERNEL_NAME SEARCH_PATH...
      copy IN to OUT with every .hipFatBinSegment wrapper rewritten HIPF -> HIPK (reserved1 =
      its index, the co_index), .hip_fatbin zeroed past its first 24 bytes (a zero-paged
      section keeps an unaligned prefix), and a .rocm_kpack_ref section (msgpack) added
  kpackify.py archive OUT SCHEME ARCHES KEY=ARCH=FILE...
      write a KPAK v1 archive: SCHEME zstd-per-kernel or none, ARCHES comma-separated
      gfx_arches, one kernel per KEY=ARCH=FILE (KEY like lib/libk.so#0)
  kpackify.py frames OUT FRAME... -- KEY=ARCH=ORDINAL=SIZE...
      a zstd-per-kernel archive of ready zstd frames (files, taken as they are) and a
      table naming them as given (hostile archives: one frame for many entries, lies)
  kpackify.py ref OUT JSON    write msgpack of a JSON value (bad references)
  kpackify.py toc OUT JSON    write a KPAK header and msgpack of JSON as the table
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import msgpack

HIPF, HIPK = 0x48495046, 0x4B504948


def sections(d):
    shoff, = struct.unpack_from("<Q", d, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 58)
    hdr = lambda i: struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)
    stro = hdr(shstrndx)[4]
    out = {}
    for i in range(shnum):
        h = hdr(i)
        name = d[stro + h[0]:d.index(b"\0", stro + h[0])].decode()
        out[name] = (h[4], h[5])  # file offset, size
    return out


def lib(src, dst, kernel, paths):
    d = bytearray(open(src, "rb").read())
    s = sections(d)
    off, size = s[".hipFatBinSegment"]
    for i in range(size // 24):
        w = off + i * 24
        assert struct.unpack_from("<I", d, w)[0] == HIPF
        struct.pack_into("<I", d, w, HIPK)
        struct.pack_into("<I", d, w + 16, i)
    off, size = s[".hip_fatbin"]
    d[off + 24:off + size] = bytes(size - 24)
    open(dst + ".tmp", "wb").write(d)
    ref = msgpack.packb({"kpack_search_paths": paths, "kernel_name": kernel}, use_bin_type=True)
    open(dst + ".ref", "wb").write(ref)
    subprocess.run(["objcopy", "--add-section", ".rocm_kpack_ref=" + dst + ".ref",
                    "--set-section-flags", ".rocm_kpack_ref=readonly", dst + ".tmp", dst], check=True)
    os.unlink(dst + ".tmp")
    os.unlink(dst + ".ref")


def archive(dst, scheme, arches, kernels):
    blob, toc, blobs, frames = bytearray(), {}, [], []
    for i, (key, arch, path) in enumerate(kernels):
        data = open(path, "rb").read()
        toc.setdefault(key, {})[arch] = {"type": "hsaco", "ordinal": i, "original_size": len(data)}
        if scheme == "none":
            blobs.append({"offset": 64 + len(blob), "size": len(data)})
            blob += data
        else:
            frames.append(subprocess.run(["zstd", "-q", "-c", "-3"], input=data, stdout=subprocess.PIPE,
                                         check=True).stdout)
    meta = {"format_version": 1, "group_name": "test", "gfx_arch_family": arches[0],
            "gfx_arches": arches, "compression_scheme": scheme, "toc": toc}
    if scheme == "none":
        meta["blobs"] = blobs
    else:
        blob = bytearray(struct.pack("<I", len(frames)))
        for f in frames:
            blob += struct.pack("<I", len(f)) + f
        meta["zstd_offset"], meta["zstd_size"] = 64, len(blob)
    head = b"KPAK" + struct.pack("<IQ", 1, 64 + len(blob))
    open(dst, "wb").write(head + bytes(64 - len(head)) + blob + msgpack.packb(meta, use_bin_type=True))


def frames(dst, files, entries):
    blob = bytearray(struct.pack("<I", len(files)))
    for f in files:
        d = open(f, "rb").read()
        blob += struct.pack("<I", len(d)) + d
    toc = {}
    for key, arch, ordinal, size in entries:
        toc.setdefault(key, {})[arch] = {"type": "hsaco", "ordinal": int(ordinal), "original_size": int(size)}
    arches = sorted({e[1] for e in entries})
    meta = {"format_version": 1, "gfx_arches": arches, "compression_scheme": "zstd-per-kernel",
            "zstd_offset": 64, "zstd_size": len(blob), "toc": toc}
    head = b"KPAK" + struct.pack("<IQ", 1, 64 + len(blob))
    open(dst, "wb").write(head + bytes(64 - len(head)) + blob + msgpack.packb(meta, use_bin_type=True))


def main(a):
    if a[0] == "lib":
        lib(a[1], a[2], a[3], a[4:])
    elif a[0] == "archive":
        archive(a[1], a[2], a[3].split(","), [k.split("=", 2) for k in a[4:]])
    elif a[0] == "frames":
        k = a.index("--")
        frames(a[1], a[2:k], [e.split("=", 3) for e in a[k + 1:]])
    elif a[0] == "ref":
        open(a[1], "wb").write(msgpack.packb(json.loads(a[2]), use_bin_type=True))
    elif a[0] == "toc":
        t = msgpack.packb(json.loads(a[2]), use_bin_type=True)
        open(a[1], "wb").write(b"KPAK" + struct.pack("<IQ", 1, 16) + t)


if __name__ == "__main__":
    main(sys.argv[1:])
