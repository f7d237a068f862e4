# venv.sh: stack.venv: the target venv kiln owns (--venv=DIR).
# sources: lib/base.sh
. "$steps/lib/base.sh"
step_venv () {
	# the target venv kiln owns (--venv=DIR), made from the base interpreter; --clear
	# only over a venv (configure refuses a folder that is something else)
	set --
	[ "$SYSTEM_SITE" = yes ] && set -- --system-site-packages
	[ -f "$VENV/pyvenv.cfg" ] && set -- "$@" --clear
	"$BASE" -m venv "$@" "$VENV"
	"$VENV/bin/python" -c 'import sys; print("venv", sys.prefix, "from", sys.base_prefix)'
}

