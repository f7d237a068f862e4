#!/bin/sh
# kiln-stage: key vs stamp, logs, failure tail, stage cache, identities, explain,
# interruption, build-info records and labels.
. "$KILN_SRC/tests/lib.sh"
cd "$T" || exit 2
mkdir -p logs out

printf 'STAGE=a\nREF="v1"\nARCH=gfx1151\n' >a.key
# the command counts its runs, writes one wheel-like file and logs a line
cat >step.sh <<'EOF'
echo "step ran for $KILN_STAGE ($KILN_STAGE_KEY)"
echo run >>"$0.runs"
[ -n "${KILN_STAGE_OUT:-}" ] && echo "payload $1" >"$KILN_STAGE_OUT/x-1.0-py3-none-any.whl"
exit 0
EOF
runs () { cat step.sh.runs 2>/dev/null | wc -l | tr -d ' '; }
stage () { kiln-stage run --key=a.key --stamp=a.stamp --logdir=logs --out=out --stage-cache="$T/cache" "$@" a -- sh "$T/step.sh" one; }

check "first run succeeds" stage
same "first run: one line, rebuilt" "a: rebuilt in" "$(cut -c1-13 "$T/.out")"
same "the command ran once" 1 "$(runs)"
has "the stamp holds the key's inputs" a.stamp 'IN_REF="v1"'
has "the log has the command's output" logs/a.log "step ran for a"
check "the output is there" test -f out/x-1.0-py3-none-any.whl
check "second run succeeds" stage
same "second run: silent" "" "$(cat "$T/.out" "$T/.err")"
same "second run: the command did not run" 1 "$(runs)"
exits "dry run: up to date" 0 kiln-stage run -n --key=a.key --stamp=a.stamp --out=out a

# a key input changes: explained, rerun
printf 'STAGE=a\nREF="v2"\nARCH=gfx1151\n' >a.key
exits "dry run: would run" 1 kiln-stage run -n --key=a.key --stamp=a.stamp a
has "dry run says what changed" "$T/.err" "input REF changed: v1 -> v2"
KILN_EXPLAIN=1 run stage
same "changed key: rerun" 2 "$(runs)"
has "KILN_EXPLAIN names the input" "$T/.err" "kiln: a: running: input REF changed: v1 -> v2"

# back to v1: the stage cache has that key's outputs
printf 'STAGE=a\nREF="v1"\nARCH=gfx1151\n' >a.key
check "back to v1" stage
same "restored, not rebuilt" "a: restored from the stage cache in" "$(cut -c1-35 "$T/.out")"
same "the command did not run" 2 "$(runs)"
same "the restored output is v1's" "payload one" "$(cat out/x-1.0-py3-none-any.whl)"
check "restored stamp is up to date" kiln-stage run -n --key=a.key --stamp=a.stamp --out=out a

