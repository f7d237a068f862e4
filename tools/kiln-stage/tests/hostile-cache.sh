#!/bin/sh
# the remote stage cache against a server that misbehaves and writers that should not be
# trusted (tests/http-faults.py on loopback, serving GET, HEAD and PUT from a folder):
# signed manifests (kiln-stage keygen, --cache-sign-key, --cache-trusted-keys; unsigned,
# untrusted or tampered manifests are a miss in one line), objects bounded by their
# declared size before their digest is checked, and SIGINT obeyed during a restore from
# a server that trickles (temporary files removed, nothing built, no stamp).
. "$KILN_SRC/tests/lib.sh"
need python3 timeout
cd "$T" || exit 2
KILN_CACHE_UPLOAD=wait
export KILN_CACHE_UPLOAD

. "$KILN_SRC/tests/http-faults.inc"
mkdir -p srv
faults_start "$T/srv"
URL=$FAULTS_URL/kiln/

cat >mk.sh <<'EOF'
printf '%s\n' "${PAYLOAD:-one}" >"$KILN_STAGE_OUT/x-1.0-py3-none-any.whl"
echo run >>"$1"
EOF
runs () { cat "$T/runs" 2>/dev/null | wc -l | tr -d ' '; }
printf 'STAGE=w\nREF="v1"\n' >w.key
# stage DIR [OPTION]...: the stage w in build folder DIR against the server
stage () { d=$1; shift; mkdir -p "$T/$d/logs" && (cd "$T/$d" && kiln-stage run --key="$T/w.key" \
	--stamp=w.stamp --logdir=logs --out=out --stage-cache="$URL" "$@" w -- sh "$T/mk.sh" "$T/runs"); }

# --- keys
check "keygen: a key pair" kiln-stage keygen team-1 team.sec team.pub
same "keygen: the secret is the owner's alone" "-rw-------" "$(ls -l team.sec | cut -c1-10)"
has "keygen: the public key is NAME:BASE64" team.pub "team-1:"
exits "keygen: an existing secret is never replaced: 2" 2 kiln-stage keygen team-1 team.sec other.pub
check "keygen: another pair" kiln-stage keygen intruder intruder.sec intruder.pub
PUB=$(cat team.pub)

# --- signed: stored by the team, restored by a builder who trusts its key
check "sign: the team's builder stores a signed manifest" stage a --cache-sign-key="$T/team.sec"
has "sign: the manifest carries the signature" "$(ls srv/kiln/ac/* | head -n 1)" 'SIG="team-1:'
has "sign: and every output's size" "$(ls srv/kiln/ac/* | head -n 1)" 'SIZES="4"'
check "sign: a builder that trusts the key restores it" stage b --cache-trusted-keys="$PUB"
same "sign: restored, not rebuilt" 1 "$(runs)"
check "sign: the file is the team's" cmp a/out/x-1.0-py3-none-any.whl b/out/x-1.0-py3-none-any.whl
exits "sign: a trusted-key list that is not one: 2" 2 stage bad --cache-trusted-keys="team-1:notbase64"

