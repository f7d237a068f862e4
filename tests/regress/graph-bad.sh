#!/bin/sh
# graph-bad: bad input to the stack graph gets one clear message and no stamp: unknown
# component, pin without URL, expected sha that does not match, wheel pin to a missing
# file, malformed profile and pin file, a series naming a missing patch, and an AMD arch
# without ROCm (ninja says what is missing instead of running a doomed build).
. "$KILN_SRC/tests/lib.sh"
. "$KILN_SRC/tests/regress/graph-toy.inc"

toy_venv "$T/venv"
mkdir -p "$T/b" && cd "$T/b" || exit 2
conf () {
	"$KSRC/configure" --python="$T/venv/bin/python" --mirror="$T/mirror" --rocm-path="$T/rocm" --jobs=1 \
		KILN_BIN="$KILN_BIN" "$@"
}
pins () { cp "$T/pins.env" "$T/p.env" && printf '%s\n' "$@" >>"$T/p.env"; }

exits "unknown component in --with: 2" 2 conf --arch=cpu --pins="$T/pins.env" --with=visoin
has "unknown component: did you mean" "$T/.err" "unknown component 'visoin' in --with; did you mean vision?"

grep -v '^audio_URL' "$T/pins.env" >"$T/p.env"
exits "a pin without URL: 2" 2 conf --arch=cpu --pins="$T/p.env"
has "no URL: named with the fix" "$T/.err" "no audio_URL for component audio"
same "no URL: one line" 1 "$(lines "$T/.err")"

exits "wheel pin to a missing file: 2" 2 conf --arch=cpu --pins="$T/pins.env" --pin torch=wheel:/nonexistent/torch-2.8.0-cp311-cp311-linux_x86_64.whl
has "missing wheel named" "$T/.err" "/nonexistent/torch-2.8.0-cp311-cp311-linux_x86_64.whl: no such file"

# a track drops a component (stack_WITHOUT); the command line's --with wins over it
pins 'stack_WITHOUT=audio'
check "configure with stack_WITHOUT=audio" conf --arch=cpu --pins="$T/p.env"
lacks "stack_WITHOUT=audio: no audio stages" build/stack.ninja "audio.wheel"
has "stack_WITHOUT=audio: vision stays" build/stack.ninja "vision.wheel"
check "configure with stack_WITHOUT=audio and --with=audio" conf --arch=cpu --pins="$T/p.env" --with=audio
has "--with=audio wins over the pin file" build/stack.ninja "audio.wheel"
pins 'stack_WITHOUT=torch'
exits "stack_WITHOUT=torch: 2" 2 conf --arch=cpu --pins="$T/p.env"
has "stack_WITHOUT=torch: says why" "$T/.err" "drops torch, which the stack is built on"
pins 'stack_WITHOUT=audoi'
exits "stack_WITHOUT with a typo: 2" 2 conf --arch=cpu --pins="$T/p.env"
has "stack_WITHOUT typo: named with file and line" "$T/.err" "stack_WITHOUT=audoi: names a component kiln does not know"

pins 'potato_URL=https://example.invalid/potato'
exits "pin of an unknown component: 2" 2 conf --arch=cpu --pins="$T/p.env"
has "unknown pin named with file and line" "$T/.err" "p.env:$(grep -n potato "$T/p.env" | cut -d: -f1): unknown pin potato_URL"
same "unknown pin: one line" 1 "$(lines "$T/.err")"
# a typo in a key of a known component is refused too (it used to leave ENV empty)
pins 'vision_EVN="FORCE_CUDA=0"'
exits "unknown pin key of a known component: 2" 2 conf --arch=cpu --pins="$T/p.env"
same "unknown pin key: file, line and did-you-mean" \
	"configure: $T/p.env:$(lines "$T/p.env"): unknown pin vision_EVN; did you mean vision_ENV?" "$(cat "$T/.err")"
pins 'vision_BUILD_OPTS=x'
exits "a key no component has: 2" 2 conf --arch=cpu --pins="$T/p.env"
has "a key no component has: named" "$T/.err" "p.env:$(lines "$T/p.env"): unknown pin vision_BUILD_OPTS"
# names are checked as names: an IMPORT is a module name, never code
pins 'torch_IMPORT="os;open('"'$T/ran'"','"'w'"')"'
exits "an IMPORT that is code: 2" 2 conf --arch=cpu --pins="$T/p.env"
has "an IMPORT that is code: why" "$T/.err" "torch_IMPORT=os;open('$T/ran','w'): not a Python module name"
pins 'vision_DIST="torchvision; rm -rf /"'
exits "a DIST that is no name: 2" 2 conf --arch=cpu --pins="$T/p.env"
pins 'vllm_DEPS="torch potato"'
exits "DEPS naming an unknown component: 2" 2 conf --arch=cpu --pins="$T/p.env"
exits "nothing ran" 1 test -e "$T/ran"

