"""listens.py [--wait[=SECONDS]] PID PORT: whether the process PID, or a process under it,
listens on the TCP port PORT, read from the kernel (/proc/net/tcp*, and the socket
inodes among the processes' fds) rather than by a connect that another process on the
port could answer. A server that kiln or a test starts on a port it chose is ready when
its own process listens there.

Without --wait: 0 when it listens, 1 when not (yet), 2 when PID is gone or a zombie.
With --wait: asks every 0.1 s; 0 as soon as it listens, 1 as soon as PID has ended (it
lost the port, or failed); with SECONDS, 2 when it did neither within them (a hang guard,
not a wait for readiness).

Used by ninja/steps/lib/cache.sh (scready: the sccache server of a wheel stage) and
tests/lib.sh (listens, waitlisten)."""
import os
import sys
import time


def state(pid):
    """the fields of /proc/PID/stat after the command name, or None when PID is gone"""
    try:
        with open("/proc/%s/stat" % pid) as f:
            s = f.read()
        return s[s.rindex(")") + 2:].split()
    except (OSError, ValueError):
        return None


def sockets(port):
    """the inodes ("socket:[N]") of the TCP sockets listening on port"""
    inodes = set()
    for t in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(t) as f:
                for x in (line.split() for line in list(f)[1:]):
                    if x[3] == "0A" and int(x[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add("socket:[%s]" % x[9])
        except OSError:
            pass
    return inodes


def tree(pid):
    """pid and every process under it"""
    procs, todo = set(), [pid]
    while todo:
        p = todo.pop()
        procs.add(p)
        for q in os.listdir("/proc"):
            if q.isdigit() and q not in procs and (state(q) or [0, 0])[1] == p:
                todo.append(q)
    return procs


def listening(pid, port):
    inodes = sockets(port)
    if not inodes:
        return False
    for p in tree(pid):
        try:
            fds = os.listdir("/proc/%s/fd" % p)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink("/proc/%s/fd/%s" % (p, fd)) in inodes:
                    return True
            except OSError:
                pass
    return False


def gone(pid):
    st = state(pid)
    return not st or st[0] in "ZX"


def main(argv):
    wait = None
    if argv and argv[0] == "--wait":
        wait = float("inf")
        argv.pop(0)
    elif argv and argv[0].startswith("--wait="):
        wait = float(argv.pop(0)[7:])
    if len(argv) != 2 or not argv[0].isdigit() or not argv[1].isdigit():
        sys.stderr.write("usage: listens.py [--wait[=SECONDS]] PID PORT\n")
        return 2
    pid, port = argv[0], int(argv[1])
    if wait is None:
        return 2 if gone(pid) else 0 if listening(pid, port) else 1
    t0 = time.monotonic()
    while not listening(pid, port):
        if gone(pid):
            return 1
        if time.monotonic() - t0 > wait:
            return 2
        time.sleep(0.1)
    return 0


sys.exit(main(sys.argv[1:]))
