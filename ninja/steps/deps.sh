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
# $B/deps/C.want: the requirements to fetch (none, without asking $PY, when the tree
# declares none: most trees' deps stages, each a Python start-up of 0.25 CPU s)
step_deps_implied () {
	if [ ! -s "$d/$c.req" ]; then
		: >"$d/$c.want" || die "cannot write $d/$c.want"
		return 0
	fi
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
	# the lock of the staged wheels (kiln-stage lock: one file per project, each wheel
	# opened as pip will install it: a member outside its folders stops here), then those
	# files only into the target Python (--no-index --no-deps --require-hashes), always
	# reinstalled (--force-reinstall: a wheel whose bytes changed under one name and
	# version replaces the installed one, so the lock is what is installed). What the
	# wheels will write is saved first ($d/$c.undo); a failure part way, or a run killed
	# during the install (found by the next run), puts it all back
	kiln-stage lock "$st" >"$d/$c.lock.new" 2>"$d/$c.err" ||
		die "$(sed 's/^kiln-stage: //' "$d/$c.err"); nothing was installed"
	if [ ! -s "$d/$c.lock.new" ]; then
		echo "no build requirements to install"
		return 0
	fi
	if [ -e "$d/$c.undo/manifest.json" ]; then
		step_deps_undo restore "$d/$c.undo" || die "cannot put back what an interrupted install changed ($d/$c.undo)"
		echo "put back what an interrupted install of $c's build requirements changed"
	fi
	clean -- "$PY" -m pip list --format=freeze --disable-pip-version-check >"$d/$c.before" 2>/dev/null ||
		die "$PY -m pip does not run"
	step_deps_undo save "$d/$c.undo" || die "cannot save what the install will change ($d/$c.undo)"
	clean -- "$PY" -m pip install --disable-pip-version-check --no-index --no-deps --require-hashes \
		--force-reinstall --find-links "$st" -r "$d/$c.lock.new" || step_deps_rollback
	rm -rf "$d/$c.undo"
}

# step_deps_undo save|restore DIR: save: every path the staged wheels ($st) will write
# (each top-level entry of purelib/platlib/scripts they install, their .data files, the
# bytecode of a top-level module, their console scripts, the files of an installed
# version they replace) as it is now, hard-linked into DIR (pip unlinks before it writes
# and renames what it uninstalls, so the links keep the old bytes), with DIR/manifest.json;
# restore: each of those paths removed and what was there put back
step_deps_undo () {
	clean -- "$PY" -c '
import configparser, importlib.metadata as md, importlib.util, json, os, re, shutil, sys, sysconfig, zipfile
mode, st, undo = sys.argv[1:4]
paths = sysconfig.get_paths()
canon = lambda n: re.sub(r"[-_.]+", "-", n).lower()
def roots():
    r = set()
    for w in sorted(os.listdir(st)):
        if not w.endswith(".whl"):
            continue
        z = zipfile.ZipFile(os.path.join(st, w))
        names = z.namelist()
        info = [n for n in names if re.fullmatch(r"[^/]+\.dist-info/WHEEL", n)]
        pure = not info or re.search(rb"(?im)^root-is-purelib:\s*true\s*$", z.read(info[0])) is not None
        base = paths["purelib" if pure else "platlib"]
        for n in names:
            p = n.rstrip("/").split("/")
            if len(p) > 2 and p[0].endswith(".data"):
                key = {"headers": "include"}.get(p[1], p[1])
                if key in paths:
                    r.add(os.path.join(paths[key], *(p[2:3] if key in ("purelib", "platlib", "scripts") else p[2:])))
            elif p[0]:
                r.add(os.path.join(base, p[0]))
                if len(p) == 1 and p[0].endswith(".py"):
                    r.add(importlib.util.cache_from_source(os.path.join(base, p[0])))
        for n in names:
            if re.fullmatch(r"[^/]+\.dist-info/entry_points\.txt", n):
                c = configparser.ConfigParser(delimiters=("=",), interpolation=None)
                c.read_string(z.read(n).decode("utf-8", "replace"))
                for sec in ("console_scripts", "gui_scripts"):
                    if c.has_section(sec):
                        r |= {os.path.join(paths["scripts"], k) for k in c[sec]}
        try:
            r |= {os.path.normpath(str(f.locate())) for f in (md.distribution(canon(w.split("-")[0])).files or [])}
        except md.PackageNotFoundError:
            pass
    r = sorted(r)
    return [p for i, p in enumerate(r) if not any(p.startswith(q + os.sep) for q in r[:i])]
def keep(s, d):
    try:
        os.link(s, d)
    except OSError:
        shutil.copy2(s, d, follow_symlinks=False)
def gone(p):
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p)
    elif os.path.lexists(p):
        os.unlink(p)
if mode == "save":
    shutil.rmtree(undo, ignore_errors=True)
    os.makedirs(undo)
    man = []
    for i, p in enumerate(roots()):
        d = os.path.join(undo, str(i))
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.copytree(p, d, symlinks=True, copy_function=keep)
        elif os.path.lexists(p):
            keep(p, d)
        man.append([p, str(i) if os.path.lexists(d) else None])
    with open(os.path.join(undo, "manifest.json.tmp"), "w") as f:
        json.dump(man, f)
    os.rename(os.path.join(undo, "manifest.json.tmp"), os.path.join(undo, "manifest.json"))
else:
    man = json.load(open(os.path.join(undo, "manifest.json")))
    for p, i in man:
        gone(p)
    for p, i in man:
        if i is not None:
            os.makedirs(os.path.dirname(p), exist_ok=True)
            shutil.move(os.path.join(undo, i), p)
    shutil.rmtree(undo)
' "$1" "$st" "$2"
}

# step_deps_rollback: the install failed part way: every path it wrote is put back as it
# was (step_deps_undo), so nothing of a failed install stays importable
step_deps_rollback () {
	clean -- "$PY" -m pip list --format=freeze --disable-pip-version-check >"$d/$c.after" 2>/dev/null || :
	new=$(grep -vxF -f "$d/$c.before" "$d/$c.after" | sed 's/==.*//' | tr '\n' ' ' | sed 's/ $//')
	step_deps_undo restore "$d/$c.undo" ||
		die "pip could not install the build requirements (above), and what it changed could not be put back from $d/$c.undo"
	die "pip could not install the build requirements (above); removed again: ${new:-nothing} (every file the install wrote is as it was before)"
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
