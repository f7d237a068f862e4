#!/bin/sh
# tutorial: TUTORIAL.md's commands run on the toy stack (tests/regress/graph-toy.inc), so
# the tutorial cannot rot. Every ```sh block after a "<!-- run -->" line is run, in
# order, in one shell (set -e) after the toy's settings (the tutorial's section 0); then
# what the tutorial promises is checked: the bump reran vision's stages, the lock and
# the patch went where it says, kiln-stage report and trace.json tell the rebuild (vision
# built, torch up to date), the refreshed patch reran vision's stages only, verify
# passed, the image carries the new commit and is built again after podman rmi, the
# vendor-wheel track skips torch's build, and gpucheck offers the override only within
# the ISA family.
. "$KILN_SRC/tests/lib.sh"
need podman
. "$KILN_SRC/tests/regress/graph-toy.inc"

. "$KILN_SRC/tests/regress/podman-storage.inc"

mkdir -p "$T/base/etc" && echo 'toy base' >"$T/base/etc/kiln-base" && tar -C "$T/base" -cf "$T/base.tar" . || exit 2
podman import -q "$T/base.tar" localhost/kiln-tutorial-base:1 >/dev/null || { echo "not ok podman import"; exit 1; }
toy_venv "$T/venv"
toy_commit vision v2 5

# the runnable blocks, in order
awk '/^<!-- run -->$/ { want = 1; next }
     want && /^```sh$/ { inblock = 1; want = 0; next }
     inblock && /^```$/ { inblock = 0; print ""; next }
     inblock { print }
     { want = 0 }' "$KILN_SRC/TUTORIAL.md" >"$T/tutorial-run.sh"
n=$(grep -c '^<!-- run -->$' "$KILN_SRC/TUTORIAL.md")
check "TUTORIAL.md has runnable blocks" test "$n" -ge 12
check "each is extracted" test "$(lines "$T/tutorial-run.sh")" -gt "$n"

# section 0 for the toy, then the tutorial's commands
{
	echo 'set -e'
	printf 'KILN=%s PINS=%s PATCHES=%s ARCH=gfx1100\n' "$(shq "$KSRC")" "$(shq "$T/pins.env")" "$(shq "$T/patches")"
	echo 'IMAGE=localhost/kiln-tutorial:1 BASE=localhost/kiln-tutorial-base:1'
	echo 'C=vision NEW=v2'
	echo "FILE=csrc/ops.c COMMENT='/* kiln tutorial */'"
	printf 'PY=%s\n' "$(shq "$T/venv/bin/python")"
	printf 'SRCPIN_MIRROR=%s; export SRCPIN_MIRROR\n' "$(shq "$T/mirror")"
	printf 'set -- %s %s %s --jobs=2 %s\n' "$(shq "--python=$T/venv/bin/python")" "$(shq "--mirror=$T/mirror")" \
		"$(shq "--rocm-path=$T/rocm")" "$(shq "KILN_BIN=$KILN_BIN")"
	cat "$T/tutorial-run.sh"
} >"$T/run.sh"
mkdir -p "$T/b"
cd "$T/b" || exit 2
sh -x "$T/run.sh" >"$T/tutorial.log" 2>&1
rc=$?
same "every command of TUTORIAL.md succeeds" 0 "$rc"
[ "$rc" = 0 ] || tail -n 40 "$T/tutorial.log" | sed 's/^/#   /'

