#!/bin/sh
# kiln-stage: the stage cache (private copies, digests, the stored log, late fill,
# corrupt entries, explain), outputs that are empty, symlinked logs, and verify.
. "$KILN_SRC/tests/lib.sh"
need python3
cd "$T" || exit 2
mkdir -p logs

# the step writes a real wheel-like zip: member times from $STAMPTIME (fixed unless the
# test makes them vary), a payload from $PAYLOAD, and counts its runs
cat >mkzip.py <<'EOF'
import os, sys, zipfile
out = os.path.join(os.environ["KILN_STAGE_OUT"], "x-1.0-py3-none-any.whl")
t = int(os.environ.get("STAMPTIME", "315532800"))
import time
dt = time.gmtime(t)[:6]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(os.environ.get("MEMBERS", "x/__init__.py x/data.txt").split()):
        z.writestr(zipfile.ZipInfo(name, dt), os.environ.get("PAYLOAD", "one") + " " + name)
with open(os.path.join(os.environ["KILN_STAGE_OUT"], "notes.txt"), "w") as f:
    f.write(os.environ.get("NOTES", "notes") + "\n")
print("built the wheel with", os.environ.get("PAYLOAD", "one"))
with open(sys.argv[1], "a") as f:
    f.write("run\n")
EOF
runs () { cat runs 2>/dev/null | wc -l | tr -d ' '; }
key () { printf 'STAGE=w\nREF="%s"\n' "$1" >w.key; }
stage () { kiln-stage run --key=w.key --stamp=w.stamp --logdir=logs --out=out "$@" w -- python3 "$T/mkzip.py" "$T/runs"; }
ent () { echo "$T/sc/$(sed -n 's/^KEY="\(..\).*"/\1/p' w.stamp)/$(sed -n 's/^KEY="\(.*\)"/\1/p' w.stamp)"; }

# a built stage without a cache; then the cache is added: the up-to-date stage fills it
key v1
check "built without a cache" stage
same "it ran once" 1 "$(runs)"
has "the stamp records its outputs' digests" w.stamp "OUT_0=\"$(sha256sum out/notes.txt | cut -c1-64)  notes.txt\""
check "the cache is added" stage --stage-cache="$T/sc"
same "late fill: stored, not rebuilt" "w: stored in the stage cache" "$(cat "$T/.out")"
same "late fill: the command did not run" 1 "$(runs)"
e=$(ent)
check "late fill: the entry holds the wheel" cmp out/x-1.0-py3-none-any.whl "$e/x-1.0-py3-none-any.whl"
has "late fill: the entry records the digests" "$e/.kiln-sums" "  x-1.0-py3-none-any.whl"
has "late fill: the entry records the key's inputs" "$e/.kiln-inputs" 'IN_REF="v1"'
has "late fill: the entry holds the log" "$e/.kiln-log" "built the wheel with one"
same "stored as a private copy (one link)" 1 "$(stat -c %h "$e/x-1.0-py3-none-any.whl")"
check "again: silent" stage --stage-cache="$T/sc"
same "again: nothing printed" "" "$(cat "$T/.out")"

# outputs edited after the stamp: not stored
key v0
check "another key, built and stored" stage --stage-cache="$T/sc"
rm -rf "$(ent)"
echo edited >>out/notes.txt
run stage --stage-cache="$T/sc"
same "edited outputs: still up to date (exit 0)" 0 "$rc"
has "edited outputs: not stored, and said so" "$T/.err" "the outputs differ from those the stamp records; not stored"
exits "edited outputs: no entry" 1 test -d "$(ent)"

