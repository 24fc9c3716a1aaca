#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh the way the OSS-Fuzz/ClusterFuzzLite build
# image does (clang 14, their compile flags per sanitizer,
# LIB_FUZZING_ENGINE=-fsanitize=fuzzer, fresh $WORK and $OUT), for the address
# and the undefined sanitizer, then checks what lands in $OUT: every target
# with its seed corpus zip, dictionary and options; each target runs on its
# unpacked seeds; and a crash file that the built layout target writes under
# a seeded bug is a case that `r3check minimize` takes as it is.
#
#   clusterfuzzlite_build_test.sh SOURCE_ROOT R3CHECK [SANITIZER...]
# Exit 77 (skip) without clang 14 or zip. One difference from the image:
# libstdc++ instead of -stdlib=libc++, since Debian's libFuzzer runtime is
# built against libstdc++ and does not link into a libc++ program.
set -euo pipefail
src=$1 r3check=$2
shift 2
sanitizers=(address undefined)
[ $# -gt 0 ] && sanitizers=("$@")
for tool in clang-14 clang++-14 zip unzip meson ninja; do
  command -v "$tool" >/dev/null || { echo "skip: no $tool"; exit 77; }
done
echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
  clang++-14 -fsanitize=fuzzer -x c++ - -o /dev/null 2>/dev/null ||
  { echo "skip: clang 14 cannot link -fsanitize=fuzzer (apt-get install libclang-rt-14-dev)"; exit 77; }

tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# OSS-Fuzz's infra/base-images/base-clang flags, as its `compile` sets them.
common="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
declare -A flags=(
  [address]="-fsanitize=address -fsanitize-address-use-after-scope"
  [undefined]="-fsanitize=array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unsigned-integer-overflow,unreachable,vla-bound,vptr -fno-sanitize-recover=array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound,vptr"
)
targets=(layout_fuzzer parser_fuzzer)

for sanitizer in "${sanitizers[@]}"; do
  [ -n "${flags[$sanitizer]:-}" ] || fail "unknown sanitizer $sanitizer"
  echo "== $sanitizer: building"
  out="$tmp/out-$sanitizer" work="$tmp/work-$sanitizer"
  mkdir -p "$out" "$work"
  start=$(date +%s)
  # A clean environment but PATH, as in the image; build.sh must need nothing else.
  env -i PATH="$PATH" HOME="$tmp" SRC="$src" OUT="$out" WORK="$work" SANITIZER="$sanitizer" \
    CC=clang-14 CXX=clang++-14 \
    CFLAGS="$common ${flags[$sanitizer]} -fsanitize=fuzzer-no-link" \
    CXXFLAGS="$common ${flags[$sanitizer]} -fsanitize=fuzzer-no-link" \
    LIB_FUZZING_ENGINE=-fsanitize=fuzzer \
    bash "$src/.clusterfuzzlite/build.sh" >"$tmp/build-$sanitizer.log" 2>&1 ||
    { tail -30 "$tmp/build-$sanitizer.log"; fail "build.sh failed under $sanitizer"; }
  echo "   built in $(( $(date +%s) - start )) s"

  for t in "${targets[@]}"; do
    for f in "$t" "${t}_seed_corpus.zip" "$t.dict" "$t.options"; do
      [ -s "$out/$f" ] || fail "$sanitizer: \$OUT/$f missing or empty"
    done
    [ -x "$out/$t" ] || fail "$sanitizer: \$OUT/$t is not executable"
    grep -qx "dict = $t.dict" "$out/$t.options" || fail "$sanitizer: $t.options does not name $t.dict"
    # The target is instrumented for this sanitizer (its runtime is linked in).
    case $sanitizer in
      address) grep -q __asan_init "$out/$t" || fail "$t: no ASan runtime" ;;
      undefined) grep -q __ubsan_handle "$out/$t" || fail "$t: no UBSan runtime" ;;
    esac
    seeds="$tmp/seeds-$sanitizer-$t"
    mkdir -p "$seeds"
    unzip -q "$out/${t}_seed_corpus.zip" -d "$seeds"
    n=$(find "$seeds" -type f | wc -l)
    [ "$n" -ge 10 ] || fail "$t: only $n seeds in its zip"
    # A few seconds of fuzzing on the seeds, with the dictionary, as
    # ClusterFuzzLite's run_fuzzers would start it.
    echo "   $t: $n seeds; fuzzing 3 s"
    (cd "$tmp" && UBSAN_OPTIONS=silence_unsigned_overflow=1 "$out/$t" -dict="$out/$t.dict" -max_total_time=3 -timeout=10 -rss_limit_mb=2048 \
        -error_exitcode=1 -seed=1 "$seeds" >"$tmp/run-$sanitizer-$t.log" 2>&1) ||
      { tail -20 "$tmp/run-$sanitizer-$t.log"; fail "$sanitizer: $t failed on its seed corpus"; }
    grep -q "Done [0-9]* runs" "$tmp/run-$sanitizer-$t.log" || fail "$t: no libFuzzer summary"
  done

  # A batch run's crash file is a case: under a seeded bug the built target
  # stops on a seed; r3check minimize reproduces it with the same mutant.
  crashes="$tmp/crashes-$sanitizer"
  mkdir -p "$crashes"
  status=0
  (cd "$crashes" && R3_FUZZ_MUTANT=no-sp-trim "$out/layout_fuzzer" -runs=0 \
      "$tmp/seeds-$sanitizer-layout_fuzzer" >"$tmp/crash-$sanitizer.log" 2>&1) || status=$?
  [ "$status" != 0 ] || fail "$sanitizer: layout_fuzzer under no-sp-trim found nothing in its seeds"
  crash=$(find "$crashes" -name 'crash-*' | head -1)
  [ -n "$crash" ] || { tail -5 "$tmp/crash-$sanitizer.log"; fail "$sanitizer: no crash file written"; }
  # minimize exits 0 with a minimized case (1 would say the input does not fail).
  "$r3check" minimize --mutant no-sp-trim "$crash" >"$tmp/min-$sanitizer.r3case" 2>&1 ||
    { cat "$tmp/min-$sanitizer.r3case"; fail "minimize on the crash file: exit $?, wanted 0"; }
  grep -q "^# r3check minimize: .* fail" "$tmp/min-$sanitizer.r3case" ||
    { head -5 "$tmp/min-$sanitizer.r3case"; fail "minimize did not report the failure"; }
  # ... and what it prints is a case that still fails under the bug, and only under it.
  status=0
  "$r3check" check --mutant no-sp-trim "$tmp/min-$sanitizer.r3case" >/dev/null 2>&1 || status=$?
  [ "$status" = 1 ] || fail "the minimized case: check --mutant no-sp-trim exit $status, wanted 1"
  "$r3check" check "$tmp/min-$sanitizer.r3case" >/dev/null 2>&1 ||
    fail "the minimized case fails without the seeded bug"
  echo "   crash file $(basename "$crash") minimizes"
done
echo "OK: ${sanitizers[*]}"