has "ninja -n lists vision's stages" "$T/b/build/would-run.txt" "vision.src"
lacks "ninja -n does not list torch's" "$T/b/build/would-run.txt" "torch.wheel"
has "the lock's commit is in the pins" "$T/pins.env" "vision_COMMIT=$(git -C "$T/mirror/vision" rev-parse v2)"
has "the new patch is in the series" "$T/patches/vision/series" "0099-tutorial.patch"
has "the patch adds the line" "$T/patches/vision/0099-tutorial.patch" "+/* kiln tutorial */"
has "the rebuild says why vision.src ran" "$T/b/build/rebuild.log" "kiln: vision.src: running: input"
lacks "the rebuild leaves torch alone" "$T/b/build/rebuild.log" "torch.wheel: rebuilt"
has "the rebuild builds the image again" "$T/b/build/rebuild.log" "stack.image: rebuilt"
has "the patched source went into the wheel's tree" "$T/b/build/src/vision/csrc/ops.c" "/* kiln tutorial */"
check "report: vision's wheel was built by the rebuild" grep -q '^vision.wheel  *built ' "$T/b/build/report.txt"
check "report: torch's wheel was up to date" grep -q '^torch.wheel  *up to date ' "$T/b/build/report.txt"
has "report: the totals" "$T/b/build/report.txt" "restored from cache"
has "trace.json is valid JSON" "$T/tutorial.log" "trace.json: valid"
has "refresh: the patch stage says its series changed" "$T/b/build/refresh.log" "kiln: vision.patch: running: input SERIES changed"
has "refresh: vision's wheel is built again" "$T/b/build/refresh.log" "vision.wheel: rebuilt"
lacks "refresh: torch is left alone" "$T/b/build/refresh.log" "torch.wheel: rebuilt"
same "refresh: the tree has the refreshed patch (two lines)" 2 "$(grep -c 'kiln tutorial' "$T/b/build/src/vision/csrc/ops.c")"
has "gpucheck cover: torch covers gfx1100" "$T/tutorial.log" "gfx1100: covered natively"
has "verify: the wheel is reproducible" "$T/tutorial.log" "vision.wheel: 1 identical: the stage is reproducible"
has "the image's label has vision's locked commit" "$T/tutorial.log" "kiln.vision.commit=$(git -C "$T/mirror/vision" rev-parse v2)"
has "the lock lists torchvision with a hash" "$T/tutorial.log" "torchvision=="
check "cat build/image.id printed an image ID" grep -q '^sha256:[0-9a-f]\{64\}$' "$T/tutorial.log"
same "build/image.id names the image built again" \
	"sha256:$(podman image inspect --format '{{.Id}}' localhost/kiln-tutorial:1 2>&1)" "$(cat "$T/b/build/image.id")"
has "podman rmi: ninja says the image is missing" "$T/b/build/rmi.log" "kiln: stack.image: running: input image missing: localhost/kiln-tutorial:1"
has "podman rmi: ninja builds it again" "$T/b/build/rmi.log" "stack.image: rebuilt in"
lacks "podman rmi: and nothing else" "$T/b/build/rmi.log" "vision.wheel: rebuilt"
check "podman rmi: the image is back" podman image exists localhost/kiln-tutorial:1
has "vendor wheels: torch is picked from the wheel" "$T/b/build/vendor-would-run.txt" "torch.pick"
has "vendor wheels: and installed" "$T/b/build/vendor-would-run.txt" "torch.install"
lacks "vendor wheels: torch is not fetched" "$T/b/build/vendor-would-run.txt" "torch.src"
lacks "vendor wheels: nor built" "$T/b/build/vendor-would-run.txt" "torch.wheel"
has "vendor wheels: vision is still built from source" "$T/b/build/vendor-would-run.txt" "vision.wheel"
has "gfx1151 (gfx11 family): the override is offered" "$T/b/build/cover-gfx1151.txt" "HSA_OVERRIDE_GFX_VERSION=11.0.0"
has "gfx1151: and the rebuild" "$T/b/build/cover-gfx1151.txt" "PYTORCH_ROCM_ARCH=gfx1151"
lacks "gfx90a (another ISA family): no override" "$T/b/build/cover-gfx90a.txt" "HSA_OVERRIDE_GFX_VERSION"
has "gfx90a: only the rebuild" "$T/b/build/cover-gfx90a.txt" "PYTORCH_ROCM_ARCH=gfx90a"
ninja >"$T/again.log" 2>&1
same "after the tutorial, ninja has no work to do" "ninja: no work to do." "$(cat "$T/again.log")"
