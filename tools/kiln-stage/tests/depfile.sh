#!/bin/sh
# kiln-stage depfile: what it writes is what ninja reads. A dependency whose name holds a
# space, '#' and '$' is escaped so that ninja sees that very file (touching it reruns the
# edge, and a no-op stays one); a name the syntax cannot hold (':', a quote) is left out,
# never written split; a target it cannot name is a usage error, and the old file stays
# (with -k, as the steps call it: the file is removed, exit 0).
. "$KILN_SRC/tests/lib.sh"
need ninja
cd "$T" || exit 2
mkdir -p 'sp ace#x$y' 'co:lon' "qu'ote"
: >'sp ace#x$y/ref' && : >'co:lon/ref' && : >"qu'ote/ref" && : >plain || exit 2
# no clock: every file's time is set (2001 for the dependencies)
touch -d @1000000000 'sp ace#x$y/ref' 'co:lon/ref' plain || exit 2
check "depfile: writes" kiln-stage depfile -o out.d "$T/stamp" "$T/sp ace#x\$y/ref" "$T/co:lon/ref" "$T/qu'ote/ref" "$T/plain"
same "make's form: space and # after a backslash, \$ doubled; the others left out" \
	"$T/stamp: $T/sp\\ ace\\#x\$\$y/ref $T/plain" "$(cat out.d)"

# ninja: an edge whose depfile kiln-stage writes, as the src rule does
cat >build.ninja <<NINJA
rule w
  command = echo run >>runs && : >stamp && kiln-stage depfile -o out.d \$out "$T/sp ace#x\\\$\$y/ref" "$T/co:lon/ref" "$T/plain"
  depfile = out.d
build stamp: w
NINJA
ninja >ninja.out 2>&1 || { notok "ninja ran the edge"; sed 's/^/#   /' ninja.out; }
ninja >ninja2.out 2>&1
has "a second ninja has no work to do" ninja2.out "no work to do"
# the stamp back to 2017, the dependency to 2020: newer than the stamp, still in the past
touch -d @1500000000 stamp && touch -d @1600000000 'sp ace#x$y/ref' || exit 2
ninja >ninja3.out 2>&1
same "the escaped dependency is the file ninja watches: touching it reruns the edge" 2 "$(lines runs)"
ninja >ninja4.out 2>&1
has "then a no-op again" ninja4.out "no work to do"

# bad input
cp out.d keep.d
exits "a target with ':': 2" 2 kiln-stage depfile -o out.d "$T/co:lon/stamp" "$T/plain"
has "named, in one line" "$T/.err" "co:lon/stamp: a depfile cannot name this target"
same "one line" 1 "$(lines "$T/.err")"
same "the old depfile stays" "$(cat keep.d)" "$(cat out.d)"
check "-k: a target with ':' (a build folder configure gives no depfile)" kiln-stage depfile -k -o out.d "$T/co:lon/stamp" "$T/plain"
[ -e out.d ] && notok "-k: the depfile is removed" || ok "-k: the depfile is removed"
check "-k: none there, still 0" kiln-stage depfile -k -o out.d "$T/co:lon/stamp"
exits "no -o: 2" 2 kiln-stage depfile out.d "$T/stamp"
exits "a folder that is not there: 2" 2 kiln-stage depfile -o "$T/none/out.d" "$T/stamp"
has "the file named" "$T/.err" "$T/none/out.d"
