# mk/tools.mk: kiln's tool targets for make users. Run from the build folder (where
# build.ninja lives or will live): `make -f /path/to/kiln/mk/tools.mk check`.
# make only drives ninja: configure once (with $(CONFIGURE_FLAGS)) when build.ninja is
# missing, then hand every target to ninja, which knows the real dependencies.
KILN_TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
NINJA ?= ninja
CONFIGURE_FLAGS ?=

.PHONY: all tools check install clean-tools
all tools check install clean-tools: build.ninja
	$(NINJA) $(if $(filter all,$@),tools,$@)

build.ninja:
	$(KILN_TOP)/configure $(CONFIGURE_FLAGS)
