#!/bin/sh
# exit codes and messages across the tools: a missing input is exit 2 in every tool; a
# FIFO or a folder given where a file belongs is exit 2 and named as such (never opened
# for reading: a FIFO would hang, so each command runs under timeout); a malformed
# library is exit 2 whether the reader or the editor finds it.
. "$KILN_SRC/tests/lib.sh"
need cc python3 timeout mkfifo
cd "$T" || exit 2
mkfifo fifo fifo.whl fifo.tgz fifo-1.0-py3-none-any.whl || exit 2
mkdir -p dir venv/bin || exit 2
Z=$(printf %064d 0)
# t DESC WANT-RC WANT-TEXT CMD...: one line, the exit code, the text in it
t () { d=$1 w=$2 m=$3; shift 3; run timeout 60 "$@"
	same "$d: exit $w" "$w" "$rc"
	has "$d: says '$m'" "$T/.err" "$m"
	same "$d: one line" 1 "$(lines "$T/.err")"; }

# --- a missing input: exit 2
t "gpucheck targets, missing" 2 "nothere.so: No such file" gpucheck targets nothere.so
t "gpucheck cover, missing" 2 "nothere.so: No such file" gpucheck cover --target=gfx1100 nothere.so
t "wheelpick, missing" 2 "nothere: No such file" wheelpick nothere
t "wheelpick --python, missing" 2 "nothere: cannot run" wheelpick --python="$T/nothere" dir
t "fatwheel, missing" 2 "No such file" fatwheel nothere-1.0-py3-none-any.whl -w out
t "fatwheel --edit-elf, missing" 2 "nothere.so: No such file" fatwheel --edit-elf --set-soname x nothere.so out.so
t "envclean --profile, missing" 2 "nothere.env: No such file" envclean --profile nothere.env -- true
t "envclean --check --python, missing" 2 "No such file" envclean --check --python="$T/nothere"
t "srcpin state, missing" 2 "nothere: No such file" srcpin state nothere
t "hipify-wrap, missing" 2 "nothere: No such file" hipify-wrap --project=torch nothere
t "kiln-stage unpack, missing" 2 "nothere.tgz: No such file" kiln-stage unpack nothere.tgz --into=u
t "kiln-stage fetch file://, missing" 2 "nothere.tgz: No such file" kiln-stage fetch "file://$T/nothere.tgz" --sha256="$Z" -o dl/x
t "kiln-stage info, missing" 2 "nothere: No such file" kiln-stage info nothere
t "kiln-stage labels, missing" 2 "nothere: No such file" kiln-stage labels nothere

# --- a FIFO where a file belongs: exit 2, named, not waited on
t "gpucheck targets, a FIFO" 2 "fifo: is a FIFO, not a regular file" gpucheck targets fifo
t "wheelpick --check, a FIFO" 2 "fifo.whl: is a FIFO" wheelpick --check fifo.whl
t "wheelpick --python, a FIFO" 2 "fifo: is a FIFO, not a Python interpreter" wheelpick --python="$T/fifo" dir
t "envclean --check --python, a FIFO" 2 "fifo: is a FIFO, not a Python interpreter" envclean --check --python="$T/fifo"
t "envclean --profile, a FIFO" 2 "fifo: is a FIFO, not a regular file" envclean --profile fifo -- true
t "fatwheel, a FIFO" 2 "fifo-1.0-py3-none-any.whl: is a FIFO, not a regular file" fatwheel fifo-1.0-py3-none-any.whl -w out
t "fatwheel --edit-elf, a FIFO" 2 "fifo: is a FIFO, not a regular file" fatwheel --edit-elf --set-soname x fifo out.so
t "kiln-stage unpack, a FIFO" 2 "fifo.tgz: is a FIFO, not a regular file" kiln-stage unpack fifo.tgz --into=u
t "kiln-stage fetch file://, a FIFO" 2 "fifo.tgz: is a FIFO, not a regular file" kiln-stage fetch "file://$T/fifo.tgz" --sha256="$Z" -o dl/x
t "kiln-stage fetch -o, a FIFO" 2 "fifo: is a FIFO, not a regular file" kiln-stage fetch "file://$T/fifo.tgz" --sha256="$Z" -o fifo
t "kiln-stage info, a FIFO" 2 "fifo: is a FIFO, not a folder of records" kiln-stage info fifo

