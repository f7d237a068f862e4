#!/bin/sh
# configure: options, errors, dependency messages per distro, write-if-changed,
# self-regeneration, and the tools' build/install through ninja.
. "$KILN_SRC/tests/lib.sh"
need ninja pkg-config

# a private copy of the parts configure reads, so the test may touch them
src=$T/src
mkdir -p "$src/tools" "$src/env"
cp -R "$KILN_SRC/configure" "$KILN_SRC/ninja" "$KILN_SRC/mk" "$src/"
cp -R "$KILN_SRC/tools/lib" "$KILN_SRC/tools/kiln-stage" "$src/tools/"
cp -R "$KILN_SRC/env/deps" "$src/env/"
mkdir -p "$src/tools/hello"
cat >"$src/tools/hello/hello.c" <<'C'
#include "util.h"
#include <stdio.h>
int main(int argc, char **argv) { setprogname(argv[0]); (void)argc; puts("hello"); return 0; }
C
printf '.TH HELLO 1\n.SH NAME\nhello\n' >"$src/tools/hello/hello.1"
cd "$T" || exit 2
# the tools are built at -O0 (CFLAGS, exported: ninja's regeneration and make see it too):
# what is checked is how configure and ninja build them, not the code (a third of the
# CPU time of the builds at -O2 -g)
CFLAGS=-O0
export CFLAGS
# seedgen DIR: the build folder DIR starts with the generator and the probes' answers
# (DIR/gen) of the first build folder, $T/b, or before it is made of $T's: the same
# sources, copied with their time, so configure takes them as they are. configure builds
# the generator from the sources once in this file, in $T, not once per build folder
# (8 CPU s each); the probes are asked again where their key differs (configure's
# probe_key). A copy that fails only costs the time
seedgen () { _g=$T/b/build/gen; [ -f "$_g/probes" ] || _g=$T/build/gen
	mkdir -p "$1/gen" || return
	for _f in kiln-stage probes; do [ ! -f "$_g/$_f" ] || cp -p "$_g/$_f" "$1/gen/"; done; :; }
# aged: every file of the copy older than build.ninja and config.mk, and those older than
# now (ninja's log says so too): a file written next is newer than what configure wrote,
# and a file configure writes again is newer than before, whatever the clock's grain (mtimes
# set, not waited for)
aged () {
	find "$src" -exec touch -h -d @1000000000 {} + &&
		touch -d @1000000100 build.ninja config.mk && ninja -t restat >/dev/null
}

check "--help exits 0" "$src/configure" --help
has "--help lists --arch" "$T/.out" "--arch=LIST"
for o in --python --rocm-path --prefix --builddir --pins --pin --with --without --cache \
         --stage-cache --mirror --jobs --install-deps; do
	has "--help lists $o" "$T/.out" "  $o"
done

exits "unknown option exits 2" 2 "$src/configure" --arc=gfx1151
same "unknown option: one line with a suggestion" \
	"configure: unknown option '--arc'; did you mean --arch? (see ./configure --help)" "$(cat "$T/.err")"
exits "unknown arch exits 2" 2 "$src/configure" --arch=gfx1115
same "unknown arch: did you mean" "configure: unknown arch 'gfx1115'; did you mean gfx1151?" "$(cat "$T/.err")"
exits "an AMD target the stack does not build for" 2 "$src/configure" --arch=gfx810
same "not built for: said so, with a buildable suggestion" \
	"configure: arch 'gfx810' is an AMD target the stack does not build for; did you mean gfx803?" "$(cat "$T/.err")"
exits "a typo next to a target not built for" 2 "$src/configure" --arch=gfx8l0
same "did you mean offers only targets built for (gfx803, not gfx810)" \
	"configure: unknown arch 'gfx8l0'; did you mean gfx803?" "$(cat "$T/.err")"
exits "arch with no close match" 2 "$src/configure" --arch=potato
same "no suggestion when nothing is close" "configure: unknown arch 'potato'" "$(cat "$T/.err")"
exits "mixed backends refused" 2 "$src/configure" --arch=gfx1151,sm_90
has "mixed backends named" "$T/.err" "mixes gfx and cuda"
exits "bad CUDA arch" 2 "$src/configure" --arch=sm_x9
exits "unknown component in --with" 2 "$src/configure" --with=vlm
same "component suggestion" "configure: unknown component 'vlm' in --with; did you mean vllm?" "$(cat "$T/.err")"
exits "bad --cache" 2 "$src/configure" --cache=distcc
exits "bad --jobs" 2 "$src/configure" --jobs=0
exits "--pin without =" 2 "$src/configure" --pin vision
exits "--pin wheel: to a missing file" 2 "$src/configure" --pin torch=wheel:/nonexistent/t.whl
has "missing wheel named" "$T/.err" "/nonexistent/t.whl: no such file"
exits "stray argument" 2 "$src/configure" gfx1151
lines_err=$(lines "$T/.err")
same "errors are one line" 1 "$lines_err"

