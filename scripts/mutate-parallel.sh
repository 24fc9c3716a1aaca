#!/usr/bin/env bash
# The full mutation run (docs/mutation.md) on a many-core machine: builds the
# scratch copy and the coverage map once, copies the built tree once per
# worker (a build dir cannot be shared: each worker mutates its own sources),
# runs one interleaved shard of the mutants per worker, and gathers the
# workers' results. Run it again to resume: finished mutants are skipped.
#
#   scripts/mutate-parallel.sh [-w WORKERS] [-m MAX_MINUTES] [-o OUTDIR] [-- mutate.py args]
#
# WORKERS defaults to nproc - 2. Each worker's results go to
# OUTDIR/results-K.json (default .mutate/shards); merge them into
# .mutate/results.json with `scripts/mutate.py --merge OUTDIR/results-*.json`.
# In a copy without .git, .mutate/files.txt must list the tree's files
# (`scripts/mutate.py --write-file-list .mutate/files.txt` in the checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
workers=$(( $(nproc) > 3 ? $(nproc) - 2 : 1 ))
minutes=600
out=.mutate/shards
while getopts w:m:o: opt; do
  case $opt in
    w) workers=$OPTARG ;;
    m) minutes=$OPTARG ;;
    o) out=$OPTARG ;;
    *) echo "usage: $0 [-w workers] [-m max-minutes] [-o outdir] [-- mutate.py args]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
start=$(date +%s)
py=python3
list=()
if [ -d .git ]; then
  mkdir -p .mutate
  $py scripts/mutate.py --write-file-list .mutate/files.txt
fi
[ -f .mutate/files.txt ] || { echo "mutate-parallel: no .git and no .mutate/files.txt" >&2; exit 2; }
list=(--file-list .mutate/files.txt)
jobs=$(nproc)
mkdir -p "$out"

# One build, its baseline and the source-to-test map (--max-minutes 0: prepare only).
if [ ! -f .mutate/coverage.json ] || [ "${REDO_COVERAGE:-0}" = 1 ]; then
  $py scripts/mutate.py "${list[@]}" --collect-coverage --jobs "$jobs" --test-jobs "$jobs" "$@"
fi
$py scripts/mutate.py "${list[@]}" --jobs "$jobs" --test-jobs "$jobs" --max-minutes 0 "$@" >/dev/null

# One copy of the built tree per worker (pax keeps sub-second mtimes, so
# ninja sees every output as up to date).
for ((k = 0; k < workers; k++)); do
  w=.mutate/shards/w$k
  [ -f "$w/.mutate/baseline.json" ] && continue
  mkdir -p "$w"
  tar --format=posix --exclude=./.git --exclude=./.mutate/shards --exclude=./.mutate/work/covbuild \
      --exclude='./build*' --exclude=./.gpubuild --exclude=./.engines-cache --exclude=./.devdeps \
      --exclude=./.mutate/logs --exclude=./.mutate/results.json --exclude=./.mutate/ci-results.json \
      -cf - . | tar -C "$w" -xf -
done
# Copies kept from an earlier run hold only their own shard's results: gather
# them all, then hand every worker the whole record, or a worker re-runs what
# another one finished (the shards are dealt from what is left).
shopt -s nullglob
kept=(.mutate/shards/w*/.mutate/results.json)
[ ${#kept[@]} -gt 0 ] && $py scripts/mutate.py --merge "${kept[@]}" >&2
for ((k = 0; k < workers; k++)); do
  [ -f .mutate/results.json ] && cp .mutate/results.json ".mutate/shards/w$k/.mutate/results.json"
done
echo "mutate-parallel: setup took $(( $(date +%s) - start )) s; $workers workers" >&2

left=$(( minutes * 60 - ($(date +%s) - start) ))
for ((k = 0; k < workers; k++)); do
  w=.mutate/shards/w$k
  # a worker's copy holds the same files, so its mutants and ids are ours
  (cd "$w" && $py scripts/mutate.py "${list[@]}" --shard "$k/$workers" \
      --max-minutes "$(( left / 60 ))" "$@" >"run.log" 2>&1) &
done
trap 'kill $(jobs -p) 2>/dev/null' EXIT
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do
  sleep 20
  done_n=$(cat .mutate/shards/w*/run.log 2>/dev/null | grep -c '^\[' || true)
  echo "mutate-parallel: $(( $(date +%s) - start )) s, $done_n mutants done" >&2
done
wait || true
for ((k = 0; k < workers; k++)); do
  cp ".mutate/shards/w$k/.mutate/results.json" "$out/results-$k.json" 2>/dev/null || true
done
echo "mutate-parallel: done in $(( $(date +%s) - start )) s; results in $out" >&2
