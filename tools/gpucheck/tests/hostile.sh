#!/bin/sh
# gpucheck on hostile input (issue #15): FIFOs where files are read, KFD numbers no GPU
# reports, and wheels whose ELF members inflate past --max-inflate. Every case must end
# at once with exit 2 and one line naming the file (a FIFO that hung is exit 124 here).
. "$KILN_SRC/tests/lib.sh"
need python3 /usr/bin/time
cd "$T" || exit 2
unset HSA_OVERRIDE_GFX_VERSION
TO="timeout 20"

# node DIR N PROPS...: a KFD node with a 16 GiB frame-buffer bank (the kernel's format)
node () {
	d=$1/class/kfd/kfd/topology/nodes/$2; shift 2
	mkdir -p "$d/mem_banks/0"
	printf '%s\n' "$@" >"$d/properties"
	printf 'heap_type 1\nsize_in_bytes 17163091968\n' >"$d/mem_banks/0/properties"
}
gpu () { # DIR GFXV SIMDS [MORE PROPS]: node 0 a CPU, node 1 a GPU
	dir=$1 gv=$2 simd=$3; shift 3
	node "$dir" 0 "cpu_cores_count 16" "simd_count 0" "gfx_target_version 0"
	node "$dir" 1 "cpu_cores_count 0" "simd_count $simd" "simd_per_cu 2" "wave_front_size 32" \
		"gfx_target_version $gv" "vendor_id 4098" "device_id 5510" "$@"
}

# a real-looking tree works: the baseline the forged ones differ from by one number
gpu ok 110501 80
check "a sane KFD tree is a GPU" $TO gpucheck --arch --sysfs=ok
same "it is gfx1151" gfx1151 "$(cat "$T/.out")"

# --- FIFOs and other non-regular files ---
gpu f1 110501 80
rm f1/class/kfd/kfd/topology/nodes/1/properties
mkfifo f1/class/kfd/kfd/topology/nodes/1/properties
exits "a FIFO as a node's properties: exit 2, no hang" 2 $TO gpucheck --sysfs=f1
has "names the FIFO and says what it is" "$T/.err" "nodes/1/properties: is a FIFO, not a regular file"
gpu f2 110501 80
rm f2/class/kfd/kfd/topology/nodes/1/mem_banks/0/properties
mkfifo f2/class/kfd/kfd/topology/nodes/1/mem_banks/0/properties
exits "a FIFO as a memory bank's properties: exit 2" 2 $TO gpucheck --sysfs=f2
has "names the bank's file" "$T/.err" "mem_banks/0/properties: is a FIFO"
gpu f3 110501 80
rm f3/class/kfd/kfd/topology/nodes/1/properties
mkdir f3/class/kfd/kfd/topology/nodes/1/properties
exits "a folder as a node's properties: exit 2" 2 $TO gpucheck --sysfs=f3
has "says it is a folder" "$T/.err" "properties: Is a directory"
gpu f4 110501 80
mkdir -p f4/module/amdgpu && mkfifo f4/module/amdgpu/version
check "a FIFO as the amdgpu version (optional) is skipped, no hang" $TO gpucheck --arch --sysfs=f4
gpu f5 110501 80
mkdir -p p5/driver/nvidia && mkfifo p5/driver/nvidia/version
exits "a FIFO as /proc/driver/nvidia/version: exit 2" 2 $TO gpucheck --sysfs=f5 --proc=p5
has "names it" "$T/.err" "driver/nvidia/version: is a FIFO"
mkfifo lib.so fat.whl
exits "gpucheck targets on a FIFO: exit 2, no hang" 2 $TO gpucheck targets lib.so
has "names the FIFO" "$T/.err" "lib.so: is a FIFO, not a regular file"
exits "gpucheck targets on a FIFO named *.whl: exit 2" 2 $TO gpucheck targets fat.whl
has "names the wheel" "$T/.err" "fat.whl: is a FIFO"
exits "gpucheck cover on a FIFO: exit 2" 2 $TO gpucheck cover --target=gfx90a lib.so
exits "gpucheck targets on /dev/null (a device): exit 2" 2 $TO gpucheck targets /dev/null
has "says it is a character device" "$T/.err" "/dev/null: is a character device"
mkdir dir && mkfifo dir/x.so && cp /bin/true dir/true.so
check "a folder holding a FIFO: the FIFO is skipped, no hang" $TO gpucheck targets dir

