#!/usr/bin/env bash
# Overnight fuzzing in one command (docs/fuzzing.md):
#
#   scripts/fuzz-overnight.sh [-t SECONDS] [-j JOBS] [-T layout|parser] [--fresh]
#
# Builds build-fuzz (clang, ASan+UBSan, libFuzzer) if needed, runs the target
# in libFuzzer fork mode on JOBS cores for SECONDS in total, prints progress,
# merges new inputs into corpus/fuzz-<target>/ (existing entries are never
# dropped: the merged corpus is written beside the old one, then swapped in),
# minimizes every crash into a case file with `r3check minimize`, and ends
# with a short report. Killed (even with SIGKILL), it resumes where it was
# when run again with the same target; --fresh starts over.
#
# The SUT comes from R3_FUZZ_SUT / R3_FUZZ_MUTANT (comma-separated) /
# R3_FUZZ_POLICY, defaulting to the [env] section of fuzz/<target>.options;
# R3_FUZZ_CORPUS overrides the corpus folder (default corpus/fuzz-<target>).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${R3_FUZZ_BUILD:-$root/build-fuzz}
seconds=28800
jobs=$(nproc)
target=layout
fresh=0
interval=${R3_FUZZ_PROGRESS_S:-10}

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [[ $# -gt 0 ]]; do
  case $1 in
    -t) seconds=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -T) target=$2; shift 2 ;;
    --fresh) fresh=1; shift ;;
    -h|--help) usage ;;
    *) echo "fuzz-overnight: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ $seconds =~ ^[0-9]+$ && $seconds -ge 1 ]] || { echo "fuzz-overnight: -t: not a number of seconds: '$seconds'" >&2; exit 2; }
[[ $jobs =~ ^[0-9]+$ && $jobs -ge 1 ]] || { echo "fuzz-overnight: -j: not a job count: '$jobs'" >&2; exit 2; }
[[ $target == layout || $target == parser ]] || { echo "fuzz-overnight: -T: layout or parser, not '$target'" >&2; exit 2; }

