# srcpin against real upstream snapshots on this machine (git directories brought by the
# workspace's fetch tool): ROCm/TheRock checked out at a real tag and compared with git
# archive; the shipped patches/torch series applied to the real gloo source.
# SRCPIN_UPSTREAM (default /work/.mirror) holds OWNER+NAME/repo git directories.
. "$KILN_SRC/tests/lib.sh"
need git tar
. "$KILN_SRC/tools/srcpin/tests/srcpin.inc"
up=${SRCPIN_UPSTREAM:-/work/.mirror}
c=$T/cache
# every file's type, executable bit, link target or content digest, below a folder
listing () { (cd "$1" && {
	find . -path ./.git -prune -o -type d -printf 'd %p\n' -o -type l -printf 'l %p -> %l\n' \
		-o -type f -perm -u+x -printf 'x %p\n' -o -type f -printf 'f %p\n'
	find . -path ./.git -prune -o -type f -print0 | xargs -0 -r sha256sum; } | LC_ALL=C sort); }

rock=$up/ROCm+TheRock/repo
if [ -d "$rock" ]; then
	tag=therock-7.9.0
	url=https://github.com/ROCm/TheRock.git
	want=$(git --git-dir="$rock" rev-parse "$tag^{commit}")
	check "fetch TheRock $tag through --rewrite" srcpin fetch therock "$url" "$tag" --cache="$c" --rewrite="$url=$rock"
	same "TheRock $tag resolves as git does" "$want" "$(cat "$T/.out")"
	check "check out TheRock $tag" srcpin checkout therock --commit "$want" --into "$T/rock" --cache="$c"
	mkdir -p "$T/arch"
	git --git-dir="$rock" archive "$tag" | tar -x -C "$T/arch"
	listing "$T/arch" >"$T/arch.list"
	listing "$T/rock" >"$T/rock.list"
	if cmp -s "$T/arch.list" "$T/rock.list"; then
		ok "TheRock $tag: byte-identical to git archive ($(grep -c '^[fx] ' "$T/rock.list") files)"
	else
		notok "TheRock $tag: byte-identical to git archive"
		diff "$T/arch.list" "$T/rock.list" | sed -n '1,20s/^/#   /p'
	fi
	check "TheRock state" srcpin state --check "$T/rock"
	check "TheRock again: no-op" srcpin checkout therock --commit "$want" --into "$T/rock" --cache="$c"
	# bump to an older tag and back: both exact
	old=$(git --git-dir="$rock" rev-parse "therock-7.10^{commit}" 2>/dev/null) || old=
	if [ -n "$old" ]; then
		check "bump to therock-7.10" srcpin checkout therock --commit "$old" --into "$T/rock" --cache="$c"
		rm -rf "$T/arch2" && mkdir -p "$T/arch2" && git --git-dir="$rock" archive "$old" | tar -x -C "$T/arch2"
		same "therock-7.10 exact after a bump" "$(listing "$T/arch2" | sha256sum)" "$(listing "$T/rock" | sha256sum)"
	fi
else
	echo "skip optional tier upstream-snapshots: TheRock: no snapshot at $rock"
fi

gloo=$up/facebookincubator+gloo/repo
if [ -d "$gloo" ] && git --git-dir="$gloo" cat-file -e cc441984208d0b54b4fc614301f41e82e951e5cd 2>/dev/null; then
	# a torch-like superproject recording the real gloo at the commit the patch was made on
	git init -q "$T/torch" && (cd "$T/torch" &&
		printf '[submodule "third_party/gloo"]\n\tpath = third_party/gloo\n\turl = https://github.com/facebookincubator/gloo.git\n' >.gitmodules &&
		echo torch >README && git add .gitmodules README &&
		git update-index --add --cacheinfo 160000,cc441984208d0b54b4fc614301f41e82e951e5cd,third_party/gloo &&
		git commit -qm torch && git tag v0)
	rw="--rewrite=https://github.com/facebookincubator/gloo.git=$gloo"
	check "fetch the torch-like superproject" srcpin fetch torch "file://$T/torch" v0 --cache="$c"
	check "check out with the real gloo submodule" srcpin checkout torch --commit v0 --into "$T/tw" --submodules --cache="$c" "$rw"
	lacks "gloo/types.h has no <cstdint> before the patch" "$T/tw/third_party/gloo/gloo/types.h" "<cstdint>"
	check "patches/torch/series applies to the real gloo" srcpin patch "$T/tw" "$KILN_SRC/patches/torch/series"
	has "gloo/types.h includes <cstdint>" "$T/tw/third_party/gloo/gloo/types.h" "#include <cstdint>"
	check "patched torch tree is pristine" srcpin state --check "$T/tw"
	same "only gloo/types.h differs from upstream" "gloo/types.h" "$(git -C "$T/tw/third_party/gloo" diff --name-only HEAD)"
	check "the series again is a no-op" srcpin patch "$T/tw" "$KILN_SRC/patches/torch/series"
else
	echo "skip optional tier upstream-snapshots: gloo: no snapshot with commit cc441984 at $gloo"
fi
