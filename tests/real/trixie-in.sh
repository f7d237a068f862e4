#!/bin/sh
# tests/real/trixie-in.sh: the trixie track for real, inside the Debian 13 root that
# tests/real/trixie.sh makes and enters (the checkout at /kiln/src, read-only; the work
# folder at /kiln/real; orig tarballs cached in /kiln/cache):
#   0. kiln built from the checkout (out of tree, /kiln/real/kiln);
#   1. Debian 13's orig tarballs of pytorch 2.6.0+dfsg, pytorch-vision 0.21.0 and
#      pytorch-audio 2.6.0 made local git mirrors by ninja/debsrc.sh with the suite (the
#      trixie Sources index checks each tarball), at the commits env/tracks/trixie.env pins;
#   2. the track with --arch=cpu into a venv of Python 3.13 that sees Debian's torch 2.6.0:
#      vision and audio built, installed and smoke-tested (nms and a transform; a resample
#      and a spectrogram); a no-op ninja; a second build folder (with a venv of its own)
#      restored from the stage cache; audio.wheel.verify; a patch added to audio's series
#      in the second folder, rerunning only audio's stages;
#   3. torch 2.6.0's src, patch (tests/real/patches/torch26) and hipify stages on the real
#      tree for --arch=gfx803 and gfx1151 (no ROCm build: a stand-in root with clang-19),
#      a no-op, then one CUDA file edited by a patch added to the series: re-hipified, and
#      the only hipified output whose bytes change.
# Prints ok / not ok lines and the figures (also in /kiln/real/figures). Resumable: a step
# that finished is recorded in /kiln/real/done. KILN_REAL_STEPS: "cpu" or "gfx" runs that
# part only (the two can run at once, in two runs of trixie.sh once kiln is built there);
# default both. "lite": audio alone, libtorchaudio's core only, and its verify (below).
set -u
KILN_SRC=/kiln/src
W=/kiln/real
CACHE=/kiln/cache
mkdir -p "$W/done" "$HOME" || exit 2
LOG=$W/log
TRACK=$KILN_SRC/env/tracks/trixie.env
SYSPY=/usr/bin/python3
PY=$W/venv/bin/python
. "$KILN_SRC/tests/real/real.inc"
echo "# trixie: Debian $(cat /etc/debian_version), $($SYSPY --version 2>&1), in $W (log: $LOG)"
"$SYSPY" -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("2.6.0") else 1)' 2>>"$LOG" ||
	{ notok "trixie: $SYSPY has no torch 2.6.0 (python3-torch of Debian 13)"; exit 1; }

# --- 0. kiln from this checkout -------------------------------------------------------------
t0=$(now)
mkdir -p "$W/kiln" && (cd "$W/kiln" && { [ -f build.ninja ] || "$KILN_SRC/configure"; } && nice ninja) \
	>"$W/kiln.out" 2>&1 || { notok "trixie: kiln does not build on Debian 13"; showfail "$W/kiln.out"; exit 1; }
done_ kiln || { fig "kiln: configure && ninja on Debian 13 (s)" "$(since "$t0")"; mark kiln; }
KB=$W/kiln/build/bin
for t in kiln-stage srcpin envclean wheelpick hipify-wrap gpucheck; do
	[ -x "$KB/$t" ] || { notok "trixie: $KB/$t is missing after ninja"; exit 1; }
done
ok "trixie: kiln builds on Debian 13 from the checkout"

# --- 1. Debian 13's sources as git mirrors; the target Python: a venv of Python 3.13 that
# sees Debian's torch
mirrors "$TRACK" "trixie's orig tarballs of torch 2.6.0, vision 0.21.0 and audio 2.6.0"
mkvenv venv

