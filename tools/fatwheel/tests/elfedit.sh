#!/bin/sh
# fatwheel's own ELF editor (fatwheel --edit-elf, the code fatwheel runs on every library
# it bundles) against patchelf on Debian's real libraries: the same edits give the same
# `readelf -d` entries (addresses compared as the section they name), the results read
# cleanly with readelf, objdump and strip, and load: ld.so takes the bundled copies under
# their hashed names (LD_DEBUG) and a function of the library runs.
# Default tier: libzstd and libgit2 (x86_64), and lld-linked aarch64 and i686 objects.
# KILN_SLOW=1 adds librocsparse (1.3 GB) and torch 1.13.1's libtorch_cpu (about 1 minute
# and 2.5 GB of memory on 2 cores); torch's full closure, loaded and run, is
# bench/fatwheel-torch.sh.
. "$KILN_SRC/tests/lib.sh"
need patchelf readelf objdump strip gcc sha256sum
MA=$(gcc -print-multiarch)
LD=/usr/lib/$MA

# the dynamic entries as "TAG value", addresses replaced by the section they start
dyn () {
	readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] \([^ ]*\) *[A-Z_a-z0-9]* *\([0-9a-f]*\) .*/\2 \1/p' >"$T/.secs"
	readelf -dW "$1" | sed -n 's/^ *0x[0-9a-f]* (\([A-Za-z_0-9]*\)) *\(.*\)$/\1 \2/p' |
		awk -v secs="$T/.secs" 'BEGIN { while ((getline l < secs) > 0) { split(l, f, " "); a = f[1]; sub(/^0*/, "", a); s[a] = f[2] } }
		$1 == "STRSZ" { print "STRSZ *"; next }
		{ v = $2; sub(/^0x0*/, "", v); if ($2 ~ /^0x/ && v != "" && (v in s)) print $1, s[v]; else print }'
}

# hashed name of a library file name: libfoo.so.1 -> libfoo-HASH8.so.1
hashed () {
	h=$(printf %s "$1" | sha256sum | cut -c1-8)
	case $1 in *.so*) echo "${1%%.so*}-$h.so${1#*.so}" ;; *) echo "$1-$h" ;; esac
}

# patchelf the way fatwheel used to run it: one kind of edit per call
viapatchelf () {
	pin=$1 pout=$2 pson=$3 prp=$4; shift 4
	cp "$pin" "$pout"
	[ -n "$pson" ] && patchelf --set-soname "$pson" "$pout"
	[ $# -gt 0 ] && patchelf "$@" "$pout"
	if [ -n "$prp" ]; then
		if readelf -d "$pin" | grep -q '(RPATH)' && readelf -d "$pin" | grep -q '(RUNPATH)'; then
			patchelf --remove-rpath "$pout"
		fi
		patchelf --force-rpath --set-rpath "$prp" "$pout"
	fi
}

cat >"$T/load.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
	if (argc > 2) {
		int (*f)(void) = (int (*)(void))dlsym(h, argv[2]);
		if (!f) { fprintf(stderr, "%s\n", dlerror()); return 1; }
		printf("%s=%d\n", argv[2], f());
	}
	return 0;
}
EOF
gcc -o "$T/load" "$T/load.c" -ldl || { notok "build the loader"; exit 1; }

