# check.sh: rocm.check: every GPU library of the ROCm SDK carries code each --arch can
# run.
# sources: lib/base.sh
. "$steps/lib/base.sh"
# The pieces are step_check_* functions; they run in step_check's shell, so their
# variables must not be step_check's (a, n, f ...)

# step_check_libs: ROCm's GPU libraries under $ROCM_PATH, one path a line: lib/, lib64/ and
# a distribution's multiarch folder (Debian, Ubuntu: lib/x86_64-linux-gnu)
step_check_libs () {
	set +f
	for d in "$ROCM_PATH/lib" "$ROCM_PATH/lib64" "$ROCM_PATH"/lib/*-linux-gnu; do
		for f in "$d"/librocblas.so* "$d"/libhipblaslt.so* "$d"/librocsparse.so* "$d"/libMIOpen.so* \
			"$d"/librocrand.so* "$d"/librocfft.so* "$d"/librocsolver.so* "$d"/libhipsparselt.so* \
			"$d"/librccl.so* "$d"/libhipfft.so* "$d"/libhiprand.so*; do
			[ -f "$f" ] && [ ! -L "$f" ] && printf '%s\n' "$f"
		done
	done
	set -f
}

# step_check_name FILE: the library's own name (rocBLAS, hipBLASLt, ...)
step_check_name () {
	case "${1##*/}" in
	librocblas.*) echo rocBLAS ;; libhipblaslt.*) echo hipBLASLt ;; librocsparse.*) echo rocSPARSE ;;
	libMIOpen.*) echo MIOpen ;; librocrand.*) echo rocRAND ;; librocfft.*) echo rocFFT ;;
	librocsolver.*) echo rocSOLVER ;; libhipsparselt.*) echo hipSPARSELt ;; librccl.*) echo RCCL ;;
	libhipfft.*) echo hipFFT ;; libhiprand.*) echo hipRAND ;; *) echo "${1##*/}" ;;
	esac
}

# step_check_kernfolders FILE: the kernel-library folders of the library FILE (rocBLAS's
# and hipBLASLt's Tensile code objects: LIBDIR/rocblas/library, Fedora's
# /usr/lib64/rocblas/library, Debian's versioned LIBDIR/rocblas/VERSION/library)
step_check_kernfolders () {
	n=${1##*/}; n=${n#lib}; n=${n%%.so*}
	case "$n" in rocblas|hipblaslt) ;; *) return 0 ;; esac
	set +f
	for k in "${1%/*}/$n/library" "${1%/*}/$n"/*/library; do [ -d "$k" ] && printf '%s\n' "$k"; done
	set -f
}

# step_check_lack TEXT: one more part the library lacks the arch in ($lacks, "; "-separated)
step_check_lack () { lacks="${lacks:+$lacks; }$*"; }

# step_check_unroot TEXT: TEXT with "$ROCM_PATH/" taken out (paths said relative to the SDK)
step_check_unroot () {
	u=$1 r=
	while :; do
		case "$u" in *"$ROCM_PATH/"*) r=$r${u%%"$ROCM_PATH/"*}; u=${u#*"$ROCM_PATH/"} ;; *) break ;; esac
	done
	printf '%s\n' "$r$u"
}

# step_check_bundles A FILE: the library's own GPU code for A as gpucheck cover judges it
# (tools/gpucheck, the loader's rules: the exact ISA with its xnack/sramecc features, then
# the family's generic target for code object v6; a kpack'd library's HIPK wrappers through
# the archive the kpack loader picks: the exact ISA, each subset of its features, the bare
# processor, and no generic target). One log line, or one more part in $lacks
step_check_bundles () {
	rc=0 out=$(gpucheck cover -v --target="$1" "$2" 2>&1) || rc=$?
	line=$(printf '%s\n' "$out" | grep -F "  $2: " | head -n 1); line=${line#"  $2: "}
	case "$rc:$line:$out" in
	0:*"[kpack:"*) echo "$1: $rel: covered (kernel packs: $(step_check_unroot "${line##*]: }"))" ;;
	0:*) via=$(printf '%s\n' "$out" | sed -n '1s/.* through \([a-z0-9-]*\).*/\1/p')
	     echo "$1: $rel: covered (code-object bundles${via:+, through $via})" ;;
	1:*"carry no AMD GPU code"*) echo "$1: $rel: no code-object bundles (host code)" ;;
	1:*"kpack code objects lack it: "*)
		step_check_lack "its kernel packs ($(step_check_unroot "${line#*lack it: }"); install rocm[device-${1%%:*}] or a tarball carrying it)" ;;
	1:*) has=$(printf '%s\n' "$line" | sed -n 's/^[^;]*) has \([^;]*\).*/\1/p')
	     fix=$(printf '%s\n' "$out" | sed -n 's/^ *fix: //p' | head -n 1)
	     step_check_lack "its code-object bundles ($rel has ${has:-none}; gpucheck: ${fix:-no fix})" ;;
	*) step_check_lack "gpucheck cannot read it ($(step_check_unroot "$(printf '%s\n' "$out" | head -n 1)"))" ;;
	esac
}

