#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test r3check.
# Idempotent: skips apt when everything is already there.
set -euo pipefail
packages=(meson ninja-build g++ pkg-config cmake libgtest-dev librapidcheck-dev
          libcli11-dev nlohmann-json3-dev libbenchmark-dev clang libclang-rt-14-dev
          python3-torch librsvg2-bin zip unzip libssl-dev)
# python3-torch: CPU torch for engine adapters (engines/); librsvg2-bin:
# rsvg-convert, which the picture test renders --svg output with; zip, unzip:
# the seed corpus zips of .clusterfuzzlite/build.sh and their test;
# libssl-dev: libcrypto's SHA-256 for sweep.
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
