#!/bin/sh
# tests/real/torch-rocm-subset.sh: issue 42, items 2 and 3 (part "torchrocm" of ninja
# check-real, opt-in: KILN_TORCH_ROCM=1; after torch-rocm-configure.sh, whose root,
# mirror and series it uses). In the root's build folder for --arch=gfx803;gfx1151:
#   1. ninja torch.subset, killed: once torch's own ninja inside the stage has run
#      KILN_TORCH_ROCM_KILL_AFTER edges (default 12; counted in its .ninja_log, which
#      tail -F follows: no sleep, no timer), that ninja gets SIGTERM. The stage must fail
#      and leave no stamp;
#   2. ninja torch.subset again: it goes on in the same tree. No edge the first run finished
#      runs again (the two parts of torch's .ninja_log share no output), and the stage ends
#      with its stamp;
#   3. what it built: c10's and c10_hip's libraries and the 22 ATen HIP kernels' objects
#      (tests/real/torch-rocm-subset.txt) in build/torch/subset; gpucheck targets lists
#      gfx803 and gfx1151 in them, gpucheck cover --target=gfx803 and =gfx1151 pass,
#      =gfx90a fails; a second ninja torch.subset has no work to do;
#   4. figures: the subset's compile time, objects per minute, the mean time of a C++
#      and of a HIP compile (torch's .ninja_log), and the projected time of torch's whole
#      build (ninja -t commands all, counted by kind) on 2 and on 16 cores.
KILN_SRC=$(cd "${KILN_SRC:-$(dirname "$0")/../..}" && pwd) || exit 2
[ "${KILN_TORCH_ROCM:-0}" = 1 ] || {
	echo "skip torch-rocm-subset: optional tier torchrocm (KILN_TORCH_ROCM=1; about an hour of compiling on 2 cores)"
	exit 0
}
. "$KILN_SRC/tests/real/torch-rocm.inc"
N=${KILN_TORCH_ROCM_KILL_AFTER:-12}
troot
tkiln
tsrc
n=b803-1151 a="gfx803;gfx1151"
B=$G/$n/build
TB=$R$B/work/torch/build
tconf "$n" "$a" >"$W/$n-kconf.out" 2>&1 || { notok "subset: kiln's configure failed"; showfail "$W/$n-kconf.out"; exit 1; }

# --- 1. killed after N edges of torch's ninja --------------------------------------------------
# torchninja: the pid of torch's own ninja in this tree (its command line starts
# "ninja -C $B/work/torch/build"), empty when none runs
torchninja () {
	for p in /proc/[0-9]*; do
		c=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
		case "$c" in "ninja -C $B/work/torch/build "*) echo "${p#/proc/}"; return 0 ;; esac
	done
}
if ! done_ killed; then
	tnin "$n" "$W/configure.out" torch.configure || { notok "subset: ninja torch.configure failed"; showfail "$W/configure.out"; exit 1; }
	l0=$(wc -l <"$TB/.ninja_log" 2>/dev/null || echo 0)
	: >"$W/killed.out"
	k0=$(now)
	tnin "$n" "$W/killed.out" torch.subset &
	bg=$!
	# the first line after N more edges (tail -F waits for the file, and ends with the job;
	# sh's read takes one line at a time, where mawk would wait for a full buffer)
	got=$(tail -n +1 -F --pid="$bg" "$TB/.ninja_log" 2>/dev/null | {
		i=0
		while IFS= read -r l; do i=$((i + 1)); [ "$i" -ge $((l0 + N)) ] && { echo "$i"; break; }; done
	})
	p=$(torchninja)
	if [ -n "$got" ] && [ -n "$p" ]; then
		kill -TERM "$p"
		echo "killed torch's ninja (pid $p) at .ninja_log line $got" >"$W/killed.what"
	fi
	wait "$bg"
	echo "$? $(since "$k0")" >"$W/killed.rc"
	wc -l <"$TB/.ninja_log" >"$W/killed.lines"
	mark killed
fi
read -r krc ktook <"$W/killed.rc"
kl=$(cat "$W/killed.lines")
if [ -f "$W/killed.what" ] && [ "$krc" != 0 ] && [ ! -f "$R$B/stamp/torch.subset" ]; then
	ok "resume: $(cat "$W/killed.what"): ninja torch.subset failed (exit $krc), no stamp"
else
	notok "resume: the kill did not stop the stage (exit $krc; $(cat "$W/killed.what" 2>/dev/null || echo 'torch.subset ended before N edges'))"
	showfail "$W/killed.out"
fi
fig "resume: torch's .ninja_log lines when killed" "$kl"

# --- 2. resumed -------------------------------------------------------------------------------
if ! done_ resumed; then
	: >"$W/resumed.out"
	tnin "$n" "$W/resumed.out" torch.subset
	echo "$? $took" >"$W/resumed.rc"
	mark resumed
fi
read -r rrc rtook <"$W/resumed.rc"
[ "$rrc" = 0 ] && [ -f "$R$B/stamp/torch.subset" ] && ok "resume: ninja torch.subset again went on and ended with its stamp ($rtook s)" ||
	{ notok "resume: the second ninja torch.subset failed (exit $rrc)"; showfail "$W/resumed.out"; tail -n 30 "$R$B/logs/torch.subset.log" | sed 's/^/#   /'; real_end torch-rocm-subset; }
