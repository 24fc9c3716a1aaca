#!/usr/bin/env bash
# The whole routing-replay path on GPUs, judged like on the CPU (issue 19,
# item 3): for each SOURCE[::SIZING], `verify --json` on the CPU, under
# torchrun with one process on one GPU, and with two processes (on two GPUs
# when the host has them, else sharing one: real TP collectives over gloo),
# then checks that every run gave the same verdicts. With --engine-device
# cuda the adapter allocates vLLM's replay buffer on the GPU, a stand-in
# kernel writes the kernel's rows into it, vLLM's hand-off passes them on and
# vLLM's capture() copies them into the capturer buffer.
#
#   scripts/engine-gpu-verdicts.sh R3CHECK OUT SOURCE[::SIZING]...
# For the H200 machines: build r3check here, strip it into a git-ignored
# folder named in `carry` (e.g. .gpucarry/r3check), carry the sources too.
# Exit 0 when every source gave identical verdicts on every run.
# Environment: R3_ENGINE_PYTHON (the adapter's interpreter, default: what
# r3check picks), RUN_TIMEOUT (seconds per run, default 300).
set -u
[ $# -ge 3 ] || { echo "usage: $0 R3CHECK OUT SOURCE[::SIZING]..." >&2; exit 2; }
bin=$1 out=$2
shift 2
mkdir -p "$out"
export R3_ENGINES_DIR=$PWD/engines R3CHECK_CORPUS=$PWD/corpus NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
status=0
for spec in "$@"; do
  src=${spec%%::*} sizing=""
  [ "$spec" != "$src" ] && sizing=${spec#*::}
  label=$(basename "$src" .py | cut -c1-40)
  for run in cpu gpu1 gpu2; do
    flags=(--sut "vllm:$src" --engine-timeout 300 --cases 300 --seed 7 --json)
    [ -n "${R3_ENGINE_PYTHON:-}" ] && flags+=(--engine-python "$R3_ENGINE_PYTHON")
    [ -n "$sizing" ] && flags+=(--engine-sizing "$sizing")
    env=()
    case $run in
      gpu1) flags+=(--engine-launch torchrun --nproc 1 --engine-device cuda); env=(CUDA_VISIBLE_DEVICES=0) ;;
      gpu2) flags+=(--engine-launch torchrun --nproc 2 --engine-device cuda)
            [ "$gpus" -ge 2 ] || env=(CUDA_VISIBLE_DEVICES=0) ;;
    esac
    start=$(date +%s)
    env "${env[@]}" timeout "${RUN_TIMEOUT:-300}" "$bin" verify "${flags[@]}" >"$out/$label-$run.json" 2>"$out/$label-$run.err"
    rc=$?
    echo "$label $run: exit $rc, $(( $(date +%s) - start )) s; $(grep -o '[0-9]* of [0-9]* case(s) ran with real TP collectives.*' "$out/$label-$run.err" | head -1)"
    [ "$rc" -le 1 ] || status=1
  done
  python3 - "$out" "$label" <<'PY' || status=1
import json, re, sys
out, label = sys.argv[1], sys.argv[2]
# vLLM's own messages name the device ("... for 8192 tokens on cuda:0"):
# the one difference a GPU run may show, so it is masked before comparing.
DEVICE = re.compile(r"\b(cuda(:[0-9]+)?|cpu)\b")
def masked(v):
    if isinstance(v, str):
        return DEVICE.sub("DEVICE", v)
    if isinstance(v, list):
        return [masked(x) for x in v]
    if isinstance(v, dict):
        return {k: masked(x) for k, x in v.items()}
    return v
def verdicts(run):
    try:
        j = json.load(open(f"{out}/{label}-{run}.json"))
    except ValueError:
        print(f"{label}: {run} gave no verdicts (see {out}/{label}-{run}.err)")
        sys.exit(1)
    return j["total"], [masked({k: v for k, v in f.items() if k != "sut"}) for f in j["failures"]]
cpu = verdicts("cpu")
for run in ("gpu1", "gpu2"):
    other = verdicts(run)
    same = other == cpu
    print(f"{label}: {run} {'same verdicts as' if same else 'DIFFERS from'} cpu: cpu {cpu[0]}, {run} {other[0]}")
    if not same:
        sys.exit(1)
PY
done
exit $status
