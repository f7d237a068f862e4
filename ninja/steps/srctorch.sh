# srctorch.sh: C.src for C_REF=@torch: the commit torch's patched tree pins (torchpin),
# then the src step's fetch.
# sources: lib/base.sh lib/src.sh
. "$steps/lib/base.sh"
. "$steps/lib/src.sh"

# torchpin: C_REF=@torch, the pin torch's own source tree gives C (torch.patch ran
# first): AOTriton's commit from cmake/External/aotriton.cmake (or, in older trees,
# .ci/docker/aotriton_version.txt), triton's from .ci/docker/ci_commit_pins/triton.txt.
# Prints the commit; $B/src/C.derived records it and where it came from.
torchpin () {
	t=$B/src/torch
	case "$c" in
	aotriton)
		f=cmake/External/aotriton.cmake
		r=$(sed -n 's/^[[:space:]]*set(__AOTRITON_CI_COMMIT "\([0-9a-f]\{7,40\}\)").*/\1/p' "$t/$f" 2>/dev/null | head -n 1)
		if [ -z "$r" ] && [ -f "$t/.ci/docker/aotriton_version.txt" ]; then
			f=.ci/docker/aotriton_version.txt
			r=$(sed -n 4p "$t/$f" | tr -d ' \r')
		fi ;;
	triton)
		f=.ci/docker/ci_commit_pins/triton.txt
		r=$(head -n 1 "$t/$f" 2>/dev/null | tr -d ' \r') ;;
	*) die "${c}_REF=@torch: torch's tree pins only aotriton and triton" ;;
	esac
	case "$r" in
	''|*[!0-9a-f]*) die "${c}_REF=@torch: no commit for $c in torch's $f ($t/$f); pin ${c}_REF yourself" ;;
	esac
	printf 'REF_RESOLVED=%s\nREF_FROM=torch:%s\n' "$r" "$f" >"$B/src/$c.derived"
	say "${c}_REF=@torch: $r (torch's $f)"
	printf '%s\n' "$r"
}

step_srctorch () {
	# C.src for C_REF=@torch: the commit torch's patched tree pins (torchpin), then the
	# ordinary src step; a source-only component's build-info record says where it came
	# from (a built one's install record does too). The stage's summary line (and so
	# KILN_EXPLAIN's output) says what @torch resolved to, and what it was before.
	was=
	[ ! -f "$B/src/$c.derived" ] || was=$(sed -n 's/^REF_RESOLVED=//p' "$B/src/$c.derived")
	REF=$(torchpin) || exit 1
	note="${c}_REF=@torch: $REF from torch's $(sed -n 's/^REF_FROM=torch://p' "$B/src/$c.derived")"
	case "$was" in
	''|"$REF") ;;
	*) note="$note, was $was" ;;
	esac
	[ -z "${KILN_STAGE_NOTE:-}" ] || printf '%s\n' "$note" >"$KILN_STAGE_NOTE"
	srcfetch
	mkdir -p "$B/info"
	{ echo "COMPONENT=$c"; echo "URL=$URL"; echo "COMMIT=$commit"; echo "REF=@torch"; cat "$B/src/$c.derived"; } |
		kiln-stage kv -o "$B/info/$c.info"
}
