#!/bin/sh
# kiln-stage unpack against links that are safe one by one but escape together, a link
# chain that ends at a device, link targets that would grow memory without bound, and
# sparse members that fit --max-size by their stored size; the default size cap is
# proportionate to the archive. Tarballs made with Python's tarfile and GNU tar -S.
. "$KILN_SRC/tests/lib.sh"
need python3 tar truncate
cd "$T" || exit 2
mkdir u

python3 - <<'EOF' || exit 2
import io, tarfile
def mk(name, members, fmt=tarfile.PAX_FORMAT, mode="w"):
    with tarfile.open(f"{name}.tar" + (".gz" if mode == "w:gz" else ""), mode, format=fmt) as z:
        for m, data in members:
            z.addfile(m, io.BytesIO(data) if data is not None else None)
def f(name, data=b"x"):
    i = tarfile.TarInfo(name); i.size = len(data); return (i, data)
def d(name):
    i = tarfile.TarInfo(name); i.type = tarfile.DIRTYPE; i.mode = 0o755; return (i, None)
def l(name, target):
    i = tarfile.TarInfo(name); i.type = tarfile.SYMTYPE; i.linkname = target; return (i, None)
# a link named through an earlier link: lib/d is the top, up is the top's parent, and
# up/evil would be made in the folder beside --into
mk("through", [f("lib/ok"), l("lib/d", ".."), l("up", "lib/d/.."), l("up/evil", "lib"),
               l("up/sub/x", "lib")])
# '..' through a linked folder: lib/d is lib, so lib/d/../.. is the top's parent
mk("dotdot", [f("lib/ok"), l("lib/d", "."), l("x", "lib/d/../..")])
# a chain that climbs one folder per link and ends at /dev/zero: the next stage that
# reads lib/zero never ends
chain = [f("lib/ok"), l("d", "."), l("p1", "d/..")]
chain += [l("p%d" % k, "p%d/.." % (k - 1)) for k in range(2, 13)]
chain.append(l("lib/zero", "../p12/dev/zero"))
mk("devchain", chain)
# links that point at each other
mk("loop", [f("lib/ok"), l("lib/a", "b"), l("lib/b", "a")])
# a target longer than any link can hold
mk("longtarget", [f("lib/ok"), l("lib/long", "a/" * 3000)])
# 300 links with 4000-byte targets: 1.2 MB of names that a 10 KB .tar.gz declares
mk("manylinks", [f("lib/ok")] + [l("lib/l%04d" % k, "y" * 4000) for k in range(300)],
   mode="w:gz")
# what a real SDK holds: soname chains, a folder linked from another, a link through a
# real folder's '..', a dangling link, a hard link
good = [d("lib"), f("lib/libx.so.1.2", b"elf"), l("lib/libx.so.1", "libx.so.1.2"),
        l("lib/libx.so", "libx.so.1"), d("llvm"), l("llvm/lib", "../lib"),
        l("llvm/libx", "lib/libx.so"), l("bin", "llvm/lib/../lib"),
        l("lib/gone", "nothing-here"), l("lib/viaup", "../llvm/../lib/libx.so")]
h = tarfile.TarInfo("lib/hard"); h.type = tarfile.LNKTYPE; h.linkname = "lib/libx.so.1.2"
good.append((h, None))
mk("good", good)
EOF

check "unpack: a tree with link chains that stay inside" kiln-stage unpack good.tar --into=u/good
same "unpack: a link through a linked folder is kept" "elf" "$(cat u/good/bin/libx.so 2>&1)"
same "unpack: '..' of a real folder inside is kept" "elf" "$(cat u/good/lib/viaup 2>&1)"

for c in "through:inside the link 'up'" "dotdot:outside the folder (through the link 'lib/d'" "devchain:outside the folder (through the link" \
	"loop:too many levels of links" "longtarget:longer than 4095 bytes"; do
	n=${c%%:*}
	exits "unpack: $n refused: 1" 1 kiln-stage unpack "$n.tar" --into="u/$n"
	has "unpack: $n: the reason" "$T/.err" "${c#*:}"
	same "unpack: $n: one line" 1 "$(lines "$T/.err")"
done
same "unpack: nothing made beside --into" "good" "$(ls u | tr '\n' ' ' | sed 's/ $//')"
[ -e evil ] || [ -e u/evil ] || [ -e u/sub ] && notok "unpack: a link was made outside --into" ||
	ok "unpack: no link made outside --into"

# link targets count toward the cap, and the names kept in memory are bounded
exits "unpack: link targets count toward --max-size: 1" 1 kiln-stage unpack manylinks.tar.gz --into=u/many --max-size=1000000
has "unpack: the cap is named" "$T/.err" "size cap of 1000000 bytes"
check "unpack: the same links under a larger cap" kiln-stage unpack manylinks.tar.gz --into=u/many2 --max-size=2000000
rm -rf u/many2

# sparse members: two of 600000 bytes (stored: a few bytes each) pass a cap of 1000000
mkdir -p sp/lib && truncate -s 600000 sp/lib/a sp/lib/b && echo end >>sp/lib/a && echo end >>sp/lib/b || exit 2
tar -C sp -cSf sparse.tar . || exit 2
exits "unpack: sparse members count by their real size: 1" 1 kiln-stage unpack sparse.tar --into=u/sparse --max-size=1000000
has "unpack: the sparse member is named" "$T/.err" "member 'lib/"
check "unpack: the sparse members under a cap that holds them" kiln-stage unpack sparse.tar --into=u/sparse2 --max-size=1300000
same "unpack: a sparse member's real size" 600004 "$(wc -c <u/sparse2/lib/a | tr -d ' ')"
rm -rf u/sparse2

# the default cap is proportionate: a 10 KB tarball may not declare 3 GiB
mkdir -p big/lib && truncate -s 3G big/lib/huge || exit 2
tar -C big -cSf big.tar . || exit 2
exits "unpack: 3 GiB from a 10 KB tarball under the default cap: 1" 1 kiln-stage unpack big.tar --into=u/big
has "unpack: the default cap is said" "$T/.err" "32 times the tarball's size, at least 2 GiB"
same "unpack: refused ones leave nothing" "good" "$(ls -a u | grep -v '^\.\.*$' | tr '\n' ' ' | sed 's/ $//')"
exit 0