# --- 2. the trixie track, CPU ------------------------------------------------------------------
steps=${KILN_REAL_STEPS:-cpu gfx}
case " $steps " in
*" cpu "*) ;;
*" lite "*) ;;
*) . "$KILN_SRC/tests/real/trixie-gfx.inc"; real_end trixie ;;
esac
# no compiler cache (the root has no ccache): audio.wheel.verify compiles everything again
# in work/audio.verify and compares; tests/regress/graph-cmakeext.sh proves a ccache build
# gives the bytes of one without
cpuconf () {
	# $1 folder, $2 pin file, $3 the target Python
	mkdir -p "$1" && (cd "$1" && "$KILN_SRC/configure" --arch=cpu --pins="$2" --python="${3:-$PY}" \
		--mirror="$W/mirror" --stage-cache="$W/stage-cache" --wheelhouse=/usr/share/python-wheels \
		KILN_BIN="$KB") >>"$LOG" 2>&1
}
# trixie_verify FOLDER NAME: audio.wheel.verify in FOLDER: the wheel built again (in
# another folder, work/audio.verify, 7 bytes longer) is the same, byte for byte; NAME
# names its files, figure and done mark
trixie_verify () {
	if ! done_ "$2"; then
		: >"$W/$2.out"
		nin "$1" "$W/$2.out" audio.wheel.verify
		echo "$? $took" >"$W/$2.rc"
		fig "$2: ninja audio.wheel.verify (s)" "$took"
		mark "$2"
	fi
	vrc= vtook=
	[ -f "$W/$2.rc" ] && read -r vrc vtook <"$W/$2.rc"
	if [ "$vrc" = 0 ] && grep -q 'identical' "$W/$2.out"; then
		ok "$2: audio.wheel.verify: $(grep -m1 'identical' "$W/$2.out" | sed 's/^ *//')"
	else
		notok "$2: audio.wheel.verify says the rebuilt wheel differs (exit $vrc)"; showfail "$W/$2.out"
	fi
}
# KILN_REAL_STEPS=lite: audio alone with libtorchaudio's core only (BUILD_RNNT=0
# BUILD_RIR=0 BUILD_ALIGN=0: 5 of its 18 compiles), its wheel, then audio.wheel.verify:
# the same CMake install step as the whole build, in a third of the time
trixie_lite () {
	mkdir -p "$W/lite" &&
		sed 's/^\(audio_ENV="[^"]*\)"$/\1 BUILD_RNNT=0 BUILD_RIR=0 BUILD_ALIGN=0"/' "$TRACK" >"$W/lite/trixie.env" &&
		grep -q '^audio_ENV=.*BUILD_ALIGN=0"$' "$W/lite/trixie.env" || { notok "lite: cannot write $W/lite/trixie.env"; exit 1; }
	(cd "$W/lite" && "$KILN_SRC/configure" --arch=cpu --pins="$W/lite/trixie.env" --python="$PY" \
		--mirror="$W/mirror" --without=vision KILN_BIN="$KB") >>"$LOG" 2>&1 ||
		{ notok "lite: configure failed (see $LOG)"; exit 1; }
	if ! done_ lite; then
		nin "$W/lite" "$W/lite.out" audio.wheel || { notok "lite: ninja audio.wheel failed"; showfail "$W/lite.out"; exit 1; }
		fig "lite: ninja audio.wheel, libtorchaudio's core only (s)" "$took"
		mark lite
	fi
	stagefigs lite "$W/lite.out"
	ok "lite: $(basename "$(ls "$W"/lite/build/wheels/audio/*.whl)") built"
	trixie_verify "$W/lite" liteverify
}
case " $steps " in *" lite "*) trixie_lite; real_end trixie ;; esac
# audio's wheel first, then audio.wheel.verify (the rebuild in work/audio.verify, a
# path 7 bytes longer), then the rest of the stack
if ! done_ audio; then
	cpuconf "$W/cpu" "$TRACK" || { notok "cpu: configure failed (see $LOG)"; tail -n 5 "$LOG" | sed 's/^/#   /'; exit 1; }
	if nin "$W/cpu" "$W/cpu.out" audio.wheel; then
		fig "cpu: ninja audio.wheel, first build (s)" "$took"
		mark audio
	else
		notok "cpu: ninja audio.wheel failed"; showfail "$W/cpu.out"; exit 1
	fi
fi
cpuconf "$W/cpu" "$TRACK" || { notok "verify: configure failed"; exit 1; }
trixie_verify "$W/cpu" verify
if ! done_ cpu; then
	cpuconf "$W/cpu" "$TRACK" || { notok "cpu: configure failed (see $LOG)"; exit 1; }
	if nin "$W/cpu" "$W/cpu.out" stack; then
		fig "cpu: ninja stack after audio.wheel (vision and the rest) (s)" "$took"
		mark cpu
	else
		notok "cpu: ninja stack failed"; showfail "$W/cpu.out"; exit 1
	fi
fi
stagefigs cpu "$W/cpu.out"
twice=$(stages "$W/cpu.out" | cut -d' ' -f1 | sort | uniq -d | tr '\n' ' ')
nostamp=
for s in vision.src vision.patch vision.wheel vision.pick vision.install audio.src audio.patch \
	audio.wheel audio.pick audio.install torch.install stack.smoke; do
	[ -f "$W/cpu/build/stamp/$s" ] || nostamp="$nostamp $s"
done
[ -z "$nostamp" ] && [ -z "$twice" ] && ok "cpu: every stage is done, none ran twice" ||
	notok "cpu: stages without a stamp:${nostamp:- none}; run twice: ${twice:-none}"

# the versions: the release, and the local label kiln.cpu.gKEY (the wheel stage's key)
wk () { sed -n 's/^KEY="\(.\{10\}\).*/\1/p' "$W/cpu/build/stamp/$1.wheel"; }
vv=$("$PY" -c 'import torchvision; print(torchvision.__version__)' 2>>"$LOG")
av=$("$PY" -c 'import torchaudio; print(torchaudio.__version__)' 2>>"$LOG")
[ "$vv" = "0.21.0+kiln.cpu.g$(wk vision)" ] && ok "cpu: torchvision $vv installed" ||
	notok "cpu: torchvision version is '$vv', want 0.21.0+kiln.cpu.g$(wk vision)"
[ "$av" = "2.6.0+kiln.cpu.g$(wk audio)" ] && ok "cpu: torchaudio $av installed (the tag's 2.6.0, not version.txt's 2.6.0a0)" ||
	notok "cpu: torchaudio version is '$av', want 2.6.0+kiln.cpu.g$(wk audio)"
vw=$(basename "$(cat "$W/cpu/build/wheels/vision.picked")") aw=$(basename "$(cat "$W/cpu/build/wheels/audio.picked")")
case "$vw:$aw" in
torchvision-0.21.0+kiln.cpu.g*-cp313-cp313-linux_*.whl:torchaudio-2.6.0+kiln.cpu.g*-cp313-cp313-linux_*.whl)
	ok "cpu: the wheels are $vw and $aw" ;;
*) notok "cpu: the wheels are named $vw and $aw" ;;
esac
for c in vision:c89dfa208de119f23002d731eafdcfc2748d798b audio:38ad916f5f99ec7ea56f479b513593460e9fa87d; do
	grep -q "\"${c%%:*}\":{[^}]*\"commit\":\"${c#*:}\"" "$W/cpu/build/build-info.json" 2>/dev/null &&
		ok "cpu: build-info.json records ${c%%:*}'s commit" || notok "cpu: build-info.json lacks ${c%%:*}'s commit"
