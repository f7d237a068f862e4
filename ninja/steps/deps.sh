# deps.sh: C.deps: the build requirements the prepared tree declares, fetched, locked
# and installed.
# sources: lib/base.sh lib/tree.sh
. "$steps/lib/base.sh"
. "$steps/lib/tree.sh"

# step_deps: the build requirements the prepared tree declares (pyproject's
# [build-system] requires, requirements-build.txt, vLLM's requirements/build/FLAVOUR.txt,
# torch's requirements.txt: kiln-stage reqs), as wheels from the one index (--index-url,
# default pip's own) or --wheelhouse, never an extra index; downloaded into a staging
# folder first, so that a requirement the index lacks, an index error or a bad
# wheelhouse stops the stage before the target Python changes; then locked (name,
# version, sha256: $B/deps/C.lock, the build section of requirements.lock and
# build-info) and installed from those files only. The stage's ID is the lock's digest.
step_deps () {
	d=$B/deps
	mkdir -p "$d" || die "cannot create $d"
	rm -f "$d/$c.id"
	treesubdir "$src"
	step_deps_reqs
	step_deps_fetch
	step_deps_backend
	step_deps_install
	step_deps_record
}

step_deps_reqs () {
	# $B/deps/C.req: REQUIREMENT<TAB>FILE:LINE (what asked for it); what was left out
	# (kiln's own components, index options) goes to the log
	set -- --flavour="$FLAVOUR" --exclude="$EXCLUDE" --frontend
	[ "$RUNTIME" = yes ] && set -- "$@" --runtime
	kiln-stage reqs "$@" "$src${SUBDIR:+/$SUBDIR}" >"$d/$c.req.tmp" 2>"$d/$c.req.err" ||
		die "$(grep -v '^kiln-stage: note: ' "$d/$c.req.err" | sed 's/^kiln-stage: //' | tail -n 1)"
	sed 's/^kiln-stage: //' "$d/$c.req.err"
	mv -f "$d/$c.req.tmp" "$d/$c.req"
	echo "$(wc -l <"$d/$c.req") build requirements declared:"
	cat "$d/$c.req"
	step_deps_implied
}

# step_deps_implied: what kiln adds itself (the frontend, PEP 518's setuptools and wheel:
# "kiln (...)" lines) is taken from the target Python when it came with it (a venv with
# Debian's setuptools keeps it: no index needed); one a deps stage installed (in a
# $B/deps/*.lock) is fetched again, so the answer does not depend on which stage ran
# first. What the tree declares always comes from the index.
# $B/deps/C.want: the requirements to fetch
step_deps_implied () {
	clean -- "$PY" -c '
import glob, importlib.metadata as md, os, re, sys
canon = lambda n: re.sub(r"[-_.]+", "-", n).lower()
ours = set()
for f in glob.glob(os.path.join(sys.argv[2], "*.lock")):
    ours |= set(canon(l.split("==")[0]) for l in open(f, encoding="utf-8") if "==" in l)
for l in open(sys.argv[1], encoding="utf-8"):
    req, _, frm = l.rstrip("\n").partition("\t")
    name = re.match(r"[A-Za-z0-9._-]+", req).group(0)
    if frm.startswith("kiln (") and canon(name) not in ours:
        try:
            print("%s: the target Python came with %s %s; not installed" % (req, name, md.version(name)), file=sys.stderr)
            continue
        except md.PackageNotFoundError:
            pass
    print(req)
' "$d/$c.req" "$d" >"$d/$c.want" || die "$PY cannot read its own packages"
}

step_deps_fetch () {
	st=$d/$c.staging
	rm -rf "$st" && mkdir -p "$st" || die "cannot create $st"
	[ -s "$d/$c.want" ] || return 0
	if [ -n "$WHEELHOUSE" ]; then
		kiln-stage lock "$WHEELHOUSE" >/dev/null 2>"$d/$c.err" ||
			die "--wheelhouse: $(sed 's/^kiln-stage: //' "$d/$c.err")"
		from="--wheelhouse=$WHEELHOUSE"
		set -- --no-index --find-links "$WHEELHOUSE"
	elif [ -n "$INDEX" ]; then
		from="--index-url=$INDEX"
		set -- --index-url "$INDEX"
	else
		from="pip's own index"
		set --
	fi
	# wheels only: an sdist would be built here, by code the lock cannot pin
	clean -- "$PY" -m pip download --disable-pip-version-check --only-binary=:all: --retries 1 \
		--timeout 60 "$@" -d "$st" -r "$d/$c.want" >"$d/$c.pip.log" 2>&1 || step_deps_why "$from"
	cat "$d/$c.pip.log"
}

