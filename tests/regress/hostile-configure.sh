#!/bin/sh
# configure against hostile options and pins: a URL with credentials in any argument
# (--index-url first: its refusal used to print the password) is refused in one line that
# shows the user information as ***, by the shell configure before anything else and by
# kiln-stage graph itself; the secret is in no output and no file. An --index-url with
# white space or a control byte: one line, no control byte out. C_CMAKE_ARGS is an
# allow-list: -DNAME[:TYPE]=VALUE, -UNAME and CMake's warning, log and trace switches; the
# install prefix in any spelling (-DCMAKE_INSTALL_PREFIX:PATH=, --install-prefix), the
# source, build folder and generator, and every option that writes or reads a file
# outside the build folder (--graphviz=, --system-information, --profiling-output=,
# --trace-redirect=, -P, -C, --toolchain ...) are refused, exit 2, naming the pin.
. "$KILN_SRC/tests/lib.sh"
need python3
cd "$T" || exit 2
PY3=/usr/bin/python3
"$PY3" -m venv --without-pip "$T/venv" || exit 2
SECRET=s3cr3tPW
mkdir -p b w

# nosecret DESC: the secret is in no output of the last run and no file under b/
nosecret () {
	if grep -q "$SECRET" "$T/.out" "$T/.err"; then notok "$1: the secret is repeated"; sed 's/^/#   /' "$T/.err"; else ok "$1: the secret is in no output"; fi
	if grep -rlq "$SECRET" b 2>/dev/null; then notok "$1: the secret is in a file"; grep -rl "$SECRET" b | sed 's/^/#   /'; else ok "$1: nor in any file"; fi
	if LC_ALL=C grep -q '[^ -~]' "$T/.err"; then notok "$1: a control byte in the message"; else ok "$1: no control byte in the message"; fi
}
# shellrefuses DESC ARG...: the shell configure refuses, exit 2, one line with ***
shellrefuses () { d=$1; shift
	run sh -c 'cd "$1" && shift && exec "$@"' sh "$T/b" "$KILN_SRC/configure" --python="$T/venv/bin/python" --arch=cpu KILN_BIN="$KILN_BIN" "$@"
	same "configure: $d: exit 2" 2 "$rc"
	same "configure: $d: one line" 1 "$(lines "$T/.err")"
	has "configure: $d: the user information shown as ***" "$T/.err" "://***@"
	has "configure: $d: says why" "$T/.err" "credentials in a URL would land in build.ninja"
	nosecret "configure: $d"
	same "configure: $d: nothing written" "" "$(ls b)"; }
# gen ARG...: kiln-stage graph as configure calls it, the same arguments after --
gen () { (cd b && kiln-stage graph --srcdir="$KILN_SRC" --builddir="$T/b/build" --pins="${PINS:-$KILN_SRC/env/versions.env}" \
	--arch=cpu --python="$T/venv/bin/python" "$@" -- configure "$@"); }
genrefuses () { d=$1 w=$2; shift 2
	run gen "$@"
	same "graph: $d: exit 2" 2 "$rc"
	same "graph: $d: one line" 1 "$(lines "$T/.err")"
	has "graph: $d: says '$w'" "$T/.err" "$w"
	nosecret "graph: $d"
	rm -rf b/build b/build.ninja b/config.mk; }

# --- credentials in a URL: every shape, every option
for u in "https://alice:$SECRET@pypi.example/simple" "https://$SECRET@pypi.example/simple" \
	"HTTPS://alice:$SECRET@pypi.example:8443/simple?x=1" "https://alice:p@ss$SECRET@pypi.example/simple" \
	"http://:$SECRET@pypi.example/" "file://alice:$SECRET@/srv/simple" "ftp://alice:$SECRET@x/"; do
	shellrefuses "--index-url=${u%%$SECRET*}..." --index-url="$u"
	genrefuses "--index-url=${u%%$SECRET*}..." "://***@" --index-url="$u"
done
shellrefuses "a mistyped --index-ur=" --index-ur="https://a:$SECRET@x/simple"
shellrefuses "--mirror" --mirror="https://a:$SECRET@x/"
shellrefuses "--git-cache" --git-cache="https://a:$SECRET@x/"
shellrefuses "--wheelhouse" --wheelhouse="https://a:$SECRET@x/"
shellrefuses "--stage-cache" --stage-cache="https://a:$SECRET@x/"
shellrefuses "--cache-remote" --cache-remote="redis://a:$SECRET@x:6379"
shellrefuses "--pin=NAME=URL@REF" --pin="torch=https://a:$SECRET@x/pytorch.git@v2.6.0"
shellrefuses "--pin NAME=URL (two words)" --pin "torch=https://a:$SECRET@x/pytorch.git"
shellrefuses "an argument configure does not know" "https://a:$SECRET@x/"
genrefuses "--git-cache, kiln-stage graph itself" "--git-cache=https://***@x/" --git-cache="https://a:$SECRET@x/"
genrefuses "--pin, kiln-stage graph itself" "--pin=torch=https://***@x/t.git@v1" --pin="torch=https://a:$SECRET@x/t.git@v1"
printf 'torch_URL=https://alice:%s@example.invalid/pytorch.git\n' "$SECRET" >pins-creds.env
PINS=$T/pins-creds.env genrefuses "a pins file's URL with credentials" "torch_URL: has credentials in the URL"
# not credentials: a pin's URL@REF, and an @ in the path
check "graph: a pin URL@REF is no credential" sh -c 'cd "$1/b" && kiln-stage graph --srcdir="$2" --builddir="$1/b/build" --pins="$2/env/versions.env" --arch=cpu --python="$1/venv/bin/python" -- configure --pin="torch=https://example.invalid/pytorch.git@v2.6.0" --pin vision=v0.21.0 --pin audio=v2.6.0' sh "$T" "$KILN_SRC"
rm -rf b/build b/build.ninja b/config.mk

