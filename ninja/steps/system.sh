# system.sh: C.install for a pin of system: the target Python must import the component.
# sources: lib/base.sh lib/record.sh
. "$steps/lib/base.sh"
. "$steps/lib/record.sh"
step_system () {
	clean -- "$PY" -c "import $IMPORT" || die "--pin $c=system, but $PY cannot import $IMPORT"
	record ""
}

