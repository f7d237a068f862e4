#!/bin/sh
# tests/real/torch-rocm-configure.sh: issue 42, item 1 (the part "torchrocm" of ninja
# check-real, opt-in: KILN_TORCH_ROCM=1). torch 2.6.0 from trixie's source package
# pytorch 2.6.0+dfsg-7 (env/tracks/torch-rocm-debian.env) in a Debian sid root: torch.src
# (the mirror debsrc.sh makes, debian/ in the tree), torch.patch (Debian's quilt series,
# then kiln's), torch.hipify, then torch.configure, torch's real CMake configure with ROCm
# on, for --arch=gfx803, gfx1151 and both. Checked: the configure passes, the targets are
# the arch's, every ROCm library LoadHIP.cmake asks for is found with a version, in the
# stage log and in build-info.json. Figures: each configure's time, the ninja edges.
# Resumable ($W/done); KILN_REAL_FRESH=1 starts over. See tests/real/torch-rocm.inc.
KILN_SRC=$(cd "${KILN_SRC:-$(dirname "$0")/../..}" && pwd) || exit 2
[ "${KILN_TORCH_ROCM:-0}" = 1 ] || {
	echo "skip torch-rocm-configure: optional tier torchrocm: torch 2.6.0 from Debian's source against sid's ROCm, in a sid root (KILN_TORCH_ROCM=1; about 1.5 GB downloaded, a 12 GB root, cached)"
	exit 0
}
. "$KILN_SRC/tests/real/torch-rocm.inc"
troot
ok "torch-rocm: the sid root holds hipcc and ROCm's libraries ($R)"
fig "root: hipcc" "$(chroot "$R" dpkg-query -W -f '${Version}' hipcc)"
fig "root: libamdhip64-dev" "$(chroot "$R" dpkg-query -W -f '${Version}' libamdhip64-dev)"
tkiln
tsrc

# the libraries torch 2.6.0's cmake/public/LoadHIP.cmake finds with
# find_package_and_print_version (rccl is optional there; sid has none that installs)
libs="hip amd_comgr rocrand hiprand rocblas hipblas miopen hipfft hipsparse rocprim hipcub rocthrust hipsolver hiprtc hsa_runtime64 hipblaslt"
# KILN_TORCH_ROCM_ARCHS: the --arch lists, space-separated (default: gfx803, gfx1151, both)
for a in ${KILN_TORCH_ROCM_ARCHS:-gfx803 gfx1151 gfx803,gfx1151}; do
	a=$(printf '%s' "$a" | tr , ';')
	n=b$(printf '%s' "$a" | tr -d 'gfx' | tr ';' '-')
	tconf "$n" "$a" >"$W/$n-kconf.out" 2>&1 || { notok "$a: kiln's configure failed"; showfail "$W/$n-kconf.out"; continue; }
	if ! done_ "conf-$n"; then
		: >"$W/$n-configure.out"
		if tnin "$n" "$W/$n-configure.out" torch.configure; then
			mark "conf-$n"
		else
			notok "$a: ninja torch.configure failed"; showfail "$W/$n-configure.out"
			tail -n 30 "$R$G/$n/build/logs/torch.configure.log" | sed 's/^/#   /'; continue
		fi
		stagefigs "$a:" "$W/$n-configure.out"
	fi
	id=$R$G/$n/build/torch/configure.found
	s=$(sed -n 's/^CONFIGURE_SECONDS=//p' "$id")
	fig "$a: torch's cmake configure (s)" "$s"
	fig "$a: torch's ninja edges" "$(sed -n 's/^NINJA_EDGES=//p' "$id")"
	want=$(printf '%s' "$a" | tr ';' ' ')
	got=$(sed -n 's/^ROCM_ARCH=//p' "$id" | tr ';' ' ')
	[ "$got" = "$want" ] && ok "$a: torch's configure builds for $got (LoadHIP: Building PyTorch for GPU arch)" ||
		notok "$a: torch's configure builds for '$got'"
	miss=
	for l in $libs; do
		v=$(sed -n "s/^ROCM_LIB_$l=//p" "$id")
		case "$v" in ''|'not found') miss="$miss $l" ;; esac
	done
	[ -z "$miss" ] && ok "$a: every ROCm library LoadHIP asks for is found: $(sed -n 's/^ROCM_LIB_\(.*\)=\(.*\)/\1 \2/p' "$id" | tr '\n' ',' | sed 's/,$//; s/,/, /g')" ||
		notok "$a: not found:$miss"
	lg=$R$G/$n/build/logs/torch.configure.log
	grep -q '^rocblas VERSION: [0-9]' "$lg" && grep -q '^kiln:   ROCM_VERSION=' "$lg" &&
		ok "$a: the stage log says what was found ($(grep -m1 '^kiln:   ROCM_VERSION=' "$lg" | sed 's/^kiln: *//'))" ||
		notok "$a: the stage log lacks the versions"
	bi=$R$G/$n/build/build-info.json
	grep -q '"rocm_lib_rocblas": *"[0-9]' "$bi" && grep -q '"rocm_version": *"6' "$bi" &&
		ok "$a: build-info.json records them (components.torch: rocm_version, rocm_lib_*)" || notok "$a: build-info.json lacks the versions"
done
real_end torch-rocm-configure
