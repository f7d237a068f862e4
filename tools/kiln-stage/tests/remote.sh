#!/bin/sh
# kiln-stage: the remote stage cache over plain HTTP, against a real nginx WebDAV server
# on loopback: store, restore in another folder, corrupt/truncated objects and error
# pages rebuilt (never installed), a server that is down, credentials never logged.
. "$KILN_SRC/tests/lib.sh"
need python3
. "$KILN_SRC/tests/nginx-dav.inc"
cd "$T" || exit 2
dav_start
# uploads before the stage returns (the background upload is tested at the end)
KILN_CACHE_UPLOAD=wait
export KILN_CACHE_UPLOAD

# a stage that writes a real wheel-like zip and counts its runs
cat >mkzip.py <<'PY'
import os, sys, zipfile
out = os.path.join(os.environ["KILN_STAGE_OUT"], "x-1.0-py3-none-any.whl")
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for name in ("x/__init__.py", "x/data.txt"):
        z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), os.environ.get("PAYLOAD", "one") + " " + name * 200)
with open(os.path.join(os.environ["KILN_STAGE_OUT"], "notes.txt"), "w") as f:
    f.write("notes\n")
print("built the wheel with", os.environ.get("PAYLOAD", "one"))
with open(sys.argv[1], "a") as f:
    f.write("run\n")
PY
runs () { cat "$T/runs" 2>/dev/null | wc -l | tr -d ' '; }
# stage DIR [OPTION]...: the stage w in the build folder DIR
stage () { d=$1; shift; mkdir -p "$T/$d/logs" && (cd "$T/$d" && kiln-stage run --key="$T/w.key" --stamp=w.stamp --logdir=logs --out=out "$@" w -- python3 "$T/mkzip.py" "$T/runs"); }
printf 'STAGE=w\nREF="v1"\n' >w.key
ac () { echo "$T/dav/store/kiln/ac/$(sed -n 's/^KEY="\(.*\)"/\1/p' "$T/a/w.stamp")"; }
whl () { sed -n 's/^OUT_[0-9]*="\([0-9a-f]*\)  x-1.0-py3-none-any.whl"/\1/p' "$T/a/w.stamp"; }

# build folder A builds and stores; B restores it and runs nothing
check "a: built with an http:// stage cache" stage a --stage-cache="$DAV_URL"
has "a: rebuilt" "$T/.out" "w: rebuilt in"
has "a: stored on the server" "$T/.out" "w: stored in the remote stage cache"
check "a: the manifest is on the server under the key" test -s "$(ac)"
has "a: the manifest records the key's inputs" "$(ac)" 'IN_REF="v1"'
check "a: the wheel is on the server by its digest" cmp "$T/a/out/x-1.0-py3-none-any.whl" "$T/dav/store/kiln/cas/$(whl)"
exits "a: no folder named http: was made" 1 test -e "$T/a/http:"
check "b: restores" stage b --stage-cache="$DAV_URL"
has "b: restored" "$T/.out" "w: restored from the stage cache in"
same "b: the command ran once in all" 1 "$(runs)"
check "b: the same wheel" cmp "$T/a/out/x-1.0-py3-none-any.whl" "$T/b/out/x-1.0-py3-none-any.whl"
has "b: with the log of the build" "$T/b/logs/w.log" "built the wheel with one"
same "b: the stamp is A's" "$(cat "$T/a/w.stamp")" "$(cat "$T/b/w.stamp")"
exits "b: no private entry left behind" 1 test -e "$T/b/out.remote.$$"
same "b: nothing but out, logs and trace.json in the folder" "logs out trace.json w.stamp w.stamp.lock" "$(ls "$T/b" | tr '\n' ' ' | sed 's/ $//')"
has "the server saw GETs" "$T/dav/logs/access.log" '"GET /kiln/ac/'

# file:// is a folder
check "file:// is the local stage cache" stage f --stage-cache="file://$T/sc"
check "file://: an entry in the folder" test -d "$T/sc/$(sed -n 's/^KEY="\(..\).*"/\1/p' "$T/a/w.stamp")"
exits "an unknown scheme: 2" 2 stage g --stage-cache="ftp://127.0.0.1/x/"
has "an unknown scheme: said" "$T/.err" "not a folder, file://, http:// or https:// URL"
exits "credentials in the URL: 2" 2 stage g --stage-cache="http://me:secret@127.0.0.1:$DAV_PORT/kiln/"
has "credentials in the URL: refused" "$T/.err" "~/.netrc or KILN_CACHE_TOKEN"
lacks "credentials in the URL: not repeated" "$T/.err" "secret"