# outputs deleted behind its back: rerun
rm -f out/*
KILN_EXPLAIN=1 run stage
has "missing outputs are a reason" "$T/.err" "outputs in out are missing"

# a check outside removed the stamp and left its reason in STAMP.why: the reason given
# (kept by a dry run), the summary's note, and then gone; without it, "no stamp yet"
rm -f a.stamp
printf 'the image left the storage\n' >a.stamp.why
exits "STAMP.why: dry run" 1 kiln-stage run -n --key=a.key --stamp=a.stamp --out=out a
has "... says that reason" "$T/.err" "kiln: a: would run: the image left the storage"
check "... and keeps it" test -f a.stamp.why
KILN_EXPLAIN=1 run stage
has "STAMP.why: KILN_EXPLAIN gives that reason" "$T/.err" "kiln: a: running: the image left the storage"
lacks "... not 'no stamp yet'" "$T/.err" "no stamp yet"
has "... the summary line's note says it" "$T/.out" "(the image left the storage)"
check "... and it is gone" test ! -e a.stamp.why
rm -f a.stamp
exits "no STAMP.why: dry run" 1 kiln-stage run -n --key=a.key --stamp=a.stamp --out=out a
has "... says no stamp yet" "$T/.err" "kiln: a: would run: no stamp yet"
check "rebuild" stage

# a parent: its identity joins the key; an identity from a file stops the cascade
printf 'STAGE=p\nURL=u\n' >p.key
cat >src.sh <<'EOF'
echo "$ID" >"$1"
EOF
ID=c1 run kiln-stage run --key=p.key --stamp=p.stamp --logdir=logs --id-file="$T/p.id" p -- sh "$T/src.sh" "$T/p.id"
same "parent ran" 0 "$rc"
has "parent's identity from --id-file" p.stamp 'ID="c1"'
printf 'STAGE=c\n' >c.key
check "child ran" kiln-stage run --key=c.key --stamp=c.stamp --logdir=logs --parent=p.stamp c -- true
printf 'STAGE=p\nURL=u2\n' >p.key
ID=c1 run kiln-stage run --key=p.key --stamp=p.stamp --logdir=logs --id-file="$T/p.id" p -- sh "$T/src.sh" "$T/p.id"
exits "parent reran to the same identity: child up to date" 0 kiln-stage run -n --key=c.key --stamp=c.stamp --parent=p.stamp c
ID=c2 run kiln-stage run --key=p.key --stamp=p.stamp --logdir=logs --id-file="$T/p.id" p -- sh "$T/src.sh" "$T/p.id"
sed -i 's/^URL=.*/URL=u3/' p.key
ID=c2 run kiln-stage run --key=p.key --stamp=p.stamp --logdir=logs --id-file="$T/p.id" p -- sh "$T/src.sh" "$T/p.id"
exits "parent's identity changed: child would run" 1 kiln-stage run -n --key=c.key --stamp=c.stamp --parent=p.stamp c
has "and says the parent changed" "$T/.err" "parent p changed"
exits "no identity written: failure" 1 kiln-stage run --key=p.key --stamp=q.stamp --logdir=logs --id-file="$T/none.id" p -- true
has "no identity: named" "$T/.err" "none.id: the command did not write its identity"

# --id-keys: the identity ignores the other inputs
printf 'STAGE=i\nPY=/venv1/bin/python\nABI=cp311\n' >i.key
check "install-like stage" kiln-stage run --key=i.key --stamp=i.stamp --logdir=logs --id-keys=ABI i -- true
id1=$(sed -n 's/^ID="\(.*\)"/\1/p' i.stamp)
printf 'STAGE=i\nPY=/venv2/bin/python\nABI=cp311\n' >i.key
check "install-like stage, another venv" kiln-stage run --key=i.key --stamp=i.stamp --logdir=logs --id-keys=ABI i -- true
same "rerun (PY is in the key)" "i: rebuilt in" "$(cut -c1-13 "$T/.out")"
same "same identity (PY is not in the id)" "$id1" "$(sed -n 's/^ID="\(.*\)"/\1/p' i.stamp)"

# failure: exit status, log tail, path, no stamp
printf 'STAGE=f\n' >f.key
cat >fail.sh <<'EOF'
i=1; while [ $i -le 40 ]; do echo "line $i"; i=$((i + 1)); done
echo "error: the compiler said no" >&2
exit 3
EOF
exits "failing command: exit 1" 1 kiln-stage run --key=f.key --stamp=f.stamp --logdir=logs f -- sh "$T/fail.sh"
has "failure names the status" "$T/.err" "kiln: f failed (exit 3) after"
has "failure shows the tail" "$T/.err" "error: the compiler said no"
has "failure gives the log's path" "$T/.err" "full log: $T/logs/f.log"
cp "$T/.err" f.err
exits "only the last 30 lines (no line 11)" 1 grep -qx "line 11" f.err
check "line 12 is in the tail" grep -qx "line 12" f.err
exits "failure: no stamp" 1 test -f f.stamp
exits "command not found: 1" 1 kiln-stage run --key=f.key --stamp=f.stamp --logdir=logs f -- /nonexistent/cmd
has "not found: in the tail" "$T/.err" "/nonexistent/cmd"
exits "command leaves no output: 1" 1 kiln-stage run --key=f.key --stamp=f.stamp --logdir=logs --out=out2 f -- true
has "no output: named" "$T/.err" "left no files in out2"

