#!/bin/sh
# stack-steps.sh STEP COMPONENT SETTINGS: the work of one stack stage. kiln-stage runs it
# (with KILN_STAGE, KILN_STAGE_OUT, the log as stdout and stderr) only when the stage's key
# changed. SETTINGS is $builddir/stack.env; the stage's key file holds its inputs. Each
# step_NAME function is hashed into its own stages' keys: editing one reruns only those.
#
# Nothing here reads SETTINGS or the key file as shell text: `kiln-stage env SETTINGS KEY
# -- sh stack-steps.sh ...` (the stage rule in stack.ninja) reads both with kv.c and hands
# each KEY=VALUE over as the environment variable KILN_K_KEY, with the names in KILN_KEYS.
# Below, each becomes a plain shell variable (B, PY, URL, REF, ...), not exported; a
# value is only ever expanded inside double quotes by the steps, never parsed.
set -eu
# lists ($ENV, $MODULES, $PROFILES ...) are split into words, never expanded as globs
# (PROFILES at "|", the others at white space)
set -f
step=$1 c=$2
# the stamp, for step_imagecheck (the image rule passes it after SETTINGS)
stampf=${4:-}
for k in ${KILN_KEYS:?run by kiln-stage env (see ninja/stack.ninja)}; do
	case "$k" in
	[A-Za-z_]*) ;;
	*) echo "kiln: bad setting name '$k'" >&2; exit 2 ;;
	esac
	unset "$k"
	eval "$k=\${KILN_K_$k}"
	unset "KILN_K_$k"
done
unset KILN_KEYS k
PATH=$KBIN:$PATH
export PATH
# srcpin reads the mirror folder from its environment: a path with spaces stays whole
if [ -n "$MIRROR" ]; then SRCPIN_MIRROR=$MIRROR; export SRCPIN_MIRROR; fi
src=$B/src/$c
# the git mirrors: one per repository in --git-cache, shared by every build folder
# (srcpin locks a mirror while it fetches); an older stack.env has none: the build folder's
GITC=${GIT_CACHE:-$B/git}
say () { printf 'kiln: %s\n' "$*" >&2; }
# a build that reached for the network says so first (ng_blame), whatever failed then
die () { ng_blame; say "$KILN_STAGE: $*"; exit 1; }
# the steps' $(mirror) adds no argument any more: SRCPIN_MIRROR above says it
mirror () { return 0; }

# submodules: srcpin's --submodules for the src and patch steps, unless C_SUBMODULES=no
# (the key's SUBMODULES line): then the submodule folders stay empty (flash_attn's
# cutlass, composable_kernel and third_party/aiter, which its Triton AMD build does not
# read; AITER comes as the aiter component)
submodules () { [ "${SUBMODULES:-yes}" = no ] || echo --submodules; }

# torchpin: C_REF=@torch, the pin torch's own source tree gives C (torch.patch ran
# first): AOTriton's commit from cmake/External/aotriton.cmake (or, in older trees,
# .ci/docker/aotriton_version.txt), triton's from .ci/docker/ci_commit_pins/triton.txt.
# Prints the commit; $B/src/C.derived records it and where it came from.
torchpin () {
	t=$B/src/torch
	case "$c" in
	aotriton)
		f=cmake/External/aotriton.cmake
		r=$(sed -n 's/^[[:space:]]*set(__AOTRITON_CI_COMMIT "\([0-9a-f]\{7,40\}\)").*/\1/p' "$t/$f" 2>/dev/null | head -n 1)
		if [ -z "$r" ] && [ -f "$t/.ci/docker/aotriton_version.txt" ]; then
			f=.ci/docker/aotriton_version.txt
			r=$(sed -n 4p "$t/$f" | tr -d ' \r')
		fi ;;
	triton)
		f=.ci/docker/ci_commit_pins/triton.txt
		r=$(head -n 1 "$t/$f" 2>/dev/null | tr -d ' \r') ;;
	*) die "${c}_REF=@torch: torch's tree pins only aotriton and triton" ;;
	esac
	case "$r" in
	''|*[!0-9a-f]*) die "${c}_REF=@torch: no commit for $c in torch's $f ($t/$f); pin ${c}_REF yourself" ;;
	esac
	printf 'REF_RESOLVED=%s\nREF_FROM=torch:%s\n' "$r" "$f" >"$B/src/$c.derived"
	say "${c}_REF=@torch: $r (torch's $f)"
	printf '%s\n' "$r"
}

step_src () {
	# debsrc:PACKAGE/VERSION: a Debian source package made into a local git mirror
	# (ninja/debsrc.sh), unless --mirror already holds this component
	url=$URL
	case "$URL" in
	debsrc:*)
		if [ -z "$MIRROR" ] || [ ! -d "$MIRROR/$c.git" ]; then
			pv=${URL#debsrc:}
			sh "$KILN_SRC/ninja/debsrc.sh" "${pv%%/*}" "${pv#*/}" "$B/debsrc/$c.git" >/dev/null ||
				die "could not make a git mirror of Debian's source package ${pv%%/*} ${pv#*/} (above)"
			url=$B/debsrc/$c.git
		fi ;;
	esac
	# fetch and checkout in one srcpin run (one libgit2 start); a commit other than the
	# pin's SHA stops it (exit 1) before the tree is touched
	rc=0
	commit=$(clean -- srcpin checkout "$c" "$url" "$REF" ${SHA:+"--expect=$SHA"} --into "$src" \
		$(submodules) --force --cache="$GITC" $(mirror)) || rc=$?
	if [ "$rc" = 1 ] && [ -n "$SHA" ]; then
		commit=$(clean -- srcpin fetch "$c" "$url" "$REF" --offline --cache="$GITC" $(mirror))
		die "$REF of $URL is $commit, but the pin expects $SHA (update ${c}_SHA, or pin the commit)"
	fi
	[ "$rc" = 0 ] || die "srcpin could not fetch $REF from $url"
	printf '%s %s\n' "$URL" "$commit" >"$B/src/$c.id"
	# where the objects came from; build-info records it beside the URL
	srcfrom "$url"
	printf '%s\n' "$from" >"$B/src/$c.fetched"
	echo "fetched $commit from $from"
}

# srcfrom URL: sets from to where srcpin takes C's objects from: the --mirror copy it uses
# for the pin's URL (the order of srcpin(1)), or URL itself
srcfrom () {
	from=$1
	[ -n "$MIRROR" ] || return 0
	u=${URL#*://}; u=${u%/}; u=${u%.git}
	for d in "$MIRROR/$c.git" "$MIRROR/$c" "$MIRROR/$u.git" "$MIRROR/$u" "$MIRROR/${u#*/}.git" \
		"$MIRROR/${u#*/}" "$MIRROR/${u##*/}.git" "$MIRROR/${u##*/}"; do
		[ -e "$d" ] && { from=$d; return 0; }
	done
}

# srcmoves: whether the pin names a ref upstream may move (a tag or a branch): not a full
# commit, not one fixed by C_SHA (a moved tag then fails the pin's check), not debsrc:
srcmoves () {
	case "$URL:$REF" in
	debsrc:*|*:@torch) return 1 ;;
	esac
	[ -z "$SHA" ] && ! printf '%s' "$REF" | grep -qx '[0-9a-f]\{40\}'
}

# step_srccheck, step_srcwatch: not a stage's steps: the src rule (ninja/stack.ninja) runs
# srccheck before kiln-stage run and srcwatch after it, each time ninja runs a C.src edge.
# A tag or branch pin names whatever commit upstream gives it now: srccheck asks upstream
# (srcpin fetch, which says a moved tag in one line) and, when the commit is not the one
# the stamp's ID records, removes the stamp with that line as the reason (STAMP.why, the
# stage summary's note), so that the stage checks out the new commit and its new ID reruns
# the stages under it. A fetch that fails removes the stamp too: the stage's own fetch
# then says what is wrong (a tag deleted upstream), never nothing. (Two ninja runs in one
# build folder may check at once: their files are their own, by process id.)
step_srccheck () {
	KILN_STAGE=$c.src
	st=${stampf:?srccheck STEP COMP SETTINGS STAMP}
	[ -f "$st" ] && srcmoves || return 0
	# a stamp made for other inputs (a pin bumped): kiln-stage run says why and reruns it
	kiln-stage run -n --key="$B/keys/$c.src" --stamp="$st" "$c.src" 2>/dev/null || return 0
	id=$(sed -n 's/^ID=//p' "$st" | tr -d "\"'")
	if now=$(clean -- srcpin fetch "$c" "$URL" "$REF" --cache="$GITC" 2>"$st.err.$$"); then
		why=$(sed -n 's/^srcpin: \(.*moved upstream: .*\)/\1/p' "$st.err.$$" | head -n 1)
		grep -v '^srcpin: .*moved upstream: ' "$st.err.$$" >&2 || :
		[ "$now" != "${id##* }" ] || { rm -f "$st.err.$$"; return 0; }
		why=${why:-"$REF of $URL is now $now, not ${id##* }"}
	else
		why="srcpin could not fetch $REF again: $(tail -n 1 "$st.err.$$")"
	fi
	rm -f "$st.err.$$"
	printf '%s\n' "$why" >"$st.why"
	rm -f "$st"
}

