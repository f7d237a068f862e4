"""forgewheel.py SRC DST OP [ARG...]: write DST, a copy of the wheel SRC with one
hostile change, for the hostile-input tests. Every other byte stays valid (RECORD is
rewritten to list added members with their real hashes), so a tool that refuses DST
refuses it for that one change.

OPs:  add NAME [TEXT]        a member (deflated), listed in RECORD
      addfile NAME PATH      a member holding the bytes of the file PATH, listed in RECORD
      addlink NAME TARGET    a member with a symbolic link's mode (S_IFLNK) holding TARGET
      adddir NAME TEXT       a folder entry (NAME ends in '/') carrying TEXT as data
      rename OLD NEW         every member path starting with OLD starts with NEW instead
      cdcrc NAME             the central directory's CRC-32 of NAME lies (local header and
                             data agree with each other)
      crc NAME               both CRC-32 fields of NAME lie (the data disagrees)
      encrypt NAME           the encrypted flag, in the local header and central entry
      usize NAME DELTA       both declared uncompressed sizes of NAME move by DELTA
      csize NAME DELTA       both declared compressed sizes of NAME move by DELTA
      bomb NAME              both uncompressed sizes claim 2 GiB
      stream                 no change of content: every member rewritten as a writer that
                             cannot seek does it (flag bit 3, sizes in data descriptors)
"""
import base64, csv, hashlib, io, struct, sys, zipfile

src, dst, op, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]


def h(b):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()


def rewrite(extra=(), rename=None):
    """copy src to dst, adding (ZipInfo, bytes) pairs and renaming, RECORD kept true"""
    zi = zipfile.ZipFile(src)
    rows, recname, items = [], None, []
    for i in zi.infolist():
        data = zi.read(i.filename)
        name = i.filename
        if rename and name.startswith(rename[0]):
            name = rename[1] + name[len(rename[0]):]
        if name.endswith(".dist-info/RECORD"):
            recname = name
            continue
        n = zipfile.ZipInfo(name, i.date_time)
        n.compress_type, n.external_attr, n.create_system = i.compress_type, i.external_attr, i.create_system
        items.append((n, data))
    items.extend(extra)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
        for n, data in items:
            zo.writestr(n, data)
            if not n.filename.endswith("/"):
                rows.append([n.filename, h(data), str(len(data))])
        rows.append([recname, "", ""])
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        zo.writestr(recname, out.getvalue())


def patch(name, fn):
    """apply fn(buf, local_header_offset, central_entry_offset) to the bytes of src"""
    b = bytearray(open(src, "rb").read())
    z = zipfile.ZipFile(src)
    info = z.getinfo(name)
    cd = b.find(b"PK\x01\x02")
    while cd >= 0:
        nl = struct.unpack_from("<H", b, cd + 28)[0]
        if bytes(b[cd + 46:cd + 46 + nl]) == name.encode():
            break
        cd = b.find(b"PK\x01\x02", cd + 4)
    assert cd >= 0, name
    fn(b, info.header_offset, cd)
    open(dst, "wb").write(b)


def add32(b, off, delta):
    struct.pack_into("<I", b, off, (struct.unpack_from("<I", b, off)[0] + delta) & 0xffffffff)


if op == "add":
    i = zipfile.ZipInfo(args[0])
    i.compress_type = zipfile.ZIP_DEFLATED
    rewrite([(i, (args[1] if len(args) > 1 else "x = 1\n").encode())])
elif op == "addfile":
    i = zipfile.ZipInfo(args[0])
    i.compress_type, i.create_system, i.external_attr = zipfile.ZIP_DEFLATED, 3, 0o100755 << 16
    rewrite([(i, open(args[1], "rb").read())])
elif op == "addlink":
    i = zipfile.ZipInfo(args[0])
    i.create_system, i.external_attr = 3, 0o120777 << 16
    rewrite([(i, args[1].encode())])
elif op == "adddir":
    i = zipfile.ZipInfo(args[0])
    i.external_attr = 0o40755 << 16 | 0x10
    rewrite([(i, args[1].encode())])
elif op == "rename":
    rewrite(rename=(args[0], args[1]))
elif op == "cdcrc":
    patch(args[0], lambda b, lh, cd: add32(b, cd + 16, 1))
elif op == "crc":
    patch(args[0], lambda b, lh, cd: (add32(b, lh + 14, 1), add32(b, cd + 16, 1)))
elif op == "encrypt":
    def enc(b, lh, cd):
        b[lh + 6] |= 1
        b[cd + 8] |= 1
    patch(args[0], enc)
elif op in ("usize", "csize"):
    d = int(args[1])
    lo, co = (22, 24) if op == "usize" else (18, 20)
    patch(args[0], lambda b, lh, cd: (add32(b, lh + lo, d), add32(b, cd + co, d)))
elif op == "bomb":
    def bomb(b, lh, cd):
        struct.pack_into("<I", b, lh + 22, 1 << 31)
        struct.pack_into("<I", b, cd + 24, 1 << 31)
    patch(args[0], bomb)
elif op == "stream":
    class NoSeek(io.RawIOBase):
        def __init__(self, f):
            self.f = f
        def writable(self):
            return True
        def write(self, b):
            return self.f.write(b)
    zi = zipfile.ZipFile(src)
    with open(dst, "wb") as raw, zipfile.ZipFile(NoSeek(raw), "w", zipfile.ZIP_DEFLATED) as zo:
        for i in zi.infolist():
            zo.writestr(i.filename, zi.read(i))
else:
    sys.exit("forgewheel.py: unknown op " + op)
