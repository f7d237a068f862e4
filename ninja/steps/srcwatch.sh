# srcwatch.sh: not a stage's step: the src rule (ninja/stack.ninja) runs it after
# kiln-stage run.
# sources: lib/base.sh lib/src.sh
. "$steps/lib/base.sh"
. "$steps/lib/src.sh"

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