# step_srcwatch writes the edge's depfile ($B/src/C.ref.d): the ref file of the pinned tag
# or branch in the git cache's mirror and in the repository on this machine it is fetched
# from (a path, file://, --mirror), so that ninja runs this edge again when the ref moves
# there, and a plain no-op stays a no-op otherwise. A tag the repository keeps packed is
# watched through packed-refs and refs/tags/, where git writes a moved one loose.
step_srcwatch () {
	st=${stampf:?srcwatch STEP COMP SETTINGS STAMP}
	refs=
	if srcmoves; then
		srcfrom "$URL"
		from=${from#file://}
		[ ! -d "$from/.git" ] || from=$from/.git
		case "$from" in
		/*) refs=$(watchref "$from" packed-refs refs/tags) ;;
		esac
		refs="$refs
$(watchref "$GITC/$c.git")"
	fi
	# one path a line; kiln-stage depfile leaves out one that ninja's depfile syntax
	# cannot name (a quote, backtick, ';' or ':' in it): a repository in such a folder is
	# not watched; in such a build folder (-k) it writes none (the edge has no depfile)
	IFS='
'
	# shellcheck disable=SC2086
	kiln-stage depfile -k -o "$B/src/$c.ref.d" "$st" $refs
	unset IFS
}
# watchref GITDIR [FILE...]: the path of REF's loose ref file in GITDIR (REF as given when
# it is a full name, else the tag or else the branch); when there is none, the FILEs of
# GITDIR that are there; one a line (a path holding a newline is left out)
watchref () {
	g=$1; shift
	case "$g" in *'
'*) return 0 ;; esac
	for r in "$REF" "refs/tags/$REF" "refs/heads/$REF"; do
		case "$r" in
		refs/*) [ ! -f "$g/$r" ] || { printf '%s\n' "$g/$r"; return 0; } ;;
		esac
	done
	for r; do [ ! -e "$g/$r" ] || printf '%s\n' "$g/$r"; done
}

step_patch () {
	# back to the pinned commit, pristine, then the series: an edited patch is never
	# applied over its older self. A pristine tree may still carry an old series (its
	# SERIES_DIGEST): when this stage wants none, that tree is checked out afresh too
	# (srcpin patch itself starts afresh when it is given another series). A tree the
	# hipify stage hipified gives hipify-wrap's files back first (--undo: into its state
	# folder in .git, where checkout --force does not reach), so that stage puts back each
	# output whose bytes it makes again, mtime kept: compilers and caches see it unchanged
	if [ -f "$src/.git/kiln-hipify/manifest" ]; then
		clean -- hipify-wrap --undo "$src" || die "hipify-wrap --undo $src failed (above)"
	fi
	st=$(clean -- srcpin state "$src") || die "$src is not a srcpin checkout; run ninja $c.src"
	commit=$(printf '%s\n' "$st" | sed -n 's/^COMMIT=//p')
	[ -n "$commit" ] || die "$src is not a srcpin checkout; run ninja $c.src"
	have=$(printf '%s\n' "$st" | sed -n 's/^SERIES_DIGEST=//p')
	if ! printf '%s\n' "$st" | grep -qx 'PRISTINE=yes' || { [ "$SERIES" = none ] && [ -n "$have" ]; }; then
		clean -- srcpin checkout "$c" --commit "$commit" --into "$src" $(submodules) --force --cache="$GITC" $(mirror)
	fi
	if [ "$SERIES" != none ]; then
		clean -- srcpin patch "$src" "$SERIES_FILE" 2>"$B/src/$c.patch.err" || {
			cat "$B/src/$c.patch.err"
			die "$(sed -n 's/^srcpin: //p' "$B/src/$c.patch.err" | tail -n 1) [release $RELEASE; the series is made for ${RANGE:-every release}]: upstream may already carry this patch; drop it from $SERIES_FILE or move it to the folder of the releases it is for"
		}
	fi
	clean -- srcpin state "$src" | grep -E '^(URL|COMMIT|SERIES_DIGEST)=' | tr '\n' ' ' >"$B/src/$c.id"
	echo >>"$B/src/$c.id"
}

step_hipify () {
	# the patch stage left the tree pristine + series; --reset lets hipify-wrap put it
	# back the same way (srcpin checkout, then the series) before it hipifies again
	set -- --project="$PROJECT" --python="$PY" --reset --log "$B/logs/$c.hipify-run.log"
	[ "$SERIES" != none ] && set -- "$@" --series="$SERIES_FILE"
	if [ "$PROJECT" = generic ]; then
		[ -n "$CMD" ] || die "${c}_HIPIFY=generic needs ${c}_HIPIFY_CMD, the command that hipifies the tree"
		clean -- hipify-wrap "$@" "$src${SUBDIR:+/$SUBDIR}" -- sh -c "$CMD"
	else
		clean -- hipify-wrap "$@" "$src${SUBDIR:+/$SUBDIR}"
	fi
}

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

# step_wheel: one wheel from the prepared tree, in named pieces (step_wheel_NAME, each
# part of the wheel stages' RULE, no other's): the work tree, the version, the prefix
# maps, the build's settings, the compiler cache, the nvcc wrapper, the distributed
# compiler, the build backend, the requirements check, and the build itself. The pieces
# hand envclean's options on through $wargs (one argument a line; no value holds a
# newline: configure refuses them), read into "$@" before the build.
step_wheel () {
	out=$KILN_STAGE_OUT
	treesubdir "$src"
	worktree
	wargs=$work.home/args
	: >"$wargs" || die "cannot write $wargs"
	step_wheel_version
	step_wheel_maps
	step_wheel_settings
	step_wheel_cache
	step_wheel_nvcc
	step_wheel_hip
	step_wheel_distribute
	step_wheel_offline
	step_wheel_aotriton
	step_wheel_triton
	for e in $ENV; do step_wheel_arg --set "$e"; done
	step_wheel_backend
	set --
	while IFS= read -r a; do set -- "$@" "$a"; done <"$wargs"
	step_wheel_requirements "$@"
	step_wheel_run "$@"
	netguard_stop
	cd "$B" && rm -rf "$work" "$work.home"
	ls "$out"
}

# step_wheel_arg ARG...: envclean options for the build, kept in $wargs
step_wheel_arg () {
	printf '%s\n' "$@" >>"$wargs"
}

# worktree: the fresh private copy of the prepared tree a build step works in ($work,
# $wroot, $dir, $commit), for the wheel and the CMake steps alike
worktree () {
	# The build starts from a tree that is exactly the key: a fresh private copy of the
	# prepared source (pristine + series + hipify). It writes only there and into $out, so
	# nothing of an earlier build (setuptools' build/, *.egg-info, a CMake cache) reaches
	# this one, whatever the build tool, and $src stays pristine. Speed comes from the
	# compiler cache (--cache=), whose paths are stable: the copy is always $B/work/$c.
	# With --work-dir the copy is WORK_DIR/$c for every build folder (nvcc names internal
	# symbols after the source's real path): one build at a time uses it, through a lock
	# held until this step ends, and verify rebuilds there too. Without it the copy is
	# $B/work/$c, and verify rebuilds beside it ($c.verify), which also proves that the
	# bytes do not depend on the folder.
	if [ -n "${WORK_DIR:-}" ]; then
		wroot=$WORK_DIR work=$WORK_DIR/$c
		mkdir -p "$wroot" || die "cannot create --work-dir $wroot"
		[ -d "$wroot" ] && [ ! -L "$wroot" ] && [ -O "$wroot" ] || die "--work-dir $wroot is not a folder of yours"
		exec 9>>"$wroot/.$c.lock" || die "cannot open the lock $wroot/.$c.lock"
		if ! flock -n 9; then
			say "waiting for another build in $work"
			flock 9 || die "cannot lock $wroot/.$c.lock"
		fi
		say "building in $work (--work-dir)"
	else
		wroot=$B/work work=$B/work/$c
		[ -n "${KILN_STAGE_VERIFY:-}" ] && work=$B/work/$c.verify
	fi
	rm -rf "$work" "$work.home" || die "cannot remove the old build tree $work"
	mkdir -p "$work" "$work.home" || die "cannot create $work"
	cp -a --reflink=auto "$src/." "$work/" || die "cannot copy $src to $work"
	dir=$work${SUBDIR:+/$SUBDIR}
	commit=$(clean -- srcpin state "$src" | sed -n 's/^COMMIT=//p')
}

step_wheel_version () {
	# SOURCE_DATE_EPOCH: the pinned commit's time, so archives and embedded dates are a
	# function of the pin (git reads the checkout's objects; 1980-01-01 without git)
	sde=$(git --git-dir="$src/.git" show -s --format=%ct "$commit" 2>/dev/null) || sde=
	case "$sde" in ''|*[!0-9]*) sde=315532800; say "no commit time from git; SOURCE_DATE_EPOCH=$sde" ;; esac

	# the version: a release plus a local label saying how it was built. The release is
	# the pinned tag when it is a version (v0.14.1 -> 0.14.1; upstreams leave version.txt
	# at 0.14.1a0 on their release branches and set it at release time), else the
	# source's version.txt as written (a development snapshot stays a pre-release). The
	# label is kiln.ARCH.gHASH, HASH from this stage's key (sources, series, arch, env,
	# the torch built against): another build gets another label, the same key the same
	# one. Its first segment is letters only, so PEP 440's text order of mixed segments
	# (+rocm10 < +rocm6) never ranks two kiln builds by accident.
	rel=
	for t in ${REF:-} $(git --git-dir="$GITC/$c.git" tag --points-at "$commit" 2>/dev/null); do
		v=${t#v}
		case "$v" in [0-9]*) case "$v" in *[!0-9.]*|*.|*..*) ;; *) rel=$v; break ;; esac ;; esac
	done
	if [ -z "$rel" ] && [ -f "$dir/version.txt" ]; then
		rel=$(sed -n '1{s/[+[:space:]].*//;p;}' "$dir/version.txt")
	fi
	label=kiln.$(printf '%s' "$ARCH" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '.').g$(printf '%.10s' "$KILN_STAGE_KEY")
	version=
	[ -n "$rel" ] && version=$rel+$label
	say "version ${version:-(the project's own: no version tag at $commit and no version.txt)}"
}

step_wheel_maps () {
	# file names in objects and debug info: the copy, the build folder and the target
	# Python's prefix are written as fixed paths, so two build folders give the same bytes
	pyprefix=$(clean -- "$PY" -c 'import sys; print(sys.prefix)') || die "$PY does not run"
	maps=
	for m in "$pyprefix=/kiln/python" "$B=/kiln/build" "$work=/kiln/src/$c"; do
		# CFLAGS is split on white space (and quotes) by every build system: a folder
		# whose name holds them cannot be mapped, and the build goes on without the map
		case "$m" in
		*[!A-Za-z0-9_./:=+,@%-]*) say "cannot map ${m%=*} in CFLAGS (its name has spaces, quotes or shell characters); its path stays in the binaries"; continue ;;
		esac
		maps="$maps -ffile-prefix-map=$m -fdebug-prefix-map=$m"
	done
	cuda=
	for m in $maps; do cuda="$cuda -Xcompiler=$m"; done
	# CMake run by a setup.py (torchaudio 2.6's tools/setup_helpers/extension.py: cmake,
	# then cmake --build . --target install) links with the build tree's RPATH, and its
	# install step removes that RPATH in place: NULs of the build path's length stay in
	# .dynstr, so the .so depends on the folder (audio.wheel.verify differed in
	# _torchaudio.so). CMAKE_BUILD_WITH_INSTALL_RPATH links with the install RPATH from the
	# start, leaving nothing to edit. The project's cmake line takes no -D from here, so a
	# toolchain file says it, named by CMAKE_TOOLCHAIN_FILE in the environment (CMake 3.21+:
	# the default for a new build tree; cmake-env-variables(7)). torch's own build is left
	# as upstream makes it.
	[ "$c" = torch ] && return 0
	printf 'set(CMAKE_BUILD_WITH_INSTALL_RPATH ON)\n' >"$work.home/kiln-rpath.cmake" ||
		die "cannot write $work.home/kiln-rpath.cmake"
	step_wheel_arg --set CMAKE_TOOLCHAIN_FILE="$work.home/kiln-rpath.cmake"
}

step_wheel_settings () {
	# the build's environment: its own HOME, the dates, the jobs, the maps, the version
	# (torch reads PYTORCH_BUILD_VERSION, setup.py builds of vision and audio
	# BUILD_VERSION), and the GPU targets
	step_wheel_arg --set HOME="$work.home" --set SOURCE_DATE_EPOCH="$sde" --set MAX_JOBS="$JOBS" \
		--set CMAKE_POLICY_VERSION_MINIMUM=3.5 --set GIT_CEILING_DIRECTORIES="$wroot" \
		--set CFLAGS="${maps# }" --set CXXFLAGS="${maps# }" --set HIPFLAGS="${maps# }" \
		--set CUDAFLAGS="${cuda# }"
	if [ -n "$version" ]; then
		case "$c" in
		torch) step_wheel_arg --set PYTORCH_BUILD_VERSION="$version" --set PYTORCH_BUILD_NUMBER=0 ;;
		*) step_wheel_arg --set BUILD_VERSION="$version" ;;
		esac
	fi
	case "$BACKEND" in
	gfx) step_wheel_arg --set PYTORCH_ROCM_ARCH="$ARCH" --set ROCM_PATH="$ROCM_PATH" --set ROCM_HOME="$ROCM_PATH" --set HIP_PATH="$ROCM_PATH" \
		--set USE_FLASH_ATTENTION="$FLASH" --set GPU_TARGETS="$ARCH" ;;
	cuda) step_wheel_arg --keep CUDA_HOME --keep CUDA_PATH --keep CUDACXX --set TORCH_CUDA_ARCH_LIST="$(echo "$ARCH" | tr ';' '\n' | sed 's/^sm_\([0-9]*\)\([0-9]\)\(a*\)$/\1.\2\3/' | tr '\n' ';' | sed 's/;$//')" ;;
	esac
	# configure's CC (CC_CMD), when one was given, compiles the stack too
	if [ -n "${CC_CMD:-}" ]; then step_wheel_arg --set CC="$CC_CMD"; fi
	# a distribution's ROCm (--rocm-path=/usr) keeps its device libraries under lib/llvm-N
	[ "$BACKEND" != gfx ] || ! dl=$(rocmdevlib) || step_wheel_arg --set HIP_DEVICE_LIB_PATH="$dl" --set CMAKE_PREFIX_PATH="$ROCM_PATH"
}

step_wheel_cache () {
	# the compiler cache keeps its own settings (its folder defaults to the caller's): the
	# caller's CCACHE_* and SCCACHE_* cross envclean -i as settings (--keep cannot: -i
	# starts from its allow-list)
	# (HIP compiles reach it through step_wheel_hip's launcher)
	case "$CACHE" in
	ccache|sccache)
		for v in $(passenv CCACHE_ SCCACHE_); do eval "step_wheel_arg --set \"$v=\${$v-}\""; done
		# no CCACHE_BASEDIR: ccache runs the compiler with the paths under it made
		# relative (ccache(1), base_dir), so __FILE__ would read ../../src/x.cpp where a
		# build without the cache reads /kiln/src/C/src/x.cpp (the prefix map). Without it
		# ccache hits where the copy is at the same path: this build folder, or every
		# folder with --work-dir. Empty, it also overrides a base_dir in ccache.conf.
		# sccache's basedirs only shape its hash.
		step_wheel_arg --set CCACHE_BASEDIR= --set SCCACHE_BASEDIRS="$work"
		[ -n "${CCACHE_DIR:-}" ] || step_wheel_arg --set CCACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/ccache"
		[ -n "${SCCACHE_DIR:-}" ] || step_wheel_arg --set SCCACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/sccache" ;;
	esac
	# sccache: a server of this stage's own (its port), so its counters are this stage's
	# compiles; compilers reach it through wrappers first on PATH (below)
	if [ "$CACHE" = sccache ]; then
		command -v sccache >/dev/null 2>&1 || die "--cache=sccache, but there is no sccache here (install sccache)"
		[ -z "${DISTRIBUTE:-}" ] || die "--cache=sccache cannot hand its misses to $DISTRIBUTE (sccache has no prefix command); use --cache=ccache with --distribute"
		scport=$(clean -- "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
			die "$PY cannot find a free port for the sccache server"
		step_wheel_arg --set SCCACHE_SERVER_PORT="$scport"
	fi
}

step_wheel_nvcc () {
	# nvcc on CUDA builds: a wrapper gives each source file its own -frandom-seed (its
	# path in the copy: nvcc otherwise draws module ids at random, so two builds of one
	# file differ), -objtemp (temporary file names hold a process id) and the prefix maps
	# to the host compiler
	# (torch's cpp_extension passes no CFLAGS to nvcc), then runs nvcc, through ccache
	# when it is the cache. setuptools builds reach it as PYTORCH_NVCC, CMake builds as
	# CMAKE_CUDA_COMPILER_LAUNCHER. The wrapper is fixed text; the values come as settings.
	if [ "$BACKEND" = cuda ]; then
		r=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
		[ -x "$r" ] || r=$(command -v nvcc) || r=
		case "$r" in *[!A-Za-z0-9_./+,@%-]*) die "the nvcc path $r holds spaces, quotes or shell characters" ;; esac
		if [ -n "$r" ]; then
			mkdir -p "$B/ccwrap" || die "cannot create $B/ccwrap"
			cat >"$B/ccwrap/nvcc.tmp" <<'EOF2'