pins 'vision_REF=v1 v2'
exits "malformed pin file: 2" 2 conf --arch=cpu --pins="$T/p.env"
has "malformed pin line named" "$T/.err" "p.env:$(lines "$T/p.env"): unquoted space in value"

pins 'vision_REF v2'
exits "a pin line without '=': 2" 2 conf --arch=cpu --pins="$T/p.env"
has "a pin line without '=': named with file and line" "$T/.err" "configure: $T/p.env:$(lines "$T/p.env"): expected KEY=VALUE, got 'vision_REF v2'"
same "a pin line without '=': one line" 1 "$(lines "$T/.err")"
pins 'vision_REF="v2'
exits "an unterminated quote: 2" 2 conf --arch=cpu --pins="$T/p.env"
has "an unterminated quote: named with file and line" "$T/.err" "configure: $T/p.env:$(lines "$T/p.env"): unterminated \" quote"

# a pin file is data: command substitutions and redirections in it are never run
n=0
for v in "\$(touch $T/ran)" "\"\$(touch $T/ran)\"" "\"\`touch $T/ran\`\"" "\"\${x:=\$(touch $T/ran)}\""; do
	n=$((n + 1))
	pins "torch_REF=$v"
	exits "expansion in a pin value refused ($n): 2" 2 conf --arch=cpu --pins="$T/p.env"
	has "expansion refused ($n): file, line and why" "$T/.err" \
		"configure: $T/p.env:$(lines "$T/p.env"): shell expansion is not supported (write the value out)"
	exits "expansion refused ($n): nothing ran" 1 test -e "$T/ran"
done
# no '$': a value with shell syntax is a plain value, and configure runs nothing of it
pins 'torch_REF=v1>ran' 'vision_REF="v1;touch ran"' "audio_REF='\$(touch ran)'"
check "shell syntax in quotes or without '$' is a value" conf --arch=cpu --pins="$T/p.env"
exits "and configure ran none of it" 1 test -e "$T/b/ran"
has "the value is kept as written" build/keys/torch.src 'REF="v1>ran"'
has "double quotes are removed" build/keys/vision.src 'REF="v1;touch ran"'
has "single quotes keep a '$' literally" build/keys/audio.src 'REF="\$(touch ran)"'

# values with shell syntax reach the stages as data too: a REF that is a command
# substitution is a ref git does not have, an ENV word is set as it is written
pins "torch_REF='v1\$(touch $T/ran)\`touch $T/ran\`'"
check "configure with shell syntax in a single-quoted pin value" conf --arch=cpu --pins="$T/p.env"
exits "ninja torch.src fails: no such ref" 1 ninja torch.src
has "and names the ref as written" "$T/.out" "v1\$(touch $T/ran)"
exits "nothing ran" 1 test -e "$T/ran"
pins "torch_ENV='KILN_X=\$(touch \$T/ran) KILN_Y=1'"
exits "an ENV word that is not NAME=VALUE: 2" 2 conf --arch=cpu --pins="$T/p.env"
has "says so" "$T/.err" "is not a list of NAME=VALUE words"
pins "torch_ENV='KILN_X=\$(touch\${IFS}$T/ran);\`touch\${IFS}$T/ran\`'"
check "configure with shell syntax in an ENV value" conf --arch=cpu --pins="$T/p.env"
check "torch.wheel builds with it" ninja torch.wheel
exits "and nothing ran" 1 test -e "$T/ran"

pins 'torch_KIND=magic'
exits "unknown kind: 2" 2 conf --arch=cpu --pins="$T/p.env"
has "unknown kind named" "$T/.err" "torch_KIND=magic: use build, source, wheel or system"

pins 'torch_SHA=12345'
exits "a SHA that is no commit: 2" 2 conf --arch=cpu --pins="$T/p.env"

printf '0001-add.patch\n0002-gone.patch\n' >"$T/patches/vision/series"
exits "series names a missing patch: 2" 2 conf --arch=cpu --pins="$T/pins.env"
has "missing patch named" "$T/.err" "series: lists 0002-gone.patch, which does not exist"
printf '0001-add.patch\n' >"$T/patches/vision/series"

# a malformed profile in env/arch (in the private copy of the source)
cp "$KSRC/env/arch/gfx1100.env" "$T/gfx1100.env.good"
printf 'USE_FOO=1\nthis is not a setting\n' >>"$KSRC/env/arch/gfx1100.env"
exits "malformed profile: 2" 2 conf --arch=gfx1100 --pins="$T/pins.env"
has "malformed profile line named" "$T/.err" "gfx1100.env:$(lines "$KSRC/env/arch/gfx1100.env"): expected KEY=VALUE"
cp "$T/gfx1100.env.good" "$KSRC/env/arch/gfx1100.env"

