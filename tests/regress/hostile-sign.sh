#!/bin/sh
# the signed remote stage cache against a writer who can PUT anything (tests/http-faults.py
# on loopback): every malformed signature line (no colon, an empty or hostile key name,
# base64 that is not a signature, thousands of lines) is a miss said in one line without a
# control byte, never a crash; the stage is built instead, exit 0. A trusted-key list that
# names no key (an empty --cache-trusted-keys=, which would restore unsigned manifests
# whatever KILN_CACHE_TRUSTED_KEYS says) is refused: exit 2, in run and in configure. And a
# restore killed outright (SIGKILL) leaves OUT.remote.PID, which the next run of the stage
# removes; a folder of a process that is still alive stays.
. "$KILN_SRC/tests/lib.sh"
need python3 timeout
cd "$T" || exit 2
KILN_CACHE_UPLOAD=wait
export KILN_CACHE_UPLOAD
unset KILN_CACHE_TRUSTED_KEYS KILN_CACHE_SIGN_KEY

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
stage () { d=$1; shift; mkdir -p "$T/$d/logs" && (cd "$T/$d" && exec kiln-stage run --key="$T/w.key" \
	--stamp=w.stamp --logdir=logs --out=out --stage-cache="$URL" "$@" w -- sh "$T/mk.sh" "$T/runs"); }
# ctl FILE: no byte below 0x20 but newline, no DEL, no byte over 0x7e
ctl () { ! LC_ALL=C grep -q '[^ -~]' "$1"; }

