#!/bin/sh
# fuzz-long.sh FUZZDIR OUTDIR SECONDS FORKS [TARGET...]: the release-length fuzz run.
# Runs each libFuzzer target in FUZZDIR (all when none are named) for SECONDS with FORKS
# worker processes, all targets at once, from the seeds that fuzz-smoke uses, and keeps
# OUTDIR/TARGET.log (libFuzzer's stats), OUTDIR/TARGET.corpus and any crash artifacts
# (OUTDIR/TARGET-crash-*). Ends with one line per target: execs, coverage, CPU-seconds.
# Needs the source tree beside it for seeds (KILN_SRC, default: this script's tree);
# KILN_FUZZ_SEEDS=DIR adds DIR/TARGET/* (seeds generated on another machine).
set -u
fz=$1 out=$2 secs=$3 forks=$4
shift 4
src=${KILN_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
mkdir -p "$out"
targets=$*
[ -n "$targets" ] || targets=$(cd "$fz" && ls)
for t in $targets; do
	seeds=$out/$t.seeds
	mkdir -p "$out/$t.corpus" "$seeds"
	dict=
	# seeds made elsewhere (e.g. for a machine without clang-19): $KILN_FUZZ_SEEDS/TARGET/
	[ -d "${KILN_FUZZ_SEEDS:-/nonexistent}/$t" ] && cp "$KILN_FUZZ_SEEDS/$t"/* "$seeds/" 2>/dev/null
	for d in "$src"/tools/*/fuzz; do
		[ -d "$d/$t.corpus" ] && cp "$d/$t.corpus"/* "$seeds/" 2>/dev/null
		[ -d "$d/$t.regress" ] && cp "$d/$t.regress"/* "$seeds/" 2>/dev/null
		[ -f "$d/$t.seed.sh" ] && sh "$d/$t.seed.sh" "$seeds" >/dev/null 2>&1
		[ -f "$d/$t.dict" ] && dict="-dict=$d/$t.dict"
	done
	(
		cd "$out" &&
		"$fz/$t" -fork="$forks" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 -artifact_prefix="$out/$t-" $dict "$out/$t.corpus" "$seeds" \
			>"$out/$t.log" 2>&1
		echo $? >"$out/$t.rc"
	) &
done
wait
for t in $targets; do
	last=$(grep -E '^#[0-9]+' "$out/$t.log" | tail -n 1)
	execs=$(printf '%s' "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
	cov=$(printf '%s' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	crashes=$(ls "$out/$t"-crash-* "$out/$t"-leak-* "$out/$t"-timeout-* "$out/$t"-oom-* 2>/dev/null | wc -l)
	echo "$t: rc=$(cat "$out/$t.rc") execs=${execs:-?} cov=${cov:-?} cpu_s=$((secs * forks)) artifacts=$crashes"
done
