#!/usr/bin/python3
"""Write NVIDIA fatbins the way nvcc 13 lays them out, for gpucheck's tests without nvcc
(the layout gpucheck reads: tools/lib/offload.c, off_nvfatbin).

  nvfatbin.py cubin OUT SM [FUNC|nofunc|badsym]
      a minimal cubin: ELF64, EM_CUDA (190), a .symtab with one STT_FUNC symbol named
      FUNC, or with only a section symbol (nofunc: nvcc's device-link stub), or with a
      .symtab whose size runs past the file (badsym)
  nvfatbin.py fatbin OUT ENTRY...
      one fatbin container; ENTRY is sass:SM:FILE, sasz:SM:FILE (flagged zstd-compressed),
      or ptx:SM (a PTX text for compute_SM); SM may end in a or f
  nvfatbin.py cat OUT FILE...   concatenate containers, each 8-byte aligned
"""
import struct
import sys

MAGIC = 0xBA55ED50


def cubin(out, sm, what):
    strtab = b"\0" + (what.encode() if what not in ("nofunc", "badsym") else b".text") + b"\0"
    shstr = b"\0.symtab\0.strtab\0.shstrtab\0"
    sym0 = bytes(24)
    # st_name, st_info, st_other, st_shndx, st_value, st_size
    if what in ("nofunc", "badsym"):
        sym1 = struct.pack("<IBBHQQ", 0, 3, 0, 0, 0, 0)      # STT_SECTION
    else:
        sym1 = struct.pack("<IBBHQQ", 1, 0x12, 0, 0, 0, 16)  # STB_GLOBAL | STT_FUNC
    symtab = sym0 + sym1
    body = symtab + strtab + shstr
    shoff = 64 + len(body)
    shoff += -shoff % 8
    symoff, stroff, shsoff = 64, 64 + len(symtab), 64 + len(symtab) + len(strtab)
    symsize = len(symtab) if what != "badsym" else 1 << 20

    def sh(name, typ, off, size, link=0, info=0, ent=0):
        return struct.pack("<IIQQQQIIQQ", name, typ, 0, 0, off, size, link, info, 1, ent)

    shdrs = bytes(64) + sh(1, 2, symoff, symsize, 2, 1, 24) + sh(9, 3, stroff, len(strtab)) + \
        sh(17, 3, shsoff, len(shstr))
    ident = b"\x7fELF" + bytes([2, 1, 1, 0x41, 8]) + bytes(7)
    ehdr = ident + struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, int(sm.rstrip("af")),
                               64, 0, 0, 64, 4, 3)
    data = ehdr + body
    data += bytes(shoff - len(data)) + shdrs
    open(out, "wb").write(data)


def entry(spec):
    kind, sm, *rest = spec.split(":")
    num, sfx = int(sm.rstrip("af")), sm[len(sm.rstrip("af")):]
    flags = 0x11 | {"": 0, "a": 0x100000, "f": 0x200000}[sfx]
    if kind == "ptx":
        pay = (".version 9.0\n.target sm_%s\n.address_size 64\n" % sm).encode() + b"\0"
        k = 1
    else:
        pay = open(rest[0], "rb").read()
        k = 2
        if kind == "sasz":
            flags |= 0x8000
    pay += bytes(-len(pay) % 8)
    hdr = bytearray(64)
    struct.pack_into("<HHIQ", hdr, 0, k, 0x0101, 64, len(pay))
    struct.pack_into("<I", hdr, 28, num)
    struct.pack_into("<I", hdr, 40, flags)
    return bytes(hdr) + pay


def fatbin(out, specs):
    body = b"".join(entry(s) for s in specs)
    open(out, "wb").write(struct.pack("<IHHQ", MAGIC, 1, 16, len(body)) + body)


def cat(out, files):
    d = b""
    for f in files:
        d += open(f, "rb").read()
        d += bytes(-len(d) % 8)
    open(out, "wb").write(d)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "cubin":
        cubin(a[1], a[2], a[3] if len(a) > 3 else "K")
    elif a[0] == "fatbin":
        fatbin(a[1], a[2:])
    elif a[0] == "cat":
        cat(a[1], a[2:])
