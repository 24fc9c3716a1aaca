#!/bin/sh
# fuzz-smoke tests: run FUZZER briefly on SEED_DIR with new inputs going to a
# temporary corpus, so that the source tree's corpora are never written.
#   run_smoke.sh FUZZER SEED_DIR [libFuzzer flags...]
set -eu
fuzzer=$1
seeds=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$fuzzer" "$@" -artifact_prefix="$work/" "$work" "$seeds"
