# lib/oci.sh: the container builder (podman or buildah) and its queries. Sourced by the
# image and imagecheck steps.
# needs: lib/base.sh

# oci: the container builder, for the image and imagecheck steps: podman, else buildah
# (one that runs); storage as the host's podman has it (CONTAINERS_STORAGE_CONF,
# storage.conf, else the driver podman picked when it made the storage: naming one would
# fail on a storage another driver made, "database configuration mismatch"); chroot
# isolation: a COPY-only Containerfile runs nothing. imgid REF prints REF's image ID (64
# hex digits) and fails when the storage has no such image; imgdigest REF its digest;
# imgstore the driver and the storage root.
oci () {
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