done

if s=$(smoke "$PY" audio 2>&1); then ok "smoke: $s"; else notok "smoke: nms, transforms, resample, spectrogram, lfilter"; echo "$s" | sed 's/^/#   /'; fi

noop "$W/cpu" stack cpu

# --- another build folder, with a venv of its own, restores from the stage cache --------------
mkvenv venv2
PY2=$W/venv2/bin/python
if ! done_ restore; then
	cpuconf "$W/cpu2" "$TRACK" "$PY2" || { notok "restore: configure failed"; exit 1; }
	if nin "$W/cpu2" "$W/restore.out" stack; then
		fig "restore: ninja stack in a second build folder (s)" "$took"
		for d in cpu cpu2; do
			for c in vision audio; do sha256sum "$(cat "$W/$d/build/wheels/$c.picked")" | cut -c1-64; done
		done >"$W/restore.sha"
		mark restore
	else
		notok "restore: ninja stack failed"; showfail "$W/restore.out"; exit 1
	fi
fi
stagefigs restore "$W/restore.out"
for c in vision audio; do
	grep -q "^$c.wheel: restored from the stage cache" "$W/restore.out" &&
		ok "restore: $c.wheel restored from the stage cache, not rebuilt" || notok "restore: $c.wheel was not restored"
done
[ "$(sed -n 1,2p "$W/restore.sha" | tr '\n' ' ')" = "$(sed -n 3,4p "$W/restore.sha" | tr '\n' ' ')" ] &&
	[ "$(wc -l <"$W/restore.sha")" = 4 ] && ok "restore: the restored wheels are the built ones, byte for byte" ||
	notok "restore: the wheels differ ($(tr '\n' ' ' <"$W/restore.sha"))"

