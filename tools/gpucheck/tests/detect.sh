#!/bin/sh
# gpucheck detection on captured KFD topology trees (written in the kernel's format: one
# "key value" per line) and a captured /proc/driver/nvidia (from an H200 with driver
# 580.159.04); overrides as ROCm's thunk reads them; env; garbage sysfs files.
. "$KILN_SRC/tests/lib.sh"
cd "$T" || exit 2
unset HSA_OVERRIDE_GFX_VERSION HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES GPU_DEVICE_ORDINAL ROC_ENABLE_PRE_VEGA
for v in $(env | sed -n 's/^\(HSA_OVERRIDE_GFX_VERSION_[0-9]*\)=.*/\1/p'); do unset "$v"; done

# node DIR N PROPS...: write node N's properties (and a 16 GiB frame-buffer bank for GPUs)
node () {
	d=$1/class/kfd/kfd/topology/nodes/$2; shift 2
	mkdir -p "$d/mem_banks/0"
	printf '%s\n' "$@" >"$d/properties"
	printf 'heap_type 1\nsize_in_bytes 17163091968\nflags 0\nwidth 256\nmem_clk_max 1000\n' >"$d/mem_banks/0/properties"
}
cpu () { node "$1" 0 "cpu_cores_count 16" "simd_count 0" "mem_banks_count 1" "caches_count 0" "io_links_count 0" "cpu_core_id_base 0" "simd_id_base 0" "max_waves_per_simd 0" "lds_size_in_kb 0" "gds_size_in_kb 0" "num_gws 0" "wave_front_size 0" "array_count 0" "simd_arrays_per_engine 0" "cu_per_simd_array 0" "simd_per_cu 0" "max_slots_scratch_cu 0" "gfx_target_version 0" "vendor_id 0" "device_id 0" "location_id 0" "domain 0" "drm_render_minor 0" "hive_id 0" "num_sdma_engines 0" "num_sdma_xgmi_engines 0" "num_sdma_queues_per_engine 0" "num_cp_queues 0" "max_engine_clk_ccompute 5000"; }
gpu () { # DIR N GFXV DEVID SIMDS
	node "$1" "$2" "cpu_cores_count 0" "simd_count $5" "mem_banks_count 1" "caches_count 215" "io_links_count 1" "p2p_links_count 0" "cpu_core_id_base 0" "simd_id_base 2147487744" "max_waves_per_simd 16" "lds_size_in_kb 64" "gds_size_in_kb 0" "num_gws 64" "wave_front_size 32" "array_count 4" "simd_arrays_per_engine 2" "cu_per_simd_array 10" "simd_per_cu 2" "max_slots_scratch_cu 32" "gfx_target_version $3" "vendor_id 4098" "device_id $4" "location_id 50432" "domain 0" "drm_render_minor 128" "hive_id 0" "num_sdma_engines 2" "num_sdma_xgmi_engines 0" "num_sdma_queues_per_engine 8" "num_cp_queues 8" "max_engine_clk_fcompute 2900" "local_mem_size 0" "fw_version 32" "capability 671588992" "debug_prop 1495" "sdma_fw_version 14" "unique_id 0" "num_xcc 1" "max_engine_clk_ccompute 5000"
}
cpu s1; gpu s1 1 110501 5510 80
check "strix halo capture: detected" gpucheck --sysfs=s1
has "gfx1151 from gfx_target_version 110501" "$T/.out" "0  amd     gfx1151"
has "CUs from simd_count / simd_per_cu" "$T/.out" "40 CUs"
has "VRAM from the memory bank" "$T/.out" "16.0 GiB"
has "marketing name from the device-id table" "$T/.out" "Strix Halo"
same "--arch prints the target" gfx1151 "$(gpucheck --arch --sysfs=s1)"

cpu s2; gpu s2 1 90010 29708 208; gpu s2 2 90010 29708 208; gpu s2 3 100300 29631 72
same "two gfx90a and a gfx1030: --arch ;-joined, each once" "gfx90a;gfx1030" "$(gpucheck --arch --sysfs=s2)"
check "--json" gpucheck --json --sysfs=s2
python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpus"]; assert [x["target"] for x in g]==["gfx90a","gfx90a","gfx1030"] and [x["node"] for x in g]==[1,2,3] and g[0]["vram_bytes"]==17163091968, g' "$T/.out" &&
	ok "--json lists the GPUs with nodes and VRAM" || notok "--json lists the GPUs with nodes and VRAM"

