#!/bin/sh
# team-icecream: --distribute=icecream on the toy stack against a real icecream network on
# loopback (issue 20): Debian's icecc-scheduler and two iceccd (node1, the builder's own,
# and node2), each with its own socket, environment folder and port, in icecream's own
# test mode (ICECC_TESTS=1: several daemons on one address; ICECC_TEST_SOCKET: the
# builder's daemon; ICECC_TEST_REMOTEBUILD=1: a job for another daemon at the builder's
# own address goes to it, not built by icecc itself; node1 takes no jobs from others). Both builds prefer node2
# (ICECC_PREFERRED_HOST, icecc's own setting; ICECC_* crosses the clean environment), as
# a team points its builds at the build servers. Folder A's compiles run in node2's
# chroot, seen in node2's log and the scheduler's; folder B adds ccache in front (misses go
# to icecc through CCACHE_PREFIX). Both stacks import and work.
# Needs root: iceccd accepts remote jobs only where it can chroot ("Cannot use chroot, no
# remote jobs accepted"). icecream schedules no job on a host whose CPUs are busy: a node's
# load is 1000 when the host's idle time is under 10% (iceccd's own rule), and the
# scheduler skips such nodes, and icecc builds locally after waiting minutes for a host.
# Where node2 is still busy 30 s before a build, the rest of this file is the optional tier
# idle-host; a host that gets busy during a build makes that build's remote checks that tier.
. "$KILN_SRC/tests/lib.sh"
need icecc iceccd icecc-scheduler ccache
[ "$(id -u)" = 0 ] || optional root "iceccd accepts remote jobs only where it can chroot (run as root)"
. "$KILN_SRC/tests/regress/graph-toy.inc"
# the scheduler takes PORT and PORT+1 (its text interface): two free ones in a row
i=0
while :; do
	sp=$(freeport)
	python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', $sp + 1))" 2>/dev/null && break
	i=$((i + 1)); [ $i -lt 20 ] || missing "no two free ports in a row for icecc-scheduler"
done
I=$T/ice
mkdir -p "$I"
# the daemons drop to the icecc user: it must reach its environment folders
chmod 711 "$T" && chmod 1777 "$I" || exit 2
export ICECC_TESTS=1 ICECC_TEST_SCHEDULER_PORTS=$sp:$((sp + 2))
net=kiln$$
pids=
# the servers this file started (and has not reaped: their ids are still theirs)
at_exit 'for p in $pids; do kill $p 2>/dev/null; done; wait'
icecc-scheduler -p "$sp" -n "$net" -vvv 2>"$I/scheduler.log" &
spid=$!
pids="$pids $spid"
# ready when the scheduler itself listens on both its ports (lib.sh's listens)
waitlisten "$spid" "$sp" && waitlisten "$spid" "$((sp + 1))" ||
	{ sed 's/^/#   /' "$I/scheduler.log"; notok "icecc-scheduler did not listen on $sp and $((sp + 1))"; exit 1; }
# node1, the builder's daemon, takes no jobs from others (as in icecream's own tests: two
# daemons on one address must not send jobs to each other both ways), so it listens on no
# port; node2 takes jobs on a free port, ready when it listens there itself (lib.sh's
# startserver)
node () {
	: >"$I/node$n.log"
	ICECC_TEST_SOCKET=$I/node$n.sock ICECC_SCHEDULER=127.0.0.1:$sp iceccd -s "127.0.0.1:$sp" -n "$net" \
		-p "$1" -b "$I/env$n" -N node$n -m 2 -vvv $nodeopt 2>"$I/node$n.log" &
	SERVER_PID=$!
}
n=1 nodeopt=--no-remote
node "$(freeport)"
npids=$SERVER_PID
n=2 nodeopt=
startserver 5 node || { sed 's/^/#   /' "$I/node2.log"; notok "iceccd node2 did not start"; exit 1; }
npids="$npids $SERVER_PID"
pids="$pids $npids"
unset ICECC_TESTS ICECC_TEST_SCHEDULER_PORTS
waitalive "$spid $npids" sh -c 'grep -q "Connected to scheduler" "$1" && grep -q "Connected to scheduler" "$2"' sh "$I/node1.log" "$I/node2.log" ||
	{ sed 's/^/#   /' "$I/node1.log"; notok "iceccd did not reach icecc-scheduler"; exit 1; }