# an expected commit that does not match: torch.src fails, no stamp, nothing after it
pins "torch_SHA=$(printf '%040d' 0)"
check "configure with a wrong torch_SHA" conf --arch=cpu --pins="$T/p.env"
exits "wrong SHA: ninja fails" 1 ninja torch.src
has "wrong SHA: the message has both commits" "$T/.out" \
	"v1 of https://example.invalid/toy/torch is $(git -C "$T/mirror/torch" rev-parse v1), but the pin expects 0000000000000000000000000000000000000000"
exits "wrong SHA: no stamp" 1 test -f build/stamp/torch.src

# a lock file from srcpin lock is a pin file: its NAME_COMMIT lines are expected commits
check "srcpin lock of the toy pins" srcpin lock --pins "$T/pins.env" --out "$T/lock.env" --mirror="$T/mirror" --cache="$T/lockcache"
check "configure --pins=LOCK" conf --arch=cpu --pins="$T/lock.env"
check "ninja torch.src from the lock" ninja torch.src
has "the lock's commit is the expected one" build/keys/torch.src "SHA=\"$(git -C "$T/mirror/torch" rev-parse v1)\""
sed "s/^torch_COMMIT=.*/torch_COMMIT=$(git -C "$T/mirror/torch" rev-parse v1 | cut -c1-7)0000/" "$T/lock.env" >"$T/lock2.env"
check "configure with a lock whose torch commit is wrong" conf --arch=cpu --pins="$T/lock2.env"
exits "a wrong lock commit stops torch.src" 1 ninja torch.src
has "and says which" "$T/.out" "but the pin expects $(git -C "$T/mirror/torch" rev-parse v1 | cut -c1-7)0000"

# ROCm missing for an AMD arch: configure says so, ninja stops with the reason
rm -rf "$T/b" && mkdir -p "$T/b" && cd "$T/b" || exit 2
check "configure --arch=gfx1151 without ROCm" conf --arch=gfx1151 --pins="$T/pins.env" --rocm-path="$T/no-rocm"
has "configure reports ROCm missing" "$T/.out" "checking for ROCm at $T/no-rocm... no"
exits "ninja without ROCm fails" 1 ninja
has "ninja says what is missing" "$T/.out" "kiln: ROCm was not found at $T/no-rocm"
has "and what to do" "$T/.out" "or rerun configure with --rocm-path=DIR"
for c in torch vision audio; do
	exits "no ROCm: no $c.wheel stamp" 1 test -f "build/stamp/$c.wheel"
done
lacks "no ROCm: no wheel build was started" "$T/.out" ".wheel: rebuilt"

# pins that do not fit together (env/matrix.env): refused in one line naming both and the
# release that fits; --allow-mismatch makes it one warning line and configure goes on
rm -rf "$T/b" && mkdir -p "$T/b" && cd "$T/b" || exit 2
pins 'torch_REF=v2.7.0' 'vision_REF=v0.23.0' 'audio_REF=v2.7.0'
exits "a vision release for another torch: configure refuses it" 2 conf --arch=cpu --pins="$T/p.env"
same "one line naming both versions and the one that fits" \
	"configure: vision v0.23.0 is made for torch 2.8, but the torch pin is 2.7.0; vision 0.22.1 goes with it ($KSRC/env/matrix.env): pin vision=v0.22.1; or pass --allow-mismatch to build it anyway" "$(cat "$T/.err")"
check "--allow-mismatch: configure succeeds" conf --arch=cpu --pins="$T/p.env" --allow-mismatch
same "one warning naming both versions" \
	"configure: warning: vision v0.23.0 is made for torch 2.8, but the torch pin is 2.7.0; vision 0.22.1 goes with it ($KSRC/env/matrix.env): pin vision=v0.22.1 (--allow-mismatch)" "$(cat "$T/.err")"
pins 'torch_REF=v2.8.0' 'vision_REF=v0.23.0' 'audio_REF=v2.8.0'
check "releases made for each other" conf --arch=cpu --pins="$T/p.env"
same "no warning" "" "$(cat "$T/.err")"
# a prebuilt vision wheel declares its torch in its metadata
"$PY3" - "$T/torchvision-0.23.0-py3-none-any.whl" <<'PY' || exit 2
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("torchvision-0.23.0.dist-info/METADATA",
               "Metadata-Version: 2.1\nName: torchvision\nVersion: 0.23.0\n"
               "Requires-Dist: numpy\nRequires-Dist: torch (==2.8.0)\n")
    z.writestr("torchvision-0.23.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
PY
pins 'torch_REF=v2.7.1'
exits "a vision wheel for another torch: configure refuses it" 2 conf --arch=cpu --pins="$T/p.env" \
	--pin "vision=wheel:$T/torchvision-0.23.0-py3-none-any.whl"
same "one line from the wheel's Requires-Dist" \
	"configure: vision torchvision-0.23.0-py3-none-any.whl requires torch==2.8.0, but the torch pin is 2.7.1; or pass --allow-mismatch to build it anyway" "$(cat "$T/.err")"