# an old kernel: no gfx_target_version line; the device id (0x67DF) decides
cpu s3; node s3 1 "cpu_cores_count 0" "simd_count 144" "simd_per_cu 4" "vendor_id 4098" "device_id 26591" "wave_front_size 64" "this line is not key-number" "max_waves_per_simd 10"
check "old kernel without gfx_target_version" gpucheck --sysfs=s3
has "device id 0x67DF falls back to gfx803" "$T/.out" "gfx803"
has "and names the card" "$T/.out" "RX 470/480/570/580"
cpu s4; node s4 1 "cpu_cores_count 0" "simd_count 144" "simd_per_cu 4" "device_id 4660"
check "unknown device id, no gfx_target_version: listed as unknown" gpucheck --sysfs=s4
has "says the device id is unknown" "$T/.out" "device id 0x1234 is not in gpucheck's table"

# overrides, as ROCm's thunk reads them: per-node first, then the global one
same "HSA_OVERRIDE_GFX_VERSION=11.0.0 changes --arch" gfx1100 "$(HSA_OVERRIDE_GFX_VERSION=11.0.0 gpucheck --arch --sysfs=s1)"
run env HSA_OVERRIDE_GFX_VERSION=11.0.0 gpucheck --sysfs=s1
has "the override is shown with the real target" "$T/.out" "HSA_OVERRIDE_GFX_VERSION=11.0.0: the runtime loads gfx1100 code (the hardware is gfx1151)"
same "per-node override wins over the global one" "gfx1030;gfx90a" \
	"$(HSA_OVERRIDE_GFX_VERSION=9.0.10 HSA_OVERRIDE_GFX_VERSION_1=10.3.0 gpucheck --arch --sysfs=s2)"
same "9.0.10 is gfx90a" gfx90a "$(HSA_OVERRIDE_GFX_VERSION=9.0.10 gpucheck --arch --sysfs=s1)"
run env HSA_OVERRIDE_GFX_VERSION=11.0 gpucheck --sysfs=s1
has "a malformed override is reported" "$T/.out" "HSA_OVERRIDE_GFX_VERSION='11.0' is malformed"
same "a malformed override leaves the real target" gfx1151 "$(HSA_OVERRIDE_GFX_VERSION=11.0 gpucheck --arch --sysfs=s1)"

# no GPU
cpu s5
exits "only a CPU node: exit 1" 1 gpucheck --sysfs=s5
has "says no GPU was found" "$T/.err" "no GPU found"
exits "no KFD at all: exit 1" 1 gpucheck --sysfs="$T/nothing"

# garbage sysfs files: exit 2, file and offset named
cpu s6; gpu s6 1 110501 5510 80; printf 'simd_count 80\n\001\002garbage' >s6/class/kfd/kfd/topology/nodes/1/properties
exits "binary bytes in properties: exit 2" 2 gpucheck --sysfs=s6
has "binary bytes: file and offset" "$T/.err" "nodes/1/properties: not a KFD properties file (byte 0x01 at offset 14)"
printf 'simd_count 99999999999999999999999\n' >s6/class/kfd/kfd/topology/nodes/1/properties
exits "a number that overflows: exit 2" 2 gpucheck --sysfs=s6
has "overflow: file and offset" "$T/.err" "nodes/1/properties: number too large at offset 11"
printf 'hello world\nthis is not sysfs\n' >s6/class/kfd/kfd/topology/nodes/1/properties
exits "no key-value line: exit 2" 2 gpucheck --sysfs=s6
has "no key-value line: named" "$T/.err" "not a KFD properties file (no 'key value' line at offset 0)"
: >s6/class/kfd/kfd/topology/nodes/1/properties
exits "an empty properties file: exit 2" 2 gpucheck --sysfs=s6
gpu s6 1 110501 5510 80; printf '\377\376' >s6/class/kfd/kfd/topology/nodes/1/mem_banks/0/properties
exits "garbage memory bank: exit 2" 2 gpucheck --sysfs=s6
has "garbage memory bank: named" "$T/.err" "mem_banks/0/properties"

