#!/bin/sh
# graph-seam: the seam between the generator and the stage steps (issue 45). Each step is
# ninja/steps/NAME.sh; the helpers it sources are the files its "# sources:" line names
# (ninja/steps/lib/*.sh), and a stage's key holds the digests of exactly those files
# (STEP_SH, LIB_NAME) besides RULE (ninja/stack.ninja and the dispatcher stack-steps.sh).
#
# The generated files of seven configurations (cpu, gfx1151 without ROCm, --venv with a
# stage cache, --with=aotriton,flash_attn,vllm, sm_90, the ggml-vulkan track, gfx803 on a
# distribution's /usr) are compared with tests/regress/graph-seam/NAME.txt, made by the
# generator before the seam moved: build.ninja's own lines (not the tools' build
# statements or the regeneration edge), config.mk, stack.ninja, stack.env and every key
# file, with the paths of this run written as @T@, @SRC@, @BIN@ and the machine's compiler,
# CMake and Python versions as @CC@, @CMAKE@, @PYABI@, @BASE_VERSION@. Only the step keys (RULE, STEP_SH,
# LIB_*) are left out: they may differ, nothing else. A change that means to change the
# generated files regenerates the expected set with KILN_SEAM_UPDATE=1 (then read the diff).
. "$KILN_SRC/tests/lib.sh"
need python3 ninja
ksrc_copy
cp -R "$KILN_SRC/patches" "$KSRC/" || exit 2
seamdir=$KILN_SRC/tests/regress/graph-seam
python3 -m venv --without-pip "$T/venv" || exit 2
PY=$T/venv/bin/python
# a distribution's ROCm under a /usr-like folder (Debian's layout: hipcc in bin/, the HIP
# runtime in lib/x86_64-linux-gnu, the device libraries under lib/llvm-N)
u=$T/usr
mkdir -p "$u/bin" "$u/lib/x86_64-linux-gnu/cmake/hip" "$u/lib/llvm-17/lib/clang/17/amdgcn/bitcode" || exit 2
printf '#!/bin/sh\nexit 0\n' >"$u/bin/hipcc" && chmod +x "$u/bin/hipcc" || exit 2
: >"$u/lib/x86_64-linux-gnu/libamdhip64.so.6" && : >"$u/lib/llvm-17/lib/clang/17/amdgcn/bitcode/ockl.bc" || exit 2

# the one ROCm probe (kiln-stage rocm-probe), which configure, the generator and the steps use
check "rocm-probe: the /usr-like folder" kiln-stage rocm-probe "$u"
has "its layout, runtime and device libraries in one line" "$T/.out" "ROCm (version unknown), Debian's and Ubuntu's layout (lib/x86_64-linux-gnu): hipcc $u/bin/hipcc, HIP runtime in $u/lib/x86_64-linux-gnu, HIP CMake config none, device libraries $u/lib/llvm-17/lib/clang/17/amdgcn/bitcode"
check "rocm-probe --get=devlib" kiln-stage rocm-probe --get=devlib "$u"
same "the device libraries' folder" "$u/lib/llvm-17/lib/clang/17/amdgcn/bitcode" "$(cat "$T/.out")"
exits "rocm-probe --get=version: none here" 1 kiln-stage rocm-probe --get=version "$u"
check "rocm-probe --json" kiln-stage rocm-probe --json "$u"
has "--json: the layout" "$T/.out" '"layout":"Debian'"'"'s and Ubuntu'"'"'s layout"'
exits "rocm-probe: no ROCm there" 1 kiln-stage rocm-probe "$T/no-rocm"
has "says what it looked for" "$T/.err" "$T/no-rocm: not a ROCm of any known layout"
exits "rocm-probe --get=frob: usage" 2 kiln-stage rocm-probe --get=frob "$u"
# --clang=CC: the device libraries that compiler compiles against (the CMake step's
# -DCMAKE_HIP_COMPILER): DIR/amdgcn/bitcode, else its resource folder's, else the layouts'
mkdir -p "$T/res/lib/amdgcn/bitcode" "$T/res2" "$T/r1/llvm/bin" "$T/r1/amdgcn/bitcode" || exit 2
: >"$T/res/lib/amdgcn/bitcode/ockl.bc" || exit 2
printf '#!/bin/sh\n[ "$1" = -print-resource-dir ] && echo %s\n' "$(shq "$T/res")" >"$T/cc1" &&
	printf '#!/bin/sh\necho %s\n' "$(shq "$T/res2")" >"$T/cc2" && chmod +x "$T/cc1" "$T/cc2" || exit 2
