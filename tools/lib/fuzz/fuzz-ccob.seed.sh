#!/bin/sh
# fuzz-ccob.seed.sh DIR: real HIP seeds for fuzz-ccob
exec sh "$(dirname "$0")/hip-seeds.sh" "$1" ccob