# interrupted: the signal reaches the command's whole process group (a child it started
# in the background too: it would sleep ten minutes otherwise), no stamp. No clock: the
# command is signalled once it has started (it says so), and the background child, which
# only the signal can end, must be gone
printf 'STAGE=s\n' >s.key
# gone PID: the process is no longer there, or only a zombie left to its reaper (polled:
# the signal is delivered at once, the reaping takes its turn on a loaded host)
gone () { _g=0; while alive "$1"; do _g=$((_g + 1)); [ $_g -lt 3000 ] || return 1; sleep 0.1; done; }
for sig in TERM:143 HUP:129; do
	rm -f started bg
	kiln-stage run --key=s.key --stamp=s.stamp --logdir=logs s -- \
		sh -c 'sleep 600 & echo $! >bg; touch started; wait' >/dev/null 2>"$T/sig.err" &
	pid=$!
	waitalive "$pid" test -f started
	kill -"${sig%:*}" $pid
	wait $pid
	same "SIG${sig%:*}: exit ${sig#*:}" "${sig#*:}" "$?"
	has "SIG${sig%:*}: says no stamp" "$T/sig.err" "no stamp written"
	exits "SIG${sig%:*}: no stamp" 1 test -f s.stamp
	check "SIG${sig%:*}: the command's background child got it too" gone "$(cat bg)"
done

# bad input
exits "missing key file: 2" 2 kiln-stage run --key=nope.key --stamp=x.stamp x -- true
has "missing key file named" "$T/.err" "nope.key"
printf 'STAGE=b\nnot a line\n' >bad.key
exits "malformed key file: 2" 2 kiln-stage run --key=bad.key --stamp=x.stamp x -- true
has "malformed line named with its number" "$T/.err" "bad.key:2: expected KEY=VALUE"
exits "missing parent stamp: 2" 2 kiln-stage run --key=c.key --stamp=x.stamp --parent=none.stamp x -- true
has "missing parent named" "$T/.err" "none.stamp: parent stamp missing"
printf 'KEY=1\n' >junk.stamp
exits "parent that is not a stamp: 2" 2 kiln-stage run --key=c.key --stamp=x.stamp --parent=junk.stamp x -- true
exits "no command: 2" 2 kiln-stage run --key=c.key --stamp=x.stamp x
exits "unknown option: 2" 2 kiln-stage run --frob x -- true
exits "unknown verb: 2" 2 kiln-stage frob
check "--help" kiln-stage --help
has "--help shows run" "$T/.out" "kiln-stage run"
# one usage from the verbs table: every verb, sdklock and depfile too
for v in "run --key=FILE" "verify --key=FILE" "explain --key=FILE" "env FILE..." "kv -o FILE" "report [--json]" \
	"info [-o FILE]" "labels [--format" "keygen NAME" "graph --srcdir=DIR" "fetch URL" "unpack TARBALL" \
	"sdklock LOCK URL" "rocm-probe [--json" "reqs [--flavour" "backend [--wheels=DIR]" "lock DIR" "vllm-check [--arch" "netguard LOG" \
	"depfile [-k]"; do
	has "--help lists kiln-stage $v" "$T/.out" "kiln-stage $v"
done
exits "unknown verb: 2" 2 kiln-stage frob
has "the unknown verb's line lists every verb" "$T/.err" "unknown verb 'frob' (run, verify, explain, env, kv, report, info, labels, keygen, graph, fetch, unpack, sdklock, rocm-probe, reqs, backend, lock, vllm-check, netguard or depfile)"

# build-info records: JSON and labels
mkdir -p info
printf 'COMPONENT=torch\nURL=https://github.com/pytorch/pytorch\nCOMMIT=0123456789abcdef0123456789abcdef01234567\nVERSION=2.8.0\nARCH=gfx1151\nPY_ABI="cpython-311 linux-x86_64"\n' >info/torch.info
printf 'COMPONENT=vision\nURL=https://github.com/pytorch/vision\nCOMMIT=89abcdef0123456789abcdef0123456789abcdef\nSERIES_DIGEST=ffee\n' >info/vision.info
check "info" kiln-stage info -o build-info.json info
same "build-info.json" '{"kiln_build_info":1,"components":{"torch":{"component":"torch","url":"https://github.com/pytorch/pytorch","commit":"0123456789abcdef0123456789abcdef01234567","version":"2.8.0","arch":"gfx1151","py_abi":"cpython-311 linux-x86_64"},"vision":{"component":"vision","url":"https://github.com/pytorch/vision","commit":"89abcdef0123456789abcdef0123456789abcdef","series_digest":"ffee"}}}' "$(cat build-info.json)"
if command -v python3 >/dev/null; then
	check "build-info.json is JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' build-info.json