check "rocm-probe --clang: a ROCm without device libraries" kiln-stage rocm-probe --clang="$T/cc1" --get=devlib "$T/r1"
same "the compiler's resource folder's (lib/amdgcn/bitcode)" "$T/res/lib/amdgcn/bitcode" "$(cat "$T/.out")"
: >"$T/r1/amdgcn/bitcode/ockl.bc" || exit 2
check "rocm-probe --clang: DIR/amdgcn/bitcode holds them" kiln-stage rocm-probe --clang="$T/cc1" --get=devlib "$T/r1"
same "clang's own choice with ROCM_PATH" "$T/r1/amdgcn/bitcode" "$(cat "$T/.out")"
check "rocm-probe --clang: a compiler whose resource folder has none" kiln-stage rocm-probe --clang="$T/cc2" --get=devlib "$u"
same "the layout's folder" "$u/lib/llvm-17/lib/clang/17/amdgcn/bitcode" "$(cat "$T/.out")"
exits "rocm-probe --clang: none anywhere" 1 kiln-stage rocm-probe --clang="$T/cc2" --get=devlib "$T/no-rocm"

conf () {
	n=$1; shift
	mkdir -p "$T/c/$n" && (cd "$T/c/$n" && "$KSRC/configure" KILN_BIN="$KILN_BIN" --git-cache="$T/git" --jobs=2 "$@") \
		>"$T/$n.conf" 2>&1 || { notok "configure ($n)"; sed 's/^/#   /' "$T/$n.conf"; return 0; }
	ok "configure ($n)"
}
conf cpu --arch=cpu --python="$PY"
conf gfx1151 --arch=gfx1151 --python="$PY" --rocm-path="$T/no-rocm"
conf venv --arch=cpu --venv="$T/v" --stage-cache="$T/sc"
conf with --arch=gfx1151 --python="$PY" --rocm-path="$T/no-rocm" --with=aotriton,flash_attn,vllm
conf sm90 --arch=sm_90 --python="$PY"
conf vulkan --arch=cpu --python="$PY" --pins="$KSRC/env/tracks/ggml-vulkan.env"
conf gfx803 --arch=gfx803 --python="$PY" --rocm-path="$u" --pins="$KSRC/env/tracks/gfx803-debian.env"

