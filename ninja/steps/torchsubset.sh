# torchsubset.sh: torch.subset (torch_SUBSET, issue 42): torch's own ninja, in the tree
# torch.configure configured ($B/work/torch/build), on the targets and sources the file
# SUBSET_FILE names; what it built (objects and libraries) copied into a fresh
# $B/torch/subset, the GPU targets in them checked with gpucheck for each --arch.
#
# Keyed right: the tree is torch.configure's, made afresh from the prepared source whenever
# that stage's key changes (never reused across keys), and this stage's key adds the
# list's digest. A run that stops (killed, a failed compile) leaves no stamp; the next one
# runs torch's ninja again in the same tree, which goes on from what is done (its
# .ninja_log and the files' times), with the compiler cache under it.
# sources: lib/base.sh lib/build.sh lib/cache.sh
. "$steps/lib/base.sh"
. "$steps/lib/build.sh"
. "$steps/lib/cache.sh"

# subsettargets: the list's words as torch's ninja targets, one a line: a word naming a
# source file of the tree (aten/src/ATen/native/hip/FillKernel.hip) becomes the outputs
# of the build statements that compile it (build.ninja names it by its full path), any
# other word (c10, c10_hip) is a target as it is; '#' starts a comment
subsettargets () {
	sed 's/#.*//' "$SUBSET_FILE" | tr -s ' \t' '\n\n' | grep . | while IFS= read -r w; do
		if [ -f "$work/$w" ]; then
			o=$(awk -v s="$work/$w" '$1 == "build" {
				for (i = 2; i <= NF; i++) if ($i ~ /:$/) break
				for (j = i + 2; j <= NF && $j != "|" && $j != "||"; j++)
					if ($j == s) { out = $2; sub(/:$/, "", out); print out; next }
			}' "$bd/build.ninja")
			[ -n "$o" ] || die "$SUBSET_FILE: torch's build.ninja compiles no $w"
			printf '%s\n' "$o"
		else
			printf '%s\n' "$w"
		fi
	done
}

# subsetninja: $bd/kiln-subset.ninja, torch's build.ninja with one change: the compiles of
# the list's sources lose the libraries among their order-only inputs (CMake makes every
# object of torch_hip wait for libtorch_cpu.so, about 1100 compiles, which an object does
# not read), keeping the code generators (ATEN_*_FILES_GEN_TARGET, whose headers it does
# read) and c10's libraries. The same commands, in the same tree, with the same
# .ninja_log: torch's own ninja -f build.ninja later finds those objects up to date
subsetninja () {
	awk 'NR == FNR { want[$0] = 1; next }
		$1 == "build" { o = $2; sub(/:$/, "", o)
			if (o in want && (i = index($0, " || ")) > 0) {
				n = split(substr($0, i + 4), oo, " "); keep = ""
				for (j = 1; j <= n; j++)
					if (oo[j] !~ /^lib\/lib.*\.(so|a)$/ || oo[j] ~ /^lib\/libc10(_hip)?\.so$/) keep = keep " " oo[j]
				$0 = substr($0, 1, i - 1) (keep == "" ? "" : " ||" keep)
			} }
		{ print }' "$work.home/subset.targets" "$bd/build.ninja" >"$bd/kiln-subset.ninja.tmp" &&
		mv -f "$bd/kiln-subset.ninja.tmp" "$bd/kiln-subset.ninja" || die "cannot write $bd/kiln-subset.ninja"
}

# edgesdone: the lines of torch's .ninja_log (one per edge run, and its header)
edgesdone () { wc -l <"$bd/.ninja_log" 2>/dev/null || echo 0; }

step_torchsubset () {
	work=$B/work/$c wargs=$B/work/$c.home/args bd=$B/work/$c/build
	[ -f "$bd/build.ninja" ] && [ -f "$wargs" ] ||
		die "no configured torch tree in $work (remove $B/stamp/torch.configure and run ninja torch.subset)"
	subsettargets >"$work.home/subset.targets" || exit 1
	[ -s "$work.home/subset.targets" ] || die "$SUBSET_FILE names nothing to build"
	set --
	while IFS= read -r a; do set -- "$@" "$a"; done <"$wargs"
	[ "$CACHE" = ccache ] && ccstats "$@" >"$work.home/ccache.before"
	e0=$(edgesdone) t0=$(date +%s)
	say "torch's ninja in $bd: $(wc -l <"$work.home/subset.targets") targets; its log holds $e0 lines before"
	subsetninja
	set -- "$@" -- ninja -C "$bd" -f kiln-subset.ninja -j "$JOBS"
	while IFS= read -r t; do set -- "$@" "$t"; done <"$work.home/subset.targets"
	clean "$@" || die "torch's ninja failed (the tree is kept in $work: ninja torch.subset goes on from there)"
	say "torch's ninja: $(($(edgesdone) - e0)) edges in $(($(date +%s) - t0)) s"
	if [ "$CACHE" = ccache ]; then
		# the build's options again, without the command
		set --
		while IFS= read -r a; do set -- "$@" "$a"; done <"$wargs"
		ccstats "$@" >"$work.home/ccache.after"
		hitrate "$work.home/ccache.before" "$work.home/ccache.after"
	fi
	subsetcollect
}

# subsetcollect: the built objects and libraries of the list into a fresh $B/torch/subset
# (kept by their build path), their digests in $B/torch/subset.files (whose digest is the
# stage's ID, $B/torch/subset.id), and
# gpucheck cover of each --arch on them
subsetcollect () {
	# not o: clean (lib/base.sh) keeps IFS in o
	sd=$B/torch/subset
	rm -rf "$sd.new" && mkdir -p "$sd.new" || die "cannot create $sd.new"
	while IFS= read -r t; do
		f=$bd/$t
		[ -f "$f" ] || f=$(set +f; ls "$bd"/lib/lib"$t".so 2>/dev/null | head -n 1)
		[ -f "$f" ] || continue
		r=${f#"$bd"/}
		mkdir -p "$sd.new/${r%/*}" && cp -p "$f" "$sd.new/$r" || die "cannot copy $f"
	done <"$work.home/subset.targets"
	rm -rf "$sd" && mv "$sd.new" "$sd" || die "cannot move $sd.new to $sd"
	(cd "$sd" && find . -type f | sort | xargs sha256sum) >"$B/torch/subset.files" ||
		die "cannot write $B/torch/subset.files"
	sha256sum <"$B/torch/subset.files" | cut -c1-64 >"$B/torch/subset.id.tmp" &&
		mv -f "$B/torch/subset.id.tmp" "$B/torch/subset.id" || die "cannot write $B/torch/subset.id"
	say "$(wc -l <"$B/torch/subset.files") files in $sd (their digests: $B/torch/subset.files)"
	[ "$BACKEND" = gfx ] || return 0
	clean -- gpucheck targets "$sd" || die "gpucheck targets $sd failed"
	for a in $ARCH; do
		clean -- gpucheck cover --target="$a" "$sd" || die "the GPU code in $sd does not cover $a (above)"
	done
}
