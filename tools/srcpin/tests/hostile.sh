# srcpin against hostile input (issue 15): a FIFO or a folder as a series file or patch is
# refused at once (exit 2, the path and what it is), a .gitmodules URL naming a repository
# on this machine is refused unless --allow-local-submodules, and a patch that makes a
# symlink pointing out of the tree is refused unless --allow-outside-symlinks.
. "$KILN_SRC/tests/lib.sh"
need git timeout mkfifo
. "$KILN_SRC/tools/srcpin/tests/srcpin.inc"
git config --global protocol.file.allow always
git config --global init.defaultBranch main
c=$T/cache
u=$T/up
mkdir -p "$u"
git init -q "$u/top" && (cd "$u/top" && printf 'a\n' >a.txt && git add . && git commit -qm t1)
check "fetch" srcpin fetch top "file://$u/top" main --cache="$c"
check "checkout" srcpin checkout top --commit main --into "$T/w" --cache="$c"

# --- FIFOs and folders as series or patch ---------------------------------------------------
mkdir -p "$T/s"
mkfifo "$T/s/fifo-series" "$T/s/0001.patch"
exits "a FIFO as the series file: refused, not waited on" 2 timeout 20 srcpin patch "$T/w" "$T/s/fifo-series"
has "names the path and what it is" "$T/.err" "srcpin: $T/s/fifo-series: is a FIFO, not a regular file"
printf '0001.patch\n' >"$T/s/series"
exits "a FIFO as a patch: refused, not waited on" 2 timeout 20 srcpin patch "$T/w" "$T/s/series"
has "names the series line, the patch and what it is" "$T/.err" "srcpin: $T/s/series:1: $T/s/0001.patch: is a FIFO, not a regular file"
mkdir "$T/s/dir.patch" && printf 'dir.patch\n' >"$T/s/series2"
exits "a folder as a patch" 2 srcpin patch "$T/w" "$T/s/series2"
has "names the folder" "$T/.err" "$T/s/dir.patch: is a folder, not a regular file"
exits "/dev/zero as the series" 2 timeout 20 srcpin patch "$T/w" /dev/zero
has "a device is named as one" "$T/.err" "srcpin: /dev/zero: is a character device, not a regular file"

# --- a submodule URL naming a repository on this machine ------------------------------------
git init -q "$u/secret" && (cd "$u/secret" && echo private >key && git add . && git commit -qm s)
git init -q "$u/evil" && (cd "$u/evil" && echo e >e.txt &&
	git submodule -q add "$u/secret" vendor/x && git commit -qm evil)
grep -q "url = $u/secret" "$u/evil/.gitmodules" && ok "the upstream's .gitmodules names an absolute path" || notok "the upstream's .gitmodules names an absolute path"
check "fetch the hostile upstream" srcpin fetch evil "file://$u/evil" main --cache="$c"
exits "checkout refuses an absolute local submodule URL" 2 srcpin checkout evil --commit main --into "$T/we" --submodules --cache="$c"
has "names the submodule and the URL" "$T/.err" "srcpin: evil/vendor/x: .gitmodules gives the URL '$u/secret', a repository on this machine; refused (--allow-local-submodules allows it)"
[ ! -e "$T/we/vendor/x/key" ] && ok "the local repository's files were not checked out" || notok "the local repository's files were not checked out"
sed -i "s|url = .*|url = file://$u/secret|" "$u/evil/.gitmodules" && (cd "$u/evil" && git commit -qam file-url)
check "fetch again" srcpin fetch evil "file://$u/evil" main --cache="$c"
exits "a file:// submodule URL is refused too" 2 srcpin checkout evil --commit main --into "$T/we" --submodules --cache="$c"
check "--allow-local-submodules allows it" srcpin checkout evil --commit main --into "$T/we" --submodules --cache="$c" --allow-local-submodules
has "and the submodule is there" "$T/we/vendor/x/key" "private"
check "without --submodules nothing is fetched, nothing refused" srcpin checkout evil --commit main --into "$T/we2" --cache="$c"

# --- a patch turning a tracked file into a symlink out of the tree --------------------------
git clone -q "$u/top" "$T/dev"
(cd "$T/dev" && rm a.txt && ln -s ../../../../etc/passwd a.txt && git add -A && git commit -qm link &&
	git format-patch -q -1 -o "$T/pl" &&
	git checkout -q -b abs origin/main && rm a.txt && ln -s /etc/shadow a.txt && git add -A && git commit -qm abs &&
	git format-patch -q -1 -o "$T/pa" &&
	git checkout -q -b in origin/main && rm a.txt && ln -s sub/../b.txt a.txt && git add -A && git commit -qm inside &&
	git format-patch -q -1 -o "$T/pi")
(cd "$T/pl" && ls -- *.patch) >"$T/pl/series"
exits "a mode change to a symlink climbing out: refused" 2 srcpin patch "$T/w" "$T/pl/series"
has "names patch, file and target" "$T/.err" "a.txt: symlink to '../../../../etc/passwd' points outside the source tree; refused (--allow-outside-symlinks allows it)"
[ -f "$T/w/a.txt" ] && [ ! -L "$T/w/a.txt" ] && ok "the file is untouched" || notok "the file is untouched"
check "--allow-outside-symlinks allows it" srcpin patch "$T/w" "$T/pl/series" --allow-outside-symlinks
[ "$(readlink "$T/w/a.txt")" = ../../../../etc/passwd ] && ok "and the link is written" || notok "and the link is written"
srcpin checkout top --commit main --into "$T/w" --cache="$c" >/dev/null 2>&1
(cd "$T/pa" && ls -- *.patch) >"$T/pa/series"
exits "a symlink to an absolute path: refused" 2 srcpin patch "$T/w" "$T/pa/series"
has "the absolute target is named" "$T/.err" "symlink to '/etc/shadow' points outside"
(cd "$T/pi" && ls -- *.patch) >"$T/pi/series"
check "a checkout for the inside link" srcpin checkout top --commit main --into "$T/wi" --cache="$c"
check "a symlink that stays inside the tree is applied without the option" srcpin patch "$T/wi" "$T/pi/series"
[ "$(readlink "$T/wi/a.txt")" = sub/../b.txt ] && ok "an inside link is written" || notok "an inside link is written"
