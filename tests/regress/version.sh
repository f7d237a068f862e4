#!/bin/sh
# one project version: the file VERSION, tools/lib/version.h (which the C code reads),
# and every tool's --version agree
. "$KILN_SRC/tests/lib.sh"

v=$(cat "$KILN_SRC/VERSION")
case $v in
[0-9]*.[0-9]*.[0-9]*) ok "VERSION holds a version ($v)" ;;
*) notok "VERSION holds a version (got '$v')" ;;
esac
same "VERSION is one line" 1 "$(lines "$KILN_SRC/VERSION")"
h=$(sed -n 's/^#define KILN_VERSION "\(.*\)"$/\1/p' "$KILN_SRC/tools/lib/version.h")
same "tools/lib/version.h says what VERSION says (edit both together)" "$v" "$h"

# every tool
for t in envclean fatwheel gpucheck hipify-wrap kiln-stage srcpin wheelpick; do
	check "$t --version exits 0" "$t" --version
	same "$t --version prints '$t $v'" "$t $v" "$(cat "$T/.out")"
	check "$t --help" "$t" --help
	has "$t --help shows --version" "$T/.out" "--version"
	grep -qE -- 'Fl \\?-version|\\-\\-version' "$KILN_SRC/tools/$t/$t.1" && ok "$t.1 documents --version" ||
		notok "$t.1 documents --version"
done