# --- a patch added to audio's series, in the second folder: only audio's stages rerun -------
if ! done_ bump; then
	rm -rf "$W/bump"
	mkdir -p "$W/bump/patches/audio" && cp "$KILN_SRC"/tests/real/bump/audio/*.patch "$W/bump/patches/audio/" &&
		(cd "$W/bump/patches/audio" && ls *.patch >series) &&
		{ cat "$TRACK"; echo "audio_PATCHES=patches/audio"; } >"$W/bump/trixie.env" ||
		{ notok "bump: cannot make $W/bump"; exit 1; }
	av=$("$PY2" -c 'import torchaudio; print(torchaudio.__version__)' 2>>"$LOG")
	echo "$av" >"$W/bump/before"
	cpuconf "$W/cpu2" "$W/bump/trixie.env" "$PY2" || { notok "bump: configure failed"; exit 1; }
	if KILN_EXPLAIN=1 nin "$W/cpu2" "$W/bump.out" stack; then
		fig "bump: ninja stack after adding an audio patch (s)" "$took"
		mark bump
	else
		notok "bump: ninja stack failed"; showfail "$W/bump.out"
	fi
fi
done_ bump || exit 1
stagefigs bump "$W/bump.out"
grep '^audio.wheel: rebuilt' "$W/bump.out" | sed 's/^/# bump: /'
got=$(stages "$W/bump.out" | cut -d' ' -f1 | sort -u | tr '\n' ' ')
[ "$got" = "audio.deps audio.install audio.patch audio.pick audio.wheel stack.smoke " ] &&
	ok "bump: only audio's stages after its series reran ($got)" || notok "bump: the stages that ran: $got"
[ "$(cat "$W/cpu2/build/src/audio/version.txt")" = 2.6.0 ] &&
	ok "bump: audio's tree carries the added patch (version.txt 2.6.0)" || notok "bump: the added patch is not in audio's tree"
av=$(cat "$W/bump/before")
av2=$("$PY2" -c 'import torchaudio; print(torchaudio.__version__)' 2>>"$LOG")
wk2=$(sed -n 's/^KEY="\(.\{10\}\).*/\1/p' "$W/cpu2/build/stamp/audio.wheel")
[ "$av2" = "2.6.0+kiln.cpu.g$wk2" ] && [ "$av2" != "$av" ] &&
	ok "bump: torchaudio $av2 installed, a new label for the new key (before: $av)" || notok "bump: torchaudio is '$av2' (before: $av)"
if s=$(smoke "$PY2" audio 2>&1); then ok "bump: smoke after the bump: $s"; else notok "bump: smoke"; echo "$s" | sed 's/^/#   /'; fi

case " $steps " in *" gfx "*) . "$KILN_SRC/tests/real/trixie-gfx.inc" ;; esac
real_end trixie
