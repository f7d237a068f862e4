# lib/cache.sh: the compiler cache of a build (--cache=ccache or sccache): its settings
# (cacheargs), ccache's counters and hit rate (ccstats, hitrate), and the stage's own
# sccache server (scstart, scstop, scready, schitrate). Sourced by the wheel and cmake
# steps.
# needs: lib/base.sh lib/build.sh

# cacheargs: the compiler cache keeps its own settings (its folder defaults to the
# caller's): the caller's CCACHE_* and SCCACHE_* cross envclean -i as settings (--keep
# cannot: -i starts from its allow-list), added with warg
cacheargs () {
	case "$CACHE" in ccache|sccache) ;; *) return 0 ;; esac
	command -v "$CACHE" >/dev/null 2>&1 || die "--cache=$CACHE, but there is no $CACHE here (install $CACHE)"
	for v in $(passenv CCACHE_ SCCACHE_); do eval "warg --set \"$v=\${$v-}\""; done
	# no CCACHE_BASEDIR: ccache runs the compiler with the paths under it made relative
	# (ccache(1), base_dir), so __FILE__ would read ../../src/x.cpp where a build without
	# the cache reads /kiln/src/C/src/x.cpp (the prefix map). Without it ccache hits where
	# the copy is at the same path: this build folder, or every folder with --work-dir.
	# Empty, it also overrides a base_dir in ccache.conf. sccache's basedirs only shape
	# its hash.
	warg --set CCACHE_BASEDIR= --set SCCACHE_BASEDIRS="$work"
	[ -n "${CCACHE_DIR:-}" ] || warg --set CCACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/ccache"
	[ -n "${SCCACHE_DIR:-}" ] || warg --set SCCACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/sccache"
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

