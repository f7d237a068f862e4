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
# load is 1000 when the host has no idle time (iceccd's own rule), the scheduler skips
# such nodes, and icecc would build locally only after waiting 4 minutes for a host (an
# hour when niced). Where node2 is still busy 30 s before a build, the rest of this file
# is the optional tier idle-host; when it gets busy during a build, the scheduler's first
# delay ends node2, so icecc builds the rest here at once, and that build's remote checks
# are that tier.
. "$KILN_SRC/tests/lib.sh"
need icecc iceccd icecc-scheduler ccache
[ "$(id -u)" = 0 ] || optional root "iceccd accepts remote jobs only where it can chroot (run as root)"
. "$KILN_SRC/tests/regress/graph-toy.inc"
I=$T/ice
mkdir -p "$I"
# the daemons drop to the icecc user: it must reach its environment folders
chmod 711 "$T" && chmod 1777 "$I" || exit 2
net=kiln$$
pids=
# the servers this file started (and has not reaped: their ids are still theirs)
at_exit 'for p in $pids; do kill $p 2>/dev/null; done; wait'
# sched PORT: the scheduler on PORT and PORT+1 (its text interface), in the background
sched () {
	ICECC_TESTS=1 ICECC_TEST_SCHEDULER_PORTS=$1:$(($1 + 2)) icecc-scheduler -p "$1" -n "$net" -vvv 2>"$I/scheduler.log" &
	SERVER_PID=$!
}
# ready when the scheduler itself listens on both its ports (lib.sh's startserver and
# waitlisten); one that lost either port to another process is started on others
i=0
until startserver 5 sched && waitlisten "$SERVER_PID" "$((SERVER_PORT + 1))"; do
	kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null
	i=$((i + 1))
	[ $i -lt 5 ] || { sed 's/^/#   /' "$I/scheduler.log"; notok "icecc-scheduler did not listen on two ports in a row"; exit 1; }
done
sp=$SERVER_PORT spid=$SERVER_PID
pids="$pids $spid"
# node1, the builder's daemon, takes no jobs from others (as in icecream's own tests: two
# daemons on one address must not send jobs to each other both ways), so it listens on no
# port; node2 takes jobs on a free port, ready when it listens there itself (lib.sh's
# startserver)
node () {
	: >"$I/node$n.log"
	ICECC_TESTS=1 ICECC_TEST_SCHEDULER_PORTS=$sp:$((sp + 2)) ICECC_TEST_SOCKET=$I/node$n.sock \
		ICECC_SCHEDULER=127.0.0.1:$sp iceccd -s "127.0.0.1:$sp" -n "$net" \
		-p "$1" -b "$I/env$n" -N node$n -m 2 -vvv $nodeopt 2>"$I/node$n.log" &
	SERVER_PID=$!
}
# node2up: node2 started (again), connected to the scheduler; sets n2pid
node2up () {
	n=2 nodeopt=
	startserver 5 node || { sed 's/^/#   /' "$I/node2.log"; notok "iceccd node2 did not start"; exit 1; }
	n2pid=$SERVER_PID pids="$pids $SERVER_PID"
	waitalive "$spid $n2pid" grep -q "Connected to scheduler" "$I/node2.log" ||
		{ sed 's/^/#   /' "$I/node2.log"; notok "iceccd node2 did not reach icecc-scheduler"; exit 1; }
}
n=1 nodeopt=--no-remote
node "$(freeport)"
n1pid=$SERVER_PID pids="$pids $SERVER_PID"
node2up
waitalive "$spid $n1pid" grep -q "Connected to scheduler" "$I/node1.log" ||
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

# icebuild LINE NAME: ninja with icecc aimed at node2, in the background. While it runs, the
# scheduler's log from LINE on is read as it grows: when the scheduler delays a job for want
# of a host and node2 is busy (load 1000: its host's CPUs are taken; icecc would wait 4
# minutes for a host, an hour when niced, and then build the job here), node2 is ended,
# and the scheduler gives its jobs back to the builder at once (scheduler.cpp: no daemon
# left that could ever take them). Sets brc, and ended=yes when it ended node2 (then the
# remote checks of build NAME are the optional tier idle-host; the wiring checks stand).
icebuild () {
	rm -f "$T/ended"
	ICECC_TEST_SOCKET=$I/node1.sock ICECC_TEST_REMOTEBUILD=1 ICECC_PREFERRED_HOST=node2 ninja >"$T/$2.log" 2>&1 &
	bp=$!
	tail -n +"$1" -f --pid="$bp" "$I/scheduler.log" | while IFS= read -r l; do
		case "$l" in *"No suitable host found, delaying"*) ;; *) continue ;; esac
		listcs | grep -q 'node2 .*load=\([0-9]\{1,3\}\)$' && continue
		kill "$n2pid" 2>/dev/null; : >"$T/ended"; break
	done &
	wp=$!
	wait "$bp"
	brc=$?
	wait "$wp"
	ended=no
	[ ! -e "$T/ended" ] || { ended=yes; wait "$n2pid" 2>/dev/null
		optional_case idle-host "$2: the host got busy during the build: node2 was ended so that icecc built the rest here at once"; }
}

toy_venv "$T/va"
mkdir -p "$T/a" && cd "$T/a" || exit 2
check "a: configure --distribute=icecream" conf "$T/va"
icebuild 1 a
same "a: ninja succeeds" 0 "$brc"
[ -s "$T/a/build/logs/vision.wheel.log" ] || sed -n '1,40s/^/#   /p' "$T/a.log"
has "a: icecc took vision's compile to the scheduler" "$I/scheduler.log" "vision/csrc/ops.c"
n2=$(remote "$I/node2.log")
[ "$ended" = yes ] || {
	same "a: node2 compiled the C extensions for node1 (in its chroot)" yes "$([ "$n2" -ge 3 ] && echo yes || echo no)"
	[ "$n2" -ge 3 ] || { grep -v 'broadcast\|announcement' "$I/scheduler.log" | tail -n 25 | sed 's/^/#   scheduler: /'; listcs | sed 's/^/#   listcs: /'; }
	has "a: the scheduler's jobs ran on node2" "$I/scheduler.log" "server=node2"
}
same "a: the stack imports" "30 110 33" "$(imp "$T/va")"

# node2 ended during a: started again for b
[ "$ended" = no ] || node2up
idle || optional idle-host "b: $why"
rm -rf "$T/va"
toy_venv "$T/va"
mkdir -p "$T/b" && cd "$T/b" || exit 2
check "b: configure --distribute=icecream --cache=ccache" conf "$T/va" --cache=ccache
before=$(remote "$I/node2.log") from=$(($(lines "$I/scheduler.log") + 1))
CCACHE_DIR=$T/ccb
export CCACHE_DIR
icebuild "$from" b
same "b: ninja succeeds" 0 "$brc"
n2=$(($(remote "$I/node2.log") - before))
[ "$ended" = yes ] || same "b: node2 compiled ccache's misses" yes "$([ "$n2" -ge 3 ] && echo yes || echo no)"
has "b: ccache ran first (misses counted)" "$T/b.log" "hits (0%)"
same "b: the stack imports" "30 110 33" "$(imp "$T/va")"