# NVIDIA: /proc captured on an H200 (driver 580.159.04); no libcuda with a captured tree
mkdir -p p/driver/nvidia/gpus/0000:00:06.0
printf 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \nGCC version:  gcc version 15.3.0 (GCC) \n' >p/driver/nvidia/version
printf 'Model: \t\t NVIDIA H200\nIRQ:   \t\t 41\nGPU UUID: \t GPU-712be5eb-19d8-4b5e-5329-3c54e6de23d9\nVideo BIOS: \t 96.00.a5.00.1a\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t 0000:00:06.0\nDevice Minor: \t 0\nGPU Firmware: \t 580.159.04\nGPU Excluded:\t No\n' >p/driver/nvidia/gpus/0000:00:06.0/information
check "NVIDIA from a captured /proc" gpucheck --sysfs=s5 --proc=p
has "model and driver version" "$T/.out" "nvidia  unknown   NVIDIA H200, driver 580.159.04"
printf 'garbage\n' >p/driver/nvidia/version
exits "garbage NVIDIA version file: exit 2" 2 gpucheck --sysfs=s5 --proc=p
has "garbage NVIDIA version file: named" "$T/.err" "driver/nvidia/version: not an NVIDIA driver version file"

# env
check "env: clean" gpucheck env --sysfs=s1
has "env: ok line" "$T/.out" "ok: 1 GPU, no problem"
exits "env: malformed override" 1 env HSA_OVERRIDE_GFX_VERSION=11 gpucheck env --sysfs=s1
has "env: says malformed" "$T/.out" "HSA_OVERRIDE_GFX_VERSION='11' is malformed"
exits "env: empty override" 1 env HSA_OVERRIDE_GFX_VERSION= gpucheck env --sysfs=s1
has "env: says empty" "$T/.out" "is set but empty"
exits "env: override across families" 1 env HSA_OVERRIDE_GFX_VERSION=10.3.0 gpucheck env --sysfs=s1
has "env: names the family mismatch" "$T/.out" "on GPU 0, a gfx1151: a different ISA family"
exits "env: in-family override is fine" 0 env HSA_OVERRIDE_GFX_VERSION=11.0.0 gpucheck env --sysfs=s1
exits "env: ROC_ENABLE_PRE_VEGA is a note" 0 env ROC_ENABLE_PRE_VEGA=1 gpucheck env --sysfs=s1
has "env: explains ROC_ENABLE_PRE_VEGA" "$T/.out" "removed in ROCm 6.0"
exits "env: HIP_VISIBLE_DEVICES hides everything" 1 env HIP_VISIBLE_DEVICES= gpucheck env --sysfs=s1
exits "env: HIP_VISIBLE_DEVICES names a GPU that is not there" 1 env HIP_VISIBLE_DEVICES=0,3 gpucheck env --sysfs=s2
has "env: names the index" "$T/.out" "names GPU 3, but there are only 3"
exits "env: no GPU" 1 gpucheck env --sysfs=s5
if command -v cc >/dev/null; then
	mkdir -p r1 r2
	echo 'int hipInit(int f) { return f; }' >h.c
	cc -shared -fPIC -o r1/libamdhip64.so.6 h.c && cc -shared -fPIC -o r2/libamdhip64.so.6 h.c
	exits "env: two libamdhip64 on LD_LIBRARY_PATH" 1 env LD_LIBRARY_PATH="$T/r1:$T/r2" gpucheck env --sysfs=s1
	has "env: names both copies" "$T/.out" "two copies of libamdhip64.so on LD_LIBRARY_PATH: $T/r1/libamdhip64.so.6 and $T/r2/libamdhip64.so.6"
	exits "env: one copy is fine" 0 env LD_LIBRARY_PATH="$T/r1:$T/r1" gpucheck env --sysfs=s1
fi
check "env --json" gpucheck env --json --sysfs=s1
has "env --json: problems counted" "$T/.out" '"problems":0'

# cover with the detected device (auto) from a captured tree
exits "cover auto without a GPU: usage error" 2 gpucheck cover --sysfs=s5 /bin/sh
exits "--help" 0 gpucheck --help
has "--help shows the verbs" "$T/.out" "gpucheck cover"
exits "unknown option" 2 gpucheck --frobnicate