#!/bin/sh
# kiln's nvcc for one wheel stage: a seed per source file (its path in the build copy,
# KILN_NVCC_WORK) and the stage's prefix maps, so two builds give the same bytes. As
# PYTORCH_NVCC it runs KILN_NVCC; as CMAKE_CUDA_COMPILER_LAUNCHER ("launch") it runs
# the compiler CMake names. KILN_NVCC_CACHE is the compiler cache, or empty.
set -f
case ${0##*/} in
nvcc) set -- $KILN_NVCC "$@" ;;
esac
# A compile (-c, -dc, -dw) also takes -objtemp: its temporary files, whose names end up
# in the object, are named after the object instead of nvcc's process id.
seed= objtemp=
for a do
	case $a in
	*.cu|*.cpp|*.cc|*.cxx|*.c) case $a in "$KILN_NVCC_WORK"/*) seed=${a#"$KILN_NVCC_WORK"/} ;; *) seed=$a ;; esac ;;
	-c|-dc|-dw|--compile|--device-c|--device-w) objtemp=-objtemp ;;
	esac
done
nv=$1; shift
exec $KILN_NVCC_CACHE "$nv" ${seed:+"-frandom-seed=$seed"} $objtemp $KILN_NVCC_FLAGS "$@"
EOF2
			chmod 755 "$B/ccwrap/nvcc.tmp" && mv -f "$B/ccwrap/nvcc.tmp" "$B/ccwrap/nvcc" &&
				ln -sf nvcc "$B/ccwrap/launch" || die "cannot write $B/ccwrap/nvcc"
			nvcache=
			[ "$CACHE" = ccache ] && nvcache=ccache
			step_wheel_arg --set PYTORCH_NVCC="$B/ccwrap/nvcc" --set CMAKE_CUDA_COMPILER_LAUNCHER="$B/ccwrap/launch" \
				--set KILN_NVCC="$r" --set KILN_NVCC_CACHE="$nvcache" --set KILN_NVCC_WORK="$work" \
				--set KILN_NVCC_FLAGS="${cuda# }"
		fi
	fi
}

step_wheel_hip () {
	# ROCm builds: a launcher gives each HIP compile its own -cuid (clang's compilation-unit
	# ID): clang's default hashes the absolute source and object paths, so another build
	# folder gives other bytes, and -fuse-cuid=none makes every object define the same
	# __hip_cuid_ symbol, so two objects of one library do not link (clang-19). The ID is
	# a digest of the source and object paths in the build copy: the same in every build
	# folder, one per compile (as ROCm/TheRock build_tools/cuid_launcher.py does). CMake's
	# HIP language runs it as CMAKE_HIP_COMPILER_LAUNCHER, hipcc (torch's hip_add_library,
	# the cpp_extension builds of vision and audio) as HIP_CLANG_LAUNCHER, where hipcc
	# has it; either way it runs the compiler cache, when there is one.
	[ "$BACKEND" = gfx ] || return 0
	mkdir -p "$B/ccwrap" || die "cannot create $B/ccwrap"
	step_wheel_hiplauncher >"$B/ccwrap/hiplaunch.$c.tmp" && chmod 755 "$B/ccwrap/hiplaunch.$c.tmp" &&
		mv -f "$B/ccwrap/hiplaunch.$c.tmp" "$B/ccwrap/hiplaunch" || die "cannot write $B/ccwrap/hiplaunch"
	hipcache=
	case "$CACHE" in ccache|sccache) hipcache=$CACHE ;; esac
	step_wheel_arg --set CMAKE_HIP_COMPILER_LAUNCHER="$B/ccwrap/hiplaunch" --set HIP_CLANG_LAUNCHER="$B/ccwrap/hiplaunch" \
		--set KILN_HIP_CACHE="$hipcache" --set KILN_HIP_WORK="$work" --set KILN_HIP_WORKP="$(cd "$work" && pwd -P)"
}

# step_wheel_hiplauncher: the launcher's text (fixed; the values come as settings)
step_wheel_hiplauncher () {
	cat <<'EOF2'
#!/bin/sh
# kiln's HIP launcher for one wheel stage: "hiplaunch COMPILER ARG...". A HIP compile (-c
# with --offload-arch, -x hip or a .hip/.cu source) without a cuid of its own gets
# -cuid=ID, ID the digest of its source and object paths in the build copy (KILN_HIP_WORK,
# or its physical path KILN_HIP_WORKP): the same in every build folder, one per compile.
# KILN_HIP_CACHE is the compiler cache, or empty.
set -f
comp=$1
shift
c= hip= own= src= out= prev=
for a do
	case $prev in -o) out=$a ;; -x) [ "$a" = hip ] && hip=1 ;; esac
	case $a in
	-c) c=1 ;;
	--offload-arch=*|--cuda-gpu-arch=*) hip=1 ;;
	-cuid=*|-fuse-cuid=*) own=1 ;;
	-o?*) out=${a#-o} ;;
	-*) ;;
	*.hip|*.cu) hip=1 src=$a ;;
	*.cpp|*.cc|*.cxx|*.c) [ -n "$src" ] || src=$a ;;
	esac
	prev=$a
done
rel () {
	case $1 in /*) p=$1 ;; *) p=$PWD/$1 ;; esac
	case $p in "$KILN_HIP_WORK"/*) p=${p#"$KILN_HIP_WORK"/} ;; "$KILN_HIP_WORKP"/*) p=${p#"$KILN_HIP_WORKP"/} ;; esac
	printf '%s' "$p"
}
if [ -n "$c" ] && [ -n "$hip" ] && [ -z "$own" ] && [ -n "$src" ]; then
	id=$(printf '%s\n%s\n' "$(rel "$src")" "$(rel "${out:-$src.o}")" | sha256sum | cut -c 1-16)
	set -- "$@" "-cuid=$id"
fi
exec $KILN_HIP_CACHE "$comp" "$@"
EOF2
}

step_wheel_distribute () {
	# team caches (issue 20): the compiler cache's remote storage, then the distributed
	# compiler behind it; none of them changes what is compiled, so none is in the key
	case "$CACHE" in
	ccache) [ -z "${CACHE_REMOTE:-}" ] || step_wheel_arg --set CCACHE_REMOTE_STORAGE="$CACHE_REMOTE" ;;
	sccache)
		case "${CACHE_REMOTE:-}" in
		redis://*) step_wheel_arg --set SCCACHE_REDIS="$CACHE_REMOTE" --set SCCACHE_REDIS_ENDPOINT="$CACHE_REMOTE" ;;
		http://*|https://*) step_wheel_arg --set SCCACHE_WEBDAV_ENDPOINT="$CACHE_REMOTE" ;;
		esac ;;
	esac
	masq=
	case "${DISTRIBUTE:-}" in
	distcc)
		command -v distcc >/dev/null 2>&1 || die "--distribute=distcc, but there is no distcc here (install distcc)"
		slots=$(DISTCC_HOSTS=$DISTRIBUTE_HOSTS distcc -j 2>/dev/null) || slots=0
		[ "$slots" -gt "$JOBS" ] 2>/dev/null || slots=$JOBS
		say "distcc: $DISTRIBUTE_HOSTS ($slots slots); preprocessing stays local"
		for v in $(passenv DISTCC_); do eval "step_wheel_arg --set \"$v=\${$v-}\""; done
		step_wheel_arg --set DISTCC_HOSTS="$DISTRIBUTE_HOSTS" --set MAX_JOBS="$slots" \
			--set DISTCC_DIR="$work.home/.distcc"
		mkdir -p "$work.home/.distcc"
		dist=distcc ;;
	icecream)
		command -v icecc >/dev/null 2>&1 || die "--distribute=icecream, but there is no icecc here (install icecc)"
		for v in $(passenv ICECC_); do eval "step_wheel_arg --set \"$v=\${$v-}\""; done
		dist=icecc ;;
	*) dist= ;;
	esac
	if [ "$CACHE" = sccache ]; then
		# sccache takes no compiler links: one two-line wrapper per compiler, which hands
		# the real compiler to sccache
		masq=$work.home/bin
		mkdir -p "$masq"
		for cc in cc gcc c++ g++ clang clang++ x86_64-linux-gnu-gcc x86_64-linux-gnu-g++ ${CC_CMD:+"${CC_CMD##*/}"}; do
			r=$(command -v "$cc") || continue
			case "$r" in /*\'*|[!/]*) continue ;; esac
			printf '#!/bin/sh\nexec sccache '"'%s'"' "$@"\n' "$r" >"$masq/$cc" && chmod 755 "$masq/$cc" ||
				die "cannot write $masq/$cc"
		done
		step_wheel_arg --prepend-path "$masq"
	elif [ -n "$dist" ] || [ "$CACHE" = ccache ]; then
		# compilers called by name (setuptools' CC, a setup.py's own "cc", CMake's) reach the
		# cache and the distributor through a folder of links first on PATH; ccache runs
		# first and hands misses to the distributor (CCACHE_PREFIX)
		masq=$work.home/bin
		mkdir -p "$masq"
		front=$dist
		[ "$CACHE" = ccache ] && front=ccache
		fp=$(command -v "$front") || die "no $front on PATH"
		for cc in cc gcc c++ g++ clang clang++ x86_64-linux-gnu-gcc x86_64-linux-gnu-g++ ${CC_CMD:+"${CC_CMD##*/}"}; do
			command -v "$cc" >/dev/null 2>&1 && ln -sf "$fp" "$masq/$cc"
		done
		if [ "$CACHE" = ccache ] && [ -n "$dist" ]; then
			step_wheel_arg --set CCACHE_PREFIX="$dist"
		elif [ -n "$dist" ]; then
			step_wheel_arg --set CMAKE_C_COMPILER_LAUNCHER="$dist" --set CMAKE_CXX_COMPILER_LAUNCHER="$dist"
		fi
		step_wheel_arg --prepend-path "$masq"
	fi
}

step_wheel_backend () {
	# the build its release uses: BUILD (setup, build or pip) when the pin names one, else
	# what the tree declares (kiln-stage backend): setup.py bdist_wheel, or a PEP 517
	# backend run by `python -m build --wheel --no-isolation` (scikit-build-core: torch
	# from 2.14, issue 29), whose requirements the deps stage installed. scikit-build-core
	# honours .gitignore: a file the prepared tree holds that git ignores inside the
	# package (one a patch or hipify wrote, like TheRock's torch/_rocm_init.py) would be
	# dropped from the wheel, so each is force-included (-Cwheel.force-include.SRC=DST).
	# scikit-build-core reads MAX_JOBS as CMAKE_BUILD_PARALLEL_LEVEL.
	build=$BUILD backend=
	if [ -z "$build" ]; then
		how=$(kiln-stage backend "$dir" 2>"$work.home/backend.err") ||
			die "$(sed 's/^kiln-stage: //' "$work.home/backend.err")"
		build=${how%% *}
		[ "$build" = "$how" ] || backend=${how#* }
	fi
	: >"$work.home/force-include"
	if [ "$build" = build ]; then
		step_wheel_arg --set CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
		pkg=${IMPORT%%.*}
		if [ -n "$pkg" ] && [ -d "$dir/$pkg" ]; then
			(cd "$dir" && GIT_CEILING_DIRECTORIES=$wroot git ls-files --others --ignored --exclude-standard -- "$pkg") |
				LC_ALL=C sort >"$work.home/force-include" || die "git cannot list the ignored files of $dir/$pkg"
		fi
	fi
	say "build: $build${backend:+ ($backend)}$([ -s "$work.home/force-include" ] && printf ', force-including %s' "$(tr '\n' ' ' <"$work.home/force-include")")"
}

step_wheel_requirements () {
	# the target Python must import what this build compiles against, and nothing else:
	# asked in the environment the build gets, from the tree it runs in (the source, of
	# which the build folder is an exact copy). A component that builds against nothing
	# (torch) has nothing to check; without --module the check would look for torch,
	# which torch's own source folder holds. Its build requirements are the deps stage's.
	mods=
	for m in $MODULES; do mods="$mods --module=$m"; done
	if [ -n "$mods" ]; then
		clean "$@" -- envclean --check --python="$PY" --cwd="$src${SUBDIR:+/$SUBDIR}" $mods ||
			die "envclean --check found problems with $PY in $src${SUBDIR:+/$SUBDIR} (above); fix them, then run ninja again"
	fi
}

# innerlog TREE: the inner build's .ninja_log (the largest in TREE: torch's CMake build
# leaves one in build/) copied to $KILN_STAGE_NINJALOG, from which kiln-stage run puts
# the inner build's steps into build/trace.json
innerlog () {
	[ -n "${KILN_STAGE_NINJALOG:-}" ] || return 0
	innerf=$(find "$1" -name .ninja_log -type f -printf '%s %p\n' 2>/dev/null | sort -rn | sed -n '1s/^[0-9]* //p')
	[ -z "$innerf" ] || cp "$innerf" "$KILN_STAGE_NINJALOG" 2>/dev/null || :
}

# step_wheel_run ENVCLEAN-OPTION...: the build, with the compiler cache's counters
step_wheel_run () {
	cd "$dir" || die "no $dir"
	[ "$CACHE" = ccache ] && ccstats "$@" >"$work.home/ccache.before"
	[ "$CACHE" = sccache ] && scstart "$@"
	rc=0
	case "$build" in
	setup) clean "$@" -- "$PY" setup.py bdist_wheel -d "$out" || rc=$? ;;
	build) step_wheel_pep517 "$@" || rc=$? ;;
	pip) clean "$@" -- "$PY" -m pip wheel --no-deps --no-build-isolation --no-index -w "$out" . || rc=$? ;;
	*) [ "$CACHE" = sccache ] && scstop "$@"; die "${c}_BUILD=$build: use setup, build or pip" ;;
	esac
	innerlog "$work"
	if [ "$rc" != 0 ]; then
		[ "$CACHE" = sccache ] && scstop "$@"
		die "the build failed (its tree is kept in $work)"
	fi
	if [ "$CACHE" = ccache ]; then
		ccstats "$@" >"$work.home/ccache.after"
		hitrate "$work.home/ccache.before" "$work.home/ccache.after"
	fi
	if [ "$CACHE" = sccache ]; then
		clean "$@" -- sccache --show-stats --stats-format=json >"$work.home/sccache.json" 2>/dev/null || :
		scstop "$@"
		schitrate "$work.home/sccache.json"
	fi
}