fi
check "labels" kiln-stage labels info
has "OCI revision" "$T/.out" "--label=org.opencontainers.image.revision=0123456789abcdef0123456789abcdef01234567"
has "OCI source" "$T/.out" "--label=org.opencontainers.image.source=https://github.com/pytorch/pytorch"
has "vision's series digest" "$T/.out" "--label=kiln.vision.series_digest=ffee"
printf 'oops\n' >info/bad.info
exits "malformed record: 2" 2 kiln-stage info info
has "malformed record named" "$T/.err" "bad.info:1: expected KEY=VALUE"
mkdir -p empty
exits "labels with no records: 2" 2 kiln-stage labels empty

# libcurl and libarchive are opened on first use (lazylib.c), not linked: the verbs a
# build runs for every stage do not map their 40 libraries
ks=$(command -v kiln-stage)
ldd "$ks" >"$T/ldd" 2>&1
lacks "kiln-stage does not link libcurl" "$T/ldd" "libcurl"
lacks "kiln-stage does not link libarchive" "$T/ldd" "libarchive"
printf 'x\n' >"$T/lz.txt"
lzsum=$(sha256sum "$T/lz.txt" | cut -d' ' -f1)
check "fetch opens libcurl when it needs it" kiln-stage fetch "file://$T/lz.txt" --sha256="$lzsum" -o "$T/lz2.txt"
same "fetch got the file" x "$(cat "$T/lz2.txt")"
# without the library: one line naming it, what needs it and the package (a mount
# namespace hides it; not every machine lets a test make one)
lzlib=$(ldconfig -p 2>/dev/null | awk '$1 == "libcurl.so.4" && /x86-64/ { print $NF; exit }')
if [ -n "$lzlib" ] && unshare -m true 2>/dev/null; then
	exits "fetch without libcurl.so.4: 2" 2 unshare -m sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$lzlib" \
		"$ks" fetch "file://$T/lz.txt" --sha256="$lzsum" -o "$T/lz3.txt"
	has "the missing library named, with its package" "$T/.err" "kiln-stage: cannot load libcurl.so.4, needed for a remote stage cache and SDK downloads (the package libcurl4 installs it):"
	same "one line" 1 "$(lines "$T/.err")"
else
	optional_case namespaces "no mount namespace here to hide libcurl.so.4 in"
fi

# graph: the pins are checked before any probe (a refused run starts no pkg-config), and
# each pkg-config question is asked once per run
mkdir -p "$T/pc"
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>"$0.log"\nexec pkg-config "$@"\n' >"$T/pc/pkg-config"
chmod +x "$T/pc/pkg-config"
pcgraph () { (mkdir -p "$T/pc/b" && cd "$T/pc/b" && kiln-stage graph --srcdir="$KILN_SRC" --builddir=build \
	--pkg-config="$T/pc/pkg-config" "$@"); }
exits "graph: a refused pin: exit 2" 2 pcgraph --arch=cpu --python=/nonexistent/python \
	--without=torch,vision,audio --with=ggml -- configure
has "graph: the pin is what is refused" "$T/.err" "no ggml_URL for component ggml"
same "graph: a refused pin started no pkg-config" "" "$(cat "$T/pc/pkg-config.log" 2>/dev/null)"
check "graph: the tools alone (no --arch)" pcgraph -- configure
[ -s "$T/pc/pkg-config.log" ] && ok "graph: pkg-config was asked" || notok "graph: pkg-config was asked"
same "graph: no pkg-config question asked twice" "" "$(sort "$T/pc/pkg-config.log" | uniq -d)"
