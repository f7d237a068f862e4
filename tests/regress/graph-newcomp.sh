#!/bin/sh
# graph-newcomp: a new component is one row of comp_table (tools/kiln-stage/schema.c) and
# its pins (env/versions.env): two files, within the three issue 45 allows. Here a
# setup.py component "toy" that builds against torch: configure (which builds its
# generator from the edited copy) gives it every stage of a wheel component, after
# torch's install, and nothing else changed.
. "$KILN_SRC/tests/lib.sh"
need python3 ninja cc
ksrc_copy
cp -R "$KILN_SRC/tools/kiln-stage" "$KSRC/tools/" && cp -R "$KILN_SRC/patches" "$KSRC/" || exit 2
cp -R "$KSRC" "$T/orig" || exit 2
python3 -m venv --without-pip "$T/venv" || exit 2

# the row (after ggml's, the table's last) and the pins
sed -i '/^	{"ggml", /a\
	{"toy",        "torch",       "toy",                 "toy",         "",       "",       "build",  0,   0,  "", {0}},' \
	"$KSRC/tools/kiln-stage/schema.c" || exit 2
has "the row is in" "$KSRC/tools/kiln-stage/schema.c" '{"toy",'
printf 'toy_URL=https://example.invalid/toy.git\ntoy_REF=v1.0\n' >>"$KSRC/env/versions.env" || exit 2
same "two files changed" "2" "$(diff -rq "$T/orig" "$KSRC" | wc -l | tr -d ' ')"

mkdir -p "$T/b" && cd "$T/b" || exit 2
check "configure --with=toy (the generator built from the edited copy)" "$KSRC/configure" --arch=cpu \
	--python="$T/venv/bin/python" --git-cache="$T/git" --jobs=2 --with=toy
stagesin build/stack.ninja toy.src toy.patch toy.deps toy.wheel toy.pick toy.install
has "toy.wheel builds against torch's install" build/stack.ninja "build toy.wheel: phony"
grep -A1 '^build $bdir/stamp/toy.wheel:' build/stack.ninja >"$T/edge" || grep -A1 'stamp/toy.wheel:' build/stack.ninja >"$T/edge"
has "toy.wheel's edge has torch.install among its inputs" "$T/edge" "stamp/torch.install"
has "its key names its distribution" build/keys/toy.pick 'DIST="toy"'
has "stack.smoke imports it" build/keys/stack.smoke "toy"
check "configure without --with=toy" "$KSRC/configure" --arch=cpu --python="$T/venv/bin/python" --git-cache="$T/git" --jobs=2
lacks "no toy stage unless asked for (not built by default)" build/stack.ninja "toy.src"