log() { printf '[fuzz-overnight %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

# --- options file: [libfuzzer] key = value -> -key=value; [env] -> defaults
options_file=$root/fuzz/$target.options
flags=()
section=
while IFS= read -r line; do
  line=${line%%#*}
  [[ $line =~ ^[[:space:]]*$ ]] && continue
  if [[ $line =~ ^\[(.*)\]$ ]]; then section=${BASH_REMATCH[1]}; continue; fi
  key=$(echo "${line%%=*}" | xargs)
  value=$(echo "${line#*=}" | xargs)
  if [[ $section == libfuzzer ]]; then
    [[ $key == dict ]] && value=$root/fuzz/$value
    flags+=("-$key=$value")
  elif [[ $section == env && -z ${!key+x} ]]; then
    export "$key=$value"
  fi
done < "$options_file"
# Whatever the options file says: no exit code 77 (Meson's SKIP) for
# timeouts, leaks or OOMs.
flags+=(-error_exitcode=1 -timeout_exitcode=1)

# --- build
if [[ ! -f $build/build.ninja ]]; then
  log "configuring $build"
  CXX=clang++ meson setup "$build" "$root" -Dfuzzing=true -Dtests=false -Dgpu=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
log "building ${target}_fuzzer and r3check in $build"
ninja -C "$build" "fuzz/${target}_fuzzer" fuzz/layout_replay fuzz/parser_replay src/r3check >/dev/null
fuzzer=$build/fuzz/${target}_fuzzer
r3check=$build/src/r3check

# --- state (resumable)
state=$build/overnight/$target
corpus=$(realpath -m "${R3_FUZZ_CORPUS:-$root/corpus/fuzz-$target}")

# A previous driver that was SIGKILLed leaves its fuzzer running: stop it,
# before --fresh forgets where it was, and before a resume with other
# settings is refused (that run cannot go on: its fuzzer must not either).
if [[ -f $state/fuzzer.pid ]]; then
  old=$(cat "$state/fuzzer.pid")
  if kill -0 "$old" 2>/dev/null && grep -q "${target}_fuzzer" "/proc/$old/cmdline" 2>/dev/null; then
    log "stopping the fuzzer left running by a killed driver (pid $old)"
    kill -- "-$old" 2>/dev/null || kill "$old" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$old" 2>/dev/null || break; sleep 0.5; done
    kill -9 -- "-$old" 2>/dev/null || true
  fi
  rm -f "$state/fuzzer.pid"
fi
# What this run fuzzes. A resume with other settings would silently fuzz
# another SUT into the same state: refuse it.
config="target=$target sut=${R3_FUZZ_SUT:-} policy=${R3_FUZZ_POLICY:-} mutant=${R3_FUZZ_MUTANT:-} corpus=$corpus flags=${flags[*]}"
if [[ $fresh == 0 && -f $state/total && -f $state/config && $(cat "$state/config") != "$config" ]]; then
  echo "fuzz-overnight: $state holds an unfinished run of [$(cat "$state/config")], not [$config]: run with the same settings to resume it, or add --fresh" >&2
  exit 2
fi

if [[ $fresh == 1 ]]; then rm -rf "$state"; fi

mkdir -p "$state/work" "$state/artifacts" "$state/findings" "$corpus"

# Finish or roll back a merge that was interrupted (see merge_corpus).
recover_merge() {
  if [[ -f $corpus.merge-done && -d $corpus.merge-new ]]; then
    [[ -d $corpus && ! -d $corpus.merge-old ]] && mv "$corpus" "$corpus.merge-old"
    mv "$corpus.merge-new" "$corpus"
  elif [[ ! -d $corpus && -d $corpus.merge-old ]]; then
    mv "$corpus.merge-old" "$corpus"
  fi
  rm -rf "$corpus.merge-new" "$corpus.merge-old"
  rm -f "$corpus.merge-done"
}
recover_merge

if [[ -f $state/total ]]; then
  total=$(cat "$state/total")
  done_s=$(cat "$state/elapsed" 2>/dev/null || echo 0)
  [[ $total != "$seconds" ]] && log "resuming a ${total}s run (ignoring -t $seconds; --fresh starts over)"
else
  # A new run: the last one's work corpus was merged; its findings reported.
  rm -rf "$state/work" "$state/artifacts" "$state/findings" "$state"/*.log "$state/progress.tsv"
  mkdir -p "$state/work" "$state/artifacts" "$state/findings"
  total=$seconds
  done_s=0
  echo "$config" > "$state/config"
  echo "$total" > "$state/total"
  echo 0 > "$state/elapsed"
fi
remaining=$((total - done_s))
before=$(find "$corpus" -type f ! -name '.*' | wc -l)
log "target $target, sut ${R3_FUZZ_SUT:-vllm-post-50874}, policy ${R3_FUZZ_POLICY:-pr50874}, mutant ${R3_FUZZ_MUTANT:-none}"
log "$done_s of $total s done; fuzzing ${remaining}s on $jobs jobs; corpus $corpus ($before entries)"

progress() {  # the latest fork-mode status line as one progress line
  local line
  line=$(tail -c +"$((log_start + 1))" "$state/fuzz.log" 2>/dev/null | grep -a '^#[0-9]*: cov:' |
    tail -n 1 || true)
  local finds
  finds=$(find "$state/artifacts" -type f | wc -l)
  if [[ -z $line ]]; then
    log "$1s/${total}s: starting (findings $finds)"
  else
    # "#123: cov: 45 ft: 67 corp: 8 exec/s 9 oom/timeout/crash: 0/0/1 time: 10s ..."
    # With -timeout_exitcode equal to -error_exitcode, fork mode counts every
    # crash as a timeout: findings are counted from the artifact files.
    echo "$line" | awk -v t="$1" -v tot="$total" -v f="$finds" -v now="$(date -u +%H:%M:%S)" '{
      execs=substr($1, 2, length($1) - 2);
      printf "[fuzz-overnight %s] %ss/%ss: execs %s, cov %s, ft %s, corpus %s, exec/s %s, oom/timeout/crash %s, findings %s\n",
        now, t, tot, execs, $3, $5, $7, $9, $11, f }'
    # the same numbers for the morning report (scripts/fuzz_report.py)
    echo "$line" | awk -v t="$1" -v f="$finds" '{
      printf "%s %s %s %s %s %s %s\n", t, substr($1, 2, length($1) - 2), $3, $5, $7, $9, f }' \
      >>"$state/progress.tsv"
  fi
}

fuzz_pid=
log_start=0
stop() {
  if [[ -n $fuzz_pid ]] && kill -0 "$fuzz_pid" 2>/dev/null; then
    kill -- "-$fuzz_pid" 2>/dev/null || kill "$fuzz_pid" 2>/dev/null || true
    wait "$fuzz_pid" 2>/dev/null || true
  fi
  rm -f "$state/fuzzer.pid"
  log "interrupted after $(cat "$state/elapsed") of $total s; run the same command again to resume"
  exit 130
}
trap stop INT TERM

if [[ $remaining -gt 0 ]]; then
  # Each start of the fuzzer (a resume after a kill is another) counts its
  # executions from 0: a "part" row tells scripts/fuzz_report.py to add the
  # parts up, and progress reads only this part's status lines.
  echo "part $done_s" >>"$state/progress.tsv"
  log_start=$(stat -c %s "$state/fuzz.log" 2>/dev/null || echo 0)
  # setsid: the fuzzer and its fork-mode children form one process group,
  # so stopping it stops them all.
  # In the state folder: whatever libFuzzer writes beside its artifacts
  # stays out of the user's working directory.
  (cd "$state" && exec setsid "$fuzzer" "${flags[@]}" -fork="$jobs" -ignore_crashes=1 \
    -max_total_time="$remaining" -artifact_prefix="$state/artifacts/" \
    "$state/work" "$corpus" "$root/corpus/seeds" "$root/corpus/regressions" \
    "$root/corpus/findings" >>"$state/fuzz.log" 2>&1) &
  fuzz_pid=$!
  echo "$fuzz_pid" > "$state/fuzzer.pid"
  start=$(date +%s)
  while kill -0 "$fuzz_pid" 2>/dev/null; do
    sleep 1
    now=$(date +%s)
    t=$((done_s + now - start)); (( t > total )) && t=$total
    echo "$t" > "$state/elapsed.tmp" && mv "$state/elapsed.tmp" "$state/elapsed"
    if (( (now - start) % interval == 0 )); then progress "$t"; fi
  done
  set +e
  wait "$fuzz_pid"
  rc=$?
  set -e
  fuzz_pid=
  rm -f "$state/fuzzer.pid"
  echo "$total" > "$state/elapsed"
  progress "$total"
  [[ $rc != 0 ]] && log "fuzzer exited with status $rc (see $state/fuzz.log)"
fi
trap - INT TERM

# --- merge: copy the old corpus into a new dir beside it, let libFuzzer add
# the work corpus's inputs that bring new coverage, then swap. A kill at any
# point leaves either the old or the complete new corpus (recover_merge).
merge_corpus() {
  rm -rf "$corpus.merge-new"
  mkdir -p "$corpus.merge-new" "$state/merge-artifacts"
  cp -a "$corpus/." "$corpus.merge-new/"
  # The merge measures coverage, so it runs the unmutated SUT: under a mutant
  # the work corpus is full of inputs that fail, and a merge that stops at the
  # first of them would lose the night's corpus (findings come from the
  # artifacts, not from here).
  if ! (cd "$state" && R3_FUZZ_MUTANT= "$fuzzer" -merge=1 "${flags[@]}" \
          -artifact_prefix="$state/merge-artifacts/" "$corpus.merge-new" "$state/work" \
          >>"$state/merge.log" 2>&1); then
    log "merge failed (see $state/merge.log); the corpus stays as it was"
    rm -rf "$corpus.merge-new"
    return 0
  fi
  # The merge keeps inputs the target rejects (-1) when they add parser
  # coverage; drop the new ones (never an entry the old corpus had).
  if [[ $target == layout ]]; then
    "$build/fuzz/layout_replay" --list-invalid "$corpus.merge-new" | while IFS= read -r bad; do
      [[ -e $corpus/$(basename "$bad") ]] || rm -f "$bad"
    done
  fi
  # The parser corpus's replay checks each input's accept/reject verdict
  # against corpus/fuzz-parser-expect.txt: record the new inputs' verdicts
  # (recorded ones never change; a changed one fails here and in CI).
  if [[ $target == parser && $corpus == "$root/corpus/fuzz-parser" ]]; then
    "$build/fuzz/parser_replay" --update-expect="$root/corpus/fuzz-parser-expect.txt" \
      "$corpus.merge-new" >>"$state/merge.log" 2>&1 ||
      log "parser verdicts changed for recorded inputs: see $state/merge.log"
  fi
  touch "$corpus.merge-done"
  mv "$corpus" "$corpus.merge-old"
  mv "$corpus.merge-new" "$corpus"
  rm -rf "$corpus.merge-old"
  rm -f "$corpus.merge-done"
}
log "merging new inputs into $corpus"
merge_corpus
after=$(find "$corpus" -type f ! -name '.*' | wc -l)

# --- findings: minimize each crash into a case file (layout), or let
# libFuzzer shrink the bytes (parser).
sut_args=(--sut "${R3_FUZZ_SUT:-vllm-post-50874}" --policy "${R3_FUZZ_POLICY:-pr50874}")
IFS=, read -r -a mutant_list <<< "${R3_FUZZ_MUTANT:-}"
for m in "${mutant_list[@]}"; do [[ -n $m ]] && sut_args+=(--mutant "$m"); done
findings=()
for crash in "$state"/artifacts/*; do
  [[ -f $crash ]] || continue
  if [[ $target == layout ]]; then
    tmp=$state/findings/.minimizing
    if "$r3check" minimize "${sut_args[@]}" "$crash" >"$tmp" 2>/dev/null; then
      # Named by the minimal case and its failure (not the step counts):
      # crashes of one bug end in one file.
      name=$(grep -v '^# Shrunk' "$tmp" | sha1sum | cut -c1-12)
      mv "$tmp" "$state/findings/$name.r3case"
      findings+=("$state/findings/$name.r3case")
    else
      rm -f "$tmp"
      cp "$crash" "$state/findings/"  # not an invariant failure (e.g. a timeout): keep raw
      findings+=("$state/findings/$(basename "$crash") (raw: does not fail as a case)")
    fi
  else
    out=$state/findings/$(basename "$crash").min
    "$fuzzer" -minimize_crash=1 -max_total_time=10 -exact_artifact_path="$out" "$crash" \
      >>"$state/minimize.log" 2>&1 || true
    [[ -f $out ]] || cp "$crash" "$out"
    findings+=("$out")
  fi
done
mapfile -t unique < <(printf '%s\n' "${findings[@]}" | sort -u)

# --- report
line=$(grep -a '^#[0-9]*: cov:' "$state/fuzz.log" 2>/dev/null | tail -n 1 || true)
echo
echo "== fuzz-overnight report: $target =="
echo "fuzzed:    ${total}s on $jobs jobs (sut ${R3_FUZZ_SUT:-vllm-post-50874}, policy ${R3_FUZZ_POLICY:-pr50874}, mutant ${R3_FUZZ_MUTANT:-none})"
[[ -n $line ]] && echo "last:      $line"
echo "corpus:    $corpus: $before -> $after entries"
echo "crashes:   $(find "$state/artifacts" -type f | wc -l) raw, $(printf '%s\n' "${unique[@]}" | grep -c . || true) distinct after minimization"
for f in "${unique[@]}"; do [[ -n $f ]] && echo "  $f"; done
if [[ ${#unique[@]} -gt 0 && -n ${unique[0]} && $target == layout ]]; then
  echo "keep one:  $r3check minimize ${sut_args[*]} --save NAME <case>"
fi
python3 "$root/scripts/fuzz_report.py" "$state" "$target" "$total" "$before" "$after" \
  "${unique[@]}" || log "could not write the report files (see above)"
echo "report:    $state/report.json, $state/report.svg (coverage and corpus over time)"
echo "state:     $state (--fresh to start over)"
rm -f "$state/total" "$state/elapsed"  # the run is complete: the next one starts afresh