# step_wheel_pep517 ENVCLEAN-OPTION...: python -m build --wheel --no-isolation, with the
# force-included files
step_wheel_pep517 () {
	set -- "$@" -- "$PY" -m build --wheel --no-isolation --outdir "$out"
	while IFS= read -r f; do set -- "$@" "-Cwheel.force-include.$f=$f"; done <"$work.home/force-include"
	clean "$@" .
}

# step_wheel_offline: the build's settings that make a network attempt fail the stage
# (netguard_start: the proxies, PIP_NO_INDEX)
step_wheel_offline () {
	netguard_start
	[ -z "$ngargs" ] || step_wheel_arg $ngargs
	step_wheel_inputs
}

# step_wheel_inputs: each pinned input (C_INPUTS' NAME=URL#sha256=HEX, unpacked by
# C.inputs into $B/inputs/SHA256) as the variable NAME of the build; an archive with one
# top folder (llvm-HASH-ubuntu-x64/) is that folder
step_wheel_inputs () {
	for w in ${INPUTS:-}; do
		n=${w%%=*} h=${w##*#sha256=}
		d=$B/inputs/$h
		[ -d "$d" ] || die "$n: $d is missing (C.inputs unpacks it there): run ninja $c.inputs"
		set +f
		set -- "$d"/*
		set -f
		[ $# = 1 ] && [ -d "$1" ] && d=$1
		step_wheel_arg --set "$n=$d"
		say "$n=$d (a pinned input, sha256 $h)"
	done
}

# step_wheel_aotriton: torch's attention kernels as configure planned them
# (tools/kiln-stage/aotriton.c): USE_FLASH_ATTENTION comes from step_wheel_settings,
# USE_MEM_EFF_ATTENTION from here; with aotriton built, torch's
# cmake/External/aotriton.cmake installs the prefix AOTRITON_INSTALLED_PREFIX names
# instead of downloading AOTriton's runtime and image packs
step_wheel_aotriton () {
	[ "$BACKEND" = gfx ] || return 0
	step_wheel_arg --set USE_MEM_EFF_ATTENTION="${MEM_EFF:-0}"
	[ -n "${AOTRITON_PREFIX:-}" ] || return 0
	[ -f "$AOTRITON_PREFIX/lib/libaotriton_v2.so" ] ||
		die "no lib/libaotriton_v2.so in $AOTRITON_PREFIX (aotriton.install puts it there): run ninja aotriton.install"
	step_wheel_arg --set AOTRITON_INSTALLED_PREFIX="$AOTRITON_PREFIX"
	say "AOTriton from $AOTRITON_PREFIX (AOTRITON_INSTALLED_PREFIX)"
}

# step_wheel_triton: triton's offline build, as its setup.py documents it
# (triton-lang/triton setup.py, is_offline_build): TRITON_OFFLINE_BUILD=1, so it downloads
# nothing and takes LLVM, JSON and pybind11 from LLVM_SYSPATH, JSON_SYSPATH and
# PYBIND11_SYSPATH (triton_ENV, or triton_INPUTS' pinned archives) or stops early; and
# for ROCm no proton, whose build wants CUDA's CUPTI headers
step_wheel_triton () {
	[ "$c" = triton ] || return 0
	step_wheel_arg --set TRITON_OFFLINE_BUILD=1
	[ "$BACKEND" != gfx ] || step_wheel_arg --set TRITON_BUILD_PROTON=OFF
}

# step_inputs: C_INPUTS, the archives the build would download, fetched here instead (a
# stage of their own, before the build's network is cut) and checked against their
# sha256, each unpacked whole into $B/inputs/SHA256
step_inputs () {
	mkdir -p "$B/inputs" || die "cannot create $B/inputs"
	for w in $INPUTS; do
		n=${w%%=*} u=${w#*=}
		h=${u##*#sha256=} u=${u%#sha256=*}
		case "$u" in /*) u=file://$u ;; esac
		d=$B/inputs/$h
		if [ -d "$d" ]; then
			say "$n: $u is in $d"
			continue
		fi
		kiln-stage fetch "$u" --sha256="$h" -o "$d.tar" || die "$n: cannot fetch $u (its sha256 must be $h)"
		kiln-stage unpack "$d.tar" --into="$d" --sha256="$h" || die "$n: cannot unpack $u"
		rm -f "$d.tar"
		say "$n: $u unpacked into $d"
	done
}

step_pick () {
	if [ -n "${WHEEL:-}" ]; then from=$WHEEL; else from=$B/wheels/$c; fi
	w=$(clean -- wheelpick --python="$PY" --name "$DIST" "$from") ||
		die "no wheel in $from fits $PY (wheelpick -v --python=$PY $from says why)"
	mkdir -p "$B/wheels"
	printf '%s\n' "$w" >"$B/wheels/$c.picked.tmp"
	mv -f "$B/wheels/$c.picked.tmp" "$B/wheels/$c.picked"
	echo "picked $w"
}

step_install () {
	w=$(cat "$B/wheels/$c.picked")
	# from the wheel's folder: pip reads a ';' in a path argument as a marker separator
	(cd "$(dirname "$w")" && clean -- "$PY" -m pip install --no-deps --force-reinstall --no-index \
		--disable-pip-version-check "./${w##*/}")
	record "$w"
}

step_system () {
	clean -- "$PY" -c "import $IMPORT" || die "--pin $c=system, but $PY cannot import $IMPORT"
	record ""
}

# passenv PREFIX...: the names of the exported variables that start with a PREFIX (and
# are plain names), one a line, for the caller to hand over with --set NAME=VALUE
passenv () {
	for p; do
		env | sed -n "s/^\($p[A-Za-z0-9_]*\)=.*/\1/p"
	done | sort -u
}

# --- no download inside a build. The wheel and CMake builds get kiln-stage netguard, a
# loopback proxy that refuses and records every request, as http_proxy, https_proxy and
# ALL_PROXY, with PIP_NO_INDEX=1 (pip belongs to the deps stages) and PIP_RETRIES=0.
# netguard_start starts it and sets ngargs, the build's --set words (no value holds a
# blank); ng_blame (from die, and netguard_stop after a build that went on) fails the
# stage in one line naming the URL the build tried. NETWORK=allow (configure
# --allow-network) turns it off.
netguard_start () {
	ngargs= ngpid= nglog=$work.home/netguard.log
	if [ "${NETWORK:-guard}" != guard ]; then
		say "--allow-network: this build may reach the network"
		return 0
	fi
	rm -f "$nglog" "$work.home/netguard.port"
	: >"$nglog" && mkfifo "$work.home/netguard.port" || die "cannot make $work.home/netguard.port"
	kiln-stage netguard "$nglog" >"$work.home/netguard.port" &
	ngpid=$!
	read -r ngport <"$work.home/netguard.port" || ngport=
	case "$ngport" in ''|*[!0-9]*) ngpid=; die "kiln-stage netguard did not start (it gave no port)" ;; esac
	p=http://127.0.0.1:$ngport
	ngargs="--set http_proxy=$p --set https_proxy=$p --set HTTP_PROXY=$p --set HTTPS_PROXY=$p"
	ngargs="$ngargs --set ALL_PROXY=$p --set all_proxy=$p --set PIP_NO_INDEX=1 --set PIP_RETRIES=0"
	# the compiler cache's remote storage is the one server a build talks to
	if [ -n "${CACHE_REMOTE:-}" ]; then
		h=${CACHE_REMOTE#*://} && h=${h%%/*} && h=${h##*@} && h=${h%:*}
		ngargs="$ngargs --set no_proxy=$h --set NO_PROXY=$h"
	fi
	say "no network for this build: its proxy is kiln-stage netguard on 127.0.0.1:$ngport (configure --allow-network lifts it)"
}

# ng_blame: when the guard refused a request, the stage's one line naming the URL (for
# an https CONNECT, the first URL on that host in the stage's log), then exit 1
ng_blame () {
	[ -n "${ngpid:-}" ] && [ -s "${nglog:-}" ] || return 0
	ngp=$ngpid ngpid=
	set -- $(sed -n 1p "$nglog")
	case "${1:-}" in
	CONNECT)
		h=${2%:443}
		re=$(printf '%s' "$h" | sed 's/[].[*^$\/]/\\&/g')
		url=$(grep -o "https\{0,1\}://$re[^] \"'<>(){}[]*" "${KILN_STAGE_LOG:-/dev/null}" 2>/dev/null | head -n 1) || url=
		url=${url:-https://$2/} ;;
	RAW) url="(a connection that spoke no HTTP)" ;;
	*) url=${2:-?} ;;
	esac
	n=$(wc -l <"$nglog")
	kill "$ngp" 2>/dev/null || :
	wait "$ngp" 2>/dev/null || :
	say "$KILN_STAGE: the build tried to download $url ($n request(s) refused by kiln-stage netguard): nothing downloads inside a build stage; give it as a pinned input, or configure --allow-network"
	exit 1
}

# netguard_stop: after the build, which must not have tried the network even when it
# went on without it; then the guard ends
netguard_stop () {
	ng_blame
	if [ -n "${ngpid:-}" ]; then
		kill "$ngpid" 2>/dev/null || :
		wait "$ngpid" 2>/dev/null || :
		ngpid=
	fi
	rm -f "$work.home/netguard.port"
}

# treesubdir TREE: SUBDIR, when the pins name none, from the tree: python/ when setup.py
# is there and not at the root (triton until its setup.py moved to the root)
treesubdir () {
	[ -z "${SUBDIR:-}" ] || return 0
	if [ ! -f "$1/setup.py" ] && [ -f "$1/python/setup.py" ]; then
		SUBDIR=python
		say "setup.py is in python/ of the tree: building there"
	fi
}

# ccstats [ENVCLEAN-OPTION]...: ccache's counters in the build's environment (KEY\tVALUE)
ccstats () { clean "$@" -- ccache --print-stats 2>/dev/null || :; }
# hitrate BEFORE AFTER: the compiler cache's hits in this stage, in its log and, through
# $KILN_STAGE_NOTE, in the stage's summary line ("ccache 12/40 hits (30%), 8 remote")
hitrate () {
	awk -F '\t' 'FNR == NR { b[$1] = $2; next } { d[$1] = $2 - b[$1] }
		END { h = d["direct_cache_hit"] + d["preprocessed_cache_hit"]; n = h + d["cache_miss"]
		      if (n > 0) printf "ccache %d/%d hits (%d%%), %d remote\n", h, n, 100 * h / n, d["remote_storage_hit"]
		      else print "ccache: no compiles" }' "$1" "$2" >"$1.rate" || return 0
	say "$(cat "$1.rate")"
	[ -z "${KILN_STAGE_NOTE:-}" ] || cp "$1.rate" "$KILN_STAGE_NOTE" 2>/dev/null || :
}

