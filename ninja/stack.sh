# ninja/stack.sh: the stack's build graph. Sourced by configure, which calls
#   stack_inputs   the files configure reads for the stack (build.ninja regenerates
#                  when one changes)
#   gen_stack      validates pins and profiles, writes each stage's key file
#                  ($builddir/keys/STAGE, only if its content changed) and the settings
#                  file ($builddir/stack.env), and prints stack.ninja on stdout.
# Uses configure's variables: srcdir builddir arch_list backend python rocm_path pins
# pin_over components cache stage_cache mirror jobs tools kiln_bin.
#
# Stages of a component C (see ../shared/DESIGN.md, "The stage model"):
#   C.src -> C.patch -> [C.hipify] -> C.wheel -> C.pick -> C.install, then stack.smoke.
# A pin "wheel:/path.whl" leaves C.pick -> C.install; "system" leaves C.install, which
# only checks that the target Python already has C.

# per-component defaults; a pin file may set any of these as C_KEY=...
stack_default () {
	# $1 component, $2 KEY
	case "$1.$2" in
	*.DEPS) case "$1" in torch|triton|aotriton) echo ;; vllm) echo torch triton ;; *) echo torch ;; esac ;;
	torch.DIST) echo torch ;; vision.DIST) echo torchvision ;; audio.DIST) echo torchaudio ;;
	triton.DIST) echo pytorch-triton-rocm ;; flash_attn.DIST) echo flash_attn ;; vllm.DIST) echo vllm ;;
	torch.IMPORT) echo torch ;; vision.IMPORT) echo torchvision ;; audio.IMPORT) echo torchaudio ;;
	triton.IMPORT) echo triton ;; flash_attn.IMPORT) echo flash_attn ;; vllm.IMPORT) echo vllm ;;
	torch.HIPIFY) echo torch ;; vision.HIPIFY) echo vision ;;
	triton.SUBDIR) echo python ;;
	aotriton.KIND) echo source ;;
	*.KIND) echo build ;;
	esac
}

# print the value of C_KEY from the pins (or the default)
pinval () {
	eval "v=\${pin_$1_$2-}"
	if [ -z "$v" ] && eval "[ -z \"\${pin_$1_$2+set}\" ]"; then v=$(stack_default "$1" "$2"); fi
	printf '%s' "$v"
}

