#!/usr/bin/env bash
# Runs an engine SUT on GPUs through torchrun, the way docs/engines.md
# describes, and the same cases on the CPU for comparison: `verify` (corpus +
# generated cases) and the findings, on 1 GPU and on every GPU of the host,
# plus the throughput benchmark. For the H200 machines, where the build
# directory travels as .gpubuild/ (see docs/gpu.md).
#
#   scripts/engine-gpu-run.sh [-b BUILD] [-o OUT] [-n CASES] [-p PYTHON] SOURCE...
# SOURCE: what --sut vllm: takes (a checkout, a routed_experts_capturer.py, or
# installed), optionally SOURCE::SIZING to give --engine-sizing SIZING. Writes OUT/<label>-<run>.txt and OUT/<label>-throughput-*.json and prints
# each run's summary lines. Exit status 0 when every run finished (verdicts
# are in the outputs), 1 otherwise.
set -u
build=.gpubuild
out=${OUT:-/tmp/engine-gpu-run}
cases=2000
python=python3
while getopts b:o:n:p: opt; do
  case $opt in
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    n) cases=$OPTARG ;;
    p) python=$OPTARG ;;
    *) echo "usage: $0 [-b build] [-o out] [-n cases] [-p python] SOURCE..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-b build] [-o out] [-n cases] [-p python] SOURCE..." >&2; exit 2; }
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on shared hosts
export R3_ENGINES_DIR=$PWD/engines R3CHECK_CORPUS=$PWD/corpus
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
status=0
for spec in "$@"; do
  source=${spec%%::*}
  sizing=""
  [ "$spec" != "$source" ] && sizing=${spec#*::}
  label=$(basename "$source" .py)
  [ -d "$source" ] && label=$(basename "$source")
  [ -n "$sizing" ] && label="$label+$(basename "$sizing" .py)"
  # One GPU: also two processes sharing it (real TP collectives over gloo).
  runs=("cpu:none:1" "gpu1:torchrun:1")
  if [ "$gpus" -ge 2 ]; then runs+=("gpu$gpus:torchrun:$gpus"); else runs+=("gpu1x2:torchrun:2"); fi
  for run in "${runs[@]}"; do
    IFS=: read -r name launch nproc <<<"$run"
    flags=(--sut "vllm:$source" --engine-python "$python" --engine-timeout 300)
    [ -n "$sizing" ] && flags+=(--engine-sizing "$sizing")
    env=()
    if [ "$launch" = torchrun ]; then
      flags+=(--engine-launch torchrun --nproc "$nproc" --engine-device cuda)
      [ "$nproc" = 1 ] || [ "$gpus" -lt 2 ] && env=(CUDA_VISIBLE_DEVICES=0)
    fi
    txt=$out/$label-$name.txt
    env "${env[@]}" "$build/src/r3check" verify --cases "$cases" "${flags[@]}" >"$txt" 2>&1
    rc=$?
    env "${env[@]}" "$build/src/r3check" check "${flags[@]}" corpus/findings/*.r3case \
      >>"$txt" 2>&1
    echo "== $label $name (verify exit $rc)"
    grep -E '^(source|regressions|seeds|findings|generated|total|known-finding|verify:) |^corpus/findings|collectives' "$txt"
    [ "$rc" -le 1 ] || status=1
    env "${env[@]}" "$build/bench/engine_throughput" "${flags[@]}" --cases 4000 \
      --label "$label-$name" --json "$out/$label-throughput-$name.json" >/dev/null 2>>"$txt" || status=1
    grep -h rank_captures_per_s "$out/$label-throughput-$name.json" 2>/dev/null | tr -s ' ' | paste -sd' '
  done
done
exit $status