# step_deps_why FROM: pip could not download: one line, naming the requirement and the
# file that asked for it, or what the index answered
step_deps_why () {
	cat "$d/$c.pip.log"
	r=$(sed -n 's/^ERROR: No matching distribution found for //p' "$d/$c.pip.log" | head -n 1)
	if [ -n "$r" ]; then
		n=$(printf '%s\n' "$r" | sed 's/[^A-Za-z0-9._-].*//; s/[-_.][-_.]*/-/g' | tr 'A-Z' 'a-z')
		# pip says "no matching distribution" for an index that failed too: ask it
		if [ -n "$INDEX" ] && [ -z "$WHEELHOUSE" ]; then
			u=${INDEX%/}/$n/
			a=$(step_deps_probe "$u")
			case "$a" in ok|missing) ;; *) die "$1 $a for $u; nothing was installed" ;; esac
		fi
		# the file that asked: the requirement line whose canonical name is the one
		asked=$(awk -F '\t' -v r="$r" 'function canon(s) { s = tolower(s); sub(/[^a-z0-9._-].*/, "", s); gsub(/[-_.]+/, "-", s); return s }
			canon($1) == canon(r) { print $2; exit }' "$d/$c.req")
		[ -n "$asked" ] || asked="a requirement of one in $d/$c.req"
		die "no wheel for $r in $1 (asked by $asked); nothing was installed"
	fi
	die "pip could not download the build requirements from $1: $(grep '^ERROR' "$d/$c.pip.log" | tail -n 1); nothing was installed"
}

# step_deps_probe URL: what an index answers for a project page: ok (a page), missing
# (404), or what went wrong ("answered HTTP 503", an HTML page without a single link:
# a proxy's or a login page, not a PEP 503 project page ...), one line
step_deps_probe () {
	clean -- "$PY" -c '
import re, sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=30)
    t = r.headers.get("Content-Type", "")
    if "json" in t:
        print("ok")
    elif "html" in t:
        b = r.read(1 << 20).decode("utf-8", "replace")
        print("ok" if re.search(r"<a\s[^>]*href=", b, re.I) else
              "answered an HTML page without links (%s), not a package index page" %
              re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", b)).strip()[:60])
    else:
        print("answered %s, not a package index page" % (t or "no content type"))
except urllib.error.HTTPError as e:
    print("missing" if e.code == 404 else "answered HTTP %d" % e.code)
except Exception as e:
    print("cannot be reached (%s)" % e)
' "$1" 2>/dev/null || echo "cannot be asked"
}

# step_deps_backend: a PEP 517 backend must be importable once the build requirements are
# in: the target Python has its module, or a wheel this stage fetched holds it; else the
# stage stops before it installs anything (kiln-stage reqs --frontend already refused a
# pyproject.toml that names no backend, or one no frontend can import)
step_deps_backend () {
	how=$(kiln-stage backend "$src${SUBDIR:+/$SUBDIR}" 2>"$d/$c.err") || die "$(sed 's/^kiln-stage: //' "$d/$c.err")"
	case "$how" in "build "*) ;; *) return 0 ;; esac
	m=${how#build }
	m=${m%%[.:]*}
	clean -- "$PY" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)' "$m" 2>/dev/null &&
		return 0
	kiln-stage backend --wheels="$st" "$src${SUBDIR:+/$SUBDIR}" >/dev/null 2>"$d/$c.err" ||
		die "$(sed 's/^kiln-stage: //' "$d/$c.err"); nothing was installed"
}

step_deps_install () {
	# the lock of the staged wheels (kiln-stage lock: one file per project), then those
	# files only into the target Python (--no-index --no-deps --require-hashes). A failure
	# part way rolls back what this stage installed
	kiln-stage lock "$st" >"$d/$c.lock.new" 2>"$d/$c.err" || die "$(sed 's/^kiln-stage: //' "$d/$c.err")"
	if [ ! -s "$d/$c.lock.new" ]; then
		echo "no build requirements to install"
		return 0
	fi
	clean -- "$PY" -m pip list --format=freeze --disable-pip-version-check >"$d/$c.before" 2>/dev/null ||
		die "$PY -m pip does not run"
	clean -- "$PY" -m pip install --disable-pip-version-check --no-index --no-deps --require-hashes \
		--find-links "$st" -r "$d/$c.lock.new" || step_deps_rollback
}

# step_deps_rollback: the install failed part way: what it added or changed is
# uninstalled (the environment as before, except a package it replaced: named)
step_deps_rollback () {
	clean -- "$PY" -m pip list --format=freeze --disable-pip-version-check >"$d/$c.after" 2>/dev/null || :
	new=$(grep -vxF -f "$d/$c.before" "$d/$c.after" | sed 's/==.*//' | tr '\n' ' ' | sed 's/ $//')
	[ -z "$new" ] || clean -- "$PY" -m pip uninstall -y -q --disable-pip-version-check $new || :
	gone=
	for n in $new; do
		o=$(grep -i "^$n==" "$d/$c.before") && gone="$gone $o"
	done
	die "pip could not install the build requirements (above); removed again: ${new:-nothing}${gone:+; replaced and not restored:$gone}"
}

step_deps_record () {
	# the lock, the staged wheels beside it ($B/deps/C.wheels: a wheelhouse for another
	# build folder), the ID last
	rm -rf "$d/$c.wheels" && mv "$st" "$d/$c.wheels" || die "cannot keep the wheels in $d/$c.wheels"
	mv -f "$d/$c.lock.new" "$d/$c.lock"
	echo "locked $(grep -c . "$d/$c.lock") build requirements in $d/$c.lock:"
	cat "$d/$c.lock"
	sha256sum <"$d/$c.lock" | cut -c 1-64 >"$d/$c.id.tmp" && mv -f "$d/$c.id.tmp" "$d/$c.id"
}
