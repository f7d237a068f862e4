#!/bin/sh
# fuzz-offelf.seed.sh DIR: real HIP seeds for fuzz-offelf
exec sh "$(dirname "$0")/hip-seeds.sh" "$1" elf
