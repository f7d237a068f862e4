# sdk.sh: rocm.sdk: the pinned ROCm SDK, from TheRock's wheels or a tarball, into
# $ROCM_PATH.
# sources: lib/base.sh lib/record.sh lib/rocm.sh
. "$steps/lib/base.sh"
. "$steps/lib/record.sh"
. "$steps/lib/rocm.sh"
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
plan, index, archs = json.load(open(sys.argv[1])), sys.argv[2], [a.split(":")[0] for a in sys.argv[3].split(",")]
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
' "$B/rocm/pip-plan.json" "$INDEX" "$ARCH_ARG" || die "nothing was installed (above)"
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

# step_sdk: TheRock's wheels (rocm_KIND=wheels), or the SDK tarball
step_sdk () {
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
	v=$(rocmversion) || v=
	echo "ROCm ${v:-(version not recorded)} in $ROCM_PATH (sha256 $sha)"
	set +f
	for k in "$ROCM_PATH"/.kpack/*.kpack; do [ -f "$k" ] && echo "kernel pack: ${k#"$ROCM_PATH"/}"; done
	set -f
}