# scstart [ENVCLEAN-OPTION]...: this stage's sccache server (SCCACHE_SERVER_PORT), started
# in the build's environment so it has the build's storage settings. It is this stage's
# own child, run as sccache's client runs it (SCCACHE_START_SERVER=1) but in the
# foreground (SCCACHE_NO_DAEMON=1) and never stopped for idleness (SCCACHE_IDLE_TIMEOUT=0):
# no client waits for it on a startup timeout (on a loaded host sccache's own timed out:
# issue 27); it is ready when it listens on its port itself (scready), and one that exits
# first (its port taken, a storage it lacks) stops the stage with its own error line. With
# --cache-remote the server must use that storage: an sccache built without it (Debian
# 12's has only local disk: `sccache --help` lists its storage features) stops the stage
# in one line
scstart () {
	clean "$@" --set SCCACHE_START_SERVER=1 --set SCCACHE_NO_DAEMON=1 --set SCCACHE_IDLE_TIMEOUT=0 \
		-- sccache >"$work.home/sccache.start" 2>&1 &
	scpid=$!
	scready "$scpid" "$scport" ||
		die "sccache could not start its server: $(grep -m 1 -i 'error' "$work.home/sccache.start" || tail -n 1 "$work.home/sccache.start")${CACHE_REMOTE:+ (--cache-remote=$CACHE_REMOTE: is this sccache built with that storage? sccache --help lists its features)}"
	loc=$(clean "$@" -- sccache --show-stats --stats-format=json 2>/dev/null |
		clean -- "$PY" -c 'import json, sys; print(json.load(sys.stdin).get("cache_location", "?"))') || loc=?
	say "sccache: server on port $scport (ready: it listens there itself), storage: $loc"
	case "${CACHE_REMOTE:-}:$loc" in
	:*) ;;
	*:"Local disk"*)
		scstop "$@"
		die "--cache-remote=$CACHE_REMOTE: this sccache ($(sccache --version 2>/dev/null)) stores on local disk only; it has no storage for that URL (sccache --help lists its features; WebDAV needs sccache >= 0.4.0 built with it)" ;;
	esac
}
# scstop [ENVCLEAN-OPTION]...: stop this stage's sccache server (and reap it; one that does
# not answer is ended by its id)
scstop () {
	clean "$@" -- sccache --stop-server >/dev/null 2>&1 || kill "$scpid" 2>/dev/null
	wait "$scpid" 2>/dev/null || :
}
# scready PID PORT: wait until the process PID (or a child of it: envclean execs) listens
# on PORT, its own socket in /proc (not a connect another process could answer); fails as
# soon as PID has exited, or after 600 s (a hang guard): ninja/listens.py
scready () { clean -- "$PY" "$KILN_SRC/ninja/listens.py" --wait=600 "$1" "$2"; }
# schitrate JSON: sccache's hits in this stage (its own server's counters), in its log and
# the stage's summary line ("sccache 12/40 hits (30%), local disk")
schitrate () {
	clean -- "$PY" -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("sccache: no statistics"); sys.exit(0)
s = d["stats"]
h = sum(s["cache_hits"]["counts"].values())
n = h + sum(s["cache_misses"]["counts"].values())
loc = d.get("cache_location", "?")
where = "local disk" if loc.startswith("Local disk") else loc.split(",")[0].split(":")[0].strip()
print("sccache %d/%d hits (%d%%), %s" % (h, n, 100 * h // n, where) if n else "sccache: no compiles")
' "$1" >"$1.rate" || return 0
	say "$(cat "$1.rate")"
	[ -z "${KILN_STAGE_NOTE:-}" ] || cp "$1.rate" "$KILN_STAGE_NOTE" 2>/dev/null || :
}

# clean [ENVCLEAN-OPTION]... -- CMD...: CMD under envclean, starting from its allow-list
# (-i) plus the profiles: no caller variable (PIP_*, CFLAGS, CMAKE_*, SRCPIN_MIRROR ...)
# and no pip configuration file reaches it; the target Python's folder comes first on PATH
clean () {
	n=$#
	# PROFILES is a "|"-separated list (paths may hold spaces)
	o=$IFS IFS='|'
	for p in $PROFILES; do set -- "$@" --profile="$p"; done
	IFS=$o
	while [ "$n" -gt 0 ]; do set -- "$@" "$1"; shift; n=$((n - 1)); done
	# srcpin's mirror setting crosses the clean environment as a setting, not a word
	if [ -n "${SRCPIN_MIRROR:-}" ]; then
		envclean -i --set PIP_CONFIG_FILE=/dev/null --set SRCPIN_MIRROR="$SRCPIN_MIRROR" \
			--prepend-path "$(dirname "$PY")" "$@"
	else
		envclean -i --set PIP_CONFIG_FILE=/dev/null --prepend-path "$(dirname "$PY")" "$@"
	fi
}

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
		echo "ARCH=$(echo "$ARCH_LIST" | tr ';' ,)"
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

# cfq TEXT: TEXT as a quoted Containerfile string ("..." with \ " $ escaped)
cfq () { printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"$]/\\&/g')"; }
# cfjoin INSTRUCTION: the "KEY"=VALUE lines of stdin as one Containerfile INSTRUCTION,
# continued over lines (nothing when stdin is empty)
cfjoin () { sed -e '$!s/$/ \\/' -e "1s/^/$1 /" -e '1!s/^/\t/'; }

# step_oci: not a stage's step: the container builder, for step_image and
# step_imagecheck (and so in stack.image's key). podman, else buildah (one that runs);
# storage as the host's podman has it (CONTAINERS_STORAGE_CONF, storage.conf, else the
# driver podman picked when it made the storage: naming one would fail on a storage
# another driver made, "database configuration mismatch"); chroot isolation: a
# COPY-only Containerfile runs nothing. imgid REF prints REF's image ID (64 hex digits)
# and fails when the storage has no such image; imgdigest REF its digest; imgstore the
# driver and the storage root.
step_oci () {
	if podman --version >/dev/null 2>&1; then bld=podman
	elif buildah --version >/dev/null 2>&1; then bld=buildah
	else die "--image needs podman or buildah (apt-get install podman)"; fi
	if [ "$bld" = podman ]; then
		imgid () { "$bld" image inspect --format '{{.Id}}' "$1"; }
		imgdigest () { "$bld" image inspect --format '{{.Digest}}' "$1"; }
		imgstore () { "$bld" info --format '{{.Store.GraphDriverName}} {{.Store.GraphRoot}}'; }
	else
		imgid () { "$bld" inspect --type image --format '{{.FromImageID}}' "$1"; }
		imgdigest () { "$bld" inspect --type image --format '{{.FromImageDigest}}' "$1"; }
		imgstore () { "$bld" info --format '{{.store.GraphDriverName}} {{.store.GraphRoot}}'; }
	fi
}
# imgq imgid|imgdigest REF: the query, asked up to three times: the storage's "not known"
# is final at once; another failure (the storage's lock or database busy on a loaded host)
# is asked again. Fails with the last error line in $B/image.err (empty: not known)
imgq () {
	iq_n=0
	while :; do
		"$1" "$2" 2>"$B/image.err" && { : >"$B/image.err"; return 0; }
		case "$(tail -n 1 "$B/image.err")" in
		*"image not known"*|*"no such image"*|*"not found"*) : >"$B/image.err"; return 1 ;;
		esac
		iq_n=$((iq_n + 1))
		[ "$iq_n" -lt 3 ] || return 1
	done
}
# imgfail: the error imgq kept, for a message ("" when the image is not known)
imgfail () { e=$(tail -n 1 "$B/image.err" 2>/dev/null); [ -z "$e" ] || printf ' (%s: %s)' "$bld" "$e"; }

# step_imagecheck: not a stage's step: the image rule (ninja/stack.ninja) runs it before
# kiln-stage run, every time ninja runs stack.image's edge. The stamp's ID is the image
# this stage built; when the storage no longer has it under $IMAGE (podman rmi, or the
# name moved to another image), the stamp is removed, so the stage builds it again, and
# KILN_EXPLAIN and the stage's summary say why. It also writes the edge's depfile
# (STAMP.d): the storage's list of images, so that ninja runs this edge again when that
# list changes (an rmi, a build, a tag, a pull) and a plain no-op stays a no-op otherwise.
step_imagecheck () {
	KILN_STAGE=stack.image
	step_oci
	st=${stampf:?imagecheck STEP COMP SETTINGS STAMP}
	# the depfile: DRIVER-images/images.json under the storage's root (kiln-stage
	# depfile writes make's form)
	# (a list not there yet keeps the edge running until the build has made it)
	store=$(imgstore 2>"$st.d.err") || store=$(imgstore 2>"$st.d.err") || store="failed: $(tail -n 1 "$st.d.err")"
	rm -f "$st.d.err"
	list=${store#* }/${store%% *}-images/images.json
	case "$store" in
	?*' '/*) ;;
	*) say "stack.image: $bld info: $store; ninja will not notice the image leaving the storage"
	   list= ;;
	esac
	kiln-stage depfile -k -o "$st.d" "$st" ${list:+"$list"}
	[ -f "$st" ] || return 0
	id=$(sed -n 's/^ID=//p' "$st" | tr -d "\"'")
	case "$id" in
	sha256:*) ;;
	*) return 0 ;;
	esac
	cur=$(imgq imgid "$IMAGE") || cur=
	[ "sha256:$cur" != "$id" ] || return 0
	if [ -z "$cur" ]; then why="input image missing: $IMAGE ($id) is not in $bld's storage"
	else why="input image changed: $IMAGE is now sha256:$cur, not $id, the image this stage built"; fi
	# the reason, for kiln-stage run's KILN_EXPLAIN line and summary note (STAMP.why)
	printf '%s\n' "$why" >"$st.why"
	rm -f "$st"
}

step_image () {
	# this step lists its own folders ($B/wheels/*.picked, $B/stamp/*) with globs
	set +f
	step_oci
	# the stage's identity (kiln-stage run --id-file, the stamp's ID): the image's ID,
	# written last
	rm -f "$B/image.id"
	# the base: pinned by ID or digest (image_BASE); another image under that name stops here
	from=scratch
	if [ "$BASE_REF" != scratch ]; then
		id=$(imgq imgid "$BASE_REF") ||
			die "image base $BASE_REF is not in $bld's storage (pull or import it first)$(imgfail)"
		dg=$(imgq imgdigest "$BASE_REF") || {
			[ ! -s "$B/image.err" ] || die "cannot read the digest of image base $BASE_REF$(imgfail)"
			dg=
		}
		want=${BASE#sha256:}
		case "$id" in
		"$want"*) from=$id ;;
		*) [ "$BASE" = "$dg" ] && from=$id ||
			die "image base $BASE_REF is sha256:$id, but the pins say image_BASE=$BASE (check the new base, then update image_BASE)" ;;
		esac
	fi
	# the lock and build-info once more, whole: install stages that ran side by side may
	# each have seen only part of the other's records
	lock
	kiln-stage info -o "$B/build-info.json" "$B/info" || die "no build-info records in $B/info"
	ctx=$B/image.ctx
	# one tree, one COPY, one layer: what the image adds, at the paths it has there
	root=$ctx/root
	rm -rf "$ctx" && mkdir -p "$root/opt/kiln/wheels" || die "cannot create $ctx"
	prefix=$(clean -- "$PY" -c 'import sys; print(sys.prefix)') || die "$PY does not run"
	bprefix=$(clean -- "$PY" -c 'import sys; print(sys.base_prefix)')
	site=$(clean -- "$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	{
		echo "# Generated by kiln (stage stack.image); edits are lost"
		echo "FROM $from"
		# the wheels kiln installed, the lock and build-info
		for p in "$B"/wheels/*.picked; do
			[ -f "$p" ] || continue
			w=$(cat "$p")
			cp "$w" "$root/opt/kiln/wheels/" || die "cannot copy $w"
		done
		for f in requirements.lock build-info.json; do
			if [ -f "$B/$f" ]; then cp "$B/$f" "$root/opt/kiln/$f" || die "cannot copy $B/$f"; fi
		done
		# the target environment: the venv whole at its own path, else its site-packages
		if [ "$prefix" != "$bprefix" ]; then
			mkdir -p "$root$prefix" && cp -a "$prefix/." "$root$prefix/" || die "cannot copy $prefix"
			printf '"VIRTUAL_ENV"=%s\n"PATH"=%s\n' "$(cfq "$prefix")" \
				"$(cfq "$prefix/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")" >"$ctx/env"
		else
			mkdir -p "$root$site" && cp -a "$site/." "$root$site/" || die "cannot copy $site"
			: >"$ctx/env"
		fi
		echo 'COPY ["root/", "/"]'
		# the profiles' runtime environment, as envclean applies it to the stages
		o=$IFS IFS='|'
		for f in $PROFILES; do
			IFS=$o
			kiln-stage env "$f" -- sh -c 'for k in $KILN_KEYS; do eval "v=\${KILN_K_$k}"; printf "%s\t%s\n" "$k" "$v"; done'
		done | while IFS="$(printf '\t')" read -r k v; do
			printf '"%s"=%s\n' "$k" "$(cfq "$v")"
		done >>"$ctx/env"
		IFS=$o
		{
			echo '"org.opencontainers.image.title"='"$(cfq "$IMAGE")"
			if [ "$from" != scratch ]; then
				echo '"org.opencontainers.image.base.name"='"$(cfq "$BASE_REF")"
				echo '"org.opencontainers.image.base.digest"='"$(cfq "${dg:-sha256:$id}")"
			fi
			kiln-stage labels --format=containerfile "$B/info" >"$ctx/bi" ||
				die "no build-info records in $B/info"
			sed 's/^LABEL //' "$ctx/bi"
			# the key of every stage the image holds
			for st in "$B"/stamp/*; do
				n=${st##*/}
				case "$n" in stack.image|*.missing) continue ;; esac
				k=$(sed -n 's/^KEY=//p' "$st" | head -n 1 | tr -d '"')
				if [ -n "$k" ]; then echo "\"kiln.stage.$n\"=\"$k\""; fi
			done
		} >"$ctx/labels"
		# one ENV and one LABEL instruction, a KEY=VALUE a line: each instruction is a
		# step of the build, and on vfs storage each step copies the whole base
		cfjoin ENV <"$ctx/env"
		cfjoin LABEL <"$ctx/labels"
	} >"$ctx/Containerfile" || die "cannot write $ctx/Containerfile"
	rm -f "$ctx/env" "$ctx/labels" "$ctx/bi"
	# --layers=false: no cached image for each step, one commit at the end
	"$bld" build --isolation=chroot --layers=false --format=oci -f "$ctx/Containerfile" -t "$IMAGE" "$ctx" ||
		die "$bld build failed (the context is kept in $ctx)"
	id=$(imgid "$IMAGE") || die "$bld has no image $IMAGE after the build"
	cp "$ctx/Containerfile" "$B/Containerfile.tmp" && mv -f "$B/Containerfile.tmp" "$B/Containerfile"
	rm -rf "$ctx"
	echo "image $IMAGE sha256:$id"
	printf 'sha256:%s\n' "$id" >"$B/image.id.tmp" && mv -f "$B/image.id.tmp" "$B/image.id"
}

step_fat () {
	for k in $COMPONENTS; do
		w=$(cat "$B/wheels/$k.picked")
		set -- -q
		[ "$BACKEND" = gfx ] && set -- "$@" --rocm="$ROCM_PATH" --arch="$(echo "$ARCH" | tr ';' ,)"
		[ "$k" = torch ] && set -- "$@" --layout=pkg:torch/lib
		clean -- fatwheel "$@" "$w" -w "$KILN_STAGE_OUT" || die "fatwheel could not bundle $w"
	done
}