# --- whoever can PUT decides nothing: unsigned, untrusted, tampered manifests are misses
AC=$(ls srv/kiln/ac/*)
cp "$AC" ac.signed
grep -v '^SIG=' ac.signed >"$AC"
stage c --cache-trusted-keys="$PUB" >/dev/null 2>c.err
same "unsigned: rebuilt instead" 2 "$(runs)"
has "unsigned: one line says why" c.err "is not signed, and only manifests a trusted key signed are restored"
same "unsigned: one warning line" 1 "$(grep -c 'remote stage-cache' c.err)"
PAYLOAD=evil stage evil --cache-sign-key="$T/intruder.sec" --stage-cache="${URL%kiln/}evil/" >/dev/null 2>&1
{ grep -v '^SIG=' ac.signed; grep '^SIG=' srv/evil/ac/*; } >"$AC"
stage d --cache-trusted-keys="$PUB" >/dev/null 2>d.err
same "untrusted: rebuilt instead" 4 "$(runs)"
has "untrusted: the key is named" d.err "a signature by 'intruder', a key not in KILN_CACHE_TRUSTED_KEYS"
# the intruder's content under the team's signature: a digest changed, the signature kept
EVIL=$(sha256sum evil/out/x-1.0-py3-none-any.whl | cut -c1-64)
cp srv/evil/cas/"$EVIL" srv/kiln/cas/ || exit 2
sed "s/^OUT_0=\".\{64\}/OUT_0=\"$EVIL/" ac.signed >"$AC"
stage e --cache-trusted-keys="$PUB" >/dev/null 2>e.err
same "tampered: rebuilt instead" 5 "$(runs)"
has "tampered: a bad signature" e.err "a bad signature from the trusted key 'team-1'"
same "tampered: the intruder's file is not installed" one "$(cat e/out/x-1.0-py3-none-any.whl)"
cp ac.signed "$AC"
KILN_CACHE_TRUSTED_KEYS=$PUB check "sign: KILN_CACHE_TRUSTED_KEYS works as the option" stage f
same "sign: restored from the environment's trust" 5 "$(runs)"
chmod 644 team.sec
exits "sign: a secret readable by others is refused" 0 stage g --cache-sign-key="$T/team.sec" --stage-cache="${URL%kiln/}g/"
has "sign: it says so (the stage itself succeeded)" "$T/.err" "the secret key is readable by others (chmod 600 it)"
chmod 600 team.sec

# --- objects bounded by their declared size before the digest check
: >srv/.endless
mkdir -p h
run timeout 60 sh -c 'cd "$1" && mkdir -p logs && kiln-stage run --key="$2/w.key" --stamp=w.stamp --logdir=logs --out=out --stage-cache="$3" --cache-trusted-keys="$4" w -- sh "$2/mk.sh" "$2/runs"' sh "$T/h" "$T" "$URL" "$PUB"
same "size: an endless object: the stage is built instead, exit 0" 0 "$rc"
has "size: the bound is named" "$T/.err" "larger than the 4 bytes it may have"
rm -f srv/.endless
# (the rebuild stored its own, unsigned, manifest over the one it found corrupt)
cp ac.signed "$AC"

# --- SIGINT during a restore from a server that trickles: obeyed, nothing left
: >srv/.trickle
: >req.log
mkdir -p i/logs
(cd i && exec timeout 120 kiln-stage run --key="$T/w.key" --stamp=w.stamp --logdir=logs --out=out \
	--stage-cache="$URL" --cache-trusted-keys="$PUB" w -- sh "$T/mk.sh" "$T/runs") >i.out 2>i.err &
kp=$!
waitalive "$kp" grep -q 'GET /kiln/cas/' req.log || notok "sigint: the restore never asked for an object"
kill -INT "$kp"
wait "$kp"
same "sigint: exit 130" 130 "$?"
has "sigint: said in one line" i.err "interrupted during the remote restore; no stamp written"
same "sigint: no temporary folder left, no stamp" "logs out w.stamp.lock" "$(ls i | tr '\n' ' ' | sed 's/ $//')"
same "sigint: the output folder is empty" "" "$(ls -A i/out)"
same "sigint: the stage did not run" 7 "$(runs)"
rm -f srv/.trickle

# --- configure's options reach every stage's run (and stack.env records them)
venv_new python3 "$PWD/venv" >/dev/null 2>&1 || exit 2
mkdir -p g && cd g || exit 2
gen () { kiln-stage graph --srcdir="$KILN_SRC" --builddir="$T/g/build" --pins="$KILN_SRC/env/versions.env" \
	--arch=cpu --python="$T/venv/bin/python" --stage-cache="$URL" -- configure "$@"; }
check "configure: --cache-trusted-keys and --cache-sign-key" gen --stage-cache="$URL" --cache-trusted-keys="$PUB" --cache-sign-key=../team.sec
has "configure: the stages verify with the trusted keys" build/stack.ninja "'--cache-trusted-keys=team-1\$:"
has "configure: and sign with the secret key, by its absolute path" build/stack.ninja "'--cache-sign-key=$T/team.sec'"
has "configure: stack.env records the trusted keys" build/stack.env "CACHE_TRUSTED_KEYS=\"team-1:"
exits "configure: a trusted-key list that is not one: 2" 2 gen --cache-trusted-keys="team-1:!!"
has "configure: said in one line" "$T/.err" "is not a list of NAME:BASE64 public keys"
exit 0