# one library: NAME FILE FUNC (FUNC optional: an int(void) to call)
one () {
	name=$1 f=$2 fn=${3:-}
	[ -f "$f" ] || { notok "$name: $f is missing (install its Debian package)"; return; }
	son=$(readelf -d "$f" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
	mkdir -p "$T/$name/fw" "$T/$name/pe"
	# --- without hashed sonames: the bundled library gets $ORIGIN only
	check "$name: fatwheel --edit-elf sets the RPATH" \
		fatwheel --edit-elf --set-rpath '$ORIGIN' "$f" "$T/$name/fw/plain.so"
	viapatchelf "$f" "$T/$name/pe/plain.so" "" '$ORIGIN'
	dyn "$T/$name/fw/plain.so" >"$T/$name/fw.plain"
	dyn "$T/$name/pe/plain.so" >"$T/$name/pe.plain"
	same "$name: readelf -d matches patchelf (RPATH only)" "$(cat "$T/$name/pe.plain")" "$(cat "$T/$name/fw.plain")"
	# --- with hashed sonames: new SONAME, every non-glibc DT_NEEDED renamed
	set --
	ren=
	for n in $(readelf -d "$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
		case $n in libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) continue ;; esac
		set -- "$@" --replace-needed "$n" "$(hashed "$n")"
		ren="$ren $n"
	done
	check "$name: fatwheel --edit-elf renames, sets SONAME and RPATH" \
		fatwheel --edit-elf --set-soname "$(hashed "$son")" "$@" --set-rpath '$ORIGIN' "$f" "$T/$name/fw/$(hashed "$son")"
	viapatchelf "$f" "$T/$name/pe/hashed.so" "$(hashed "$son")" '$ORIGIN' "$@"
	dyn "$T/$name/fw/$(hashed "$son")" >"$T/$name/fw.hashed"
	dyn "$T/$name/pe/hashed.so" >"$T/$name/pe.hashed"
	same "$name: readelf -d matches patchelf (hashed names)" "$(cat "$T/$name/pe.hashed")" "$(cat "$T/$name/fw.hashed")"
	ed=$T/$name/fw/$(hashed "$son")
	run readelf -aW "$ed"
	if [ "$rc" = 0 ] && ! [ -s "$T/.err" ]; then ok "$name: readelf -a reads it without a warning"; else notok "$name: readelf -a warns"; _show; fi
	check "$name: objdump -p reads it" objdump -p "$ed"
	run strip -o "$T/$name/fw/stripped.so" "$ed"
	if [ "$rc" = 0 ] && ! [ -s "$T/.err" ]; then ok "$name: strip rewrites it without a warning"; else notok "$name: strip"; _show; fi
	# the plain edit loads and runs (its dependencies are the system's)
	run "$T/load" "$T/$name/fw/plain.so" $fn
	if [ "$rc" = 0 ]; then ok "$name: the RPATH-only edit loads${fn:+ and $fn runs}"; else notok "$name: the RPATH-only edit does not load"; _show; fi
	# the bundled copies, under their hashed names, beside it; patchelf's beside its own
	for n in $ren; do
		dep=$(ldd "$f" | awk -v n="$n" '$1 == n { print $3 }')
		fatwheel --edit-elf --set-soname "$(hashed "$n")" "$dep" "$T/$name/fw/$(hashed "$n")" ||
			notok "$name: cannot make the bundled copy of $n"
		cp "$dep" "$T/$name/pe/$(hashed "$n")" && patchelf --set-soname "$(hashed "$n")" "$T/$name/pe/$(hashed "$n")"
	done
	"$T/load" "$T/$name/pe/hashed.so" $fn >"$T/pe.out" 2>"$T/pe.err"
	perc=$?
	for s in "$ed" "$T/$name/fw/stripped.so"; do
		run env LD_DEBUG=libs "$T/load" "$s" $fn
		if [ "$rc" = 0 ]; then
			ok "$name: ${s##*/} loads${fn:+ and $fn runs}"
		elif [ "$perc" != 0 ] && [ -z "$fn" ]; then
			# one level of hashed copies beside the system's deeper ones is not always
			# loadable (two libnuma for torch): then patchelf's must fail the same way
			same "$name: ${s##*/} fails to load as patchelf's edit does" "$(tail -n 1 "$T/pe.err")" "$(grep -v '^ *[0-9]*:' "$T/.err" | tail -n 1)"
			continue
		else
			notok "$name: ${s##*/} does not load"; grep -v '^ *[0-9]*:' "$T/.err" | tail -n 5 | sed 's/^/#   /'
		fi
		[ -n "$fn" ] && has "$name: $fn answered" "$T/.out" "$fn="
		for n in $ren; do
			grep -q "calling init: $T/$name/fw/$(hashed "$n")" "$T/.err" ||
				{ notok "$name: ld.so did not take the bundled $(hashed "$n")"; sed -n '/find library/,+3p' "$T/.err" | head -n 20 | sed 's/^/#   /'; continue 2; }
		done
		[ -n "$ren" ] && ok "$name: ld.so took every bundled copy (LD_DEBUG) for ${s##*/}"
	done
	rm -rf "$T/$name"
}

one zstd "$(readlink -f "$LD/libzstd.so.1")" ZSTD_versionNumber
one git2 "$(ls "$LD"/libgit2.so.1.* 2>/dev/null | head -n 1)" git_libgit2_init

# the in-place path: a name that fits where the old one was, no new segment
f=$(readlink -f "$LD/libzstd.so.1")
check "same-length rename" fatwheel --edit-elf --replace-needed libc.so.6 libc.so.6 "$f" "$T/noop.so"
cmp -s "$f" "$T/noop.so" && ok "an edit that changes nothing leaves the bytes" || notok "a no-op edit changed bytes"
f=$(ls "$LD"/libgit2.so.1.* | head -n 1)
check "in-place rename" fatwheel --edit-elf --replace-needed libgssapi_krb5.so.2 libgssapi_krb9.so.2 "$f" "$T/inplace.so"
viapatchelf "$f" "$T/inplace-pe.so" "" "" --replace-needed libgssapi_krb5.so.2 libgssapi_krb9.so.2
same "in-place rename: readelf -d matches patchelf" "$(dyn "$T/inplace-pe.so" | grep -v '^STRTAB')" "$(dyn "$T/inplace.so" | grep -v '^STRTAB')"
same "in-place rename: same size, same program headers" "$(wc -c <"$f") $(readelf -lW "$f" | grep -c LOAD)" \
	"$(wc -c <"$T/inplace.so") $(readelf -lW "$T/inplace.so" | grep -c LOAD)"
readelf -V "$T/inplace.so" | grep -q 'File: libgssapi_krb9.so.2' && ok "in-place rename: the version need follows" ||
	notok "in-place rename: .gnu.version_r still names the old library"
same "in-place rename: the symbol table is untouched" "$(readelf --dyn-syms -W "$f" | md5sum)" "$(readelf --dyn-syms -W "$T/inplace.so" | md5sum)"

# a relocating edit clears what it leaves behind: the old .dynstr and the moved
# .gnu.hash are zeros where they were, and the library still loads
f=$(readlink -f "$LD/libzstd.so.1")
check "a renaming edit that moves the string table" fatwheel --edit-elf --set-soname libzstd-0123abcd.so.1 --set-rpath '$ORIGIN/../zstd.libs' "$f" "$T/moved.so"
secat () { readelf -SW "$1" | sed 's/^ *\[ *[0-9]*\] */ /' | awk -v n="$2" '$1 == n { print $4, $5; exit }'; }
set -- $(secat "$f" .dynstr)
old=$((0x$1)) len=$((0x$2))
set -- $(secat "$T/moved.so" .dynstr)
[ "$((0x$1))" != "$old" ] && ok "the string table moved" || notok "the string table moved"
same "the old .dynstr bytes are zeros" "$(head -c "$len" /dev/zero | md5sum)" "$(tail -c +$((old + 1)) "$T/moved.so" | head -c "$len" | md5sum)"
same "the new .dynstr starts with the old one's bytes" "$(tail -c +$((old + 1)) "$f" | head -c "$len" | md5sum)" "$(tail -c +$((0x$1 + 1)) "$T/moved.so" | head -c "$len" | md5sum)"
set -- $(secat "$f" .gnu.hash)
gh=$((0x$1)) ghl=$((0x$2))
set -- $(secat "$T/moved.so" .gnu.hash)
if [ "$((0x$1))" != "$gh" ]; then
	php=$(( $(readelf -hW "$T/moved.so" | awk '/Start of program headers/ {print $5}') + $(readelf -hW "$T/moved.so" | awk '/Number of program headers/ {print $5}') * $(readelf -hW "$T/moved.so" | awk '/Size of program headers/ {print $5}') ))
	[ $php -lt $gh ] && php=$gh
	n=$((gh + ghl - php))
	same "the moved .gnu.hash's old bytes (past the program headers) are zeros" "$(head -c "$n" /dev/zero | md5sum)" "$(tail -c +$((php + 1)) "$T/moved.so" | head -c "$n" | md5sum)"
fi
run "$T/load" "$T/moved.so" ZSTD_versionNumber
same "... and the library still loads and runs" 0 "$rc"

# DT_RUNPATH instead, and the same edit twice changes nothing the second time
f=$(ls "$LD"/libgit2.so.1.* | head -n 1)
check "--set-runpath" fatwheel --edit-elf --set-runpath '$ORIGIN/../lib' "$f" "$T/rp.so"
readelf -d "$T/rp.so" >"$T/rp.dyn"
has "... writes DT_RUNPATH" "$T/rp.dyn" 'Library runpath: [$ORIGIN/../lib]'
lacks "... and no DT_RPATH" "$T/rp.dyn" '(RPATH)'
check "--set-rpath over it" fatwheel --edit-elf --set-rpath '$ORIGIN' "$T/rp.so" "$T/rp2.so"
readelf -d "$T/rp2.so" >"$T/rp2.dyn"
has "... turns it into DT_RPATH" "$T/rp2.dyn" 'Library rpath: [$ORIGIN]'
lacks "... with no DT_RUNPATH left" "$T/rp2.dyn" '(RUNPATH)'
same "... in place: no second new segment" "$(readelf -lW "$T/rp.so" | grep -c ' LOAD ')" "$(readelf -lW "$T/rp2.so" | grep -c ' LOAD ')"
check "the same edit again" fatwheel --edit-elf --set-rpath '$ORIGIN' "$T/rp2.so" "$T/rp3.so"
cmp -s "$T/rp2.so" "$T/rp3.so" && ok "... leaves the bytes" || notok "... changed the bytes"
run "$T/load" "$T/rp2.so" git_libgit2_init
same "... and the twice-edited library runs" 0 "$rc"

# other machines and the 32-bit class: clang-19 + lld link objects without a libc
if command -v clang-19 >/dev/null && command -v ld.lld-19 >/dev/null || command -v ld.lld >/dev/null; then
	printf 'int f(void) { return 1; }\n' >"$T/a.c"
	for t in aarch64 i686 x86_64; do
		if ! clang-19 --target=$t-linux-gnu -nostdlib -shared -fuse-ld=lld -fPIC "$T/a.c" \
			-Wl,-soname,liba.so.1 -Wl,-rpath,/opt/old -o "$T/a-$t.so" 2>"$T/.err"; then
			notok "clang-19 links an $t object"; _show; continue
		fi
		check "$t: fatwheel --edit-elf" fatwheel --edit-elf --set-soname liba-0123abcd.so.1 --set-rpath '$ORIGIN/../a.libs' "$T/a-$t.so" "$T/e-$t.so"
		viapatchelf "$T/a-$t.so" "$T/p-$t.so" liba-0123abcd.so.1 '$ORIGIN/../a.libs'
		same "$t: readelf -d matches patchelf" "$(dyn "$T/p-$t.so")" "$(dyn "$T/e-$t.so")"
		run readelf -aW "$T/e-$t.so"
		if [ "$rc" = 0 ] && ! [ -s "$T/.err" ]; then ok "$t: readelf -a reads it without a warning"; else notok "$t: readelf -a warns"; _show; fi
		check "$t: llvm-strip rewrites it" llvm-strip-19 -o "$T/s-$t.so" "$T/e-$t.so"
	done
else
	notok "needs clang-19 and lld (apt-get install clang-19 lld-19)"
fi

# refused inputs: a clear one-line error, exit 2, no output
printf 'not elf' >"$T/bad.so"
exits "not ELF is refused" 2 fatwheel --edit-elf --set-rpath x "$T/bad.so" "$T/bad.out"
has "the error names the file" "$T/.err" "bad.so:"
[ -e "$T/bad.out" ] && notok "a refused edit left an output" || ok "a refused edit leaves no output"
gcc -c -o "$T/obj.o" "$T/load.c"
exits "a relocatable object is refused" 2 fatwheel --edit-elf --set-rpath x "$T/obj.o" "$T/obj.out"
exits "--edit-elf without OUT is a usage error" 2 fatwheel --edit-elf --set-rpath x "$T/obj.o"

if [ "${KILN_SLOW:-0}" = 1 ]; then
	one rocsparse "$(readlink -f "$LD/librocsparse.so.0")"
	one torch_cpu "$(readlink -f "$LD/libtorch_cpu.so.1.13")"
else
	echo "skip optional tier slow: librocsparse and libtorch_cpu (KILN_SLOW=1 runs them)"
fi
