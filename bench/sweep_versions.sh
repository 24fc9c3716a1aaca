#!/bin/bash
# The version set of the sweep benchmark (bench/results/engines.json, "sweep"):
# every distinct routed_experts_capturer.py in the histories of the given git
# directories (the `fetch` tool's mirrors), topped up to COUNT with copies of
# the first ones (sorted by content hash) that carry one extra comment line,
# so that every version is distinct and is judged.
#
#   bench/sweep_versions.sh OUT COUNT GITDIR...
#
# OUT gets v01.py ... and SOURCES.txt (which repository and commit each real
# file came from). Nothing of it belongs in the repository: OUT should be
# outside it, or under the git-ignored .engines-cache/.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 OUT COUNT GITDIR..." >&2
  exit 2
fi
out=$1
count=$2
shift 2
mkdir -p "$out"
blobs=$(mktemp -d)
trap 'rm -rf "$blobs"' EXIT
for g in "$@"; do
  repo=$(basename "$(dirname "$g")")
  # routed_experts_capturer.py itself, not tests named test_routed_experts_capturer.py
  git -C "$g" log --all --format= --name-only -- '*/routed_experts_capturer.py' 'routed_experts_capturer.py' | sort -u | while read -r p; do
    git -C "$g" log --all --format=%H -- "$p" | while read -r c; do
      b=$(git -C "$g" rev-parse -q --verify "$c:$p" 2>/dev/null) || continue
      [ -e "$blobs/$b" ] && continue
      git -C "$g" cat-file blob "$b" >"$blobs/$b"
      echo "$repo ${c:0:10} $p" >"$blobs/$b.src"
    done
  done
done
mapfile -t reals < <(cd "$blobs" && ls | grep -v '\.src$' | sort)
if [ ${#reals[@]} -eq 0 ]; then
  echo "$0: no routed_experts_capturer.py in the histories given" >&2
  exit 1
fi
: >"$out/SOURCES.txt"
i=0
for b in "${reals[@]}"; do
  [ "$i" -ge "$count" ] && break
  i=$((i + 1))
  name=$(printf 'v%02d.py' "$i")
  cp "$blobs/$b" "$out/$name"
  echo "$name $(cat "$blobs/$b.src")" >>"$out/SOURCES.txt"
done
k=0
while [ "$i" -lt "$count" ]; do
  b=${reals[$((k % ${#reals[@]}))]}
  k=$((k + 1))
  i=$((i + 1))
  name=$(printf 'v%02d.py' "$i")
  { cat "$blobs/$b"; echo "# r3check sweep benchmark variant $k"; } >"$out/$name"
  echo "$name variant $k of $(cat "$blobs/$b.src")" >>"$out/SOURCES.txt"
done
echo "$out: $i versions, ${#reals[@]} distinct real files" >&2