# kvread FILE FUNC: read FILE as KEY=VALUE lines, by the rules of tools/lib/kv.c, without
# evaluating it: FUNC KEY VALUE LINE runs for each setting (it may set kvwhy and fail).
# Blank lines, '#' comments, "export KEY=VALUE", values in matching '...' or "..." (in
# "...", \" \\ \$ \` are escapes) and a trailing " # comment". A file is data: '$' and '`'
# outside single quotes are refused (sh would expand them), and so is a space outside
# quotes. On an error kvmsg is "FILE:LINE: what is wrong" and kvread fails.
kvread () {
	[ -f "$1" ] && [ -r "$1" ] || { kvmsg="$1: cannot read the file"; return 1; }
	kvn=0 kvwhy= kvcr=$(printf '\r')
	while IFS= read -r kvl || [ -n "$kvl" ]; do
		kvn=$((kvn + 1))
		kvl=${kvl%"$kvcr"}
		while :; do case "$kvl" in [' 	']*) kvl=${kvl#?} ;; *) break ;; esac; done
		case "$kvl" in
		''|'#'*) continue ;;
		export[' 	']*[!' 	']*)
			kvl=${kvl#export}
			while :; do case "$kvl" in [' 	']*) kvl=${kvl#?} ;; *) break ;; esac; done ;;
		esac
		kvk=${kvl%%=*}
		case "$kvl" in *=*) ;; *) kvk= ;; esac
		case "$kvk" in ''|[!A-Za-z_]*|*[!A-Za-z0-9_]*)
			kvwhy="expected KEY=VALUE, got '$(printf '%s' "$kvl" | cut -c1-60)'"; break ;;
		esac
		kvvalue "${kvl#*=}" || break
		"$2" "$kvk" "$kvv" "$kvn" || break
	done <"$1"
	[ -z "$kvwhy" ] && return 0
	kvmsg="$1:$kvn: $kvwhy"
	return 1
}
# kvvalue TEXT: the value that TEXT (what follows '=') stands for, in kvv; or kvwhy
kvvalue () {
	kvr=$1 kvv=
	while [ -n "$kvr" ]; do
		case "$kvr" in
		\"*)
			kvr=${kvr#?}
			while :; do
				kvp=${kvr%%[\"\\\$\`]*}
				kvv=$kvv$kvp kvr=${kvr#"$kvp"}
				case "$kvr" in
				'') kvwhy='unterminated " quote'; return 1 ;;
				\"*) kvr=${kvr#?}; break ;;
				\\[\"\\\$\`]*) kvr=${kvr#?}; kvp=${kvr%"${kvr#?}"}; kvv=$kvv$kvp kvr=${kvr#?} ;;
				\\*) kvv=$kvv\\ kvr=${kvr#?} ;;
				*) kvwhy='shell expansion is not supported (write the value out)'; return 1 ;;
				esac
			done ;;
		\'*)
			kvr=${kvr#?}
			case "$kvr" in *\'*) ;; *) kvwhy="unterminated ' quote"; return 1 ;; esac
			kvv=$kvv${kvr%%\'*} kvr=${kvr#*\'} ;;
		[' 	']*)
			while :; do case "$kvr" in [' 	']*) kvr=${kvr#?} ;; *) break ;; esac; done
			case "$kvr" in ''|'#'*) return 0 ;; esac
			kvwhy='unquoted space in value (quote it)'; return 1 ;;
		[\$\`]*) kvwhy='shell expansion is not supported (write the value out)'; return 1 ;;
		*)
			kvp=${kvr%%[\"\'\$\`' 	']*}
			kvv=$kvv$kvp kvr=${kvr#"$kvp"} ;;
		esac
	done
	return 0
}

# check that FILE is KEY=VALUE lines; prints "FILE:LINE: ..." and fails
kvcheck () { kvread "$1" : || { printf '%s\n' "$kvmsg"; return 1; }; }

# pinset KEY VALUE: one setting of a pin file, kept as pin_KEY. KEY is COMPONENT_KEY: the
# component is what comes before the first '_' that only [A-Z0-9_] follows
pinset () {
	pc= pt=$1
	while :; do
		case "$pt" in *_*) pt=${pt#*_} ;; *) break ;; esac
		case "$pt" in ''|*[!A-Z0-9_]*) ;; *) pc=${1%_"$pt"}; break ;; esac
	done
	if [ -z "$pc" ] || ! inlist "$pc" "$components_all stack"; then
		kvwhy="unknown pin $1 (expected COMPONENT_KEY, component one of $components_all stack)"
		return 1
	fi
	eval "pin_$1=\$2"
}

# load a pin file into pin_C_KEY variables; the file is data, never run
loadpins () { kvread "$1" pinset || fail "$kvmsg"; }

# the expected commit: C_SHA, or C_COMMIT as srcpin lock writes it
pinsha () { v=$(pinval "$1" SHA); [ -n "$v" ] || v=$(pinval "$1" COMMIT); printf '%s' "$v"; }

stack_pinsfile () { if [ -n "$pins" ]; then echo "$pins"; else echo "$srcdir/env/versions.env"; fi; }

# patch folder of a component: C_PATCHES (relative to the pin file), or patches/C
patchdir () {
	p=$(pinval "$1" PATCHES)
	if [ -z "$p" ]; then echo "$srcdir/patches/$1"; return; fi
	case "$p" in /*) echo "$p" ;; *) echo "$(cd "$(dirname "$(stack_pinsfile)")" && pwd)/$p" ;; esac
}

# the profiles of the arch list: env/arch/BACKEND.env then env/arch/ARCH.env for each
profiles () {
	for f in "$srcdir/env/arch/$backend.env"; do [ -f "$f" ] && echo "$f"; done
	for a in $arch_list; do [ "$a" != "$backend" ] && [ -f "$srcdir/env/arch/$a.env" ] && echo "$srcdir/env/arch/$a.env"; done
	return 0
}

stack_inputs () {
	[ -f "$(stack_pinsfile)" ] || return 0
	echo "$(stack_pinsfile)"
	for f in "$srcdir"/env/arch/*.env "$srcdir/env/versions.env"; do [ -f "$f" ] && echo "$f"; done
	loadpins "$(stack_pinsfile)"
	# a new patches/C folder or series appears: the folders' times change
	[ -d "$srcdir/patches" ] && echo "$srcdir/patches"
	for c in $components_all; do
		d=$(patchdir "$c")
		[ -d "$d" ] && echo "$d"
		[ -f "$d/series" ] || continue
		echo "$d/series"
		sed -e 's/#.*//' -e '/^[ \t]*$/d' "$d/series" | while read -r p _; do
			[ -f "$d/$p" ] && echo "$d/$p"
		done
	done
	return 0
}

# --- key files -----------------------------------------------------------------------
# key STAGE: start a key; kv NAME VALUE: add an input; endkey: write if changed
key () { kname=$1; ktext="STAGE=$1
"; }
kv () {
	v=$(printf '%s' "$2" | tr '\n' ' ' | sed -e 's/[\\"$`]/\\&/g')
	ktext="$ktext$1=\"$v\"
"
}
endkey () {
	printf '%s' "$ktext" >"$keydir/.tmp" || fail "cannot write $keydir"
	if cmp -s "$keydir/.tmp" "$keydir/$kname"; then rm -f "$keydir/.tmp"
	else mv -f "$keydir/.tmp" "$keydir/$kname" || fail "cannot write $keydir/$kname"; fi
}
sha () { sha256sum "$@" | cut -c1-64; }
# the text of one step of ninja/stack-steps.sh, so editing it reruns only that step
stepsha () {
	{ sed -n "/^step_$1 ()/,/^}/p" "$srcdir/ninja/stack-steps.sh"; cat "$srcdir/ninja/stack.ninja"; } | sha
}
# digest of a patch series: the series file and each patch it lists, by name
seriessha () {
	d=$1
	[ -f "$d/series" ] || { echo none; return 0; }
	{
		cat "$d/series"
		sed -e 's/#.*//' -e '/^[ \t]*$/d' "$d/series" | while read -r p _; do
			[ -f "$d/$p" ] || { echo "missing $p" >&2; echo "missing:$p"; continue; }
			printf '%s %s\n' "$p" "$(sha "$d/$p")"
		done
	} | sha
}

# --- the graph -------------------------------------------------------------------------
gen_stack () {
	keydir=$builddir/keys
	mkdir -p "$keydir" "$builddir/stamp" || fail "cannot create $keydir"
	B=$(cd "$builddir" && pwd)
	pf=$(stack_pinsfile)
	if [ ! -f "$pf" ]; then
		# a source tree without env/versions.env (a partial copy): no stack to build
		printf 'configure: warning: no pin file %s; the stack graph is empty\n' "$pf" >&2
		echo "# no pin file $pf: no stages"
		echo "build stack: phony"
		return 0
	fi
	loadpins "$pf"

	# command-line pins override the file
	for p in $pin_over; do
		n=${p%%=*} r=${p#*=}
		case "$r" in
		system) eval "pin_${n}_KIND=system" ;;
		wheel:*) eval "pin_${n}_KIND=wheel; pin_${n}_WHEEL=\${r#wheel:}" ;;
		*) eval "pin_${n}_REF=\$r; pin_${n}_SHA=; pin_${n}_COMMIT=" ;;
		esac
	done

	# a pin file (a track) may add components: stack_WITH=vllm,triton
	for c in $(pinval stack WITH | tr , ' '); do
		inlist "$c" "$components_all" || fail "$pf: stack_WITH names unknown component '$c'$(suggest "$c" "$components_all")"
		inlist "$c" "$components" || components="$components $c"
	done

	# every component needs a URL and REF unless it is a wheel or system pin
	for c in $components; do
		k=$(pinval "$c" KIND)
		case "$k" in build|source|wheel|system) ;; *) fail "$pf: ${c}_KIND=$k: use build, source, wheel or system" ;; esac
		if [ "$k" = build ] || [ "$k" = source ]; then
			[ -n "$(pinval "$c" URL)" ] || fail "$pf: no ${c}_URL for component $c (add ${c}_URL=https://... or pin a prebuilt wheel: --pin $c=wheel:/path.whl)"
			[ -n "$(pinval "$c" REF)" ] || fail "$pf: no ${c}_REF for component $c (a tag, branch or commit)"
			s=$(pinsha "$c")
			case "$s" in ''|[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]*) ;; *) fail "$pf: ${c}_SHA=$s is not a commit (40 hex digits)" ;; esac
			d=$(patchdir "$c")
			if [ -f "$d/series" ]; then
				msg=$(sed -e 's/#.*//' -e '/^[ \t]*$/d' "$d/series" | while read -r p _; do
					[ -f "$d/$p" ] || { echo "$d/series: lists $p, which does not exist"; exit 1; }
				done) || fail "$msg"
			fi
		fi
		if [ "$k" = wheel ]; then
			w=$(pinval "$c" WHEEL)
			[ -n "$w" ] || fail "$pf: $c is a prebuilt wheel here (${c}_KIND=wheel): name it with --pin $c=wheel:/path/to/$(pinval "$c" DIST)-VERSION-TAGS.whl"
			[ -f "$w" ] || fail "$c: wheel pin $w: no such file"
		fi
	done

	# the profiles (KEY=VALUE files that envclean applies to the build steps)
	profs=$(profiles)
	for f in $profs; do msg=$(kvcheck "$f") || fail "$msg (a profile envclean applies to the builds)"; done

	# facts about the tools and the target Python that go into keys
	pyinfo=$("$python" -c '
import sys, sysconfig, importlib.util as u
print(sys.implementation.cache_tag, sysconfig.get_platform(), sys.version.split()[0])
s = u.find_spec("torch")
print(s.origin if s and s.origin else "")' 2>/dev/null) || fail "--python=$python does not run Python"
	py_abi=$(printf '%s\n' "$pyinfo" | sed -n 1p)
	py_torch=$(printf '%s\n' "$pyinfo" | sed -n 2p)
	cc_ver=$(${CC:-cc} --version 2>/dev/null | sed -n 1p)
	rocm_ok=yes rocm_ver=
	if [ "$backend" = gfx ]; then
		if [ -x "$rocm_path/bin/hipcc" ] || [ -x "$rocm_path/llvm/bin/clang" ]; then
			rocm_ver=$(cat "$rocm_path/.info/version" 2>/dev/null || "$rocm_path/llvm/bin/clang" --version 2>/dev/null | sed -n 1p)
		else
			rocm_ok=no
		fi
	fi
	archs=$(echo $arch_list | tr ' ' ';')
	flash=1
	for a in $arch_list; do
		grep -q '^KILN_FLASH_ATTENTION=1' "$srcdir/env/arch/$a.env" 2>/dev/null || flash=0
	done

	# stages run in this folder, but say where things are absolutely in their settings
	case "$mirror" in ''|/*) ;; *) mirror=$(cd "$mirror" && pwd) ;; esac
	case "$stage_cache" in ''|/*) ;; *) stage_cache=$(pwd)/$stage_cache ;; esac

	# the settings stages read that are not part of any key (they do not change outputs)
	if [ -n "$kiln_bin" ]; then kbin=$(cd "$kiln_bin" && pwd) || fail "KILN_BIN=$kiln_bin: no such folder"
	else kbin=$B/bin; fi
	{
		echo "# stack settings for ninja/stack-steps.sh; written by configure"
		echo "KILN_SRC=\"$srcdir\""
		echo "B=\"$B\""
		echo "KBIN=\"$kbin\""
		echo "PY=\"$python\""
		echo "MIRROR=\"$mirror\""
		echo "CACHE=\"$cache\""
		echo "JOBS=\"$jobs\""
		echo "ROCM_PATH=\"$rocm_path\""
		echo "ARCH_LIST=\"$arch_list\""
		echo "BACKEND=\"$backend\""
		echo "PROFILES=\"$(echo $profs)\""
		echo "PINS=\"$pf\""
	} >"$B/.stack.env.tmp" || fail "cannot write $B/.stack.env.tmp"
	if cmp -s "$B/.stack.env.tmp" "$B/stack.env"; then rm -f "$B/.stack.env.tmp"
	else mv -f "$B/.stack.env.tmp" "$B/stack.env" || fail "cannot write $B/stack.env"; fi

	echo "# Generated by configure from ninja/stack.sh; the stages of the stack."
	echo "# Each stage's inputs are in \$builddir/keys/STAGE; its stamp in \$builddir/stamp/STAGE."
	echo "kstage = $kbin/kiln-stage"
	echo "stackenv = $B/stack.env"
	echo "stagecache = $stage_cache"
	echo "include \$srcdir/ninja/stack.ninja"
	echo
	tooldeps=
	if [ -z "$kiln_bin" ]; then
		for t in kiln-stage srcpin envclean wheelpick hipify-wrap gpucheck; do
			inlist "$t" "$tools" && tooldeps="$tooldeps \$builddir/bin/$t"
		done
	fi
	oo=; [ -n "$tooldeps" ] && oo=" ||$tooldeps"
	if [ "$backend" = gfx ] && [ "$rocm_ok" = no ]; then
		echo "# ROCm is missing: the stages that need it stop here with the reason"
		echo "build \$builddir/stamp/rocm.missing: missing"
		echo "  what = ROCm was not found at $rocm_path (no bin/hipcc, no llvm/bin/clang), and --arch=$(echo $arch_list | tr ' ' ',') builds for AMD GPUs. Install ROCm (https://rocm.docs.amd.com), or rerun configure with --rocm-path=DIR, or --arch=cpu for a CPU-only stack."
		echo
		oorocm=" \$builddir/stamp/rocm.missing"
	else
		oorocm=
	fi

	installs= picks= fatc= sources=
	imports=
	for c in $components; do
		k=$(pinval "$c" KIND)
		s=\$builddir/stamp
		parents=
		# edge STAGE STEP EXTRA-OPTS PARENT-STAMPS...: one stage
		edge () {
			st=$1 step=$2 opts=$3; shift 3
			deps= po=
			for p; do deps="$deps $s/$p"; po="$po --parent=$s/$p"; done
			extra=$oo
			case "$step" in wheel|hipify) [ -n "$oorocm" ] && extra="${extra:- ||}$oorocm" ;; esac
			echo "build $s/$st: stage \$builddir/keys/$st$deps$extra"
			echo "  stage = $st"
			echo "  step = $step"
			echo "  comp = $c"
			[ -n "$po$opts" ] && echo "  opts =$po $opts"
			echo "build $st: phony $s/$st"
		}
		# parents from other components: what C builds against (optional ones only if built)
		depinst=
		for dep in $(pinval "$c" DEPS); do
			inlist "$dep" "$components" || continue
			if [ "$(pinval "$dep" KIND)" = source ]; then depinst="$depinst $dep.patch"
			else depinst="$depinst $dep.install"; fi
		done

		case "$k" in
		build|source)
			key "$c.src"; kv RULE "$(stepsha src)"; kv COMPONENT "$c"
			kv URL "$(pinval "$c" URL)"; kv REF "$(pinval "$c" REF)"; kv SHA "$(pinsha "$c")"
			endkey
			edge "$c.src" src "--id-file=\$builddir/src/$c.id"
			key "$c.patch"; kv RULE "$(stepsha patch)"; kv COMPONENT "$c"
			kv SERIES "$(seriessha "$(patchdir "$c")")"
			kv SERIES_FILE "$(patchdir "$c")/series"
			endkey
			edge "$c.patch" patch "--id-file=\$builddir/src/$c.id" "$c.src"
			last=$c.patch
			if [ "$k" = source ]; then sources="$sources \$builddir/stamp/$c.patch"; continue; fi
			hp=$(pinval "$c" HIPIFY)
			if [ "$backend" = gfx ] && [ -n "$hp" ]; then
				key "$c.hipify"; kv RULE "$(stepsha hipify)"; kv PROJECT "$hp"; kv CMD "$(pinval "$c" HIPIFY_CMD)"
				kv SERIES "$(seriessha "$(patchdir "$c")")"; kv SERIES_FILE "$(patchdir "$c")/series"
				kv SUBDIR "$(pinval "$c" SUBDIR)"; kv ROCM "$rocm_ver"; kv PY_ABI "$py_abi"
				endkey
				edge "$c.hipify" hipify "" "$c.patch"
				last=$c.hipify
			fi
			key "$c.wheel"; kv RULE "$(stepsha wheel)"; kv COMPONENT "$c"
			kv SUBDIR "$(pinval "$c" SUBDIR)"; kv BUILD "$(pinval "$c" BUILD)"
			kv BACKEND "$backend"; kv ARCH "$archs"; kv PY_ABI "$py_abi"; kv CC "$cc_ver"
			[ "$backend" = gfx ] && kv ROCM "$rocm_ver"
			kv FLASH "$flash"
			kv ENV "$(pinval "$c" ENV)"
			mods=; for dep in $(pinval "$c" DEPS); do inlist "$dep" "$components" && mods="$mods $(pinval "$dep" IMPORT)"; done
			kv MODULES "$(echo $mods)"
			for f in $profs; do n=${f##*/}; n=${n%.env}; kv "PROFILE_$(echo "$n" | tr -c 'A-Za-z0-9_\n' _)" "$(sha "$f")"; done
			endkey
			edge "$c.wheel" wheel "--out=\$builddir/wheels/$c" $last $depinst
			key "$c.pick"; kv RULE "$(stepsha pick)"; kv DIST "$(pinval "$c" DIST)"; kv PY_ABI "$py_abi"
			endkey
			edge "$c.pick" pick "" "$c.wheel"
			;;
		wheel)
			w=$(pinval "$c" WHEEL)
			key "$c.pick"; kv RULE "$(stepsha pick)"; kv DIST "$(pinval "$c" DIST)"; kv PY_ABI "$py_abi"
			kv WHEEL "$w"; kv WHEEL_STAT "$(stat -c '%s %Y' "$w")"
			endkey
			edge "$c.pick" pick ""
			;;
		esac
		if [ "$k" = source ]; then continue; fi
		key "$c.install"; kv RULE "$(stepsha install)"; kv DIST "$(pinval "$c" DIST)"
		kv PY "$python"; kv PY_ABI "$py_abi"; kv ARCH "$archs"; kv REF "$(pinval "$c" REF)"
		if [ "$k" = system ]; then
			kv SYSTEM "$([ -n "$py_torch" ] && [ "$c" = torch ] && sha "$(dirname "$py_torch")/version.py" 2>/dev/null)"
			kv IMPORT "$(pinval "$c" IMPORT)"
			endkey
			edge "$c.install" system "--id-keys=PY_ABI,SYSTEM,IMPORT"
		else
			endkey
			edge "$c.install" install "--id-keys=PY_ABI,DIST" "$c.pick"
		fi
		installs="$installs $c.install"
		[ "$k" = system ] || picks="$picks $c.pick"
		# fatwheel makes torch's wheel self-contained; the others load torch's libraries
		# from the torch wheel at run time, so bundling their closure would copy torch's
		[ "$k" = system ] || [ "$c" != torch ] || fatc="$fatc $c"
		imports="$imports $(pinval "$c" IMPORT)"
		echo
	done

	key stack.smoke; kv RULE "$(stepsha smoke)"; kv IMPORTS "$(echo $imports)"
	kv BACKEND "$backend"; kv ARCH "$archs"; kv PY "$python"
	kv COVER "$(pinval stack COVER)"
	endkey
	c=stack
	s=\$builddir/stamp
	edge stack.smoke smoke "" $installs
	stackout="\$builddir/stamp/stack.smoke$sources"
	# optional: fatwheel bundles torch's shared-library closure into its wheel (stack_FAT=yes)
	if [ "$(pinval stack FAT)" = yes ] && [ -n "$fatc" ]; then
		key stack.fat; kv RULE "$(stepsha fat)"; kv COMPONENTS "$(echo $fatc)"
		kv BACKEND "$backend"; kv ARCH "$archs"
		endkey
		edge stack.fat fat "--out=\$builddir/wheels/fat" torch.pick
		stackout="$stackout \$builddir/stamp/stack.fat"
	fi
	echo "build stack: phony $stackout"
	# configure's stack inputs: a deleted one regenerates instead of stopping ninja
	echo
	for f in $stack_regen; do echo "build $f: phony"; done
}