# another key, then back to v1: restored, a private copy, with the log of its build
key v2
PAYLOAD=two check "v2 builds" stage --stage-cache="$T/sc"
key v1
check "back to v1" stage --stage-cache="$T/sc"
same "restored from the cache" "w: restored from the stage cache in" "$(cut -c1-35 "$T/.out")"
same "the command did not run" 3 "$(runs)"
same "restored: one link" 1 "$(stat -c %h out/x-1.0-py3-none-any.whl)"
if [ "$(stat -c %i out/x-1.0-py3-none-any.whl)" != "$(stat -c %i "$e/x-1.0-py3-none-any.whl")" ]; then
	ok "restored: not the entry's inode"
else
	notok "restored: not the entry's inode"
fi
echo changed >>out/notes.txt
check "an edit of the restored output leaves the entry alone" grep -qx notes "$e/notes.txt"
has "restored with the stored log" logs/w.log "built the wheel with one"
has "the restored log names the entry" logs/w.log "restored from the stage cache $e"
check "explain: up to date, and the entry" kiln-stage explain --key=w.key --stamp=w.stamp --stage-cache="$T/sc" w
has "explain: up to date" "$T/.out" "w: up to date"
has "explain: names the entry" "$T/.out" "w: stage cache: entry $e"

# why a lookup misses: the nearest entry of the stage, and the input that differs
key v3
check "explain a miss" kiln-stage explain --key=w.key --stamp=w.stamp --stage-cache="$T/sc" w
has "explain: would run" "$T/.out" "w: would run: input REF changed: v1 -> v3"
has "explain: the cache miss names the input" "$T/.out" "the nearest of 2 entries of w"
has "explain: and how it differs" "$T/.out" "input REF changed: v"
KILN_EXPLAIN=1 PAYLOAD=three run stage --stage-cache="$T/sc"
has "KILN_EXPLAIN: the cache miss is said too" "$T/.err" "kiln: w: stage cache: no entry for this key; the nearest"

# a corrupt entry: ignored, logged, removed and rebuilt; never installed
key v1
printf 'X' | dd of="$e/x-1.0-py3-none-any.whl" bs=1 seek=40 conv=notrunc 2>/dev/null
check "corrupt entry: the stage still succeeds" stage --stage-cache="$T/sc"
has "corrupt entry: logged" "$T/.err" "x-1.0-py3-none-any.whl does not match its recorded digest; ignored and removed"
has "corrupt entry: in the stage's log too" logs/w.log "x-1.0-py3-none-any.whl does not match its recorded digest; ignored and removed (building instead)"
same "corrupt entry: rebuilt" "w: rebuilt in" "$(cut -c1-13 "$T/.out")"
check "corrupt entry: the output is the good one" python3 -c 'import sys, zipfile; sys.exit(zipfile.ZipFile("out/x-1.0-py3-none-any.whl").testzip() is not None)'
check "corrupt entry: replaced by a good entry" cmp out/x-1.0-py3-none-any.whl "$e/x-1.0-py3-none-any.whl"
echo planted >"$e/evil.so"
rm -f w.stamp
check "an entry with a file its digests do not list: rebuilt" stage --stage-cache="$T/sc"
has "extra file: logged" "$T/.err" "holds 3 files but records the digests of 2"
exits "extra file: not in the output" 1 test -e out/evil.so
rm -f "$e/.kiln-sums"
rm -f w.stamp
check "an entry without digests: rebuilt" stage --stage-cache="$T/sc"
has "no digests: logged" "$T/.err" "has no recorded digests"

# outputs that are empty: a failure, not a stamp
printf 'STAGE=e\n' >e.key
exits "no output files: 1" 1 kiln-stage run --key=e.key --stamp=e.stamp --logdir=logs --out=eout e -- true
has "no output files: named" "$T/.err" "left no files in eout"
exits "an empty output file: 1" 1 kiln-stage run --key=e.key --stamp=e.stamp --logdir=logs --out=eout e -- sh -c ': >"$KILN_STAGE_OUT/e-1.0-py3-none-any.whl"'
has "an empty output file: named" "$T/.err" "left eout/e-1.0-py3-none-any.whl empty"
exits "no stamp" 1 test -f e.stamp

