#!/bin/sh
# fuzz-hipfatbin.seed.sh DIR: real HIP seeds for fuzz-hipfatbin
exec sh "$(dirname "$0")/hip-seeds.sh" "$1" fatbin
