# imagecheck.sh: not a stage's step: the image rule (ninja/stack.ninja) runs it before
# kiln-stage run.
# sources: lib/base.sh lib/oci.sh
. "$steps/lib/base.sh"
. "$steps/lib/oci.sh"
# step_imagecheck: not a stage's step: the image rule (ninja/stack.ninja) runs it before
# kiln-stage run, every time ninja runs stack.image's edge. The stamp's ID is the image
# this stage built; when the storage no longer has it under $IMAGE (podman rmi, or the
# name moved to another image), the stamp is removed, so the stage builds it again, and
# KILN_EXPLAIN and the stage's summary say why. It also writes the edge's depfile
# (STAMP.d): the storage's list of images, so that ninja runs this edge again when that
# list changes (an rmi, a build, a tag, a pull) and a plain no-op stays a no-op otherwise.
step_imagecheck () {
	KILN_STAGE=stack.image
	oci
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