# a log planted as a symlink, or a symlinked log folder: refused, nothing written there
printf 'STAGE=l\n' >l.key
echo "victim" >victim
ln -s "$T/victim" logs/l.log
exits "symlinked log: 2" 2 kiln-stage run --key=l.key --stamp=l.stamp --logdir=logs l -- echo written
has "symlinked log: named" "$T/.err" "logs/l.log: is a symbolic link; refusing to write the log through it"
exits "symlinked log: no stamp" 1 test -f l.stamp
same "symlinked log: the target is untouched" victim "$(cat victim)"
mkdir -p elsewhere && ln -s "$T/elsewhere" linkedlogs
exits "symlinked log folder: 2" 2 kiln-stage run --key=l.key --stamp=l.stamp --logdir=linkedlogs l -- echo written
has "symlinked log folder: named" "$T/.err" "linkedlogs: the log folder is a symbolic link"
exits "symlinked log folder: nothing written there" 1 test -e elsewhere/l.log

# verify: a reproducible stage, then one whose member times and content vary
key v1
rm -f w.stamp
check "v1 built for verify" stage
check "verify: a reproducible stage" kiln-stage verify --key=w.key --stamp=w.stamp --logdir=logs --out=out w -- python3 "$T/mkzip.py" "$T/runs"
has "verify: the wheel identical" "$T/.out" "w: x-1.0-py3-none-any.whl: identical"
has "verify: summary" "$T/.out" "w: 2 identical: the stage is reproducible"
exits "verify: the rebuild folder is removed" 1 test -e out.verify
has "verify: its own log" logs/w.verify.log "built the wheel with one"
STAMPTIME=1700000000 exits "verify: member times differ: 1" 1 kiln-stage verify --key=w.key --stamp=w.stamp --logdir=logs --out=out w -- python3 "$T/mkzip.py" "$T/runs"
has "verify: names the member whose time differs" "$T/.out" "member x/data.txt: time stamp differs"
has "verify: keeps the rebuild" "$T/.out" "1 identical, 1 differ; the rebuild is kept in out.verify"
PAYLOAD=other NOTES=other exits "verify: content differs: 1" 1 kiln-stage verify --key=w.key --stamp=w.stamp --logdir=logs --out=out w -- python3 "$T/mkzip.py" "$T/runs"
has "verify: names the member whose content differs" "$T/.out" "member x/__init__.py: content differs"
has "verify: a plain file's first differing byte" "$T/.out" "w: notes.txt: differs from byte 0"
MEMBERS="x/__init__.py x/data.txt x/new.py" exits "verify: a new member: 1" 1 kiln-stage verify --key=w.key --stamp=w.stamp --logdir=logs --out=out w -- python3 "$T/mkzip.py" "$T/runs"
has "verify: names the new member" "$T/.out" "member x/new.py is only in the rebuild"
exits "verify: a failing rebuild: 1" 1 kiln-stage verify --key=w.key --stamp=w.stamp --logdir=logs --out=out w -- false
has "verify: a failing rebuild names its log" "$T/.err" "the rebuild failed"
same "verify never touched the stamped output" "$(sed -n 's/^OUT_1="\(.*\)"/\1/p' w.stamp)" "$(sha256sum out/x-1.0-py3-none-any.whl | sed 's/ .*//')  x-1.0-py3-none-any.whl"
key v9
exits "verify: a stage not built for its key: 2" 2 kiln-stage verify --key=w.key --stamp=w.stamp --logdir=logs --out=out w -- true
has "verify: says to build it first" "$T/.err" "not built for its current key"
exits "verify: no --out: 2" 2 kiln-stage verify --key=w.key --stamp=w.stamp w -- true
exits "verify: no command: 2" 2 kiln-stage verify --key=w.key --stamp=w.stamp --out=out w
exits "explain: unknown option: 2" 2 kiln-stage explain --frob --key=w.key --stamp=w.stamp w
