# vllmcheck.sh: vllm.check: the --arch targets and build tools the pinned vLLM tree
# needs (kiln-stage vllm-check).
# sources: lib/base.sh
. "$steps/lib/base.sh"
# step_vllmcheck: vllm.check, before vLLM's deps and build: the --arch targets the pinned
# tree's CMakeLists.txt keeps and the tools its build needs (rustc, cargo and protoc for
# the Rust frontend of vLLM >= 0.22, a cmake below 4), read from the prepared tree by
# kiln-stage vllm-check (configure did the same from a mirror when one held the commit);
# one line when the tree would drop a target or PATH lacks a tool
step_vllmcheck () {
	clean -- kiln-stage vllm-check --arch="$ARCH_ARG" --flavour="$FLAVOUR" --name="vLLM $REF" \
		"$src${SUBDIR:+/$SUBDIR}" 2>"$B/src/$c.check.err" ||
		die "$(sed 's/^kiln-stage: //' "$B/src/$c.check.err" | tail -n 1)"
}