# the generated files of one configuration as one text, normalised (see above)
flat () {
	python3 - "$T/c/$1" "$T" "$KSRC" "$KILN_BIN" <<'EOF'
import os, re, sys
d, t, src, kbin = sys.argv[1:5]
def forms(p):
    # as written: plain, ninja-escaped, shell-quoted
    return [p, re.sub(r"([$ :])", r"$\1", p), p.replace("'", "'\\''")]
subs = [(f, "@T@") for f in forms(t)] + [(f, "@SRC@") for f in forms(src)] + [(f, "@BIN@") for f in forms(kbin)]
subs.sort(key=lambda s: -len(s[0]))
def norm(s):
    for a, b in subs:
        s = s.replace(a, b)
    s = re.sub(r'^(CC_VERSION|CMAKE|PY_ABI|BASE_VERSION)=".*"$', r'\1="@\1@"', s, flags=re.M)
    return re.sub(r"^(cc|cflags|ldflags|fuzzcc|fuzzflags) = .*$", r"\1 = @\1@", s, flags=re.M)
def own(text):
    # build.ninja's own lines: not the tools' build statements, not the regeneration edge
    out = []
    for l in text.split("\n"):
        if l.startswith("build build.ninja config.mk:"):
            break
        if re.search(r"\$bdir/(rel|san|fuzz)/|\$srcdir/tools/", l) or re.match(r"  (extra|libs|cc) =", l):
            continue
        out.append(l)
    return "\n".join(out)
files = ["build.ninja", "config.mk", "build/stack.ninja", "build/stack.env"]
files += ["build/keys/" + k for k in sorted(os.listdir(os.path.join(d, "build/keys")))]
for f in files:
    text = open(os.path.join(d, f), encoding="utf-8").read()
    if f == "build.ninja":
        text = own(text)
    if f.startswith("build/keys/"):
        text = "".join(l for l in text.splitlines(True) if not re.match(r"(RULE|STEP_SH|LIB_[a-z0-9_]+)=", l))
    sys.stdout.write("== %s\n%s" % (f, norm(text)))
EOF
}
for n in cpu gfx1151 venv with sm90 vulkan gfx803; do
	[ -d "$T/c/$n/build/keys" ] || continue
	flat "$n" >"$T/$n.txt" || { notok "$n: the generated files can be read"; continue; }
	if [ "${KILN_SEAM_UPDATE:-}" = 1 ]; then
		mkdir -p "$seamdir" && cp "$T/$n.txt" "$seamdir/$n.txt" && ok "$n: expected set written" || notok "$n: write $seamdir/$n.txt"
	elif diff -u "$seamdir/$n.txt" "$T/$n.txt" >"$T/$n.diff"; then
		ok "$n: every generated file is the same but for the step keys"
	else
		notok "$n: the generated files differ from tests/regress/graph-seam/$n.txt (KILN_SEAM_UPDATE=1 rewrites it)"
		sed -n '1,40s/^/#   /p' "$T/$n.diff"
	fi
done