# --- a folder where a file belongs: exit 2, named
t "fatwheel --edit-elf, a folder" 2 "dir: Is a directory" fatwheel --edit-elf --set-soname x dir out.so
t "envclean --profile, a folder" 2 "dir: Is a directory" envclean --profile dir -- true
t "kiln-stage unpack, a folder" 2 "dir: Is a directory" kiln-stage unpack dir --into=u
t "kiln-stage fetch file://, a folder" 2 "dir: Is a directory" kiln-stage fetch "file://$T/dir" --sha256="$Z" -o dl/x
t "kiln-stage fetch -o, a folder" 2 "dir: is a folder, not a regular file" kiln-stage fetch "file://$T/x" --sha256="$Z" -o dir
same "nothing was made for any of them" "" "$(ls -d u out/* out.so dl 2>/dev/null)"

# --- a malformed library: exit 2 from the reader and from the editor alike
cat >tail.c <<'EOF'
int tail_fn(void) { return 1; }
EOF
cat >user.c <<'EOF'
extern int tail_fn(void);
int user_fn(void) { return tail_fn() + 1; }
EOF
mkdir -p lp bad && cc -shared -fPIC -o lp/libtail.so -Wl,-soname,libtail.so tail.c &&
	cc -shared -fPIC -o libuser.so user.c -Llp -ltail && head -c 600 lp/libtail.so >bad/libtail.so || exit 2
# mkwheel SO [SHIFT]: demo-1.0-...whl with SO as demo/_x.so; SHIFT moves .dynstr's sh_addr
# away from DT_STRTAB (a section header the loader never reads, which the editor refuses)
mkwheel () { python3 - "$@" <<'EOF'
import base64, hashlib, struct, sys, zipfile
b = bytearray(open(sys.argv[1], "rb").read())
if len(sys.argv) > 2:
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", b, 0x3a)
    for i in range(shnum):
        o = shoff + i * shentsize
        if struct.unpack_from("<I", b, o + 4)[0] == 3 and struct.unpack_from("<Q", b, o + 8)[0] & 2:
            struct.pack_into("<Q", b, o + 16, struct.unpack_from("<Q", b, o + 16)[0] + int(sys.argv[2]))
            break
files = {"demo/__init__.py": b"", "demo/_x.so": bytes(b),
         "demo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
         "demo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: kiln-test\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"}
rec = "".join("%s,sha256=%s,%d\n" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode(), len(d)) for n, d in files.items())
with zipfile.ZipFile("demo-1.0-cp311-cp311-linux_x86_64.whl", "w", zipfile.ZIP_DEFLATED) as z:
    for n, d in files.items():
        z.writestr(n, d)
    z.writestr("demo-1.0.dist-info/RECORD", rec + "demo-1.0.dist-info/RECORD,,\n")
EOF
}
W=demo-1.0-cp311-cp311-linux_x86_64.whl
mkwheel libuser.so || exit 2
check "fatwheel: the well-formed wheel repairs" fatwheel --lib-path lp "$W" -w good
run fatwheel --lib-path bad "$W" -w out
same "fatwheel: a malformed library the reader finds: exit 2" 2 "$rc"
mkwheel libuser.so 8 || exit 2
run fatwheel --lib-path lp "$W" -w out
same "fatwheel: a malformed library the editor finds: exit 2" 2 "$rc"
has "fatwheel: the editor says why" "$T/.err" "do not match the .dynstr section"
head -c 600 libuser.so >trunc.so
t "gpucheck: a malformed library" 2 "trunc.so:" gpucheck targets trunc.so
t "fatwheel --edit-elf: a malformed library" 2 "trunc.so:" fatwheel --edit-elf --set-soname x trunc.so out.so
same "nothing written for a malformed library" "" "$(ls -d out/* out.so 2>/dev/null)"
exit 0