step_smoke () {
	for m in $IMPORTS; do
		clean -- "$PY" -c "import $m; print('$m', getattr($m, '__version__', ''), $m.__file__)" ||
			die "$PY cannot import $m"
	done
	# (a stack of CMake components alone imports nothing: their C.smoke covers them)
	if [ "$BACKEND" != cpu ] && [ "$COVER" != no ] && [ -n "$IMPORTS" ]; then
		site=$(clean -- "$PY" -c 'import torch, os; print(os.path.dirname(torch.__file__))')
		for a in $(echo "$ARCH" | tr ';' ' '); do
			clean -- gpucheck cover --target="$a" "$site" || die "torch's GPU code does not cover $a (above)"
		done
		step_smoke_wheels
		if clean -- gpucheck --arch >/dev/null 2>&1; then clean -- gpucheck smoke --python="$PY"; fi
	fi
}

# step_smoke_wheels: every other wheel the stack built or took ($B/wheels/*.picked) that
# carries GPU code must cover every --arch: vision's, audio's, flash-attention's, AITER's
# and vLLM's extensions, whose builds can drop a target silently (vLLM's CMake keeps only
# the arches it supports); a wheel without GPU code (triton's, a pure-Python one) is
# named. A wheel that lacks one fails the stage in one line naming the wheel, the files
# in it that lack the target (gpucheck cover's verdict lines) and the target.
step_smoke_wheels () {
	set +f
	set -- "$B"/wheels/*.picked
	set -f
	for p; do
		[ -f "$p" ] || continue
		case "${p##*/}" in torch.picked) continue ;; esac
		w=$(cat "$p")
		if ! clean -- gpucheck targets "$w" | grep -q ': [0-9]* bundles*, '; then
			echo "smoke: ${w##*/}: no GPU code"
			continue
		fi
		for a in $(echo "$ARCH" | tr ';' ' '); do
			clean -- gpucheck cover --target="$a" "$w" >"$B/wheels/.smoke.out" && { cat "$B/wheels/.smoke.out"; continue; }
			cat "$B/wheels/.smoke.out"
			f=$(sed -n 's/^ *.*\.whl!\([^ ]*\): [0-9]* of [0-9]* bundles* lacks* it.*/\1/p' "$B/wheels/.smoke.out" | tr '\n' ' ' | sed 's/ $//')
			die "${w##*/} does not cover $a${f:+ (its $f lacks $a)} (above)"
		done
	done
}

step_venv () {
	# the target venv kiln owns (--venv=DIR), made from the base interpreter; --clear
	# only over a venv (configure refuses a folder that is something else)
	set --
	[ "$SYSTEM_SITE" = yes ] && set -- --system-site-packages
	[ -f "$VENV/pyvenv.cfg" ] && set -- "$@" --clear
	"$BASE" -m venv "$@" "$VENV"
	"$VENV/bin/python" -c 'import sys; print("venv", sys.prefix, "from", sys.base_prefix)'
}

step_srctorch () {
	# C.src for C_REF=@torch: the commit torch's patched tree pins (torchpin), then the
	# ordinary src step; a source-only component's build-info record says where it came
	# from (a built one's install record does too). The stage's summary line (and so
	# KILN_EXPLAIN's output) says what @torch resolved to, and what it was before.
	was=
	[ ! -f "$B/src/$c.derived" ] || was=$(sed -n 's/^REF_RESOLVED=//p' "$B/src/$c.derived")
	REF=$(torchpin) || exit 1
	note="${c}_REF=@torch: $REF from torch's $(sed -n 's/^REF_FROM=torch://p' "$B/src/$c.derived")"
	case "$was" in
	''|"$REF") ;;
	*) note="$note, was $was" ;;
	esac
	[ -z "${KILN_STAGE_NOTE:-}" ] || printf '%s\n' "$note" >"$KILN_STAGE_NOTE"
	step_src
	mkdir -p "$B/info"
	{ echo "COMPONENT=$c"; echo "URL=$URL"; echo "COMMIT=$commit"; echo "REF=@torch"; cat "$B/src/$c.derived"; } |
		kiln-stage kv -o "$B/info/$c.info"
}

step_sdk () {
	# its helpers are defined here, inside it, so that they are part of this step's text
	# (its stages' key), not of the shared preamble every stage's key holds
	# sdkwheels: rocm_KIND=wheels, TheRock's rocm[libraries,devel,device-gfxNNNN...]==VERSION
	# ($REQ: one device extra per --arch) from rocm_INDEX alone into the target Python;
	# $ROCM_PATH ($B/rocm/wheels) becomes a link to `rocm-sdk path --root`, which also links
	# the device wheels' files into that tree (TheRock: rocm_sdk/_devel.py). Every rocm
	# package installed goes into build-info and requirements.lock with its version and hash.
	sdkwheels () {
		case "$INDEX" in
		http://*|https://*) set -- --index-url "$INDEX" ;;
		*) [ -d "$INDEX" ] || die "rocm_INDEX=$INDEX is neither a URL nor a folder of wheels"
		   set -- --no-index --find-links "$INDEX" ;;
		esac
		mkdir -p "$B/rocm" "$B/info"
		# resolve first (pip only warns about an extra a package lacks): every --arch must
		# have its device extra, or nothing is installed
		clean -- "$PY" -m pip install --disable-pip-version-check --dry-run --report "$B/rocm/pip-plan.json" "$@" "$REQ" ||
			die "pip cannot resolve $REQ from $INDEX (does it have that rocm release?); nothing was installed"
		sdkextras
		sdkdigests
		clean -- "$PY" -m pip install --disable-pip-version-check --report "$B/rocm/pip-report.json" "$@" "$REQ" ||
			die "pip could not install $REQ from $INDEX"
		root=$(clean -- rocm-sdk path --root) || die "rocm-sdk path --root failed (are TheRock's rocm wheels installed in $PY?)"
		[ -f "$root/.info/version" ] || [ -d "$root/lib" ] || die "rocm-sdk path --root names $root, which is not a ROCm SDK"
		ln -sfn "$root" "$ROCM_PATH.new" && mv -T "$ROCM_PATH.new" "$ROCM_PATH"
		echo "ROCm from wheels ($REQ): $root"
		sdkrecord
	}
	# sdkextras: pip's plan ($B/rocm/pip-plan.json) has rocm's device extra for every --arch
	# (pip itself only warns about a missing extra), or the step stops with one line
	sdkextras () {
		clean -- "$PY" -c '
import json, re, sys
plan, index, archs = json.load(open(sys.argv[1])), sys.argv[2], [a.split(":")[0] for a in sys.argv[3].split(";")]
m = [i["metadata"] for i in plan.get("install", []) if re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower() == "rocm"]
if not m:
    # already installed at that version: pip plans nothing; its own metadata says
    import importlib.metadata as md
    try:
        d = md.distribution("rocm")
        m = [{"version": d.version, "provides_extra": d.metadata.get_all("Provides-Extra") or []}]
    except md.PackageNotFoundError:
        sys.exit("rocm_INDEX=%s: no package rocm to install (TheRock'"'"'s selector package)" % index)
have = sorted(e for e in m[0].get("provides_extra", []) if e.startswith("device-"))
for a in archs:
    if "device-" + a not in have:
        sys.exit("rocm_INDEX=%s: rocm %s there has no extra device-%s (it has %s): no GPU code for %s would be installed; use an index and release that build %s, or a ROCm from env/rocm-channels.env" %
                 (index, m[0]["version"], a, ", ".join(have) or "none", a, a))
' "$B/rocm/pip-plan.json" "$INDEX" "$ARCH_LIST" || die "nothing was installed (above)"
	}
	# sdkdigests: every file pip would fetch, held to the digest of its first fetch (trust on
	# first use, $B/rocm.lock, as the tarballs): a package changed on the index is refused
	# here, before anything is installed
	sdkdigests () {
		clean -- "$PY" -c '
import json, sys
for i in json.load(open(sys.argv[1])).get("install", []):
    d = i.get("download_info", {})
    h = d.get("archive_info", {}).get("hashes", {}).get("sha256") or d.get("archive_info", {}).get("hash", "").partition("sha256=")[2]
    if d.get("url") and h:
        print(d["url"], h)
' "$B/rocm/pip-plan.json" >"$B/rocm/pip-plan.digests" || die "cannot read pip's plan $B/rocm/pip-plan.json"
		while read -r u h; do
			kiln-stage sdklock "$B/rocm.lock" "$u" --sha256="$h" >/dev/null || die "nothing was installed (above)"
		done <"$B/rocm/pip-plan.digests"
	}
	# sdkrecord: one build-info record per rocm package pip installed (pip's --report: name,
	# version, the file and its sha256), then build-info.json and requirements.lock
	sdkrecord () {
		clean -- "$PY" -c '
import json, os, re, sys
rep, info = json.load(open(sys.argv[1])), sys.argv[2]
for i in rep.get("install", []):
    m = i.get("metadata", {})
    n = re.sub(r"[-_.]+", "-", m.get("name", "")).lower()
    if not (n == "rocm" or n.startswith("rocm-sdk")):
        continue
    d = i.get("download_info", {})
    h = d.get("archive_info", {}).get("hashes", {}).get("sha256", "")
    with open(os.path.join(info, "rocm~%s.info" % n), "w") as f:
        f.write("COMPONENT=rocm\nDIST=%s\nVERSION=%s\nWHEEL=%s\nWHEEL_SHA256=%s\n" %
                (n, m.get("version", ""), os.path.basename(d.get("url", "")), h))
    print("rocm package: %s==%s sha256:%s" % (n, m.get("version", ""), h))
' "$B/rocm/pip-report.json" "$B/info" || die "cannot read pip's report $B/rocm/pip-report.json"
		lock
		kiln-stage info -o "$B/build-info.json" "$B/info"
	}
	# the ROCm SDK tarball (rocm_URL), unpacked into $ROCM_PATH: kiln-stage unpack fills a
	# temporary folder beside it and renames it last, so a folder of that name is always
	# whole. A URL is downloaded first (with resume) into $B/rocm/dl; a path or file:// is
	# read where it is. Pinned with rocm_SHA256, that digest is checked; without it (AMD
	# publishes none) the first fetch locks the digest in $B/rocm.lock, and every later
	# one must match it (trust on first use).
	[ "$KIND" = wheels ] && { sdkwheels; return; }
	lock=$B/rocm.lock
	case "$URL" in
	http://*|https://*|ftp://*)
		if [ -n "$SHA256" ]; then
			tar=$B/rocm/dl/$SHA256.tar
			kiln-stage fetch "$URL" --sha256="$SHA256" -o "$tar" || die "cannot fetch the ROCm SDK $URL"
		else
			tar=$B/rocm/dl/${ROCM_PATH##*/}.tar
			kiln-stage fetch "$URL" --lock="$lock" -o "$tar" || die "cannot fetch the ROCm SDK $URL"
		fi ;;
	file://*) tar=${URL#file://} ;;
	*) tar=$URL ;;
	esac
	sha=$SHA256
	[ -n "$sha" ] || sha=$(kiln-stage sdklock "$lock" "$URL" "$tar") || die "the ROCm SDK $URL is refused (above)"
	kiln-stage unpack "$tar" --into="$ROCM_PATH" --sha256="$sha" --layout=rocm ||
		die "cannot unpack the ROCm SDK $URL"
	v=$(cat "$ROCM_PATH/.info/version" 2>/dev/null) ||
		v=$(sed -n 's/.*"rocm[-_]version": *"\([^"]*\)".*/\1/p' "$ROCM_PATH/share/therock/therock_manifest.json" 2>/dev/null | head -n 1)
	echo "ROCm ${v:-(version not recorded)} in $ROCM_PATH (sha256 $sha)"
	set +f
	for k in "$ROCM_PATH"/.kpack/*.kpack; do [ -f "$k" ] && echo "kernel pack: ${k#"$ROCM_PATH"/}"; done
	set -f
}

# rocmdevlib: the folder of the device libraries (ockl.bc ...) of the ROCm at $ROCM_PATH, in
# the layouts configure knows (its rocm_devlibs, the same list): /opt/rocm's amdgcn/bitcode,
# TheRock's llvm/..., Debian's and Ubuntu's lib/llvm-N/lib/clang/N/amdgcn/bitcode, Fedora's
# lib64/rocm/llvm/lib/clang/N/lib/amdgcn/bitcode (and its older clang/N/amdgcn/bitcode and
# lib64/amdgcn/bitcode); fails when none holds them
rocmdevlib () {
	set +f
	for d in "$ROCM_PATH/amdgcn/bitcode" "$ROCM_PATH/llvm/amdgcn/bitcode" "$ROCM_PATH"/lib/llvm-*/lib/clang/*/amdgcn/bitcode \
		"$ROCM_PATH"/llvm/lib/clang/*/lib/amdgcn/bitcode "$ROCM_PATH"/lib64/rocm/llvm/lib/clang/*/lib/amdgcn/bitcode \
		"$ROCM_PATH"/lib64/clang/*/amdgcn/bitcode "$ROCM_PATH"/lib/clang/*/amdgcn/bitcode "$ROCM_PATH/lib64/amdgcn/bitcode"; do
		[ -f "$d/ockl.bc" ] && { set -f; printf '%s\n' "$d"; return 0; }
	done
	set -f
	return 1
}

# --- rocm.check (step_check): its pieces are step_check_* functions, part of its key only;
# they run in step_check's shell, so their variables must not be step_check's (a, n, f ...)

# step_check_libs: ROCm's GPU libraries under $ROCM_PATH, one path a line: lib/, lib64/ and
# a distribution's multiarch folder (Debian, Ubuntu: lib/x86_64-linux-gnu)
step_check_libs () {
	set +f
	for d in "$ROCM_PATH/lib" "$ROCM_PATH/lib64" "$ROCM_PATH"/lib/*-linux-gnu; do
		for f in "$d"/librocblas.so* "$d"/libhipblaslt.so* "$d"/librocsparse.so* "$d"/libMIOpen.so* \
			"$d"/librocrand.so* "$d"/librocfft.so* "$d"/librocsolver.so* "$d"/libhipsparselt.so* \
			"$d"/librccl.so* "$d"/libhipfft.so* "$d"/libhiprand.so*; do
			[ -f "$f" ] && [ ! -L "$f" ] && printf '%s\n' "$f"
		done
	done
	set -f
}

# step_check_name FILE: the library's own name (rocBLAS, hipBLASLt, ...)
step_check_name () {
	case "${1##*/}" in
	librocblas.*) echo rocBLAS ;; libhipblaslt.*) echo hipBLASLt ;; librocsparse.*) echo rocSPARSE ;;
	libMIOpen.*) echo MIOpen ;; librocrand.*) echo rocRAND ;; librocfft.*) echo rocFFT ;;
	librocsolver.*) echo rocSOLVER ;; libhipsparselt.*) echo hipSPARSELt ;; librccl.*) echo RCCL ;;
	libhipfft.*) echo hipFFT ;; libhiprand.*) echo hipRAND ;; *) echo "${1##*/}" ;;
	esac
}

