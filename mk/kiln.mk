# mk/kiln.mk: the stack for Makefile-driven CI. In your Makefile:
#
#   KILN_ARCH = gfx1151
#   KILN_PYTHON = /opt/venv/bin/python
#   KILN_PIN = vision=v0.22.1            # NAME=REF ..., as --pin
#   include /path/to/kiln/mk/kiln.mk
#
# then `make kiln-build` (the whole stack), `make kiln-vision.wheel` (one stage and what
# it needs), `make kiln-check` (the stack's smoke test: imports, gpucheck cover/smoke),
# `make kiln-labels` (OCI labels of what was built, one --label=K=V per line: pipe them
# to xargs -d '\n' podman build ...). KILN_EXPLAIN=1 make ...
# makes each stage that runs say why. make only drives configure and ninja: configure
# reruns when a KILN_ variable changes, ninja knows the stages. Variables (all optional
# but KILN_ARCH): KILN_BUILD_DIR [kiln-build], KILN_PYTHON, KILN_ROCM_PATH, KILN_PINS,
# KILN_PIN, KILN_WITH, KILN_WITHOUT, KILN_CACHE, KILN_STAGE_CACHE, KILN_MIRROR,
# KILN_JOBS, KILN_CONFIGURE_FLAGS (passed as they are), NINJA.
# KILN_CONFIGURE_FLAGS is shell text, passed as it is; every other value is quoted for the
# shell where it reaches a command, so it may hold spaces, quotes or $. make cannot take a
# path with whitespace as a target or in MAKEFILE_LIST: KILN_BUILD_DIR must not hold any,
# and when kiln's own folder does, set KILN_TOP to it before the include.
ifeq ($(origin KILN_TOP),undefined)
KILN_TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
endif
KILN_BUILD_DIR ?= kiln-build
KILN_ARCH ?=
KILN_PYTHON ?=
KILN_ROCM_PATH ?=
KILN_PINS ?=
KILN_PIN ?=
KILN_WITH ?=
KILN_WITHOUT ?=
KILN_CACHE ?=
KILN_STAGE_CACHE ?=
KILN_MIRROR ?=
KILN_JOBS ?=
KILN_CONFIGURE_FLAGS ?=
NINJA ?= ninja

# $(call kiln_q,TEXT): TEXT as one shell word; $(call kiln_abs,PATH): PATH from $(CURDIR)
kiln_q = '$(subst ','\'',$(1))'
kiln_abs = $(if $(filter /%,$(firstword $(1))),$(1),$(CURDIR)/$(1))

kiln_flags = $(call kiln_q,--arch=$(KILN_ARCH)) \
	$(if $(KILN_PYTHON),$(call kiln_q,--python=$(KILN_PYTHON))) \
	$(if $(KILN_ROCM_PATH),$(call kiln_q,--rocm-path=$(KILN_ROCM_PATH))) \
	$(if $(KILN_PINS),$(call kiln_q,--pins=$(call kiln_abs,$(KILN_PINS)))) \
	$(foreach p,$(KILN_PIN),--pin $(call kiln_q,$(p))) \
	$(if $(KILN_WITH),$(call kiln_q,--with=$(KILN_WITH))) \
	$(if $(KILN_WITHOUT),$(call kiln_q,--without=$(KILN_WITHOUT))) \
	$(if $(KILN_CACHE),$(call kiln_q,--cache=$(KILN_CACHE))) \
	$(if $(KILN_STAGE_CACHE),$(call kiln_q,--stage-cache=$(call kiln_abs,$(KILN_STAGE_CACHE)))) \
	$(if $(KILN_MIRROR),$(call kiln_q,--mirror=$(call kiln_abs,$(KILN_MIRROR)))) \
	$(if $(KILN_JOBS),$(call kiln_q,--jobs=$(KILN_JOBS))) \
	$(KILN_CONFIGURE_FLAGS)
kiln_dir = $(call kiln_q,$(KILN_BUILD_DIR))

.PHONY: kiln-build kiln-check kiln-labels kiln-configure kiln-flags-FORCE

# the configure arguments, rewritten only when they change
$(KILN_BUILD_DIR)/.kiln-flags: kiln-flags-FORCE
	@test -n "$(KILN_ARCH)" || { echo "kiln.mk: set KILN_ARCH (gfx1151, gfx1100,gfx942, sm_90, cpu ...)" >&2; exit 2; }
	@test -x $(call kiln_q,$(KILN_TOP)/configure) || { printf '%s\n' $(call kiln_q,kiln.mk: no configure in '$(KILN_TOP)': set KILN_TOP to kiln's folder (make cannot find it when its path holds spaces)) >&2; exit 2; }
	@mkdir -p $(kiln_dir)
	@printf '%s\n' $(kiln_flags) | cmp -s - $@ || printf '%s\n' $(kiln_flags) >$@

$(KILN_BUILD_DIR)/build.ninja: $(KILN_BUILD_DIR)/.kiln-flags
	cd $(kiln_dir) && $(call kiln_q,$(KILN_TOP)/configure) $(kiln_flags)

kiln-configure: $(KILN_BUILD_DIR)/build.ninja

kiln-build: $(KILN_BUILD_DIR)/build.ninja
	$(NINJA) -C $(kiln_dir)

kiln-check: $(KILN_BUILD_DIR)/build.ninja
	$(NINJA) -C $(kiln_dir) stack.smoke

kiln-labels: kiln-build
	@$(kiln_dir)/build/bin/kiln-stage labels $(kiln_dir)/build/info 2>/dev/null || kiln-stage labels $(kiln_dir)/build/info

# one stage: make kiln-torch.src, make kiln-vision.wheel, make kiln-stack.smoke ...
kiln-%: $(KILN_BUILD_DIR)/build.ninja
	$(NINJA) -C $(kiln_dir) $*
