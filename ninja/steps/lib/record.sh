# lib/record.sh: a component's build-info record (record) and the target environment's
# requirements.lock (lock). Sourced by the install, system, image and sdk steps.
# needs: lib/base.sh

# record W: this component's build-info record, then build-info.json
record () {
	mkdir -p "$B/info"
	{
		echo "COMPONENT=$c"
		[ -d "$src" ] && clean -- srcpin state "$src" 2>/dev/null | grep -E '^(URL|COMMIT|SERIES_DIGEST)='
		[ -f "$B/src/$c.fetched" ] && echo "FETCHED_FROM=$(cat "$B/src/$c.fetched")"
		[ -n "${REF:-}" ] && [ "$step" != system ] && echo "REF=$REF"
		[ "${REF:-}" = @torch ] && [ -f "$B/src/$c.derived" ] && cat "$B/src/$c.derived"
		if [ -n "$1" ]; then
			n=${1##*/}
			echo "WHEEL=$n"
			echo "VERSION=$(echo "$n" | cut -d- -f2)"
			echo "WHEEL_SHA256=$(sha256sum "$1" | cut -c1-64)"
		else
			echo "VERSION=$(clean -- "$PY" -c "import importlib.metadata as m; print(m.version('$DIST'))" 2>/dev/null || echo system)"
		fi
		# what its deps stage installed before its build: NAME==VERSION sha256:HEX ...
		if [ -f "$B/deps/$c.lock" ]; then
			echo "BUILD_REQUIREMENTS=$(sed 's/ --hash=/ /' "$B/deps/$c.lock" | tr '\n' ' ' | sed 's/ $//')"
			echo "BUILD_LOCK_SHA256=$(sha256sum <"$B/deps/$c.lock" | cut -c 1-64)"
		fi
		echo "ARCH=$ARCH_ARG"
		echo "PYTHON=$PY"
		echo "PY_ABI=$PY_ABI"
	} | kiln-stage kv -o "$B/info/$c.info"
	lock
	kiln-stage info -o "$B/build-info.json" "$B/info"
}

# lock: $B/requirements.lock, pip's --require-hashes form: every wheel kiln installed as
# NAME==VERSION --hash=sha256:... (the hash of the file in its build-info record), then
# the target environment's other packages with their exact versions as comments (kiln did
# not install them from a wheel it can hash)
lock () {
	clean -- "$PY" -c '
import importlib.metadata as md, os, re, sys
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
info, hashes = sys.argv[1], {}
for f in sorted(os.listdir(info)):
    if not f.endswith(".info"):
        continue
    kv = {}
    for l in open(os.path.join(info, f), encoding="utf-8", errors="surrogateescape"):
        k, _, v = l.rstrip("\n").partition("=")
        kv[k] = v.strip("\x27\"")
    if kv.get("WHEEL") and kv.get("WHEEL_SHA256"):
        hashes[norm(kv["WHEEL"].split("-")[0])] = kv["WHEEL_SHA256"]
# the build section: what the deps stages installed ($B/deps/C.lock), by whom
deps, built = os.path.join(info, "..", "deps"), {}
for f in sorted(os.listdir(deps)) if os.path.isdir(deps) else []:
    if f.endswith(".lock"):
        for l in open(os.path.join(deps, f), encoding="utf-8"):
            if l.strip():
                built.setdefault(l.strip(), []).append(f[:-5])
bnames = set(norm(l.split("==")[0]) for l in built)
have, other = [], []
for d in md.distributions():
    n = d.metadata["Name"]
    if not n:
        continue
    if norm(n) in hashes:
        have.append((norm(n), d.version))
    elif norm(n) not in bnames:
        other.append((norm(n), d.version))
print("# the target environment, locked by kiln (%s); install with" % sys.executable)
print("#   pip install --require-hashes --no-deps -r requirements.lock")
for n, v in sorted(set(have)):
    print("%s==%s --hash=sha256:%s" % (n, v, hashes[n]))
if built:
    print("# [build] the build requirements kiln installed before the builds (deps stages)")
    for l in sorted(built):
        print("%s  # build: %s" % (l, ", ".join(built[l])))
for n, v in sorted(set(other)):
    print("# %s==%s (not installed by kiln: no wheel hash)" % (n, v))
' "$B/info" >"$B/requirements.lock.$c.tmp" || die "cannot list the packages of $PY"
	mv -f "$B/requirements.lock.$c.tmp" "$B/requirements.lock"
}

