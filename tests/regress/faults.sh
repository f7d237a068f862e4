#!/bin/sh
# faults: kiln under faults the other tests do not make: a disk that fills up under
# srcpin (first fetch, checkout), a read-only build folder under the toy graph, two
# ninja runs at once on one build folder, and SIGKILL after each step of fatwheel writing
# a big wheel.
# Each leaves a clear error, no half-made output that looks valid, and untouched input;
# the next run with the fault gone succeeds.
. "$KILN_SRC/tests/lib.sh"
need git unshare sha256sum

# mounts made here go away with the scratch folder
mnts=
at_exit 'for m in $mnts; do umount "$m" 2>/dev/null; done'
# tmpfs DIR SIZE: a small tmpfs at DIR (root only; returns 1 when it cannot be made)
tmpfs () { mkdir -p "$1" && mount -t tmpfs -o "size=$2" tmpfs "$1" 2>/dev/null && mnts="$mnts $1"; }
canmount=no
[ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null && canmount=yes
# one line, naming TEXT: the error's shape every tool promises
oneline () { if [ "$(lines "$2")" = 1 ] && grep -qF -- "$3" "$2"; then ok "$1"; else notok "$1 (want one line naming '$3')"; sed -n '1,10s/^/#   /p' "$2"; fi; }
treesum () { (cd "$1" && find . -path '*/.git' -prune -o -type f -print | LC_ALL=C sort | xargs -d '\n' sha256sum | sha256sum | cut -c1-64); }
# what a repository is: its files, refs and objects (for "input untouched")
reposum () { { treesum "$1"; git -C "$1" for-each-ref; git -C "$1" rev-parse HEAD; git -C "$1" status --porcelain; git -C "$1" count-objects -v; } | sha256sum | cut -c1-64; }

# === 1. a full disk under srcpin ==========================================================
fault_srcpin () {
	u=$T/up
	git init -q -b main "$u/big" &&
		(cd "$u/big" && head -c 400000 /dev/urandom >blob1 && head -c 400000 /dev/urandom >blob2 &&
			echo small >a.txt && git add . && git commit -qm big && git tag v1) || { notok "make the upstream"; return; }
	v1=$(git -C "$u/big" rev-parse v1)
	before=$(reposum "$u/big")
	c=$T/cfull
	tmpfs "$c" 256k || { echo "skip optional tier privileged: srcpin full disk: cannot mount a tmpfs"; return; }
	run srcpin fetch big "file://$u/big" v1 --cache="$c"
	[ "$rc" != 0 ] && ok "full disk: first fetch fails" || notok "full disk: first fetch fails (exit 0)"
	oneline "full disk: first fetch: one line naming the cache" "$T/.err" "$c"
	has "full disk: first fetch: says the disk is full" "$T/.err" "No space left on device"
	same "full disk: first fetch prints no commit" "" "$(cat "$T/.out")"
	same "full disk: no half-made mirror is left under its name" "" "$(ls -d "$c"/big.git 2>/dev/null)"
	same "full disk: nor temp folders beside it" "" "$(ls -A "$c" | grep -v '\.lock$')"
	exits "full disk: --offline does not take a half mirror as valid" 2 srcpin fetch big "file://$u/big" v1 --cache="$c" --offline
	mount -o remount,size=16m "$c"
	check "full disk: with space, the next fetch recovers" srcpin fetch big "file://$u/big" v1 --cache="$c"
	same "full disk: it resolves the tag" "$v1" "$(cat "$T/.out")"
	check "full disk: the recovered mirror is sound" git --git-dir="$c/big.git" fsck --no-progress

	w=$T/wfull
	tmpfs "$w" 256k || { echo "skip optional tier privileged: srcpin checkout on a full disk: cannot mount a tmpfs"; return; }
	run srcpin checkout big --commit "$v1" --into "$w/big" --cache="$c"
	[ "$rc" != 0 ] && ok "full disk: checkout fails" || notok "full disk: checkout fails (exit 0)"
	oneline "full disk: checkout: one line naming the path" "$T/.err" "$w/big"
	has "full disk: checkout: says the disk is full" "$T/.err" "No space left on device"
	run srcpin state --check "$w/big"
	[ "$rc" != 0 ] && ok "full disk: the half checkout is not reported pristine" || notok "full disk: the half checkout is not reported pristine (state --check exit 0)"
	lacks "full disk: state does not say PRISTINE=yes" "$T/.out" "PRISTINE=yes"
	mount -o remount,size=16m "$w"
	check "full disk: with space, checkout again recovers" srcpin checkout big --commit "$v1" --into "$w/big" --cache="$c"
	check "full disk: and the checkout is pristine" srcpin state --check "$w/big"
	rm -rf "$T/arch" && mkdir "$T/arch" && git -C "$u/big" archive v1 | tar -x -C "$T/arch"
	same "full disk: the checkout is exactly the commit" "$(treesum "$T/arch")" "$(treesum "$w/big")"
	same "full disk: the upstream repository is untouched" "$before" "$(reposum "$u/big")"
}
if [ "$canmount" = yes ]; then
	export HOME="$T/home" GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org \
		GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
	mkdir -p "$HOME"
	cp "$KILN_SRC/tools/srcpin/tests/lsan.supp" "$T/lsan.supp" && export LSAN_OPTIONS="suppressions=$T/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
	fault_srcpin
else
	echo "skip optional tier privileged: srcpin on a full disk needs root and mount namespaces (tmpfs)"
fi

# === 4. SIGKILL after each step of fatwheel writing a big wheel ==========================
fault_fatwheel () {
	mkdir -p "$T/fw/in" "$T/fw/out" "$T/fw/scratch"
	# a real wheel (zipfile, correct RECORD) with a 32 MiB incompressible member and an
	# ELF from the system, so fatwheel has a closure to resolve and a big file to write
	elf=$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /usr/lib/*/libz.so.1 /lib/*/libz.so.1 2>/dev/null | head -n 1)
	/usr/bin/python3 - "$T/fw/in/big-1.0-py3-none-any.whl" "$elf" <<'PY' || { notok "make the big wheel"; return; }
import sys, os, zipfile, hashlib, base64
out, elf = sys.argv[1], sys.argv[2]
def rec(n, d): return "%s,sha256=%s,%d" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode(), len(d))
members = [("big/__init__.py", b"x = 1\n"), ("big/blob.bin", os.urandom(32 << 20))]
if elf: members.append(("big/libz_copy.so", open(elf, "rb").read()))
members += [("big-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: big\nVersion: 1.0\n"),
            ("big-1.0.dist-info/WHEEL", b"Wheel-Version: 1.0\nGenerator: kiln-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")]