# missing dependencies: a pkg-config that knows nothing, per distro
fakepc=$T/fakepc
printf '#!/bin/sh\nexit 1\n' >"$fakepc"; chmod +x "$fakepc"
for d in "debian:apt-get install -y" "fedora:dnf install -y" "arch:pacman -S --needed" "opensuse-leap:zypper install -y" "ubuntu:apt-get install -y"; do
	id=${d%%:*}; want=${d#*:}
	printf 'ID=%s\n' "$id" >"$T/os-release"
	KILN_OS_RELEASE=$T/os-release PKG_CONFIG=$fakepc run "$src/configure"
	same "missing deps on $id exit 1" 1 "$rc"
	has "missing deps on $id name the install command" "$T/.err" "$want"
	has "missing deps on $id name libgit2" "$T/.err" "libgit2"
	same "missing deps on $id: one line" 1 "$(lines "$T/.err")"
done
has "the install command names the -dev packages" "$T/.err" "libgit2-dev"
has "checking lines are printed" "$T/.out" "checking for libgit2... no"

# --install-deps asks the distro's package manager for what is missing (faked here)
mkdir -p "$T/fakebin"
printf '#!/bin/sh\nexit 1\n' >"$T/fakebin/dpkg-query"
printf '#!/bin/sh\necho "$*" >>"%s/apt.log"\n' "$T" >"$T/fakebin/apt-get"
printf '#!/bin/sh\n"$@"\n' >"$T/fakebin/sudo"
chmod +x "$T/fakebin/"*
printf 'ID=debian\n' >"$T/os-release"
KILN_OS_RELEASE=$T/os-release PATH="$T/fakebin:$PATH" run "$src/configure" --install-deps
same "--install-deps then configures" 0 "$rc"
has "--install-deps runs apt-get install" "$T/apt.log" "install -y -qq gcc pkg-config ninja-build libgit2-dev"
has "--install-deps installs the test packages too" "$T/apt.log" "clang-19"
has "the command line is recorded whole" build.ninja "#   ./configure --install-deps"
same "--install-deps is not replayed by regeneration" "configure_cmd = $src/configure" "$(grep '^configure_cmd' build.ninja)"

# a real configure: writes once, then leaves everything unchanged
mkdir -p "$T/b" && seedgen "$T/b/build" && cd "$T/b" || exit 2
check "configure succeeds" "$src/configure" --prefix="$T/inst"
has "checking libgit2 version" "$T/.out" "checking for libgit2... yes ("
has "records its command line" build.ninja "#   ./configure --prefix=$T/inst"
has "config.mk records it too" config.mk "#   ./configure --prefix=$T/inst"
aged
m1=$(stat -c %Y.%y build.ninja config.mk)
check "configure again" "$src/configure" --prefix="$T/inst"
m2=$(stat -c %Y.%y build.ninja config.mk)
same "same arguments leave build.ninja and config.mk untouched" "$m1" "$m2"
has "says unchanged" "$T/.out" "build.ninja is unchanged"

check "ninja builds the tools" ninja
check "the built tool runs" ./build/bin/hello
run ninja
same "a no-op ninja does nothing" "ninja: no work to do." "$(cat "$T/.out")"

# build.conf STATIC: a package's library from its static archive where one is installed,
# else the shared one (a package made here: libkfake, shared only, then with its archive)
mkdir -p "$T/fake" "$T/s" && seedgen "$T/s/build"
printf 'int kfake(void) { return 7; }\n' >"$T/fake/kfake.c"
cc -shared -fPIC -o "$T/fake/libkfake.so" "$T/fake/kfake.c"
printf 'libdir=%s\nName: kfake\nDescription: t\nVersion: 1\nLibs: -L${libdir} -lkfake\nCflags:\n' "$T/fake" >"$T/fake/kfake.pc"
mkdir -p "$src/tools/fk"
printf '#include <stdio.h>\nint kfake(void);\nint main(void) { printf("%%d\\n", kfake()); return 0; }\n' >"$src/tools/fk/fk.c"
printf '.TH FK 1\n.SH NAME\nfk\n' >"$src/tools/fk/fk.1"
printf 'PKGS="kfake"\nSTATIC="kfake"\n' >"$src/tools/fk/build.conf"
cd "$T/s" || exit 2
check "STATIC without an archive: configure" env PKG_CONFIG_PATH="$T/fake" "$src/configure"
has "STATIC without an archive: the shared library is linked" build.ninja "-lkfake"
lacks "STATIC without an archive: no archive named" build.ninja "libkfake.a"
cc -c -fPIC -o "$T/fake/kfake.o" "$T/fake/kfake.c" && ar rcs "$T/fake/libkfake.a" "$T/fake/kfake.o"
rm -f build.ninja
check "STATIC with an archive: configure" env PKG_CONFIG_PATH="$T/fake" "$src/configure"
has "STATIC with an archive: linked by path" build.ninja "$T/fake/libkfake.a"
check "STATIC with an archive: ninja builds it" env PKG_CONFIG_PATH="$T/fake" ninja build/bin/fk
same "STATIC with an archive: it runs without the shared library" "7" "$(env LD_LIBRARY_PATH= ./build/bin/fk 2>&1)"
readelf -d build/bin/fk | grep -q 'libkfake' && notok "STATIC: fk still needs libkfake.so" || ok "STATIC: fk needs no libkfake.so"
# PKGS a|b: the first name pkg-config knows (msgpack-c 6 renamed msgpack.pc to msgpack-c.pc)
printf 'PKGS="knone|kfake"\n' >"$src/tools/fk/build.conf"
rm -f build.ninja
check "PKGS knone|kfake: configure takes kfake" env PKG_CONFIG_PATH="$T/fake" "$src/configure"
has "PKGS knone|kfake: kfake's library is linked" build.ninja "-lkfake"
printf 'PKGS="knone|knone2"\n' >"$src/tools/fk/build.conf"
rm -f build.ninja
exits "PKGS knone|knone2: neither is known: configure fails (2)" 2 env PKG_CONFIG_PATH="$T/fake" "$src/configure"
has "and names the words" "$T/.err" "pkg-config cannot find knone|knone2"
rm -rf "$src/tools/fk"
cd "$T/b" || exit 2

# an input of configure changes: ninja reruns configure by itself (once)
aged
echo "# touched" >>"$src/env/deps/debian-test.txt"
run ninja
has "a changed input reruns configure" "$T/.out" "CONFIGURE"
run ninja
same "and then settles" "ninja: no work to do." "$(cat "$T/.out")"
# an input changes and configure is run by hand: the next ninja does not run it again
aged
echo "# touched again" >>"$src/env/deps/debian-test.txt"
check "configure by hand after an input changed" "$src/configure" --prefix="$T/inst"
run ninja
same "the next ninja has nothing to do (no second CONFIGURE)" "ninja: no work to do." "$(cat "$T/.out")"
aged
echo "# and again" >>"$src/env/deps/debian-test.txt"
check "configure by hand with another option" "$src/configure" --prefix="$T/inst2"
run ninja
same "no second CONFIGURE either" "ninja: no work to do." "$(cat "$T/.out")"
check "back to the first prefix" "$src/configure" --prefix="$T/inst"
# a new tool source is picked up without rerunning configure by hand
printf 'int hello_extra(void);\nint hello_extra(void) { return 1; }\n' >"$src/tools/hello/extra.c"
check "a new source file is built" ninja
has "the new module was compiled" "$T/.out" "extra.o"

# the tests against real upstreams are a target of their own; this copy has none
exits "ninja check-real without tests/real/run.sh fails" 1 ninja check-real
has "and says what is missing" "$T/.err" "kiln: check-real: tests/real/run.sh is missing"
mkdir -p "$src/tests/real" && printf 'echo "real tests ran in $KILN_SRC"\n' >"$src/tests/real/run.sh"
check "ninja check-real runs tests/real/run.sh" ninja check-real
has "with KILN_SRC" "$T/.out" "real tests ran in $src"
check "ninja install honours DESTDIR" env DESTDIR="$T/dest" ninja install
check "tool installed" test -x "$T/dest$T/inst/bin/hello"
check "man page installed" test -f "$T/dest$T/inst/share/man/man1/hello.1"

# make users get the same targets through mk/tools.mk
if command -v make >/dev/null 2>&1; then
	mkdir -p "$T/m" && seedgen "$T/m/build" && cd "$T/m" || exit 2
	check "make -f mk/tools.mk configures and builds" make -f "$src/mk/tools.mk"
	check "make built the tool" test -x build/bin/hello
	check "make -f mk/tools.mk install" make -f "$src/mk/tools.mk" install DESTDIR="$T/mdest"
	check "make install put the tool under DESTDIR" test -x "$T/mdest/usr/local/bin/hello"
fi

# arch options are recorded
cd "$T/b" && check "configure --arch with sm_ targets" "$src/configure" --arch=sm_90,sm_120 --jobs=3
has "arch recorded in config.mk" config.mk "KILN_ARCH = sm_90,sm_120"
has "jobs recorded" config.mk "KILN_JOBS = 3"
check "--pin NAME=REF repeatable" "$src/configure" --arch=cpu --pin vision=v0.22.1 --pin audio=v2.8.0
has "pins recorded" config.mk "KILN_PIN_OVERRIDES = vision=v0.22.1 audio=v2.8.0"
seedgen nowhere
exits "native without gpucheck says it cannot detect" 2 env PATH=/usr/bin:/bin "$src/configure" --arch=native --builddir=nowhere
has "native: cannot detect" "$T/.err" "cannot detect"