# step_check_kernels A DIR: a kernel-library folder (Tensile's code objects), covered when
# one code object of the library runs on A (gpucheck cover's code-object rule)
step_check_kernels () {
	kr=${2#"$ROCM_PATH"/}
	if out=$(gpucheck cover --target="$1" "$2" 2>&1); then echo "$1: $kr: covered (kernel library)"; return; fi
	has=$(printf '%s\n' "$out" | sed -n "s/.*among the library's (\(.*\)) \[code objects.*/\1/p" | head -n 1 | sed 's/ ([0-9]*)//g')
	step_check_lack "its Tensile kernels ($kr has ${has:-none})"
}

# step_check_kdb A: MIOpen's kernel database for A. MIOpen opens SYSDB/ID_CUs.kdb (the
# compute units in decimal up to 64; above, ID then the count in hex: gfx90a6e.kdb), then
# SYSDB/ID.kdb (ROCm/MIOpen src/binary_cache.cpp GetDb, src/include/miopen/handle.hpp
# GetDbBasename); ID is the processor (src/target_properties.cpp InitDbId adds _xnack
# with XNACK on, which --arch does not name); SYSDB is share/miopen/db (CMakeLists.txt
# DATABASE_INSTALL_DIR). TheRock's device wheels carry the .kdb files (TheRock
# docs/packaging/python_packaging.md). A folder with other arches' databases and none for
# A lacks it; one with none at all (Debian's libmiopen1 ships none) is said, not failed:
# MIOpen then compiles its kernels when they are first used
step_check_kdb () {
	db=$ROCM_PATH/share/miopen/db id=$1
	set +f
	all=$(for kf in "$db"/*.kdb; do [ -f "$kf" ] && printf '%s\n' "${kf##*/}"; done || :)
	for kf in "$db/$id.kdb" "$db/${id}_"[0-9]*.kdb "$db/$id"[0-9a-f][0-9a-f]*.kdb; do
		[ -f "$kf" ] && { set -f; echo "$1: ${kf#"$ROCM_PATH"/}: covered (MIOpen's kernel database)"; return; }
	done
	set -f
	if [ -z "$all" ]; then
		echo "$1: share/miopen/db: no MIOpen kernel database (*.kdb) for any arch: MIOpen compiles its kernels when first used"
		return
	fi
	step_check_lack "its kernel database (share/miopen/db has $(printf '%s\n' "$all" | tr '\n' ' ' | sed 's/ $//; s/ /, /g'); none is ${id}_CUs.kdb or $id.kdb)"
}

# step_check_lib A FILE: one library for target A in every part that holds its GPU code:
# its bundles or kernel packs, its kernel-library folders, MIOpen's kernel database.
# Prints "A: PATH: covered (part)" lines for the log; the parts lacking A in $lacks
step_check_lib () {
	lacks= rel=${2#"$ROCM_PATH"/}
	step_check_bundles "$1" "$2"
	for k in $(step_check_kernfolders "$2"); do step_check_kernels "$1" "$k"; done
	case "${2##*/}" in libMIOpen.so*) step_check_kdb "$1" ;; esac
}

# every GPU library of the SDK must carry code each --arch can run, in every part: its
# bundles or kernel packs, its kernel-library folders, MIOpen's kernel database. One line
# per library lacking an arch, naming the parts, before any compile.
step_check () {
	# the targets, split at spaces (the arch list's spelling); then paths, which may hold
	# spaces: the lists below are split at newlines only
	set -- $ARCH
	IFS='
'
	libs=$(step_check_libs)
	[ -n "$libs" ] || die "$ROCM_PATH has none of ROCm's GPU libraries (rocBLAS, hipBLASLt, rocSPARSE, MIOpen, rocRAND, ...) in lib/, lib64/ or lib/*-linux-gnu/: not a ROCm SDK"
	bad=0
	for a; do
		n=0 nbad=0
		for f in $libs; do
			n=$((n + 1))
			step_check_lib "$a" "$f"
			[ -z "$lacks" ] && continue
			say "rocm.check: $(step_check_name "$f") (${f#"$ROCM_PATH"/}) has no code for $a in $lacks; use a ROCm built for $a (env/rocm-channels.env names the channel), the family's generic target, or leave that library's feature off"
			nbad=$((nbad + 1)) bad=1
		done
		echo "$a: $n GPU libraries, $((n - nbad)) covered, $nbad lacking it"
	done
	[ "$bad" = 0 ] || die "the ROCm at $ROCM_PATH lacks code for --arch=$ARCH_ARG"
}

