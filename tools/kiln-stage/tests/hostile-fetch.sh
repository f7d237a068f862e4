#!/bin/sh
# kiln-stage fetch against servers that misbehave on purpose (tests/http-faults.py on
# loopback): one that ignores Range, an endless body, a trickle, an absurd
# Content-Length; FIFOs as the output, its .part or a file:// input; schemes beyond
# http, https, ftp and file; credentials in the URL, ~/.netrc and a token. A command
# that could hang on today's kiln runs under timeout (a hang is a failure).
. "$KILN_SRC/tests/lib.sh"
need python3 timeout mkfifo
cd "$T" || exit 2
head -c 300000 /dev/urandom >blob || exit 2
SHA=$(sha256sum blob | cut -c1-64)

. "$KILN_SRC/tests/http-faults.inc"
faults_start "$T"
B=$FAULTS_URL
# f NAME URL [OPTION]...: kiln-stage fetch into dl/NAME, at most 60 s
f () { n=$1 u=$2; shift 2; run timeout 60 kiln-stage fetch "$u" --sha256="$SHA" -o "dl/$n" "$@"; }

# a server that ignores Range: the part is thrown away and the file fetched from zero
f norange "$B/norange"
same "fetch: a server that ignores Range: exit 0" 0 "$rc"
has "fetch: the restart is said" "$T/.err" "the server ignores Range; starting over from zero"
check "fetch: the file is whole" cmp blob dl/norange
# a part an earlier run left, resumed from a server that ignores Range
head -c 1000 blob >dl/rerun.part
f rerun "$B/norange"
same "fetch: an old part, a server that ignores Range: exit 0" 0 "$rc"

# an endless body, an absurd Content-Length, a trickle: the size cap and the deadline
f endless "$B/endless" --max-size=1000000
same "fetch: an endless body stops at --max-size: exit 1" 1 "$rc"
has "fetch: the cap is named" "$T/.err" "more than --max-size=1000000 bytes"
[ -e dl/endless.part ] && notok "fetch: over the cap, the part is removed" || ok "fetch: over the cap, the part is removed"
f absurd "$B/absurd"
same "fetch: an absurd Content-Length: exit 1" 1 "$rc"
has "fetch: the announced size is named" "$T/.err" "announces 1000000000000000 bytes"
f trickle "$B/trickle" --max-time=2
same "fetch: a trickle ends at --max-time: exit 1" 1 "$rc"
has "fetch: the deadline is named" "$T/.err" "--max-time=2"
same "fetch: one line" 1 "$(lines "$T/.err")"
exits "fetch: --max-time=0 is a usage error" 2 kiln-stage fetch "$B/x" --sha256="$SHA" -o dl/x --max-time=0

# FIFOs: as the output, as its .part, as a file:// input
mkfifo fifo-out fifo-in && mkdir -p dl && mkfifo dl/p.part || exit 2
f ../fifo-out "$B/blob"
same "fetch: a FIFO as the output: exit 2" 2 "$rc"
has "fetch: the FIFO is named" "$T/.err" "fifo-out: is a FIFO, not a regular file"
f p "$B/blob"
same "fetch: a FIFO as the .part: exit 2" 2 "$rc"
has "fetch: the part is named" "$T/.err" "p.part: is a FIFO, not a regular file"
f fromfifo "file://$T/fifo-in"
same "fetch: a file:// FIFO: exit 2" 2 "$rc"
has "fetch: the input is named" "$T/.err" "fifo-in: is a FIFO, not a regular file"
f fromdir "file://$T/dl"
same "fetch: a file:// folder: exit 2" 2 "$rc"
f fromnone "file://$T/none"
same "fetch: a missing file:// input: exit 2" 2 "$rc"
f fromfile "file://$T/blob"
same "fetch: a file:// input: exit 0" 0 "$rc"
check "fetch: the file:// copy is whole" cmp blob dl/fromfile

# schemes: http, https, ftp and file only, also after a redirect
: >req.log
for s in dict gopher telnet ldap scp smb mqtt; do
	f "s-$s" "$s://${B#http://}/x"
	same "fetch: $s:// refused: exit 2" 2 "$rc"
	has "fetch: $s:// named" "$T/.err" "scheme '$s' is not one of http, https, ftp, file"
done
same "fetch: no refused scheme reached the server" "" "$(cat req.log)"
f redir "$B/redir"
same "fetch: a redirect to dict:// is refused: exit 1" 1 "$rc"
same "fetch: the redirect was not followed" 1 "$(lines req.log)"

# credentials: never in the URL; ~/.netrc (or NETRC) and KILN_FETCH_TOKEN instead
f cred "http://kiln:s3cret@${B#http://}/basic"
same "fetch: user:secret@ in the URL: exit 2" 2 "$rc"
has "fetch: the fix is named" "$T/.err" "~/.netrc"
lacks "fetch: the secret is not repeated" "$T/.err" "s3cret"
printf 'machine 127.0.0.1 login kiln password s3cret\n' >netrc
NETRC=$T/netrc f basic "$B/basic"
same "fetch: credentials from NETRC: exit 0" 0 "$rc"
KILN_FETCH_TOKEN=t0ken f bearer "$B/bearer"
same "fetch: a bearer token from KILN_FETCH_TOKEN: exit 0" 0 "$rc"
lacks "fetch: the token is not logged" "$T/.err" "t0ken"
exit 0