check "keygen: the team's key pair" kiln-stage keygen team-1 team.sec team.pub
PUB=$(cat team.pub)
check "sign: the team's builder stores a signed manifest" stage a --cache-sign-key="$T/team.sec"
AC=$(ls srv/kiln/ac/*)
cp "$AC" ac.signed
grep -v '^SIG=' ac.signed >ac.body
GOODSIG=$(grep '^SIG=' ac.signed)
check "sign: restored with the key trusted" stage b --cache-trusted-keys="$PUB"
same "sign: restored, not rebuilt" 1 "$(runs)"

# --- malformed signature lines: a miss in one line, the stage built, exit 0, no crash
i=0
want=1
# sigline DESC TEXT WANT: the manifest's body, then the lines of TEXT (printf format)
sigline () { i=$((i + 1)) want=$((want + 1))
	{ cat ac.body; printf -- "$2"; } >"$AC"
	run stage "m$i" --cache-trusted-keys="$PUB"
	same "$1: exit 0 (built instead)" 0 "$rc"
	same "$1: built, not restored" "$want" "$(runs)"
	same "$1: one line" 1 "$(lines "$T/.err")"
	has "$1: says why" "$T/.err" "$3"
	if ctl "$T/.err"; then ok "$1: no control byte"; else notok "$1: a control byte"; od -c "$T/.err" | sed -n '1,4s/^/#   /p'; fi; }
NOT="has a signature line that is not NAME:BASE64, and only manifests a trusted key signed are restored"
sigline "no colon (was SIGSEGV)" 'SIG="team-1AAAAAAAA"\n' "$NOT"
sigline "no colon, short" 'SIG="abc"\n' "$NOT"
sigline "an empty name" 'SIG=":AAAAAAAAAAAA"\n' "$NOT"
sigline "only colons" 'SIG="::::::::"\n' "$NOT"
sigline "an OSC sequence as the key name" 'SIG="\033]0;pwned\007:AAAA"\n' "$NOT"
sigline "a CSI in the key name" 'SIG="team\033[2J:AAAA"\n' "$NOT"
sigline "a C1 byte in the key name" 'SIG="team\302\233:AAAA"\n' "$NOT"
sigline "a NUL in the key name" 'SIG="team\000-1:AAAA"\n' "$NOT"
sigline "a 2000-byte key name" "SIG=\"$(printf '%02000d' 0):AAAA\"\\n" "$NOT"
{ cat ac.body; printf 'SIG="nocolon"\n%s\n' "$GOODSIG"; } >"$AC"
check "no colon, then the team's good signature: restored" stage m0 --cache-trusted-keys="$PUB"
same "no colon, then good: not built" "$want" "$(runs)"
sigline "the trusted name, base64 that is not a signature" 'SIG="team-1:!!!!"\n' "a bad signature from the trusted key 'team-1'"
sigline "the trusted name, a signature of the wrong length" 'SIG="team-1:AAAA"\n' "a bad signature from the trusted key 'team-1'"
sigline "an unknown key" 'SIG="other:AAAA"\n' "a signature by 'other', a key not in KILN_CACHE_TRUSTED_KEYS"
sigline "no closing quote" 'SIG="team-1:AAAA\n' "has a line after its signatures that is not one"
{ cat ac.body; printf '%s\nOUT_9="evil"\nSIG="x"\n' "$GOODSIG"; } >"$AC"
check "a good signature, then lines after it: restored" stage m00 --cache-trusted-keys="$PUB"
same "a good signature, then lines after it: not built" "$want" "$(runs)"
same "a good signature, then lines after it: what follows the signed part is not installed" "x-1.0-py3-none-any.whl" "$(ls m00/out)"
sigline "SIG= alone is no signature line" 'SIG=\n' "is not signed"
# thousands of lines: linear, within a CPU cap that quadratic work would pass
{ cat ac.body; python3 -c 'import sys; sys.stdout.write("".join("SIG=\"k%d\"\n" % i for i in range(200000)))'; } >"$AC"
mkdir -p mm/logs
run sh -c 'ulimit -t 60; cd "$1" && exec kiln-stage run --key="$2/w.key" --stamp=w.stamp --logdir=logs --out=out --stage-cache="$3" --cache-trusted-keys="$4" w -- sh "$2/mk.sh" "$2/runs"' sh "$T/mm" "$T" "$URL" "$PUB"
same "200k colon-less signature lines: built within 60 s of CPU, exit 0" 0 "$rc"
has "200k colon-less signature lines: one line says why" "$T/.err" "$NOT"
cp ac.signed "$AC"

# --- a trusted-key list that names no key: exit 2, before anything runs
n0=$(runs)
KILN_CACHE_TRUSTED_KEYS=$PUB exits "run: an empty --cache-trusted-keys= beside KILN_CACHE_TRUSTED_KEYS: exit 2" 2 stage e1 --cache-trusted-keys=
has "run: empty: says so" "$T/.err" "--cache-trusted-keys: names no key: an empty list would restore unsigned manifests"
same "run: empty: one line" 1 "$(grep -c . "$T/.err")"
grep -v '^SIG=' ac.signed >"$AC"
exits "run: empty, an unsigned manifest on the server: exit 2" 2 stage e2 --cache-trusted-keys=
same "run: empty: nothing restored, nothing built" "$n0" "$(runs)"
same "run: empty: no output" "" "$(ls -A e2/out 2>/dev/null)"
exits "run: separators only (' , '): exit 2" 2 stage e3 --cache-trusted-keys=' , '
has "run: separators only: says so" "$T/.err" "names no key"
exits "run: a hostile list: exit 2" 2 stage e4 --cache-trusted-keys="$(printf 'a\033]0;x\007:AAAA')"
has "run: a hostile list: shown escaped" "$T/.err" "'a\\x1b]0;x\\x07:AAAA' is not a list of NAME:BASE64 public keys"
if ctl "$T/.err"; then ok "run: a hostile list: no control byte"; else notok "run: a hostile list: a control byte"; fi
KILN_CACHE_TRUSTED_KEYS=' , ' run stage e5
same "environment: separators only trusts no key: the unsigned manifest is a miss, built" "$((n0 + 1))" "$(runs)"
has "environment: separators only: says why" "$T/.err" "is not signed"
KILN_CACHE_TRUSTED_KEYS=$PUB run stage e6
same "environment: the team's key: the unsigned manifest is a miss" "$((n0 + 2))" "$(runs)"
cp ac.signed "$AC"
python3 -m venv venv >/dev/null 2>&1 || exit 2
mkdir -p g
gen () { (cd g && kiln-stage graph --srcdir="$KILN_SRC" --builddir="$T/g/build" --pins="$KILN_SRC/env/versions.env" \
	--arch=cpu --python="$T/venv/bin/python" --stage-cache="$URL" -- configure "$@"); }
exits "configure: an empty --cache-trusted-keys=: exit 2" 2 gen --cache-trusted-keys=
has "configure: empty: says so" "$T/.err" "names no key"
same "configure: empty: one line" 1 "$(grep -c . "$T/.err")"

# --- a restore killed outright leaves OUT.remote.PID; the next run removes it
n0=$(runs)
: >srv/.trickle
: >req.log
mkdir -p k/logs
(cd k && exec kiln-stage run --key="$T/w.key" --stamp=w.stamp --logdir=logs --out=out \
	--stage-cache="$URL" --cache-trusted-keys="$PUB" w -- sh "$T/mk.sh" "$T/runs") >k.out 2>k.err &
kp=$!
waitalive "$kp" grep -q 'GET /kiln/cas/' req.log || notok "kill -9: the restore never asked for an object"
kill -KILL "$kp"
wait "$kp"
same "kill -9: exit 137" 137 "$?"
same "kill -9: the private folder is left behind" "k/out.remote.$kp" "$(ls -d k/out.remote.* 2>/dev/null)"
rm -f srv/.trickle
# a folder of a live process stays; one of a process that has ended goes
sleep 1000 &
live=$!
at_exit "kill $live 2>/dev/null"
mkdir -p "k/out.remote.$live/ab"
sh -c 'exit 0' &
dead=$!
wait "$dead"
mkdir -p "k/out.remote.$dead/cd" && : >"k/out.remote.$dead/cd/x"
mkdir -p k/out.remote.notapid
ln -s "$T/victim" k/out.remote.1234567 && mkdir -p victim && : >victim/keep
(cd k && exec kiln-stage run --key="$T/w.key" --stamp=w.stamp --logdir=logs --out=out \
	--stage-cache="$URL" --cache-trusted-keys="$PUB" w -- sh "$T/mk.sh" "$T/runs") >k2.out 2>k2.err
same "kill -9: the next run succeeds" 0 "$?"
same "kill -9: it restored (not rebuilt)" "$n0" "$(runs)"
same "kill -9: the killed restore's folder is gone" "" "$(ls -d "k/out.remote.$kp" 2>/dev/null)"
same "kill -9: so is the one of another ended process" "" "$(ls -d "k/out.remote.$dead" 2>/dev/null)"
same "kill -9: a live process's folder stays" "k/out.remote.$live" "$(ls -d "k/out.remote.$live" 2>/dev/null)"
same "kill -9: a name that is not a PID stays" "k/out.remote.notapid" "$(ls -d k/out.remote.notapid 2>/dev/null)"
same "kill -9: a stale link is removed, never followed" "keep" "$(ls victim)"
same "kill -9: the link itself is gone (no such process 1234567)" "" "$(ls -d k/out.remote.1234567 2>/dev/null)"
kill "$live" 2>/dev/null
exit 0
