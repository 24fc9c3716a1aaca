#!/usr/bin/env bash
# R3_SUT / R3_POLICY / R3_MUTANT reach the invariant properties (issue 10):
# each seeded bug, the pre-#50874 SUT and the legacy policy make the property
# that exists for them fail, naming the setting; a bad name is one line and
# exit 2; unset, the same properties pass.
#   properties/env_knobs_test.sh INVARIANT_PROPS_TEST
set -u
bin=$1
failures=0
check() {  # check WANT_STATUS PATTERN FILTER [VAR=VALUE...]
  local want=$1 pattern=$2 filter=$3
  shift 3
  local out
  out=$(env "$@" RC_PARAMS="seed=1 max_success=200" "$bin" --gtest_filter="$filter" 2>&1)
  local got=$?
  if [[ $got != "$want" ]] || ! grep -q -- "$pattern" <<<"$out"; then
    echo "FAIL: $* $filter: wanted exit $want and '$pattern', got exit $got:"
    tail -n 5 <<<"$out"
    failures=$((failures + 1))
  fi
}
check 0 'PASSED' 'Invariant3.*:Invariant1.*'
check 1 'mutant no-sp-trim' 'Invariant3.*' R3_MUTANT=no-sp-trim
check 1 'mutant no-sp-trim, mutant snapshot-int8' 'Invariant6.*' R3_MUTANT=no-sp-trim,snapshot-int8
check 1 'sut vllm-pre-50874' 'Invariant3.*' R3_SUT=vllm-pre-50874
check 1 'policy legacy' 'Invariant1.KernelInputFitsTheReplayBuffer' R3_POLICY=legacy
check 2 "^r3 properties: R3_MUTANT: unknown mutant 'no-sp-trm'" 'Invariant3.*' R3_MUTANT=no-sp-trm
check 2 "^r3 properties: R3_SUT: unknown SUT 'vllm'" 'Invariant3.*' R3_SUT=vllm
check 2 "^r3 properties: R3_POLICY: unknown policy 'huge'" 'Invariant3.*' R3_POLICY=huge
check 2 "^r3 properties: R3_SUT: an engine SUT" 'Invariant3.*' R3_SUT=vllm:/nowhere
[[ $failures == 0 ]] && echo "env knobs: all checks passed" && exit 0
exit 1
