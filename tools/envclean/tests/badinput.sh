# envclean on bad input: one clear line naming what is wrong, exit 2 (127/126 for a
# command that cannot be run, as a shell does); inputs are never modified.
. "$KILN_SRC/tests/lib.sh"

exits "no command: exit 2" 2 envclean
has "no command: says so" "$T/.err" "envclean: no command given"
exits "only options, no command: exit 2" 2 envclean --set A=1 --
has "only options, no command: says so" "$T/.err" "envclean: no command given"
exits "command not found: exit 127" 127 envclean -- kiln-no-such-command
same "command not found: one line naming the command" \
	"envclean: kiln-no-such-command: command not found" "$(cat "$T/.err")"
exits "unknown option: exit 2" 2 envclean --frobnicate -- true
has "unknown option: named" "$T/.err" "unknown option '--frobnicate'"
exits "--set without a value: exit 2" 2 envclean --set
has "--set without a value: says so" "$T/.err" "--set needs a value"
exits "--set without '=': exit 2" 2 envclean --set JUSTNAME -- true
has "--set without '=': says so" "$T/.err" "--set 'JUSTNAME': expected NAME=VALUE"
exits "--json without -n: exit 2" 2 envclean --json -- true
exits "--prepend-path to a missing folder: exit 2" 2 envclean --prepend-path "$T/none" -- true
has "--prepend-path to a missing folder: named" "$T/.err" "--prepend-path $T/none: No such file or directory"
: >"$T/afile"
exits "--prepend-path to a file: exit 2" 2 envclean --prepend-path "$T/afile" -- true
has "--prepend-path to a file: says not a folder" "$T/.err" "--prepend-path $T/afile: not a folder"

# profiles
exits "missing profile: exit 2" 2 envclean --profile "$T/missing.env" -- true
same "missing profile: one line naming the file" \
	"envclean: $T/missing.env: No such file or directory" "$(cat "$T/.err")"
mkdir "$T/dir.env"
exits "a folder as profile: exit 2" 2 envclean --profile "$T/dir.env" -- true
has "a folder as profile: named" "$T/.err" "$T/dir.env: Is a directory"
printf '# ok\nA=1\n\nthis is not an assignment\n' >"$T/bad.env"
cp "$T/bad.env" "$T/bad.env.orig"
exits "malformed profile: exit 2" 2 envclean --profile "$T/bad.env" -- true
same "malformed profile: names file:line" \
	"envclean: $T/bad.env:4: expected KEY=VALUE, got 'this is not an assignment'" "$(cat "$T/.err")"
check "malformed profile: the file is not modified" cmp "$T/bad.env" "$T/bad.env.orig"
printf 'A="open\n' >"$T/quote.env"
exits "unterminated quote in a profile: exit 2" 2 envclean --profile "$T/quote.env" -- true
has "unterminated quote in a profile: names file:line" "$T/.err" "$T/quote.env:1: unterminated \" quote"
printf 'A=$HOME/x\n' >"$T/expand.env"
exits "shell expansion in a profile: exit 2" 2 envclean --profile "$T/expand.env" -- true
has "shell expansion in a profile: names file:line" "$T/.err" "$T/expand.env:1: shell expansion is not supported"
exits "a malformed profile stops before running the command" 2 \
	envclean --profile "$T/bad.env" -- sh -c "touch '$T/ran'"
[ -e "$T/ran" ] && notok "the command ran despite the bad profile" || ok "the command did not run"

# --check
exits "--check --python missing: exit 2" 2 envclean --check --python="$T/nopython"
same "--check --python missing: one line" \
	"envclean: --python=$T/nopython: No such file or directory" "$(cat "$T/.err")"
exits "--check --python=/bin/true (prints nothing): exit 2" 2 envclean --check --python=/bin/true
has "--check --python=/bin/true: not a Python interpreter" "$T/.err" \
	"envclean: --python=/bin/true: not a Python interpreter (exit 0)"
printf '#!/bin/sh\necho "I am not python" >&2\nexit 3\n' >"$T/fakepy"
chmod +x "$T/fakepy"
exits "--check --python=a script that fails: exit 2" 2 envclean --check --python="$T/fakepy"
has "--check --python=a script that fails: shows its message" "$T/.err" \
	"--python=$T/fakepy: not a Python interpreter (exit 3: I am not python)"
printf '#!/bin/sh\nprintf "version\\0003\\000"\n' >"$T/halfpy"
chmod +x "$T/halfpy"
exits "--check --python=a program with a truncated answer: exit 2" 2 envclean --check --python="$T/halfpy"
has "--check --python=a truncated answer: not a Python interpreter" "$T/.err" "not a Python interpreter"
exits "--check --python=a folder that is not a venv: exit 2" 2 envclean --check --python="$T"
exits "--check --module=a.b: exit 2" 2 envclean --check --module=a.b
has "--check --module=a.b: says why" "$T/.err" "--module=a.b: give a top-level module name"
exits "--check --cwd=missing: exit 2" 2 envclean --check --cwd="$T/nowhere"
has "--check --cwd=missing: named" "$T/.err" "--cwd=$T/nowhere: not a folder"
exits "--check with a stray argument: exit 2" 2 envclean --check python3
exits "--check with an unknown option: exit 2" 2 envclean --check --frob
exits "--help: exit 0" 0 envclean --help
has "--help shows the synopsis" "$T/.out" "envclean --check [--python=PATH]"

# hostile inputs (issue #15): a FIFO or a device as a profile ends at once, exit 2
mkfifo "$T/fifo.env"
exits "a FIFO as profile: exit 2, no hang" 2 timeout 20 envclean --profile "$T/fifo.env" -- true
has "a FIFO as profile: named, and what it is" "$T/.err" "$T/fifo.env: is a FIFO, not a regular file"
exits "a FIFO as profile under --explain: exit 2" 2 timeout 20 envclean -n --profile "$T/fifo.env"
exits "a character device as profile: exit 2" 2 timeout 20 envclean --profile /dev/zero -- true
has "a device as profile: named" "$T/.err" "/dev/zero: is a character device, not a regular file"
