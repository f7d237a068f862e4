#!/bin/sh
# fatwheel's ELF editor against libraries whose strings are shared: GNU ld tail-merges
# .dynstr (a symbol "x_libtail.so" holds DT_NEEDED "libtail.so" in its tail), and a
# section header may name another string table than the loader's DT_STRTAB. An edit must
# never change a name some symbol or version still uses; what the loader would read is
# checked after every edit (a library that would not load is refused), and the result
# is loaded for real (ctypes). --edit-elf on a FIFO is refused in one line.
. "$KILN_SRC/tests/lib.sh"
need cc python3 readelf nm timeout mkfifo
cd "$T" || exit 2

cat >tail.c <<'EOF'
int tail_fn(void) { return 1; }
EOF
# user.c: the tail-merge case; same.c: a symbol that is DT_NEEDED's very string
cat >user.c <<'EOF'
extern int tail_fn(void);
int x_val __asm__("x_libtail.so") = 7;
int user_fn(void) { return tail_fn() + 1; }
EOF
cat >same.c <<'EOF'
extern int tail_fn(void);
int shared_val __asm__("libtail.so") = 8;
int same_fn(void) { return tail_fn() + 2; }
EOF
cc -shared -fPIC -o libtail.so -Wl,-soname,libtail.so tail.c &&
	cc -shared -fPIC -o libuser.so user.c -L. -ltail &&
	cc -shared -fPIC -o libsame.so same.c -L. -ltail &&
	cp libtail.so libt.so || exit 2
# GNU ld merged the tail: .dynstr has no string "libtail.so" of its own
readelf -p .dynstr libuser.so >dynstr.txt || exit 2
lacks "the linker tail-merged DT_NEEDED into the symbol" dynstr.txt "]  libtail.so"

# syms LIB: its dynamic symbols defined in .data, sorted
syms () { nm -D --defined-only "$1" | awk '$2 == "D" { print $3 }' | sort | tr '\n' ' '; }
# loads LIB SYMBOL: dlopen it (its DT_NEEDED from here) and read the int SYMBOL
loads () { LD_LIBRARY_PATH=$T python3 -c 'import ctypes, sys; l = ctypes.CDLL(sys.argv[1]); print(ctypes.c_int.in_dll(l, sys.argv[2]).value)' "$1" "$2" 2>&1; }

# --- a shorter DT_NEEDED over a tail-merged string
check "edit: rename DT_NEEDED libtail.so -> libt.so (tail-merged)" fatwheel --edit-elf --replace-needed libtail.so libt.so libuser.so out-user.so
same "edit: the symbol that holds it in its tail is intact" "x_libtail.so " "$(syms out-user.so)"
has_needed () { readelf -d "$1" | grep -q "Shared library: \[$2\]"; }
check "edit: DT_NEEDED is the new name" has_needed out-user.so libt.so
same "edit: the edited library loads and its symbol reads" 7 "$(loads "$T/out-user.so" x_libtail.so)"

# dynsym_header IN OUT MODE: IN with .dynsym's section header rewritten: "relink" points
# its sh_link at .shstrtab; "hide" makes it SHT_PROGBITS with no link (the loader reads
# neither: it finds the tables through the dynamic section)
dynsym_header () {
	python3 - "$@" <<'EOF' || exit 2
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
for i in range(shnum):
    o = shoff + i * shentsize
    if struct.unpack_from("<I", b, o + 4)[0] != 11:     # SHT_DYNSYM
        continue
    if sys.argv[3] == "relink":
        struct.pack_into("<I", b, o + 40, shstrndx)
    else:
        struct.pack_into("<I", b, o + 4, 1)
        struct.pack_into("<I", b, o + 40, 0)
open(sys.argv[2], "wb").write(b)
EOF
}

# --- .dynsym's section header names another string table (the loader does not care)
dynsym_header libsame.so relinked.so relink
run fatwheel --edit-elf --replace-needed libtail.so libt.so relinked.so out-relinked.so
same "edit: .dynsym linked to another table: exit 0" 0 "$rc"
# (nm reads names through the section header, which names .shstrtab: ask the loader)
same "edit: it loads and its symbol reads" 8 "$(loads "$T/out-relinked.so" libtail.so)"

# --- a .dynsym whose section header hides it (another type, no link): only the loader's
# view finds its names; an edit that would clobber one is refused, nothing written
dynsym_header libsame.so hidden.so hide
run fatwheel --edit-elf --replace-needed libtail.so libt.so hidden.so out-hidden.so
if [ "$rc" = 0 ]; then
	same "edit: a hidden .dynsym: what comes out still loads" 8 "$(loads "$T/out-hidden.so" libtail.so)"
else
	has "edit: a hidden .dynsym: refused, naming the name it would break" "$T/.err" "the loader would read 'sym libt.so' where the input has 'sym libtail.so'"
	same "edit: refused in one line" 1 "$(lines "$T/.err")"
	[ -e out-hidden.so ] && notok "edit: refused, nothing written" || ok "edit: refused, nothing written"
fi

# --- a FIFO, a folder, a missing file as the input
mkfifo fifo.so || exit 2
run timeout 60 fatwheel --edit-elf --set-soname x fifo.so out-fifo.so
same "edit: a FIFO: exit 2" 2 "$rc"
has "edit: the FIFO is named" "$T/.err" "fifo.so: is a FIFO, not a regular file"
run fatwheel --edit-elf --set-soname x "$T" out-dir.so
same "edit: a folder: exit 2" 2 "$rc"
has "edit: the folder is named" "$T/.err" "Is a directory"
run fatwheel --edit-elf --set-soname x nothere.so out-none.so
same "edit: a missing input: exit 2" 2 "$rc"
exit 0