# a corrupted wheel on the server: detected by digest, logged, rebuilt, never installed
printf 'X' | dd of="$T/dav/store/kiln/cas/$(whl)" bs=1 seek=40 conv=notrunc 2>/dev/null
check "corrupt object: the stage still succeeds" stage c --stage-cache="$DAV_URL"
has "corrupt object: logged" "$T/.err" "does not match its digest (corrupt or truncated); ignored (building instead)"
has "corrupt object: in the stage's log" "$T/c/logs/w.log" "does not match its digest"
has "corrupt object: rebuilt" "$T/.out" "w: rebuilt in"
same "corrupt object: the command ran again (a, the file:// folder, c)" 3 "$(runs)"
check "corrupt object: the installed wheel is whole" python3 -c 'import sys, zipfile; sys.exit(zipfile.ZipFile(sys.argv[1]).testzip() is not None)' "$T/c/out/x-1.0-py3-none-any.whl"
check "corrupt object: stored again, good" cmp "$T/c/out/x-1.0-py3-none-any.whl" "$T/dav/store/kiln/cas/$(whl)"
check "after the repair: d restores" stage d --stage-cache="$DAV_URL"
has "after the repair: restored" "$T/.out" "w: restored from the stage cache in"

# a truncated wheel and an HTTP error page in its place: never taken for the wheel
head -c 100 "$T/a/out/x-1.0-py3-none-any.whl" >"$T/dav/store/kiln/cas/$(whl)"
check "truncated object: rebuilt" stage e --stage-cache="$DAV_URL"
has "truncated object: logged" "$T/.err" "does not match its digest"
printf '<html><body>502 Bad Gateway</body></html>\n' >"$T/dav/store/kiln/cas/$(whl)"
check "an error page in place of the wheel: rebuilt" stage e2 --stage-cache="$DAV_URL"
has "error page: logged" "$T/.err" "does not match its digest"
check "error page: the installed wheel is a zip" python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1])' "$T/e2/out/x-1.0-py3-none-any.whl"
printf 'not a manifest\n' >"$(ac)"
check "a manifest that is not kiln's: rebuilt" stage e3 --stage-cache="$DAV_URL"
has "bad manifest: logged" "$T/.err" "is not a kiln-stage manifest for w"
check "bad manifest: replaced" grep -q '^KILN_STAMP=1' "$(ac)"

# a missing object (HTTP 404 for a file the manifest names): rebuilt
rm -f "$T/dav/store/kiln/cas/$(whl)"
check "a missing file object: rebuilt" stage e4 --stage-cache="$DAV_URL"
has "missing object: logged" "$T/.err" "which the server does not hold"

# the server down: a warning and a local build, quickly
dav_stop
printf 'STAGE=w\nREF="v2"\n' >w.key
check "server down: the stage builds" stage h --stage-cache="$DAV_URL"
has "server down: rebuilt" "$T/.out" "w: rebuilt in"
has "server down: a warning" "$T/.err" "did not answer"
# no long wait, said without a clock: the first refused connection marks the server down
# for the run, so the lookup is the one request; the store repeats its answer and asks
# nothing more (every "did not answer" names the lookup's URL)
same "server down: one request in all" 1 "$(grep -o 'did not answer ([a-z]*://[^ :]*:[0-9]*/[^ :]*' "$T/.err" | sort -u | wc -l)"
has "server down: not stored, said so" "$T/.err" "not stored; the stage itself succeeded"
check "server down: a stamp" test -s "$T/h/w.stamp"

# credentials: a bearer token from KILN_CACHE_TOKEN and a netrc login reach the server
# (nginx logs the request line and the user), and never the logs or the output
dav_start
printf 'machine 127.0.0.1 login kilnuser password netrcsecret\n' >"$T/netrc"
NETRC=$T/netrc check "with a netrc login" stage k --stage-cache="$DAV_URL"
has "netrc: the login reached the server" "$T/dav/logs/access.log" "kilnuser"
lacks "netrc: not in the output" "$T/.out" "netrcsecret"
lacks "netrc: not in the errors" "$T/.err" "netrcsecret"
printf 'STAGE=w\nREF="v3"\n' >w.key
KILN_CACHE_TOKEN=tok3n check "with a bearer token" stage k --stage-cache="$DAV_URL"
has "token: sent as a bearer header" "$T/dav/logs/access.log" '"Bearer tok3n"'
lacks "credentials: not in the output" "$T/.out" "tok3n"
lacks "credentials: not in the errors" "$T/.err" "netrcsecret"
lacks "credentials: not in the stage's log" "$T/k/logs/w.log" "tok3n"