# step_check_kernfolders FILE: the kernel-library folders of the library FILE (rocBLAS's
# and hipBLASLt's Tensile code objects: LIBDIR/rocblas/library, Fedora's
# /usr/lib64/rocblas/library, Debian's versioned LIBDIR/rocblas/VERSION/library)
step_check_kernfolders () {
	n=${1##*/}; n=${n#lib}; n=${n%%.so*}
	case "$n" in rocblas|hipblaslt) ;; *) return 0 ;; esac
	set +f
	for k in "${1%/*}/$n/library" "${1%/*}/$n"/*/library; do [ -d "$k" ] && printf '%s\n' "$k"; done
	set -f
}

# step_check_lack TEXT: one more part the library lacks the arch in ($lacks, "; "-separated)
step_check_lack () { lacks="${lacks:+$lacks; }$*"; }

# step_check_unroot TEXT: TEXT with "$ROCM_PATH/" taken out (paths said relative to the SDK)
step_check_unroot () {
	u=$1 r=
	while :; do
		case "$u" in *"$ROCM_PATH/"*) r=$r${u%%"$ROCM_PATH/"*}; u=${u#*"$ROCM_PATH/"} ;; *) break ;; esac
	done
	printf '%s\n' "$r$u"
}

# step_check_bundles A FILE: the library's own GPU code for A as gpucheck cover judges it
# (tools/gpucheck, the loader's rules: the exact ISA with its xnack/sramecc features, then
# the family's generic target for code object v6; a kpack'd library's HIPK wrappers through
# the archive the kpack loader picks: the exact ISA, each subset of its features, the bare
# processor, and no generic target). One log line, or one more part in $lacks
step_check_bundles () {
	rc=0 out=$(gpucheck cover -v --target="$1" "$2" 2>&1) || rc=$?
	line=$(printf '%s\n' "$out" | grep -F "  $2: " | head -n 1); line=${line#"  $2: "}
	case "$rc:$line:$out" in
	0:*"[kpack:"*) echo "$1: $rel: covered (kernel packs: $(step_check_unroot "${line##*]: }"))" ;;
	0:*) via=$(printf '%s\n' "$out" | sed -n '1s/.* through \([a-z0-9-]*\).*/\1/p')
	     echo "$1: $rel: covered (code-object bundles${via:+, through $via})" ;;
	1:*"carry no AMD GPU code"*) echo "$1: $rel: no code-object bundles (host code)" ;;
	1:*"kpack code objects lack it: "*)
		step_check_lack "its kernel packs ($(step_check_unroot "${line#*lack it: }"); install rocm[device-${1%%:*}] or a tarball carrying it)" ;;
	1:*) has=$(printf '%s\n' "$line" | sed -n 's/^[^;]*) has \([^;]*\).*/\1/p')
	     fix=$(printf '%s\n' "$out" | sed -n 's/^ *fix: //p' | head -n 1)
	     step_check_lack "its code-object bundles ($rel has ${has:-none}; gpucheck: ${fix:-no fix})" ;;
	*) step_check_lack "gpucheck cannot read it ($(step_check_unroot "$(printf '%s\n' "$out" | head -n 1)"))" ;;
	esac
}

# step_check_kernels A DIR: a kernel-library folder (Tensile's code objects), covered when
# one code object of the library runs on A (gpucheck cover's code-object rule)
step_check_kernels () {
	kr=${2#"$ROCM_PATH"/}
	if out=$(gpucheck cover --target="$1" "$2" 2>&1); then echo "$1: $kr: covered (kernel library)"; return; fi
	has=$(printf '%s\n' "$out" | sed -n "s/.*among the library's (\(.*\)) \[code objects.*/\1/p" | head -n 1 | sed 's/ ([0-9]*)//g')
	step_check_lack "its Tensile kernels ($kr has ${has:-none})"
}

# step_check_kdb A: MIOpen's kernel database for A. MIOpen opens SYSDB/ID_CUs.kdb (the
# compute units in decimal up to 64; above, ID then the count in hex: gfx90a6e.kdb), then
# SYSDB/ID.kdb (ROCm/MIOpen src/binary_cache.cpp GetDb, src/include/miopen/handle.hpp
# GetDbBasename); ID is the processor (src/target_properties.cpp InitDbId adds _xnack
# with XNACK on, which --arch does not name); SYSDB is share/miopen/db (CMakeLists.txt
# DATABASE_INSTALL_DIR). TheRock's device wheels carry the .kdb files (TheRock
# docs/packaging/python_packaging.md). A folder with other arches' databases and none for
# A lacks it; one with none at all (Debian's libmiopen1 ships none) is said, not failed:
# MIOpen then compiles its kernels when they are first used
step_check_kdb () {
	db=$ROCM_PATH/share/miopen/db id=$1
	set +f
	all=$(for kf in "$db"/*.kdb; do [ -f "$kf" ] && printf '%s\n' "${kf##*/}"; done || :)
	for kf in "$db/$id.kdb" "$db/${id}_"[0-9]*.kdb "$db/$id"[0-9a-f][0-9a-f]*.kdb; do
		[ -f "$kf" ] && { set -f; echo "$1: ${kf#"$ROCM_PATH"/}: covered (MIOpen's kernel database)"; return; }
	done
	set -f
	if [ -z "$all" ]; then
		echo "$1: share/miopen/db: no MIOpen kernel database (*.kdb) for any arch: MIOpen compiles its kernels when first used"
		return
	fi
	step_check_lack "its kernel database (share/miopen/db has $(printf '%s\n' "$all" | tr '\n' ' ' | sed 's/ $//; s/ /, /g'); none is ${id}_CUs.kdb or $id.kdb)"
}

# step_check_lib A FILE: one library for target A in every part that holds its GPU code:
# its bundles or kernel packs, its kernel-library folders, MIOpen's kernel database.
# Prints "A: PATH: covered (part)" lines for the log; the parts lacking A in $lacks
step_check_lib () {
	lacks= rel=${2#"$ROCM_PATH"/}
	step_check_bundles "$1" "$2"
	for k in $(step_check_kernfolders "$2"); do step_check_kernels "$1" "$k"; done
	case "${2##*/}" in libMIOpen.so*) step_check_kdb "$1" ;; esac
}

# every GPU library of the SDK must carry code each --arch can run, in every part: its
# bundles or kernel packs, its kernel-library folders, MIOpen's kernel database. One line
# per library lacking an arch, naming the parts, before any compile.
step_check () {
	# paths may hold spaces: the lists below are split at newlines only
	IFS='
'
	libs=$(step_check_libs)
	[ -n "$libs" ] || die "$ROCM_PATH has none of ROCm's GPU libraries (rocBLAS, hipBLASLt, rocSPARSE, MIOpen, rocRAND, ...) in lib/, lib64/ or lib/*-linux-gnu/: not a ROCm SDK"
	bad=0
	for a in $(printf '%s\n' "$ARCH" | tr ';' '\n'); do
		n=0 nbad=0
		for f in $libs; do
			n=$((n + 1))
			step_check_lib "$a" "$f"
			[ -z "$lacks" ] && continue
			say "rocm.check: $(step_check_name "$f") (${f#"$ROCM_PATH"/}) has no code for $a in $lacks; use a ROCm built for $a (env/rocm-channels.env names the channel), the family's generic target, or leave that library's feature off"
			nbad=$((nbad + 1)) bad=1
		done
		echo "$a: $n GPU libraries, $((n - nbad)) covered, $nbad lacking it"
	done
	[ "$bad" = 0 ] || die "the ROCm at $ROCM_PATH lacks code for --arch=$(printf '%s' "$ARCH" | tr ';' ,)"
}

# --- C_BUILD=cmake: C.build (step_cmake), C.install (step_cmakeinstall), C.smoke
# (step_cmakesmoke). The pieces of step_cmake are defined by step_cmakeparts, so that
# their text is part of C.build's RULE (graph.c names both steps) and of no other stage's.

step_cmake () {
	# configure, build and install a CMake project into a staging prefix, packed as one
	# tarball in $KILN_STAGE_OUT (the stage's output: the stage cache stores it, verify
	# compares it). As for a wheel: a fresh copy of the prepared tree ($B/work/C, or
	# WORK_DIR/C), SOURCE_DATE_EPOCH (the pinned commit's time), the prefix maps in
	# CFLAGS/CXXFLAGS/HIPFLAGS, the compiler cache (CMake's compiler launchers), a
	# relocatable prefix (/kiln/prefix/C inside the files, $ORIGIN RPATHs)
	step_cmakeparts
	out=$KILN_STAGE_OUT
	cmk_work
	cmk_precheck
	set -- --set HOME="$work.home" --set SOURCE_DATE_EPOCH="$sde" \
		--set CMAKE_POLICY_VERSION_MINIMUM=3.5 --set GIT_CEILING_DIRECTORIES="$wroot" \
		--set CFLAGS="$maps" --set CXXFLAGS="$maps" --set HIPFLAGS="$maps${devlib:+ $devlib}" \
		--set CUDAFLAGS="$cuda" --set CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
	case "$BACKEND" in
	gfx) set -- "$@" --set ROCM_PATH="$ROCM_PATH" --set HIP_PATH="$ROCM_PATH" ;;
	cuda) set -- "$@" --keep CUDA_HOME --keep CUDA_PATH --keep CUDACXX ;;
	esac
	[ -n "${CC_CMD:-}" ] && set -- "$@" --set CC="$CC_CMD"
	case "$CACHE" in
	ccache|sccache)
		command -v "$CACHE" >/dev/null 2>&1 || die "--cache=$CACHE, but there is no $CACHE here (install $CACHE)"
		for v in $(passenv CCACHE_ SCCACHE_); do eval "set -- \"\$@\" --set \"$v=\${$v-}\""; done
		# no CCACHE_BASEDIR (step_wheel_cache says why)
		set -- "$@" --set CCACHE_BASEDIR= --set SCCACHE_BASEDIRS="$work"
		[ -n "${CCACHE_DIR:-}" ] || set -- "$@" --set CCACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/ccache"
		[ -n "${SCCACHE_DIR:-}" ] || set -- "$@" --set SCCACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/sccache" ;;
	esac
	for e in $ENV; do set -- "$@" --set "$e"; done
	step_cmake_offline
	set -- "$@" $ngargs
	[ "$CACHE" = ccache ] && ccstats "$@" >"$work.home/ccache.before"
	cmk_configure "$@"
	cmk_build "$@"
	netguard_stop
	if [ "$CACHE" = ccache ]; then
		ccstats "$@" >"$work.home/ccache.after"
		hitrate "$work.home/ccache.before" "$work.home/ccache.after"
	fi
	cmk_pack
	cd "$B" && rm -rf "$work" "$work.home"
	ls "$out"
}

