# install.sh: C.install: the picked wheel into the target Python, then the build-info
# record.
# sources: lib/base.sh lib/record.sh
. "$steps/lib/base.sh"
. "$steps/lib/record.sh"
step_install () {
	w=$(cat "$B/wheels/$c.picked")
	# from the wheel's folder: pip reads a ';' in a path argument as a marker separator
	(cd "$(dirname "$w")" && clean -- "$PY" -m pip install --no-deps --force-reinstall --no-index \
		--disable-pip-version-check "./${w##*/}")
	record "$w"
}

