#!/bin/sh
# fuzz-smoke: run every libFuzzer target ($KILN_FUZZ/*) from its seed corpus
# (tools/*/fuzz/NAME.corpus/ plus what NAME.seed.sh writes), with its dictionary, for
# KILN_FUZZ_RUNS inputs [50000] or KILN_FUZZ_SECONDS [2], whichever comes first, and
# replay every saved regression input (NAME.regress/). Any crash, leak (LeakSanitizer is
# on here, whatever the runner chose for the tool tests), sanitizer report or hang fails.
# The input count, not a clock, ends the fast targets (a few tenths of a second each), so
# their walk is the same on every machine; the clock only caps the slow ones (kfd, log,
# series, zip: a few hundred inputs a second). The release-length run is
# tests/fuzz-long.sh. KILN_FUZZ_SEED sets the random seed [1: the same walk on every
# run, so a CI failure repeats; 0 lets libFuzzer pick]. A crash prints its input in
# base64, so a CI log is enough to add it to NAME.regress/.
. "$KILN_SRC/tests/lib.sh"
[ -n "${KILN_FUZZ:-}" ] && [ -d "$KILN_FUZZ" ] || skip_all "no fuzz targets built (needs clang-19 with libFuzzer)"
secs=${KILN_FUZZ_SECONDS:-2}
runs=${KILN_FUZZ_RUNS:-50000}
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1
export ASAN_OPTIONS
seed=${KILN_FUZZ_SEED:-1}
n=0
for bin in "$KILN_FUZZ"/*; do
	[ -x "$bin" ] || continue
	name=${bin##*/}
	n=$((n + 1))
	corpus=$T/$name.corpus
	seeds=$T/$name.seeds
	mkdir -p "$corpus" "$seeds"
	dict=
	for d in "$KILN_SRC"/tools/*/fuzz; do
		[ -d "$d/$name.corpus" ] && cp "$d/$name.corpus"/* "$seeds/" 2>/dev/null
		[ -f "$d/$name.seed.sh" ] && sh "$d/$name.seed.sh" "$seeds" >/dev/null 2>&1
		[ -f "$d/$name.dict" ] && dict=$d/$name.dict
		if [ -d "$d/$name.regress" ]; then
			for r in "$d/$name.regress"/*; do
				[ -f "$r" ] || continue
				exits "$name replays ${r##*/}" 0 "$bin" -rss_limit_mb=2048 -timeout=10 "$r"
			done
		fi
	done
	[ -n "$(ls "$seeds")" ] || notok "$name has no seed corpus"
	run "$bin" -seed="$seed" -runs="$runs" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$T/$name-" ${dict:+"-dict=$dict"} "$corpus" "$seeds"
	if [ "$rc" = 0 ]; then
		ok "$name: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$T/.err" | grep -o '[0-9]*$') inputs (of $runs, at most ${secs} s), no crash"
	else
		notok "$name: exit $rc"
		grep -E 'ERROR|SUMMARY|artifact|#[0-9]+ .* in LLVMFuzzerTestOneInput' "$T/.err" | head -6 | sed 's/^/#   /'
		for c in "$T/$name"-crash-* "$T/$name"-leak-* "$T/$name"-timeout-* "$T/$name"-oom-*; do
			[ -f "$c" ] || continue
			echo "#   ${c##*/} (base64; save as tools/*/fuzz/$name.regress/NAME after base64 -d):"
			base64 -w 76 "$c" | head -400 | sed 's/^/#   /'
		done
	fi
done
[ "$n" -gt 0 ] || skip_all "no fuzz targets built"