# outputs of the edges each part ran (.ninja_log v5/v6: start end mtime output hash)
awk -v k="$kl" 'NR > 1 && NR <= k { print $4 }' "$TB/.ninja_log" | sort -u >"$W/part1"
awk -v k="$kl" 'NR > k { print $4 }' "$TB/.ninja_log" | sort -u >"$W/part2"
again=$(comm -12 "$W/part1" "$W/part2" | wc -l)
[ "$again" = 0 ] && [ -s "$W/part1" ] && [ -s "$W/part2" ] &&
	ok "resume: the $(wc -l <"$W/part2") edges after the kill are new: none of the $(wc -l <"$W/part1") done before ran again" ||
	notok "resume: $again edges ran in both parts"
fig "subset: ninja torch.subset, killed part (s)" "$ktook"
fig "subset: ninja torch.subset, resumed part (s)" "$rtook"
grep -h 'ccache' "$R$B/logs/torch.subset.log" | tail -n 1 | sed 's/^/# /'

# --- 3. what it built ---------------------------------------------------------------------------
O=$B/torch/subset
inroot "$KB/gpucheck targets $O" >"$W/targets" 2>&1
for t in gfx803 gfx1151; do
	grep -q "$t" "$W/targets" && ok "subset: gpucheck targets lists $t in $O" || notok "subset: gpucheck targets does not list $t"
	inroot "$KB/gpucheck cover --target=$t $O" >"$W/cover-$t" 2>&1 &&
		ok "subset: gpucheck cover --target=$t: $(head -n 1 "$W/cover-$t")" || { notok "subset: gpucheck cover --target=$t fails"; sed 's/^/#   /' "$W/cover-$t"; }
done
inroot "$KB/gpucheck cover --target=gfx90a $O" >"$W/cover-gfx90a" 2>&1
[ $? = 1 ] && ok "subset: gpucheck cover --target=gfx90a fails (exit 1)" || notok "subset: gpucheck cover --target=gfx90a does not fail with 1"
no=$(cd "$R$O" && find . -name '*.o' | wc -l) ns=$(cd "$R$O" && find . -name 'lib*.so*' | wc -l)
[ "$no" -ge 22 ] && [ "$ns" -ge 2 ] && ok "subset: $no HIP kernel objects and $ns libraries ($(cd "$R$O" && find . -name 'lib*.so*' -printf '%f ' | sort))" ||
	notok "subset: $no objects and $ns libraries in $O"
: >"$W/noop.out"
tnin "$n" "$W/noop.out" torch.subset
grep -q 'no work to do' "$W/noop.out" && ok "subset: a second ninja torch.subset has no work to do" || { notok "subset: a second ninja torch.subset did work"; showfail "$W/noop.out"; }

# --- 4. figures ---------------------------------------------------------------------------------
# per edge kind (HIP compile: a .hip source's object; C++: .cpp/.cc/.c objects; other:
# codegen, links): count and summed milliseconds from .ninja_log (every run in this tree)
# (an edge with many outputs, torch's code generators, logs one line per output: an edge is
# one start, end and command hash)
awk 'NR > 1 && !seen[$1 " " $2 " " $5]++ { d = $2 - $1; k = ($4 ~ /\.hip\.o$/) ? "hip" : ($4 ~ /\.(cpp|cc|c)\.o$/) ? "cxx" : "other"; n[k]++; s[k] += d }
	END { for (k in n) printf "%s %d %d\n", k, n[k], s[k] }' "$TB/.ninja_log" | sort >"$W/kinds"
inroot "ninja -C $B/work/torch/build -t commands all" >"$W/all.commands" 2>/dev/null
allhip=$(grep -c '_generated_[^ ]*\.hip\.o' "$W/all.commands") all=$(wc -l <"$W/all.commands")
allcxx=$(grep -c ' -c .*\.\(cpp\|cc\|c\)\( \|$\)' "$W/all.commands")
wall=$(awk -v a="$ktook" -v b="$rtook" 'BEGIN { printf "%.0f", a + b }')
edges=$(awk '{ s += $2 } END { print s }' "$W/kinds")
fig "subset: torch's edges run (both parts)" "$edges ($(tr '\n' ';' <"$W/kinds" | sed 's/;$//; s/;/; /g'): kind, edges, summed ms)"
fig "subset: compile time, both parts (s)" "$wall"
fig "subset: objects per minute (-j$JOBS)" "$(awk -v e="$edges" -v w="$wall" 'BEGIN { printf "%.1f", e * 60 / w }')"
fig "full build: torch's edges (ninja -t commands all)" "$all ($allhip HIP compiles, $allcxx C/C++ compiles)"
proj=$(awk -v all="$all" -v h="$allhip" -v x="$allcxx" '$1 == "hip" { mh = $3 / $2 } $1 == "cxx" { mx = $3 / $2 }
	END { o = all - h - x; cpu = (h * mh + (x + o) * mx) / 1000; printf "%.0f %.1f %.1f %.0f %.0f", cpu, cpu / 2 / 3600, cpu / 16 / 3600, mh / 1000, mx / 1000 }' "$W/kinds")
set -- $proj
fig "full build: one-core compile time from the measured means (s)" "$1 (HIP compile $4 s, C++ compile $5 s each, measured at -j$JOBS on a shared machine)"
fig "full build: projected on 2 cores (h)" "$2"
fig "full build: projected on 16 cores (h)" "$3"
real_end torch-rocm-subset