# --- numbers no GPU reports ---
# bad DESC FIELD-IN-MESSAGE GFXV SIMDS [PROPS]: a forged tree must be exit 2 naming the field
n=0
bad () {
	d=$1 f=$2; shift 2; n=$((n + 1))
	gpu "b$n" "$@"
	exits "$d: exit 2" 2 $TO gpucheck --sysfs="b$n"
	has "$d: names the file and field" "$T/.err" "nodes/1/properties: $f"
	exits "$d: --arch too" 2 $TO gpucheck --arch --sysfs="b$n"
	lacks "$d: no made-up target" "$T/.out" gfx
}
bad "gfx_target_version 9999999" "gfx_target_version 9999999 is not a GPU version" 9999999 80
bad "gfx_target_version with minor 99" "gfx_target_version 119901" 119901 80
bad "gfx_target_version with stepping 16" "gfx_target_version 110516" 110516 80
bad "gfx_target_version with major 0" "gfx_target_version 9" 9 80
bad "gfx_target_version 18446744073709551615" "gfx_target_version 18446744073709551615" 18446744073709551615 80
bad "simd_count 4294967297" "simd_count 4294967297 is more than any GPU has" 110501 4294967297
bad "simd_per_cu 1000" "simd_per_cu 1000" 110501 80 "simd_per_cu 1000"
bad "wave_front_size 48" "wave_front_size 48 is not 32 or 64" 110501 80 "wave_front_size 48"
bad "device_id 65536" "device_id 65536 is not a PCI device id" 110501 80 "device_id 65536"
gpu m1 110501 80
printf 'heap_type 1\nsize_in_bytes 18446744073709551615\n' >m1/class/kfd/kfd/topology/nodes/1/mem_banks/0/properties
exits "a memory bank of 2^64-1 bytes: exit 2" 2 $TO gpucheck --sysfs=m1
has "names the bank and size_in_bytes" "$T/.err" "mem_banks/0/properties: size_in_bytes 18446744073709551615"
gpu m2 110501 80
for i in 1 2 3 4 5 6 7 8; do
	mkdir -p m2/class/kfd/kfd/topology/nodes/1/mem_banks/$i
	printf 'heap_type 1\nsize_in_bytes 562949953421312\n' >m2/class/kfd/kfd/topology/nodes/1/mem_banks/$i/properties
done
exits "banks that add up past 1 PiB: exit 2" 2 $TO gpucheck --sysfs=m2
has "says the banks add up" "$T/.err" "banks add up to more memory than"
gpu e1 110501 80
check "the largest real values still pass (gfx1151, 1216 SIMDs, 64-wide)" $TO gpucheck --sysfs=e1

# --- decompression without a cap ---
# a wheel holding a 512 MiB ELF member of zeros (about 0.5 MB deflated); and one whose
# zip headers say 1000 bytes for a 64 MiB member
python3 - <<'PY'
import struct, zipfile
with zipfile.ZipFile('big-1.0-py3-none-any.whl', 'w', zipfile.ZIP_DEFLATED) as z:
    with z.open('big/libhuge.so', 'w', force_zip64=True) as f:
        f.write(b'\x7fELF\x02\x01\x01' + b'\0' * 9)
        for i in range(512):
            f.write(b'\0' * (1 << 20))
with zipfile.ZipFile('liar-1.0-py3-none-any.whl', 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('liar/libx.so', b'\x7fELF\x02\x01\x01' + b'\0' * (64 << 20))
b = bytearray(open('liar-1.0-py3-none-any.whl', 'rb').read())
struct.pack_into('<I', b, 22, 1000)
struct.pack_into('<I', b, b.find(b'PK\x01\x02') + 24, 1000)
open('liar-1.0-py3-none-any.whl', 'wb').write(b)
PY
rss () { /usr/bin/time -f %M -o "$T/rss.t" "$@" >"$T/.out" 2>"$T/.err"; rc=$?; tail -n 1 "$T/rss.t" >"$T/rss"; }
rss gpucheck targets --max-inflate=1000000 big-1.0-py3-none-any.whl
same "a member declared over --max-inflate: exit 2" 2 "$rc"
has "names the wheel, the member and the cap" "$T/.err" "big-1.0-py3-none-any.whl: member big/libhuge.so would decompress to 536870928 bytes, over the 1000000-byte cap"
[ "$(cat "$T/rss")" -lt 100000 ] && ok "and never holds it (max RSS $(cat "$T/rss") KB < 100 MB)" ||
	notok "and never holds it (max RSS $(cat "$T/rss") KB)"
rss gpucheck targets --max-inflate=1000000 liar-1.0-py3-none-any.whl
same "a member whose headers lie about its size: exit 2" 2 "$rc"
has "stops at the cap" "$T/.err" "member liar/libx.so decompresses to more than the 1000000-byte cap"
[ "$(cat "$T/rss")" -lt 60000 ] && ok "reading at most the cap (max RSS $(cat "$T/rss") KB)" ||
	notok "reading at most the cap (max RSS $(cat "$T/rss") KB)"
exits "cover honours the same cap" 2 gpucheck cover --target=gfx90a --max-inflate=1000000 big-1.0-py3-none-any.whl
check "under the default cap the 512 MiB member is read" gpucheck targets big-1.0-py3-none-any.whl