with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
    for n, d in members: z.writestr(n, d)
    z.writestr("big-1.0.dist-info/RECORD", "\n".join([rec(n, d) for n, d in members] + ["big-1.0.dist-info/RECORD,,"]) + "\n")
PY
	W=$T/fw/in/big-1.0-py3-none-any.whl
	sum0=$(sha256sum <"$W")
	# FATWHEEL_FAULT_AFTER=N (fatwheel(1), for tests) kills fatwheel (SIGKILL) right after
	# its N-th step: each member written to the output, the central directory, the wheel
	# put in place. Every step is a kill point; no clock decides where a kill lands.
	run env TMPDIR="$T/fw/scratch" FATWHEEL_FAULT_AFTER=list fatwheel --level=9 "$W" -w "$T/fw/out"
	cp "$T/.err" "$T/fw/steps"
	n=$(grep -c '^fatwheel: fault point ' "$T/fw/steps")
	[ "$n" -gt 4 ] && ok "fatwheel: $n steps to kill it at" || { notok "fatwheel: $n steps to kill it at"; _show; }
	rm -rf "$T/fw/out" && mkdir "$T/fw/out" || exit 2
	k=1
	while [ "$k" -le "$n" ]; do
		step=$(sed -n "s/^fatwheel: fault point $k: //p" "$T/fw/steps")
		fault_fatwheel_at "$k" "$step"
		k=$((k + 1))
	done
}
# fault_fatwheel_at K STEP: fatwheel killed after step K; before the last step nothing is in
# the output folder, after it the whole wheel; the input is never touched, and the next
# run writes the wheel
fault_fatwheel_at () {
	env TMPDIR="$T/fw/scratch" FATWHEEL_FAULT_AFTER="$1" fatwheel --level=9 "$W" -w "$T/fw/out" >"$T/fw/run.out" 2>"$T/fw/run.err"
	same "fatwheel: killed after step $1 ($2)" 137 "$?"
	if [ "$1" -lt "$n" ]; then
		same "fatwheel: killed after step $1: no wheel and no temp file in the output folder" "" "$(ls -A "$T/fw/out")"
	else
		check "fatwheel: killed after the last step: the wheel is whole" /usr/bin/python3 -c "import zipfile, sys; sys.exit(zipfile.ZipFile(sys.argv[1]).testzip() is not None)" "$T/fw/out/big-1.0-py3-none-any.whl"
	fi
	same "fatwheel: killed after step $1: the input wheel is byte-identical" "$sum0" "$(sha256sum <"$W")"
	rm -rf "$T/fw/out"/.[!.]* "$T/fw/out"/* "$T/fw/scratch"/*
	check "fatwheel: after a kill after step $1, the next run writes the wheel" env TMPDIR="$T/fw/scratch" fatwheel "$W" -w "$T/fw/out"
	same "fatwheel: after step $1: and only the wheel" "big-1.0-py3-none-any.whl" "$(ls -A "$T/fw/out")"
	check "fatwheel: after step $1: the new wheel is a sound zip" /usr/bin/python3 -c "import zipfile, sys; sys.exit(zipfile.ZipFile(sys.argv[1]).testzip() is not None)" "$T/fw/out/big-1.0-py3-none-any.whl"
	rm -rf "$T/fw/out"/* "$T/fw/scratch"/*
}
if command -v fatwheel >/dev/null && [ -x /usr/bin/python3 ]; then fault_fatwheel
else echo "skip fatwheel SIGKILL: needs fatwheel and /usr/bin/python3"; fi

# === the toy graph (tests/regress/graph-toy.inc): skips only what follows when it cannot be made
. "$KILN_SRC/tests/regress/graph-toy.inc"
all="audio.deps audio.install audio.patch audio.pick audio.src audio.wheel stack.smoke torch.deps torch.install torch.patch torch.pick torch.src torch.wheel vision.deps vision.hipify vision.install vision.patch vision.pick vision.src vision.wheel"
# conf VENV STAGECACHE: configure the toy in the current folder
conf () {
	"$KSRC/configure" --python="$1/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--rocm-path="$T/rocm" --stage-cache="$2" --jobs=2 KILN_BIN="$KILN_BIN" --arch=gfx1100
}
imports () { "$1/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.scale(3), torchvision.op(1), torchaudio.op(3), torch.ARCH)' 2>&1; }
# filesum DIR: every file's path and content (for "nothing corrupted")
filesum () { (cd "$1" && find . -type f -print | LC_ALL=C sort | xargs -d '\n' sha256sum | sha256sum | cut -c1-64); }
# ro DIR CMD...: run CMD in a mount namespace where DIR is a read-only bind mount of itself
# (the cd moves the current folder onto the new mount: it would stay on the writable one)
ro () { d=$1; shift; run unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && cd "$PWD" && shift && exec "$@"' sh "$d" "$@"; }

# === 2. a read-only build folder =========================================================
fault_readonly () {
	toy_venv "$T/venv"
	mkdir -p "$T/bro" && cd "$T/bro" || exit 2
	ro "$T/bro" "$KSRC/configure" --python="$T/venv/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--rocm-path="$T/rocm" --stage-cache="$T/sc" --jobs=2 KILN_BIN="$KILN_BIN" --arch=gfx1100
	[ "$rc" != 0 ] && ok "read-only: configure in a read-only folder fails" || notok "read-only: configure in a read-only folder fails (exit 0)"
	has "read-only: configure says why" "$T/.err" "Read-only file system"
	has "read-only: configure names what it could not create" "$T/.err" "configure: cannot create build"
	same "read-only: configure wrote nothing" "" "$(ls -A "$T/bro")"

	b=$T/b
	mkdir -p "$b" && cd "$b" || exit 2
	check "read-only: configure the toy (writable)" conf "$T/venv" "$T/sc"
	sum0=$(filesum "$b/build")
	ro "$b/build" ninja
	cp "$T/.out" "$T/ro-ninja.log"
	[ "$rc" != 0 ] && ok "read-only build/: ninja fails" || notok "read-only build/: ninja fails (exit 0)"
	has "read-only build/: the error says why" "$T/ro-ninja.log" "Read-only file system"
	has "read-only build/: the error names the path" "$T/ro-ninja.log" "$b/build/"
	same "read-only build/: no stage ran" "" "$(rebuilt "$T/ro-ninja.log")"
	same "read-only build/: no stamp written" "" "$(ls "$b/build/stamp" | grep -v '\.lock$')"
	same "read-only build/: nothing in build/ changed" "$sum0" "$(filesum "$b/build")"
	ninja >"$T/ro-after.log" 2>&1
	same "read-only build/: writable again, ninja completes" 0 "$?"
	same "read-only build/: ... running every stage once" "$all" "$(rebuilt "$T/ro-after.log")"
	same "read-only build/: the stack imports" "30 1110 33 gfx1100" "$(imports "$T/venv")"
	ninja >"$T/ro-again.log" 2>&1
	same "read-only build/: then no work to do" "ninja: no work to do." "$(cat "$T/ro-again.log")"
}
if [ "$canmount" = yes ]; then fault_readonly
else echo "skip optional tier privileged: read-only build folder needs root and mount namespaces (read-only bind mount)"; fi

# === 3. two ninja runs at once on one build folder ======================================
fault_twoninjas () {
	toy_venv "$T/venv2"
	b=$T/b2
	mkdir -p "$b" && cd "$b" || exit 2
	# a stage cache of its own: every stage really runs (nothing restored from part 2's)
	check "two ninjas: configure the toy" conf "$T/venv2" "$T/sc2"
	ninja >"$T/n1.log" 2>&1 &
	p1=$!
	ninja >"$T/n2.log" 2>&1 &
	p2=$!
	wait "$p1"; r1=$?
	wait "$p2"; r2=$?
	same "two ninjas: both exit 0" "0 0" "$r1 $r2"
	[ "$r1 $r2" = "0 0" ] || { sed -n '1,40s/^/#   n1: /p' "$T/n1.log"; sed -n '1,40s/^/#   n2: /p' "$T/n2.log"; }
	cat "$T/n1.log" "$T/n2.log" >"$T/n12.log"
	same "two ninjas: every stage ran exactly once between them" "$all" "$(rebuilt "$T/n12.log")"
	has "two ninjas: one waited on the other's stage lock" "$T/n12.log" "waiting for another run of this stage to finish"
	lacks "two ninjas: no stage failed" "$T/n12.log" " failed"
	for s in $all; do
		n=$(grep -c "^# kiln-stage $s " "$b/build/logs/$s.log" 2>/dev/null)
		[ "$n" = 1 ] || notok "two ninjas: $s.log records one run (has $n)"
	done
	same "two ninjas: a stamp for every stage" "$all" "$(ls "$b/build/stamp" | grep -v '\.lock$' | grep -v missing | tr '\n' ' ' | sed 's/ $//')"
	ninja >"$T/n3.log" 2>&1
	same "two ninjas: a third ninja has no work to do" "ninja: no work to do." "$(cat "$T/n3.log")"
	same "two ninjas: the installed stack imports" "30 1110 33 gfx1100" "$(imports "$T/venv2")"
	check "two ninjas: the stamps agree with the keys" kiln-stage run -n --key="$b/build/keys/torch.wheel" \
		--stamp="$b/build/stamp/torch.wheel" --parent="$b/build/stamp/torch.patch" --parent="$b/build/stamp/torch.deps" torch.wheel
}
fault_twoninjas
