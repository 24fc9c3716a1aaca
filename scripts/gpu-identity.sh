#!/usr/bin/env bash
# Runs the same GPU-path commands with two r3check binaries and diffs their
# outputs byte for byte (stdout, stderr with the device names masked, exit
# status): the proof that a refactor changed nothing the user sees. Run it
# from the source root (the corpus is named relative to it, so the two
# binaries' own corpus defaults do not matter).
#
#   scripts/gpu-identity.sh OLD_R3CHECK NEW_R3CHECK OUT_DIR
# Exit status: 0 every output identical, 1 some differ (the diffs are in
# OUT_DIR/*.diff), 77 no GPU.
set -u
old=$1 new=$2 out=$3
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-identity: no GPU" >&2
  exit 77
fi
seeds=(corpus/seeds/*.r3case)
commands=(
  "check --gpu ${seeds[*]}"
  "check --gpu --json ${seeds[*]}"
  "check --gpu --gpu-ranks emulated --gpu-graph ${seeds[*]}"
  "check --gpu --mutant gpu-layer-stride ${seeds[*]}"
  "check --gpu --gpu-ranks emulated --gpu-graph --mutant gpu-layer-stride ${seeds[*]}"
  "verify --corpus corpus --gpu --cases 20000 --seed 3"
  "verify --corpus corpus --gpu --gpu-ranks emulated --cases 65536 --seed 1"
  "verify --corpus corpus --gpu --cases 4000 --mutant no-sp-trim"
  "verify --corpus corpus --gpu --cases 4000 --mutant gpu-tail-rows --max-failures 3"
  "verify --corpus corpus --gpu --cases 2000 --mutant gpu-layer-stride --json --max-failures 4"
  "verify --corpus corpus --gpu --cases 300 --gpu-graph --mutant gpu-vec-groups"
  "verify --corpus corpus --gpu --cases 2000 --save-failures /tmp/gpu-identity-saved --mutant gpu-tail-rows --max-failures 0"
  "verify --gpu --replay 1:17"
  "verify --gpu --replay 1:4 --mutant gpu-gather-reversed"
)
status=0
for i in "${!commands[@]}"; do
  cmd=${commands[$i]}
  for which in old new; do
    bin=$old
    [ "$which" = new ] && bin=$new
    rm -rf /tmp/gpu-identity-saved
    # shellcheck disable=SC2086
    timeout 300 "$bin" $cmd >"$out/$i.$which.out" 2>"$out/$i.$which.err.raw"
    echo "exit $?" >>"$out/$i.$which.out"
    sed -E 's/GPU\(s\): .*/GPU(s): <devices>/' "$out/$i.$which.err.raw" >"$out/$i.$which.err"
    [ -d /tmp/gpu-identity-saved ] && cat /tmp/gpu-identity-saved/* >>"$out/$i.$which.out"
  done
  if cmp -s "$out/$i.old.out" "$out/$i.new.out" && cmp -s "$out/$i.old.err" "$out/$i.new.err"; then
    echo "identical ($(wc -c <"$out/$i.new.out") bytes out): r3check $cmd" | cut -c1-160
  else
    status=1
    diff "$out/$i.old.out" "$out/$i.new.out" >"$out/$i.diff"
    diff "$out/$i.old.err" "$out/$i.new.err" >>"$out/$i.diff"
    echo "DIFFERENT: r3check $cmd (see $i.diff)" | cut -c1-160
    head -20 "$out/$i.diff"
  fi
done
exit $status