# --- one spelling of an arch list across the seam ------------------------------------
# --arch=a,b (configure, config.mk) reaches every key as ARCH="a b" (the words a step
# iterates over); stack.env holds the spellings other consumers want, written by the
# generator: ARCH_ARG (--arch's own), ARCH_CMAKE (a CMake list), ARCH_CUDA
# (TORCH_CUDA_ARCH_LIST). No step converts one spelling into another.
conf two --arch=gfx1100,gfx1151 --python="$PY" --rocm-path="$T/no-rocm" --with=aotriton
conf cuda --arch=sm_90,sm_120a --python="$PY"
e=$T/c/two/build/stack.env
has "two targets: config.mk keeps --arch's spelling" "$T/c/two/config.mk" "KILN_ARCH = gfx1100,gfx1151"
has "stack.env: ARCH_ARG, --arch's spelling" "$e" 'ARCH_ARG="gfx1100,gfx1151"'
has "stack.env: ARCH_CMAKE, a CMake list" "$e" 'ARCH_CMAKE="gfx1100;gfx1151"'
has "stack.env: ARCH_CUDA, empty for AMD targets" "$e" 'ARCH_CUDA=""'
lacks "stack.env: no ARCH_LIST (ARCH_ARG took its place)" "$e" 'ARCH_LIST='
a=$(cd "$T/c/two/build/keys" && grep -h '^ARCH=' -- * | sort -u)
same "every key's ARCH is the words" 'ARCH="gfx1100 gfx1151"' "$a"
has "aotriton.build: AOTRITON_ARCH is the words too" "$T/c/two/build/keys/aotriton.build" 'AOTRITON_ARCH="gfx1100 gfx1151"'
has "and its CMake argument the CMake list" "$T/c/two/build/keys/aotriton.build" '-DAOTRITON_TARGET_ARCH=gfx1100;gfx1151"'
has "CUDA: ARCH_CUDA as TORCH_CUDA_ARCH_LIST spells it" "$T/c/cuda/build/stack.env" 'ARCH_CUDA="9.0;12.0a"'
has "CUDA: ARCH_ARG" "$T/c/cuda/build/stack.env" 'ARCH_ARG="sm_90,sm_120a"'
same "CUDA: every key's ARCH is the words" 'ARCH="sm_90 sm_120a"' "$(cd "$T/c/cuda/build/keys" && grep -h '^ARCH=' -- * | sort -u)"
# a step that split or joined an arch variable itself (tr ';' ' ', tr ';' ,, IFS=';') would
# be a second spelling at the seam
conv=$(grep -nE 'ARCH' "$KSRC"/ninja/steps/*.sh "$KSRC"/ninja/steps/lib/*.sh "$KSRC"/ninja/stack-steps.sh |
	grep -E "ARCH[A-Z_]*}?\"?[^|]*\| *(tr|sed)|IFS=['\"]?[;,]" | grep -v 'tr -c ')
same "no step converts an arch variable's spelling" "" "$conv"

# --- a ROCm channel is one row of env/rocm-channels.env: CHANNELS and its NAME_ cells;
# the generator names no channel (with no ROCm at /opt/rocm, the default --rocm-path)
ch=$KSRC/env/rocm-channels.env
cp "$ch" "$T/channels.env" || exit 2
if [ ! -e /opt/rocm ]; then
	sed -i 's/^CHANNELS=.*/CHANNELS="toy therock debian"/' "$ch" || exit 2
	printf 'TOY_WHO=Toy\nTOY_TITLE="the toy wheels"\nTOY_KIND=wheels\nTOY_ARCHES="gfx1100 gfx1151"\nTOY_INDEX=%s\nTOY_VERSION=1.2.3\n' \
		"$(shq "$T/toy-index")" >>"$ch" || exit 2
	conf toy --arch=gfx1151 --python="$PY"
	has "configure takes the new row" "$T/toy.conf" "no ROCm at /opt/rocm and no rocm pin: using the toy wheels, the default channel for --arch (env/rocm-channels.env): rocm 1.2.3 from $T/toy-index"
	has "rocm.sdk installs from the row's index" "$T/c/toy/build/keys/rocm.sdk" "INDEX=\"$T/toy-index\""
	conf toy803 --arch=gfx803 --python="$PY"
	has "a target the rows before lack: the next row that builds it" "$T/toy803.conf" \
		"no ROCm at /opt/rocm, and Toy builds nothing for gfx803; TheRock builds nothing for gfx803: use Debian's ROCm inside a Debian sid root with --rocm-path=/usr, as env/tracks/gfx803-debian.env sets it up"
	sed -i 's/^TOY_KIND=.*/TOY_KIND=tarball/' "$ch" || exit 2
	exits "a row of a KIND kiln does not know stops configure" 2 sh -c "cd $(shq "$T/c/toy") && KILN_REGEN=1 $(shq "$KSRC/configure") KILN_BIN=$(shq "$KILN_BIN") --git-cache=$(shq "$T/git") --jobs=2 --arch=gfx1151 --python=$(shq "$PY")"
	has "in one line naming the file and the row" "$T/.err" "env/rocm-channels.env: channel toy: KIND=tarball is not wheels or root"
fi
cp "$T/channels.env" "$ch" || exit 2

# --- the declared sources -------------------------------------------------------------
# each step's "# sources:" line names exactly the files it sources, and every helper a
# helper needs ("# needs:"); a helper sources nothing itself
steps=$KSRC/ninja/steps
srcs () { sed -n 's/^# sources://p' "$1" | tr ' ' '\n' | grep . | sort; }
for f in "$steps"/*.sh; do
	s=${f##*/}
	d=$(srcs "$f")
	[ -n "$d" ] || { notok "$s has a '# sources:' line"; continue; }
	got=$(sed -n 's|^\. "\$steps/\(lib/[a-z0-9_]*\.sh\)"$|\1|p' "$f" | sort)
	same "$s sources exactly what its '# sources:' line says" "$d" "$got"
	for l in $d; do
		for n in $(sed -n 's/^# needs://p' "$steps/$l"); do
			printf '%s\n' "$d" | grep -qx "$n" || notok "$s sources $l, which needs $n: name it too"
		done
	done
