#!/usr/bin/env bash
# Runs the GPU test binaries directly, optionally under compute-sanitizer,
# writing gtest JSON. For the H200 machines, whose newer Meson refuses a
# build directory configured by Meson 1.0.1 (so `meson test` cannot run
# there); on a machine with Meson 1.0.1 and a GPU, `meson test --suite gpu
# [--setup memcheck|racecheck|initcheck|synccheck]` does the same.
#
#   scripts/gpu-run.sh [-b BUILD_DIR] [-o OUT_DIR] [-l LABEL] [-t SANITIZER_TOOL]
#                      [-f GTEST_FILTER] [BINARY...]
# BINARY defaults to every tests/gpu binary. Exit status: 0 all passed (or
# skipped: 77 means no GPU), 1 otherwise.
set -u
build=.gpubuild
out=${OUT:-/tmp/gpu-run}
label=run
tool=
filter=
while getopts b:o:l:t:f: opt; do
  case $opt in
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    l) label=$OPTARG ;;
    t) tool=$OPTARG ;;
    f) filter=$OPTARG ;;
    *) echo "usage: $0 [-b build] [-o out] [-l label] [-t tool] [-f filter] [binary...]" >&2
       exit 2 ;;
  esac
done
shift $((OPTIND - 1))
binaries=("$@")
[ ${#binaries[@]} -eq 0 ] && binaries=(gpu_path_test gpu_property_test)
mkdir -p "$out"
# NVLink multicast stays off on shared hosts.
export NCCL_NVLS_ENABLE=0
wrapper=()
if [ -n "$tool" ]; then
  # SANITIZER_ARGS adds options, e.g. "--report-api-errors no" for NCCL runs:
  # NCCL probes the driver and gets (and handles) API errors by design.
  # shellcheck disable=SC2206
  wrapper=(compute-sanitizer --tool "$tool" --error-exitcode 1 --print-limit 20
           ${SANITIZER_ARGS:-})
fi
status=0
for bin in "${binaries[@]}"; do
  exe=$build/tests/gpu/$bin
  json=$out/$label-$bin${tool:+-$tool}.json
  args=(--gtest_output="json:$json")
  [ -n "$filter" ] && args+=(--gtest_filter="$filter")
  start=$(date +%s%N)
  "${wrapper[@]}" "$exe" "${args[@]}"
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  case $rc in
    0) verdict=PASS ;;
    77) verdict=SKIP ;;
    *) verdict=FAIL; status=1 ;;
  esac
  echo "== $label $bin${tool:+ under compute-sanitizer --tool $tool}: $verdict (rc=$rc, ${ms} ms)"
done
exit $status