lacks "node2 can chroot, so it takes remote jobs" "$I/node2.log" "Cannot use chroot"
# listcs: the scheduler's view of the nodes ("node2 (127.0.0.1:PORT) [x86_64] ... load=N")
listcs () {
	python3 - "$((sp + 1))" <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
s.settimeout(5)
s.sendall(b"listcs\nquit\n")
out, t = b"", time.time()
while time.time() - t < 5:
    try:
        b = s.recv(4096)
    except OSError:
        break
    if not b:
        break
    out += b
sys.stdout.write(out.decode(errors="replace"))
EOF
}
# idle: node2 takes jobs now (its load under 1000) within 30 s; else says why and fails
# (icecc would wait minutes for each job, then compile locally)
idle () {
	i=0
	until listcs | grep -q 'node2 .*load=\([0-9]\{1,3\}\)$'; do
		i=$((i + 1))
		[ $i -lt 30 ] || { why="the host stayed busy for 30 s (listcs: $(listcs | grep -o 'node[12] .*' | tr '\n' ' '))"; return 1; }
		sleep 1
	done
}
idle || optional idle-host "icecream schedules no job on a busy host: $why"

conf () {
	v=$1
	shift
	"$KSRC/configure" --python="$v/bin/python" --pins="$T/pins.env" --mirror="$T/mirror" \
		--arch=cpu --jobs=2 --distribute=icecream KILN_BIN="$KILN_BIN" "$@"
}
imp () { "$1/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.scale(3), torchvision.op(1), torchaudio.op(3))' 2>&1; }
# remote FILE: how many compiles a daemon's log says it ran for others
remote () { r=$(grep -c "Remote compilation completed with exit code 0" "$1" 2>/dev/null); echo "${r:-0}"; }

# busy NAME N LINE: when node2 ran no job and the scheduler (its log from LINE on) found no
# host that was not busy,
# the remote checks of build NAME are the optional tier idle-host (the host got busy
# after the check above); the wiring checks stand
busy () {
	[ "$2" = 0 ] && sed -n "$3,\$p" "$I/scheduler.log" | grep -q "No suitable host found" || return 1
	optional_case idle-host "$1: the host was busy during the build: the scheduler found no host for its jobs and icecc built them locally"
}

toy_venv "$T/va"
mkdir -p "$T/a" && cd "$T/a" || exit 2
check "a: configure --distribute=icecream" conf "$T/va"
ICECC_TEST_SOCKET=$I/node1.sock ICECC_TEST_REMOTEBUILD=1 ICECC_PREFERRED_HOST=node2 ninja >"$T/a.log" 2>&1
same "a: ninja succeeds" 0 "$?"
[ -s "$T/a/build/logs/vision.wheel.log" ] || sed -n '1,40s/^/#   /p' "$T/a.log"
has "a: icecc took vision's compile to the scheduler" "$I/scheduler.log" "vision/csrc/ops.c"
n2=$(remote "$I/node2.log")
busy "a" "$n2" 1 || {
	same "a: node2 compiled the C extensions for node1 (in its chroot)" yes "$([ "$n2" -ge 3 ] && echo yes || echo no)"
	[ "$n2" -ge 3 ] || { grep -v 'broadcast\|announcement' "$I/scheduler.log" | tail -n 25 | sed 's/^/#   scheduler: /'; listcs | sed 's/^/#   listcs: /'; }
	has "a: the scheduler's jobs ran on node2" "$I/scheduler.log" "server=node2"
}
same "a: the stack imports" "30 110 33" "$(imp "$T/va")"

idle || optional idle-host "b: $why"
rm -rf "$T/va"
toy_venv "$T/va"
mkdir -p "$T/b" && cd "$T/b" || exit 2
check "b: configure --distribute=icecream --cache=ccache" conf "$T/va" --cache=ccache
before=$(remote "$I/node2.log") from=$(($(lines "$I/scheduler.log") + 1))
CCACHE_DIR=$T/ccb ICECC_TEST_SOCKET=$I/node1.sock ICECC_TEST_REMOTEBUILD=1 ICECC_PREFERRED_HOST=node2 ninja >"$T/b.log" 2>&1
same "b: ninja succeeds" 0 "$?"
n2=$(($(remote "$I/node2.log") - before))
busy "b" "$n2" "$from" || same "b: node2 compiled ccache's misses" yes "$([ "$n2" -ge 3 ] && echo yes || echo no)"
has "b: ccache ran first (misses counted)" "$T/b.log" "hits (0%)"
same "b: the stack imports" "30 110 33" "$(imp "$T/va")"
