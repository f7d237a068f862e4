#!/bin/sh
# graph-defaults: the stack a person gets from `./configure --arch=gfx1151 --venv=DIR`
# with kiln's own pins (env/versions.env, env/matrix.env): configure prints the pairs the
# matrix takes for torch's pin, and `ninja -n` shows every stage from the venv to the
# smoke test, a C.deps before each C.wheel. Nothing is fetched: -n only. With no ROCm at
# /opt/rocm (the default --rocm-path) configure takes the arch's channel: rocm.sdk.
. "$KILN_SRC/tests/lib.sh"
need ninja python3
mkdir -p "$T/b" && cd "$T/b" || exit 2

check "configure --arch=gfx1151 --venv=DIR with the default pins" "$KILN_SRC/configure" --arch=gfx1151 \
	--venv="$T/venv" KILN_BIN="$KILN_BIN"
# the pairs, as the matrix row of torch's pin names them
tv=$(sed -n 's/^torch_REF=v//p' "$KILN_SRC/env/versions.env")
row=$(sed -n "s/^torch_$(echo "$tv" | cut -d. -f1,2 | tr . _)=\"\\(.*\\)\"/\\1/p" "$KILN_SRC/env/matrix.env")
[ -n "$tv" ] && [ -n "$row" ] || { notok "env/versions.env pins torch vX.Y.Z and env/matrix.env has its row"; exit 1; }
for c in vision audio; do
	v=$(printf '%s\n' "$row" | tr ' ' '\n' | sed -n "s/^$c=//p")
	has "configure prints torch $tv: $c $v" "$T/.out" "torch $tv: $c $v (${c}_REF=@torch, from $KILN_SRC/env/matrix.env)"
done
same "the defaults are torch 2.15 / vision 0.30 / audio 2.11" "2.15 vision=0.30.0 audio=2.11.1" \
	"$(echo "$tv" | cut -d. -f1,2) $(printf '%s\n' "$row" | tr ' ' '\n' | grep -E '^(vision|audio)=' | tr '\n' ' ' | sed 's/ $//')"
sdk=
if [ ! -e /opt/rocm ]; then
	has "no ROCm: the channel env/rocm-channels.env names for gfx1151" "$T/.out" \
		"the default channel for --arch (env/rocm-channels.env)"
	sdk=rocm.sdk
fi
check "no venv yet (stack.venv makes it)" test ! -e "$T/venv"

check "ninja -n" ninja -n
for s in stack.venv $sdk rocm.check torch.src torch.patch torch.hipify torch.deps torch.wheel torch.pick \
	torch.install vision.src vision.hipify vision.deps vision.wheel vision.install audio.src audio.deps \
	audio.wheel audio.install stack.smoke; do
	has "ninja -n shows $s" "$T/.out" "] $s"
done
# the order a build runs them in: the venv first, each deps stage before its wheel, the
# smoke test last
order () { grep -n "\] $1\$" "$T/.out" | cut -d: -f1; }
for c in torch vision audio; do
	if [ "$(order "$c.deps")" -lt "$(order "$c.wheel")" ]; then ok "$c.deps before $c.wheel"; else notok "$c.deps before $c.wheel"; fi
done
if [ "$(order stack.venv)" -lt "$(order torch.deps)" ]; then ok "stack.venv before torch.deps"; else notok "stack.venv before torch.deps"; fi
same "stack.smoke last" "stack.smoke" "$(sed -n 's/^\[[0-9]*\/[0-9]*\] //p' "$T/.out" | tail -n 1)"
lacks "no triton, AOTriton or vLLM unless --with names them" "$T/.out" "] vllm."
check "ninja -n fetched nothing: no source tree" test ! -e "$T/b/build/src/torch"