# the default: the upload runs in the background after the stamp, holding STAMP.upload
# (and the stage's own lock) until it is done; its outcome goes to the stage's log
unset KILN_CACHE_UPLOAD
printf 'STAGE=w\nREF="v4"\n' >w.key
check "background: the stage returns" stage bg --stage-cache="$DAV_URL"
has "background: said" "$T/.out" "w: storing in the remote stage cache in the background"
check "background: the upload finishes (its lock is released)" flock "$T/bg/w.stamp.upload" true
has "background: its outcome in the stage's log" "$T/bg/logs/w.log" "# kiln-stage w: stored in the remote stage cache"
check "background: another folder restores it" stage bg2 --stage-cache="$DAV_URL"
has "background: restored" "$T/.out" "w: restored from the stage cache in"

# explain: whether the server holds the key's object
check "explain: a hit on the server" kiln-stage explain --key=w.key --stamp="$T/bg/w.stamp" --stage-cache="$DAV_URL" w
has "explain: names the object" "$T/.out" "w: stage cache: object ${DAV_URL}ac/"
printf 'STAGE=w\nREF="v5"\n' >w.key
check "explain: a miss on the server" kiln-stage explain --key=w.key --stamp="$T/bg/w.stamp" --stage-cache="$DAV_URL" w
has "explain: no object" "$T/.out" "w: stage cache: no object for this key on the server"
KILN_EXPLAIN=1 KILN_CACHE_UPLOAD=wait check "KILN_EXPLAIN: the remote lookup is said" stage ex --stage-cache="$DAV_URL"
has "KILN_EXPLAIN: said" "$T/.err" "kiln: w: stage cache: no object for this key on the server"

# two builders store one key at once, with different bytes (a wheel that is not
# reproducible): the server is left with one whole object, which a third folder restores
printf 'STAGE=w\nREF="race"\n' >w.key
(PAYLOAD=left KILN_CACHE_UPLOAD=wait stage r1 --stage-cache="$DAV_URL" >"$T/r1.out" 2>&1) &
j1=$!
(PAYLOAD=right KILN_CACHE_UPLOAD=wait stage r2 --stage-cache="$DAV_URL" >"$T/r2.out" 2>&1) &
j2=$!
wait $j1; s1=$?
wait $j2; s2=$?
same "race: both builders succeed" "0 0" "$s1 $s2"
KILN_CACHE_UPLOAD=wait check "race: a third folder restores" stage r3 --stage-cache="$DAV_URL"
has "race: restored, not rebuilt" "$T/.out" "w: restored from the stage cache in"
if cmp -s "$T/r3/out/x-1.0-py3-none-any.whl" "$T/r1/out/x-1.0-py3-none-any.whl" ||
   cmp -s "$T/r3/out/x-1.0-py3-none-any.whl" "$T/r2/out/x-1.0-py3-none-any.whl"; then
	ok "race: the restored wheel is one builder's, whole"
else
	notok "race: the restored wheel is one builder's, whole"
fi
check "race: and a valid zip" python3 -c 'import sys, zipfile; sys.exit(zipfile.ZipFile(sys.argv[1]).testzip() is not None)' "$T/r3/out/x-1.0-py3-none-any.whl"

# a remote stage cache added to a built tree: the up-to-date stage fills it, runs nothing
printf 'STAGE=w\nREF="late"\n' >w.key
check "late: built without a cache" stage lt
n=$(runs)
KILN_CACHE_UPLOAD=wait check "late: the server is added" stage lt --stage-cache="$DAV_URL"
same "late: stored, not rebuilt" "w: stored in the remote stage cache" "$(cat "$T/.out")"
same "late: the command did not run" "$n" "$(runs)"
KILN_CACHE_UPLOAD=wait check "late: again: silent" stage lt --stage-cache="$DAV_URL"
same "late: again: nothing printed" "" "$(cat "$T/.out")"
check "late: another folder restores it" stage lt2 --stage-cache="$DAV_URL"
has "late: restored" "$T/.out" "w: restored from the stage cache in"
