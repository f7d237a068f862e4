# src.sh: C.src: fetch the pin and check out its commit, pristine, into $B/src/C
# (lib/src.sh's srcfetch).
# sources: lib/base.sh lib/src.sh
. "$steps/lib/base.sh"
. "$steps/lib/src.sh"
step_src () {
	srcfetch
}
