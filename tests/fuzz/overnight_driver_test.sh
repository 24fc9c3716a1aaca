#!/usr/bin/env bash
# End-to-end test of scripts/fuzz-overnight.sh's own logic (issue 10): the
# driver runs against a build dir whose fuzzer is a stand-in that behaves
# like libFuzzer where the driver depends on it (status lines, artifacts
# under -artifact_prefix, a merge that stops at the first failing input when
# the SUT is mutated), so no clang build is needed. r3check is the real one.
#
#   tests/fuzz/overnight_driver_test.sh R3CHECK
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
r3check=$(realpath "$1")
tmp=$(mktemp -d)
trap 'pkill -f "$tmp/build/fuzz/layout_fuzzer" 2>/dev/null; rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

build=$tmp/build
mkdir -p "$build/fuzz" "$build/src" "$tmp/cwd" "$tmp/corpus"
ln -s "$r3check" "$build/src/r3check"
printf 'rule nop\n  command = true\n' >"$build/build.ninja"
for t in fuzz/layout_fuzzer fuzz/layout_replay fuzz/parser_replay src/r3check; do
  printf 'build %s: phony\n' "$t" >>"$build/build.ninja"
done
printf '#!/usr/bin/env bash\nexit 0\n' >"$build/fuzz/layout_replay"
cp "$build/fuzz/layout_replay" "$build/fuzz/parser_replay"
cat >"$build/fuzz/layout_fuzzer" <<'FAKE'
#!/usr/bin/env bash
# Stand-in for a libFuzzer binary: a failing input is the eager step, which
# every mutant in R3_FUZZ_MUTANT here breaks.
prefix=./ merge=0 total=1 dirs=()
for a in "$@"; do
  case $a in
    -artifact_prefix=*) prefix=${a#*=} ;;
    -merge=1) merge=1 ;;
    -max_total_time=*) total=${a#*=} ;;
    -*) ;;
    *) dirs+=("$a") ;;
  esac
