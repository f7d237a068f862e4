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
KILN_TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
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

kiln_flags = --arch=$(KILN_ARCH) \
	$(if $(KILN_PYTHON),--python=$(KILN_PYTHON)) \
	$(if $(KILN_ROCM_PATH),--rocm-path=$(KILN_ROCM_PATH)) \
	$(if $(KILN_PINS),--pins=$(abspath $(KILN_PINS))) \
	$(foreach p,$(KILN_PIN),--pin $(p)) \
	$(if $(KILN_WITH),--with=$(KILN_WITH)) \
	$(if $(KILN_WITHOUT),--without=$(KILN_WITHOUT)) \
	$(if $(KILN_CACHE),--cache=$(KILN_CACHE)) \
	$(if $(KILN_STAGE_CACHE),--stage-cache=$(abspath $(KILN_STAGE_CACHE))) \
	$(if $(KILN_MIRROR),--mirror=$(abspath $(KILN_MIRROR))) \
	$(if $(KILN_JOBS),--jobs=$(KILN_JOBS)) \
	$(KILN_CONFIGURE_FLAGS)

.PHONY: kiln-build kiln-check kiln-labels kiln-configure kiln-flags-FORCE

# the configure arguments, rewritten only when they change
$(KILN_BUILD_DIR)/.kiln-flags: kiln-flags-FORCE
	@test -n "$(KILN_ARCH)" || { echo "kiln.mk: set KILN_ARCH (gfx1151, gfx1100,gfx942, sm_90, cpu ...)" >&2; exit 2; }
	@mkdir -p $(KILN_BUILD_DIR)
	@echo '$(strip $(kiln_flags))' | cmp -s - $@ || echo '$(strip $(kiln_flags))' >$@

$(KILN_BUILD_DIR)/build.ninja: $(KILN_BUILD_DIR)/.kiln-flags
	cd $(KILN_BUILD_DIR) && $(KILN_TOP)/configure $(kiln_flags)

kiln-configure: $(KILN_BUILD_DIR)/build.ninja

kiln-build: $(KILN_BUILD_DIR)/build.ninja
	$(NINJA) -C $(KILN_BUILD_DIR)

kiln-check: $(KILN_BUILD_DIR)/build.ninja
	$(NINJA) -C $(KILN_BUILD_DIR) stack.smoke

kiln-labels: kiln-build
	@$(KILN_BUILD_DIR)/build/bin/kiln-stage labels $(KILN_BUILD_DIR)/build/info 2>/dev/null || kiln-stage labels $(KILN_BUILD_DIR)/build/info

# one stage: make kiln-torch.src, make kiln-vision.wheel, make kiln-stack.smoke ...
kiln-%: $(KILN_BUILD_DIR)/build.ninja
	$(NINJA) -C $(KILN_BUILD_DIR) $*
