# lib/build.sh: what the wheel and CMake builds share: the fresh work tree (worktree),
# the build's envclean options kept in a file (warg) and handed to the build (buildend),
# the pinned commit's time (pinsde), the release and local label of what is built
# (pinlabel), the prefix maps (prefixmaps) and the caller's variables a build keeps
# (passenv). Sourced by the wheel and cmake steps.
# needs: lib/base.sh

# worktree: the fresh private copy of the prepared tree a build step works in ($work,
# $wroot, $dir, $commit; $out, the stage's output), for the wheel and the CMake steps
worktree () {
	out=$KILN_STAGE_OUT
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
	# the build's envclean options, one argument a line (warg); no value holds a
	# newline: configure refuses them
	wargs=$work.home/args
	: >"$wargs" || die "cannot write $wargs"
}

# warg ARG...: envclean options for the build, kept in $wargs (worktree made it); the
# step hands them to its build through buildend
warg () {
	printf '%s\n' "$@" >>"$wargs"
}

# buildend LAST RUN: how the wheel and the CMake builds end. The component's C_ENV
# settings (after the settings of the pieces before, so they win over those), then the
# piece LAST (whose settings win over C_ENV: the network guard, the build backend), then
# RUN with the build's envclean options as its arguments (warg's, in order: its
# `clean "$@" -- ...` lines); the work tree is removed and the stage's output listed
buildend () {
	for e in $ENV; do warg --set "$e"; done
	"$1"
	fn=$2
	set --
	while IFS= read -r a; do set -- "$@" "$a"; done <"$wargs"
	"$fn" "$@"
	cd "$B" && rm -rf "$work" "$work.home"
	ls "$out"
}

# pinsde: sde, SOURCE_DATE_EPOCH: the pinned commit's time, so archives and embedded
# dates are a function of the pin (git reads the checkout's objects; 1980-01-01 without
# git)
pinsde () {
	sde=$(git --git-dir="$src/.git" show -s --format=%ct "$commit" 2>/dev/null) || sde=
	case "$sde" in ''|*[!0-9]*) sde=315532800; say "no commit time from git; SOURCE_DATE_EPOCH=$sde" ;; esac
}

# pinlabel: rel, the release the pin names: the pinned tag when it is a version (v0.14.1
# -> 0.14.1; upstreams leave version.txt at 0.14.1a0 on their release branches and set it
# at release time), else a version tag on the pinned commit, else empty; and label,
# kiln.ARCH.gHASH, how it was built, HASH from this stage's key (sources, series, arch,
# env, the torch built against): another build gets another label, the same key the
# same one. Its first segment is letters only, so PEP 440's text order of mixed
# segments (+rocm10 < +rocm6) never ranks two kiln builds by accident.
pinlabel () {
	rel=
	for t in ${REF:-} $(git --git-dir="$GITC/$c.git" tag --points-at "$commit" 2>/dev/null); do
		v=${t#v}
		case "$v" in [0-9]*) case "$v" in *[!0-9.]*|*.|*..*) ;; *) rel=$v; break ;; esac ;; esac
	done
	label=kiln.$(printf '%s' "$ARCH" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '.').g$(printf '%.10s' "$KILN_STAGE_KEY")
}

# prefixmaps FROM=TO...: maps, the compilers' prefix maps (file names in objects and
# debug info written as fixed paths, so two build folders give the same bytes), and
# cuda, the same for nvcc's host compiler. CFLAGS is split on white space (and quotes)
# by every build system: a folder whose name holds them cannot be mapped, and the build
# goes on without the map
prefixmaps () {
	maps= cuda=
	for m; do
		case "$m" in
		*[!A-Za-z0-9_./:=+,@%-]*) say "cannot map ${m%=*} in CFLAGS (its name has spaces, quotes or shell characters); its path stays in the binaries"; continue ;;
		esac
		maps="$maps -ffile-prefix-map=$m -fdebug-prefix-map=$m"
		cuda="$cuda -Xcompiler=-ffile-prefix-map=$m -Xcompiler=-fdebug-prefix-map=$m"
	done
	maps=${maps# } cuda=${cuda# }
}

# passenv PREFIX...: the names of the exported variables that start with a PREFIX (and
# are plain names), one a line, for the caller to hand over with --set NAME=VALUE
passenv () {
	for p; do
		env | sed -n "s/^\($p[A-Za-z0-9_]*\)=.*/\1/p"
	done | sort -u
}