# --- --index-url: white space, control bytes
genrefuses "--index-url with a space" "white space in the URL" --index-url="https://x/simple --find-links=/tmp/evil"
genrefuses "--index-url with a newline" "white space in the URL" --index-url="$(printf 'https://x/simple\n--find-links=/tmp/evil')"
genrefuses "--index-url with an OSC sequence" "--index-url=https://x/\\x1b]0;t\\x07: a control character in the URL" --index-url="$(printf 'https://x/\033]0;t\007')"
genrefuses "--index-url that is not http, https or file" "not an http://, https:// or file:// URL" --index-url="ssh://x/simple"
run sh -c 'cd "$1" && shift && exec "$@"' sh "$T/b" "$KILN_SRC/configure" --python="$T/venv/bin/python" "$(printf 'x\033]0;t\007')"
same "configure: an unknown argument with an OSC: exit 2" 2 "$rc"
if LC_ALL=C grep -q '[^ -~]' "$T/.err"; then notok "configure: the message holds a control byte"; else ok "configure: the message holds no control byte"; fi

# --- C_CMAKE_ARGS: an allow-list
cmakepins () { printf 'stack_WITHOUT=torch,vision,audio\nstack_WITH=ggml\nggml_URL=https://example.invalid/toy/ggml\nggml_REF=v1\nggml_CMAKE_ARGS="%s"\n' "$1" >"$T/cm.env"; }
for a in "--graphviz=/tmp/kiln-evil.dot" "--graphviz /tmp/kiln-evil.dot" "--system-information /tmp/kiln-evil" \
	"--profiling-output=/tmp/kiln-evil --profiling-format=google-trace" "--trace-redirect=/tmp/kiln-evil" \
	"-DCMAKE_INSTALL_PREFIX=/usr" "-DCMAKE_INSTALL_PREFIX:PATH=/usr" "-DCMAKE_INSTALL_PREFIX:STRING=/" \
	"-DX=1 -DCMAKE_INSTALL_PREFIX:PATH=" "--install-prefix=/usr" "--install-prefix /usr" \
	"-DCMAKE_STAGING_PREFIX=/tmp/x" "-DCMAKE_RUNTIME_OUTPUT_DIRECTORY=/tmp/x" \
	"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY_RELEASE=/tmp/x" "-DCMAKE_ARCHIVE_OUTPUT_DIRECTORY=/tmp/x" \
	"-DCMAKE_INSTALL_LIBDIR=/usr/lib" "-DCMAKE_INSTALL_BINDIR:PATH=/usr/local/bin" \
	"-DCMAKE_EXPORT_PACKAGE_REGISTRY=ON" "-S /elsewhere" "-S/elsewhere" "-B /tmp/x" "-G Ninja" "-GNinja" \
	"-A x64" "-T host=x64" "--build ." "--install ." "-P /tmp/x.cmake" "-E rm -rf /tmp/x" "-N" \
	"-C /tmp/init.cmake" "--preset=x" "--workflow --preset x" "--toolchain=/tmp/t.cmake" \
	"--help-full /tmp/kiln-evil" "--version /tmp/kiln-evil" "-DNOVALUE" "-D NAME=1" "NAME=1" \
	'-D$(touch /tmp/kiln-evil)=1' "-Wno-dev --graphviz=/tmp/kiln-evil.dot"; do
	cmakepins "$a"
	PINS=$T/cm.env genrefuses "C_CMAKE_ARGS=\"$a\"" "cm.env:5: "
done
check "graph: C_CMAKE_ARGS refused before anything is written" test ! -e b/build.ninja
for a in "-DGGML_VULKAN=ON -DGGML_NATIVE=OFF" "-DX:BOOL=ON -DY:PATH=/opt/y -DZ:STRING=" "-UFOO" \
	"-Wno-dev -Wdeprecated --warn-uninitialized --no-warn-unused-cli" "--log-level=VERBOSE --log-context" \
	"--trace-expand --trace-format=json-v1 --trace-source=CMakeLists.txt" "-DCMAKE_INSTALL_RPATH=/opt/x/lib" \
	"-DCMAKE_INSTALL_LIBDIR=lib" "-DCMAKE_HIP_COMPILER=/usr/lib/llvm-21/bin/clang++" "-DA=b=c" "--fresh"; do
	cmakepins "$a"
	PINS=$T/cm.env run gen
	same "graph: C_CMAKE_ARGS=\"$a\" is allowed" 0 "$rc"
	[ "$rc" = 0 ] || sed 's/^/#   /' "$T/.err"
	rm -rf b/build b/build.ninja b/config.mk
done
check "no file was written outside the build folder" test ! -e /tmp/kiln-evil.dot -a ! -e /tmp/kiln-evil
exit 0
