# srcpin reads the CA certificates only when it contacts a remote: a checkout, state or a
# fetch from a local mirror never opens the bundle libgit2 was built to load, and a fetch
# over https opens it before it connects (traced with strace).
. "$KILN_SRC/tests/lib.sh"
need git strace
. "$KILN_SRC/tools/srcpin/tests/srcpin.inc"
git init -q "$T/up" && (cd "$T/up" && echo a >a.txt && git add . && git commit -qm a && git tag v1)
# traced CMD...: run CMD under strace (the syscalls in $T/trace; LeakSanitizer cannot run
# under ptrace, so leaks are left to the other srcpin tests)
traced () { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=openat,open,stat,newfstatat,statx,connect -o "$T/trace" "$@" >"$T/.out" 2>"$T/.err"; rc=$?; }

traced srcpin fetch t "file://$T/up" v1 --cache="$T/c"
same "a fetch from a local repository works under strace" 0 "$rc"
# the bundle libgit2 looks for at init: the certificate file or folder it stats
bundle=$(grep -E 'stat[a-z]*\(' "$T/trace" | grep -oE '"[^"]*(\.crt|\.pem|/certs)"' | head -1 | tr -d '"')
if [ -z "$bundle" ]; then
	optional_case tls "this libgit2 loads no CA bundle at init (not built on mbedTLS): nothing to put off"
	exit 0
fi
lacks "a local fetch does not open the CA bundle" "$T/trace" "\"$bundle\", O_RDONLY"
traced srcpin checkout t --commit v1 --into "$T/s" --cache="$T/c"
same "checkout works" 0 "$rc"
lacks "a checkout does not open the CA bundle" "$T/trace" "\"$bundle\", O_RDONLY"
traced srcpin state "$T/s"
lacks "state does not open the CA bundle" "$T/trace" "\"$bundle\", O_RDONLY"

# a remote over https: nothing listens on the port, so the fetch fails after it connects
# (should another process take the port meanwhile, the fetch fails after its handshake)
port=$(freeport)
traced srcpin fetch r "https://127.0.0.1:$port/r.git" main --cache="$T/c"
same "a fetch from a closed https port fails with exit 2" 2 "$rc"
has "the error names the URL" "$T/.err" "https://127.0.0.1:$port/r.git"
opened=$(grep -n "\"$bundle\", O_RDONLY" "$T/trace" | head -1 | cut -d: -f1)
conn=$(grep -n "connect(.*$port" "$T/trace" | head -1 | cut -d: -f1)
if [ -n "$opened" ] && [ -n "$conn" ] && [ "$opened" -lt "$conn" ]; then
	ok "an https fetch loads the CA bundle before it connects"
else
	notok "an https fetch loads the CA bundle before it connects (bundle at line ${opened:-none}, connect at ${conn:-none})"
	sed -n '1,40s/^/#   /p' "$T/trace"
fi
