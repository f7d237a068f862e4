# lib/netguard.sh: no download inside a build: kiln-stage netguard as the build's proxy
# (netguard_start, ng_blame, netguard_stop). Sourced by the wheel and cmake steps.
# needs: lib/base.sh

# No download inside a build. The wheel and CMake builds get kiln-stage netguard, a
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

