#!/bin/sh
# graph-labels: kiln-stage labels cannot word-split: a value with spaces, quotes and '$'
# comes back whole through xargs -d '\n', as a --label-file line and as a quoted
# Containerfile LABEL.
. "$KILN_SRC/tests/lib.sh"
need kiln-stage xargs
cd "$T" || exit 2

mkdir -p info
# a record as the install step writes it; the version holds spaces, quotes and a '$'
cat >info/torch.info <<'REC'
COMPONENT=torch
URL=https://example.invalid/torch
COMMIT=0123456789abcdef0123456789abcdef01234567
VERSION='2.8.0 (local "build") $HOME'"'"'s'
ARCH=gfx1100,gfx1151
REC
v='2.8.0 (local "build") $HOME'"'"'s'

check "labels (default form)" kiln-stage labels info
cp "$T/.out" args
has "one --label=KEY=VALUE per line" args "--label=org.opencontainers.image.version=$v"
# what podman would receive: each line one argument, nothing split or expanded
xargs -d '\n' sh -c 'for a; do printf "[%s]\n" "$a"; done' sh <args >got
same "xargs -d '\\n' gives one argument per line" "$(lines args)" "$(lines got)"
has "the version arrives whole" got "[--label=kiln.torch.version=$v]"
has "the version arrives whole (OCI)" got "[--label=org.opencontainers.image.version=$v]"
check "label-file form" kiln-stage labels --format=file info
has "KEY=VALUE lines" "$T/.out" "kiln.torch.version=$v"
check "Containerfile form" kiln-stage labels --format=containerfile info
has "LABEL with the value quoted" "$T/.out" 'LABEL "kiln.torch.version"="2.8.0 (local \"build\") \$HOME'"'"'s"'
has "the arch list" "$T/.out" 'LABEL "kiln.arch"="gfx1100,gfx1151"'
exits "unknown form: 2" 2 kiln-stage labels --format=yaml info
exits "no folder: 2" 2 kiln-stage labels
