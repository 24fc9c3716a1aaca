#!/bin/bash -eu
# Builds r3check's libFuzzer targets the way OSS-Fuzz and ClusterFuzzLite
# expect (docs/fuzzing.md): compiled with $CC/$CXX and $CFLAGS/$CXXFLAGS
# (their sanitizer and coverage flags), linked with $LIB_FUZZING_ENGINE, and
# copied into $OUT with TARGET_seed_corpus.zip, TARGET.dict and
# TARGET.options beside each. Runs from the source root (the Dockerfile's
# WORKDIR) or any directory, given $OUT and $WORK.
set -eu  # also when started as `bash build.sh`, which ignores the #! flags
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$WORK/r3check-build"

# Meson reads CFLAGS/CXXFLAGS only on a first setup; start afresh so a
# changed sanitizer is never mixed with objects of the last one. The flags
# also go to the link (the sanitizer runtimes, -stdlib=libc++).
rm -rf "$build"
LDFLAGS="${LDFLAGS:-} $CXXFLAGS" meson setup "$build" "$src" \
  --buildtype=plain -Db_lundef=false -Dfuzzing=true -Dtests=false -Dgpu=disabled \
  -Dfuzzing_engine="$LIB_FUZZING_ENGINE" --wrap-mode=nodownload
ninja -C "$build" fuzz/layout_fuzzer fuzz/parser_fuzzer

corpus="$src/corpus"
layout_seeds=("$corpus/seeds" "$corpus/regressions" "$corpus/findings" "$corpus/fuzz-layout")
for target in layout parser; do
  name=${target}_fuzzer
  cp "$build/fuzz/$name" "$OUT/$name"
  cp "$src/fuzz/$target.dict" "$OUT/$name.dict"
  # The options name the dictionary as it is called in $OUT.
  sed "s/^dict = .*/dict = $name.dict/" "$src/fuzz/$target.options" >"$OUT/$name.options"
  dirs=("${layout_seeds[@]}")
  [ "$target" = parser ] && dirs=("$corpus/fuzz-parser" "${layout_seeds[@]}")
  # Flat, as OSS-Fuzz unpacks it. A file in two folders (the fuzz corpora
  # are named by content hash) goes in once; -X: no timestamps.
  stage="$WORK/${name}_seeds"
  rm -rf "$stage" "$OUT/${name}_seed_corpus.zip"
  mkdir -p "$stage"
  for d in "${dirs[@]}"; do
    find "$d" -maxdepth 1 -type f -exec cp -n -t "$stage" {} +
  done
  (cd "$stage" && find . -type f -printf '%P\n' | sort | zip -q -X -@ "$OUT/${name}_seed_corpus.zip")
done
