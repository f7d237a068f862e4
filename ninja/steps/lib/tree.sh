# lib/tree.sh: where in the prepared tree a component builds (treesubdir). Sourced by
# the deps and wheel steps.
# needs: lib/base.sh

# treesubdir TREE: SUBDIR, when the pins name none, from the tree: python/ when setup.py
# is there and not at the root (triton until its setup.py moved to the root)
treesubdir () {
	[ -z "${SUBDIR:-}" ] || return 0
	if [ ! -f "$1/setup.py" ] && [ -f "$1/python/setup.py" ]; then
		SUBDIR=python
		say "setup.py is in python/ of the tree: building there"
	fi
}