done
for l in "$steps"/lib/*.sh; do
	if grep -q '^[[:space:]]*\.[[:space:]]' "$l"; then notok "lib/${l##*/} sources nothing itself"; else ok "lib/${l##*/} sources nothing itself"; fi
done
# each stage's key: STEP_SH and one LIB_NAME per declared source, and no other LIB_ line
k=$T/c/with/build/keys
for st in torch.wheel torch.src aotriton.build aotriton.src vllm.check torch.install torch.deps; do
	step=$(sed -n 's/^STEP="\(.*\)"$/\1/p' "$k/$st")
	[ -n "$step" ] || case "$st" in
		aotriton.build) step=cmake ;; vllm.check) step=vllmcheck ;; *) step=${st#*.} ;;
	esac
	d=$(srcs "$steps/$step.sh" | sed 's|^lib/\(.*\)\.sh$|LIB_\1|')
	same "$st: a LIB_ line for exactly the files $step.sh sources" "$d" "$(sed -n 's/^\(LIB_[a-z0-9_]*\)=.*/\1/p' "$k/$st" | sort)"
	h=$(sha256sum "$steps/$step.sh" | cut -c 1-64)
	has "$st: STEP_SH is $step.sh's digest" "$k/$st" "STEP_SH=\"$h\""
done
has "torch.wheel: LIB_cache is lib/cache.sh's digest" "$k/torch.wheel" "LIB_cache=\"$(sha256sum "$steps/lib/cache.sh" | cut -c 1-64)\""

# --- editing a helper reruns exactly the stages of the steps that source it ------------
b=$T/c/with
keys () { (cd "$b/build/keys" && for f in *; do printf '%s %s\n' "$f" "$(sha256sum <"$f" | cut -c 1-16)"; done); }
keys >"$T/k0"
printf '\n# an edit\n' >>"$steps/lib/cache.sh"
check "configure again after lib/cache.sh changed (ninja's regeneration)" sh -c "cd $(shq "$b") && ninja -t targets >/dev/null && ninja build.ninja"
keys >"$T/k1"
changed=$(diff "$T/k0" "$T/k1" | sed -n 's/^> \([^ ]*\) .*/\1/p' | tr '\n' ' ')
same "only the stages whose steps source lib/cache.sh have new keys" "aiter.wheel aotriton.build audio.wheel flash_attn.wheel torch.wheel vision.wheel vllm.wheel " "$changed"
printf '\n# an edit\n' >>"$steps/pick.sh"
check "configure again after pick.sh changed" sh -c "cd $(shq "$b") && ninja build.ninja"
keys >"$T/k2"
changed=$(diff "$T/k1" "$T/k2" | sed -n 's/^> \([^ ]*\) .*/\1/p' | tr '\n' ' ')
same "only the pick stages have new keys" "aiter.pick audio.pick flash_attn.pick torch.pick vision.pick vllm.pick " "$changed"
# a step file that declares no sources, or a source outside lib/, stops configure in one line
sed -i 's/^# sources:.*/# sources: ..\/x.sh/' "$steps/pick.sh"
exits "a source outside lib/ stops configure" 2 sh -c "cd $(shq "$b") && KILN_REGEN=1 $(shq "$KSRC/configure") KILN_BIN=$(shq "$KILN_BIN") --git-cache=$(shq "$T/git") --jobs=2 --arch=cpu --python=$(shq "$PY")"
has "naming the file and line" "$T/.err" "ninja/steps/pick.sh:3: '../x.sh' in '# sources:' is not lib/NAME.sh"

# --- configure's generator: kiln-stage graph alone, linked without libcurl, libarchive or
# libgit2 (tools/kiln-stage/gen/main.c and configure's gen_modules)
cp -R "$KILN_SRC/tools/kiln-stage" "$KSRC/tools/" || exit 2
mkdir -p "$T/g" && cd "$T/g" || exit 2
check "configure builds the generator" "$KSRC/configure"
check "ldd build/gen/kiln-stage" ldd build/gen/kiln-stage
for l in libcurl libarchive libgit2; do lacks "the generator does not link $l" "$T/.out" "$l"; done
has "it links libcrypto (SHA-256 of the keys)" "$T/.out" "libcrypto"
exits "its verbs are graph and rocm-probe" 2 build/gen/kiln-stage run
has "and it says so" "$T/.err" "kiln-stage: this is configure's generator: its verbs are graph and rocm-probe"