step_cmakeparts () {
	# cmk_work: the fresh copy of the prepared tree (work, wroot, dir), the commit, its
	# time (sde) and the prefix maps (maps, cuda); the build folder is $work/_kiln_build
	cmk_work () {
		worktree
		mkdir -p "$work.home/prefix" || die "cannot create $work.home/prefix"
		bd=$work/_kiln_build
		sde=$(git --git-dir="$src/.git" show -s --format=%ct "$commit" 2>/dev/null) || sde=
		case "$sde" in ''|*[!0-9]*) sde=315532800 ;; esac
		maps= cuda=
		for m in "$B=/kiln/build" "$work=/kiln/src/$c"; do
			case "$m" in
			*[!A-Za-z0-9_./:=+,@%-]*) say "cannot map ${m%=*} in CFLAGS (its name has spaces, quotes or shell characters)"; continue ;;
			esac
			maps="$maps -ffile-prefix-map=$m -fdebug-prefix-map=$m"
			cuda="$cuda -Xcompiler=-ffile-prefix-map=$m"
		done
		maps=${maps# } cuda=${cuda# }
	}
	# cmk_precheck: what is knowable before compiling, one line each: an AMD --arch the
	# HIP compiler does not know (clang -print-supported-cpus), and Vulkan turned on
	# without glslc (ggml's src/ggml-vulkan/CMakeLists.txt: find_package(Vulkan
	# COMPONENTS glslc REQUIRED)); devlib: the HIP compiler's device-library option
	cmk_precheck () {
		hc= glslc= vk= devlib=
		for a in $CMAKE_ARGS $ARCH_ARGS; do
			case "$a" in
			-DCMAKE_HIP_COMPILER=*|-DCMAKE_HIP_COMPILER:*=*) hc=${a#*=} ;;
			-DVulkan_GLSLC_EXECUTABLE=*|-DVulkan_GLSLC_EXECUTABLE:*=*) glslc=${a#*=} ;;
			-D*VULKAN=ON|-D*VULKAN:BOOL=ON) vk=${a#-D} ;;
			esac
		done
		if [ -n "$vk" ]; then
			[ -n "$glslc" ] || glslc=$(clean -- sh -c 'command -v glslc') ||
				die "$vk needs glslc, the Vulkan shader compiler, which is not on PATH (Debian: apt-get install glslc; or -DVulkan_GLSLC_EXECUTABLE=PATH in ${c}_CMAKE_ARGS)"
			[ -x "$glslc" ] || die "$vk: -DVulkan_GLSLC_EXECUTABLE=$glslc is not a program"
		fi
		[ "$BACKEND" = gfx ] || return 0
		if [ -z "$hc" ]; then
			for x in "$ROCM_PATH/llvm/bin/clang" "$ROCM_PATH/lib/llvm/bin/clang"; do
				[ -x "$x" ] && { hc=$x; break; }
			done
		fi
		[ -n "$hc" ] || die "no HIP compiler in $ROCM_PATH (llvm/bin/clang); name it with -DCMAKE_HIP_COMPILER=PATH in ${c}_CMAKE_ARGS"
		known=$(clean -- "$hc" --target=amdgcn-amd-amdhsa -nogpulib -print-supported-cpus 2>&1 | sed -n 's/^[[:space:]]*\(gfx[0-9a-z]*\)$/\1/p' | tr '\n' ' ')
		[ -n "$known" ] || die "the HIP compiler $hc lists no AMD GPU targets (clang --target=amdgcn-amd-amdhsa -print-supported-cpus)"
		cmk_devlib "$hc"
		for a in $(printf '%s' "$ARCH" | tr ';' ' '); do
			case " $known" in
			*" $a "*) ;;
			*) die "--arch=$a: the HIP compiler $hc does not know it (it knows $(printf '%s' "$known" | tr ' ' '\n' | grep -c .) gfx targets, e.g. $(printf '%s' "$known" | tr ' ' '\n' | tail -n 3 | tr '\n' ' ')); use a newer ROCm or another --arch" ;;
			esac
		done
	}
	# cmk_devlib CLANG: devlib, the --rocm-device-lib-path a distribution's clang needs.
	# With ROCM_PATH set, clang looks for the device libraries (ockl.bc ...) in
	# $ROCM_PATH/amdgcn/bitcode only; Debian keeps them in clang's resource folder
	# (/usr/lib/llvm-21/lib/clang/21/amdgcn/bitcode), where clang finds them only with no
	# ROCM_PATH: "cannot find ROCm device library" at CMake's first HIP test compile
	cmk_devlib () {
		[ ! -f "$ROCM_PATH/amdgcn/bitcode/ockl.bc" ] || return 0
		rd=$(clean -- "$1" -print-resource-dir 2>/dev/null) || return 0
		for d in "$rd/amdgcn/bitcode" "$rd/lib/amdgcn/bitcode"; do
			[ -f "$d/ockl.bc" ] && { devlib=--rocm-device-lib-path=$d; return 0; }
		done
		return 0
	}
	# cmk_configure ENVCLEAN-OPTION...: cmake's configure; a failure is the first "CMake
	# Error" line and the message under it, in one line
	cmk_configure () {
		set -- "$@" -- cmake -S "$dir" -B "$bd" -G Ninja -DCMAKE_BUILD_TYPE=Release \
			-DCMAKE_INSTALL_PREFIX="/kiln/prefix/$c" -DCMAKE_INSTALL_LIBDIR=lib \
			-DCMAKE_INSTALL_RPATH='$ORIGIN/../lib' -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON
		case "$CACHE" in
		ccache|sccache) for l in C CXX HIP CUDA; do set -- "$@" "-DCMAKE_${l}_COMPILER_LAUNCHER=$CACHE"; done ;;
		esac
		pp=
		for d in $DEPS; do pp="$pp${pp:+;}$B/prefix/${d%.*}"; done
		[ -z "$pp" ] || set -- "$@" "-DCMAKE_PREFIX_PATH=$pp"
		set -- "$@" $ARCH_ARGS $CMAKE_ARGS
		if ! clean "$@" >"$work.home/configure.log" 2>&1; then
			cat "$work.home/configure.log"
			e=$(sed -n '/^CMake Error/{N;s/\n[[:space:]]*/ /;p;q;}' "$work.home/configure.log" | sed "s|$work/||g")
			die "cmake could not configure $c: ${e:-$(tail -n 1 "$work.home/configure.log")}"
		fi
		cat "$work.home/configure.log"
	}
	# cmk_build ENVCLEAN-OPTION...: build, then install into the staging prefix; the
	# program C_CHECK names is copied into its bin/ when the project does not install it
	cmk_build () {
		clean "$@" -- cmake --build "$bd" -j "$JOBS" || die "the build failed (its tree is kept in $work)"
		stage=$work.home/prefix
		clean "$@" -- cmake --install "$bd" --prefix "$stage" || die "cmake --install failed (its tree is kept in $work)"
		[ -n "$CHECK_PROG" ] || return 0
		[ -e "$stage/bin/$CHECK_PROG" ] && return 0
		cp_=$(find "$bd" -name "$CHECK_PROG" -type f -perm -u+x | sort | head -n 1)
		[ -n "$cp_" ] || die "${c}_CHECK: the build made no program $CHECK_PROG"
		mkdir -p "$stage/bin" && cp "$cp_" "$stage/bin/$CHECK_PROG" || die "cannot copy $cp_"
	}
	# cmk_pack: the staging prefix as one tarball, the same bytes for the same key:
	# names sorted, times SOURCE_DATE_EPOCH, owner 0, gzip without a name or time
	cmk_pack () {
		rel=
		for t in $REF; do
			v=${t#v}
			case "$v" in [0-9]*) case "$v" in *[!0-9.]*|*.|*..*) ;; *) rel=$v ;; esac ;; esac
		done
		label=kiln.$(printf '%s' "$ARCH" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '.').g$(printf '%.10s' "$KILN_STAGE_KEY")
		tb=$c-${rel:-$(printf '%.12s' "$commit")}+$label.tar.gz
		tar --format=gnu --sort=name --mtime="@$sde" --owner=0 --group=0 --numeric-owner \
			-C "$stage" -cf - . | gzip -9n >"$out/$tb.tmp" && mv -f "$out/$tb.tmp" "$out/$tb" ||
			die "cannot pack $stage into $out/$tb"
		echo "packed $tb: $(tar -tzf "$out/$tb" | grep -c -v '/$') files"
	}
}

# step_cmake_offline: the guard of the CMake build (ngargs: its settings, added by
# step_cmake), and for aotriton the tree's own target list, checked before compiling
step_cmake_offline () {
	netguard_start
	[ -z "${AOTRITON_ARCH:-}" ] || step_cmake_aotriton
}

# step_cmake_aotriton: AOTRITON_TARGET_ARCH of the pinned AOTriton's CMakeLists.txt (a
# cache string since 0.10b; ROCm/aotriton) lists every target aotriton.build builds
step_cmake_aotriton () {
	l=$(sed -n 's/^[[:space:]]*set(AOTRITON_TARGET_ARCH "\([^"]*\)".*/\1/p' "$dir/CMakeLists.txt" 2>/dev/null | head -n 1)
	[ -n "$l" ] || die "$src/CMakeLists.txt sets no AOTRITON_TARGET_ARCH list (AOTriton 0.9b and older name trade names in TARGET_GPUS): pin AOTriton 0.10b or later"
	for a in $(printf '%s' "$AOTRITON_ARCH" | tr ';' ' '); do
		case ";$l;" in
		*";$a;"*) ;;
		*) die "the pinned AOTriton (commit $commit) builds $(printf '%s' "$l" | tr ';' ,) (AOTRITON_TARGET_ARCH of its CMakeLists.txt), not $a: pin an AOTriton that lists it (and say so in aotriton_ARCHES), or drop $a from --arch" ;;
		esac
	done
	say "AOTriton builds $(printf '%s' "$AOTRITON_ARCH" | tr ';' ,) (its list: $(printf '%s' "$l" | tr ';' ,))"
	# the targets this AOTriton calls experimental (isArchExperimentallySupported in its
	# v3src/util.cc: gfx1151 in 0.10b-0.11, not from 0.12b): torch uses its kernels there
	# only with TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1 where it runs (read at run time)
	x=$(sed -n '/isArchExperimentallySupported(/,/^}/p' "$dir/v3src/util.cc" 2>/dev/null | grep -o '0x[0-9a-fA-F]*' | sed 's/^0x/gfx/' | tr 'A-F\n' 'a-f ')
	for a in $(printf '%s' "$AOTRITON_ARCH" | tr ';' ' '); do
		case " $x" in
		*" $a "*) say "$a: experimental in this AOTriton: torch uses its kernels only with TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1 in the environment it runs in (env/arch/$a.env gives it to stack.smoke)" ;;
		esac
	done
}

step_cmakeinstall () {
	# the tarball C.build made, unpacked into $B/prefix/C (the prefix other stages
	# consume: CMAKE_PREFIX_PATH, pkg-config --define-prefix, $ORIGIN RPATHs), whole:
	# unpacked beside it and renamed into place; then C's build-info record
	set +f
	set -- "$B/cmake/$c"/*.tar.gz
	set -f
	[ $# = 1 ] && [ -f "$1" ] || die "$B/cmake/$c holds no tarball (or several); run ninja $c.build"
	pfx=$B/prefix/$c
	rm -rf "$pfx.new" "$pfx.old" && mkdir -p "$pfx.new" && tar -xzf "$1" -C "$pfx.new" || die "cannot unpack $1 into $p.new"
	[ ! -e "$pfx" ] || mv "$pfx" "$pfx.old" || die "cannot move the old $pfx aside"
	mv "$pfx.new" "$pfx" && rm -rf "$pfx.old" || die "cannot rename $pfx.new to $pfx"
	mkdir -p "$B/info"
	{
		echo "COMPONENT=$c"
		[ -d "$src" ] && clean -- srcpin state "$src" 2>/dev/null | grep -E '^(URL|COMMIT|SERIES_DIGEST)='
		[ -f "$B/src/$c.fetched" ] && echo "FETCHED_FROM=$(cat "$B/src/$c.fetched")"
		n=${1##*/}
		echo "VERSION=$(printf '%s' "${n#"$c"-}" | sed 's/\.tar\.gz$//')"
		echo "TARBALL=$n"
		echo "TARBALL_SHA256=$(sha256sum "$1" | cut -c1-64)"
		echo "PREFIX=$pfx"
		echo "ARCH=$(echo "$ARCH_LIST" | tr ';' ,)"
	} | kiln-stage kv -o "$B/info/$c.info"
	kiln-stage info -o "$B/build-info.json" "$B/info"
	echo "installed ${1##*/} into $pfx"
}

step_cmakesmoke () {
	# C_CHECK, the project's own check (ggml: test-backend-ops), from the prefix's bin/
	# with its lib/ on the loader's path; then, for AMD targets, gpucheck cover of the
	# prefix's libraries for every --arch (stack_COVER=no skips it)
	pfx=$B/prefix/$c
	if [ -n "$CHECK" ]; then
		set -- $CHECK
		[ -x "$pfx/bin/$1" ] || die "${c}_CHECK=$CHECK: $pfx/bin/$1 is not there"
		prog=$pfx/bin/$1
		shift
		set -- -- "$prog" "$@"
		# C_ENV reaches the check too (GGML_VK_VISIBLE_DEVICES=0 lets ggml use lavapipe)
		for e in $ENV; do set -- --set "$e" "$@"; done
		clean --set LD_LIBRARY_PATH="$pfx/lib" --prepend-path "$pfx/bin" "$@" ||
			die "${c}_CHECK failed: $CHECK (above)"
	fi
	[ "$BACKEND" = gfx ] && [ "$COVER" != no ] || return 0
	for a in $(printf '%s' "$ARCH" | tr ';' ' '); do
		clean -- gpucheck cover --target="$a" "$pfx/lib" || die "$c's GPU code in $pfx/lib does not cover $a (above)"
	done
}

# step_vllmcheck: vllm.check, before vLLM's deps and build: the --arch targets the pinned
# tree's CMakeLists.txt keeps and the tools its build needs (rustc, cargo and protoc for
# the Rust frontend of vLLM >= 0.22, a cmake below 4), read from the prepared tree by
# kiln-stage vllm-check (configure did the same from a mirror when one held the commit);
# one line when the tree would drop a target or PATH lacks a tool
step_vllmcheck () {
	clean -- kiln-stage vllm-check --arch="$ARCH" --flavour="$FLAVOUR" --name="vLLM $REF" \
		"$src${SUBDIR:+/$SUBDIR}" 2>"$B/src/$c.check.err" ||
		die "$(sed 's/^kiln-stage: //' "$B/src/$c.check.err" | tail -n 1)"
}

# one line: sh has read it whole before the step runs, so an edit of this file during a
# long stage cannot make the shell read on into changed text
"step_$step"; exit $?