done
if [[ $merge == 1 ]]; then
  if [[ -n ${R3_FUZZ_MUTANT:-} ]]; then  # libFuzzer's merge stops at a crash
    cp "$FAKE_CRASH" "${prefix}crash-merge"
    echo "==1== ERROR: libFuzzer: deadly signal"
    exit 1
  fi
  cp -n "${dirs[1]}"/* "${dirs[0]}"/ 2>/dev/null
  exit 0
fi
echo "#10: cov: 5 ft: 6 corp: 1 exec/s 10 oom/timeout/crash: 0/0/0 time: 0s"
cp "$FAKE_CRASH" "${dirs[0]}/input-$$"
[[ -n ${R3_FUZZ_MUTANT:-} ]] && cp "$FAKE_CRASH" "${prefix}crash-$$"
sleep "$total"
echo "#20: cov: 7 ft: 8 corp: 2 exec/s 10 oom/timeout/crash: 0/0/1 time: ${total}s"
FAKE
chmod +x "$build/fuzz/"*
export FAKE_CRASH=$root/corpus/seeds/tp2-dp2-eager.r3case
export R3_FUZZ_BUILD=$build R3_FUZZ_CORPUS=$tmp/corpus R3_FUZZ_PROGRESS_S=1
driver=$root/scripts/fuzz-overnight.sh
state=$build/overnight/layout

echo "== a run under a mutant ends with its report, artifacts only in the state"
out=$(cd "$tmp/cwd" && R3_FUZZ_MUTANT=no-sp-trim "$driver" -t 2 -j 1 2>&1)
rc=$?
[[ $rc == 0 ]] || fail "exit $rc under a mutant: $out"
grep -q '^== fuzz-overnight report: layout ==' <<<"$out" || fail "no report: $out"
grep -q 'crashes:   1 raw, 1 distinct after minimization' <<<"$out" || fail "crash not minimized: $out"
[[ -z $(ls -A "$tmp/cwd") ]] || fail "files written to the working directory: $(ls -A "$tmp/cwd")"
ls "$state"/findings/*.r3case >/dev/null 2>&1 || fail "no minimized finding in $state/findings"
[[ $(ls "$tmp/corpus" | wc -l) -ge 1 ]] || fail "the corpus lost the night's inputs (merge aborted?)"
grep -q 'mutant=no-sp-trim' "$state/config" || fail "the state does not record the mutant"
# the morning report: JSON numbers from the fuzzer's last status line, an SVG
# plot that parses and renders
python3 - "$state" <<'PY' || fail "report.json/report.svg do not hold the night"
import json, sys, xml.etree.ElementTree as ET
state = sys.argv[1]
r = json.load(open(state + '/report.json'))
assert r['target'] == 'layout' and r['seconds'] == 2, r
assert r['execs'] == 20 and r['coverage'] == {'cov': 7, 'ft': 8}, r
assert len(r['findings']) == 1 and r['findings'][0].endswith('.r3case'), r['findings']
assert r['corpus']['after'] >= 1 and r['timeline'], r
root = ET.parse(state + '/report.svg').getroot()
assert len(root.findall('{http://www.w3.org/2000/svg}polyline')) == 2
PY
if command -v rsvg-convert >/dev/null; then
  rsvg-convert -o "$tmp/report.png" "$state/report.svg" || fail "report.svg does not render"
fi
grep -q "^report:    $state/report.json" <<<"$out" || fail "the report does not name its files"

echo "== a resume with another SUT setting is refused"
R3_FUZZ_MUTANT=no-sp-trim "$driver" -t 60 -j 1 >/dev/null 2>&1 &
driver_pid=$!
for _ in $(seq 50); do [[ -f $state/fuzzer.pid ]] && break; sleep 0.2; done
fuzzer_pid=$(cat "$state/fuzzer.pid" 2>/dev/null)
[[ -n $fuzzer_pid ]] || fail "the driver never started its fuzzer"
kill -9 "$driver_pid"; wait "$driver_pid" 2>/dev/null
err=$("$driver" -t 1 -j 1 2>&1 >/dev/null)
rc=$?
[[ $rc == 2 ]] || fail "a resume without the mutant exits $rc, not 2"
[[ $(grep -c . <<<"$err") == 1 ]] || fail "not one line: $err"
grep -q 'mutant=no-sp-trim' <<<"$err" || fail "the message does not name the recorded mutant: $err"
grep -q -- '--fresh' <<<"$err" || fail "the message does not name the fix: $err"
# That run cannot go on: the fuzzer its killed driver left running is stopped.
sleep 0.5
kill -0 "$fuzzer_pid" 2>/dev/null && fail "the orphaned fuzzer (pid $fuzzer_pid) still runs after the refused resume"

echo "== --fresh after kill -9 stops the fuzzer the killed driver left running"
R3_FUZZ_MUTANT=no-sp-trim "$driver" -t 60 -j 1 >/dev/null 2>&1 &
driver_pid=$!
for _ in $(seq 50); do [[ -f $state/fuzzer.pid ]] && break; sleep 0.2; done
fuzzer_pid=$(cat "$state/fuzzer.pid" 2>/dev/null)
kill -9 "$driver_pid"; wait "$driver_pid" 2>/dev/null
kill -0 "$fuzzer_pid" 2>/dev/null || fail "the stand-in fuzzer did not outlive its driver (test is void)"
out=$("$driver" --fresh -t 1 -j 1 2>&1)
rc=$?
[[ $rc == 0 ]] || fail "--fresh exits $rc: $out"
sleep 0.5
kill -0 "$fuzzer_pid" 2>/dev/null && fail "the old fuzzer (pid $fuzzer_pid) still runs after --fresh"

echo "== after kill -9 and a resume, report.json counts both parts' executions"
# The --fresh run above left its progress rows; until the new run clears
# them, the wait below would see that run's "10" row and kill the driver
# before it has begun (seen in CI: one part, 20 execs).
rm -f "$state/progress.tsv"
"$driver" -t 6 -j 1 >/dev/null 2>&1 &
driver_pid=$!
for _ in $(seq 50); do grep -q '^[0-9]* 10 ' "$state/progress.tsv" 2>/dev/null && break; sleep 0.2; done
grep -q '^[0-9]* 10 ' "$state/progress.tsv" 2>/dev/null || fail "the first part logged no progress"
kill -9 "$driver_pid"; wait "$driver_pid" 2>/dev/null
out=$("$driver" -t 6 -j 1 2>&1)
rc=$?
[[ $rc == 0 ]] || fail "the resume exits $rc: $out"
grep -q 'resuming\|of 6 s done' <<<"$out" || fail "not a resume: $out"
# the stand-in counts 10 then 20 per start: the first part's 10 plus the
# resumed part's 20
python3 - "$state" <<'PY' || fail "report.json does not sum the parts of the resumed run"
import json, sys
r = json.load(open(sys.argv[1] + '/report.json'))
assert r['execs'] == 30 and r['parts'] == 2, (r['execs'], r.get('parts'), r['timeline'])
assert [t['execs'] for t in r['timeline']] == sorted(t['execs'] for t in r['timeline']), r['timeline']
PY

if [[ $failures == 0 ]]; then echo "overnight driver: all checks passed"; exit 0; fi
echo "overnight driver: $failures check(s) failed"
exit 1
