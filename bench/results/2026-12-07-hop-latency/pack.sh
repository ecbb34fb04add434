#!/usr/bin/env bash
# Packs what call7.sh and call8.sh carry, from a clean checkout of the
# commit that adds this file with its build (scripts/setup.sh): .gpu/head
# (mkc and mkrun as committed) and one mkc per patch, each built with the
# patch applied and the tree restored after. Run from the repository root:
#   bash bench/results/2026-12-07-hop-latency/pack.sh
# then carry .gpu/head.tar.xz and .gpu/<name>.tar.xz (call7: amarks and
# bmarks; call8: ep and snb).
set -euo pipefail
HERE=bench/results/2026-12-07-hop-latency
git diff --quiet -- codegen || { echo "pack.sh: codegen/ has changes; commit or stash them" >&2; exit 1; }
mkdir -p .gpu
ninja -C build mkc mkrun > /dev/null
STAGE=$(mktemp -d); trap 'rm -rf "$STAGE"; git checkout -q -- codegen' EXIT
mkdir -p "$STAGE/build/compiler/tools" "$STAGE/build/runtime/mkrun"
cp build/compiler/tools/mkc "$STAGE/build/compiler/tools/"
cp build/runtime/mkrun/mkrun "$STAGE/build/runtime/mkrun/"
tar -C "$STAGE" -cJf .gpu/head.tar.xz build
for pair in amarks:attention-marks bmarks:between-marks ep:early-poll snb:skip-norm-barriers; do
  name=${pair%%:*}; patch=$HERE/${pair#*:}.patch
  git apply "$patch"
  ninja -C build mkc > /dev/null
  mkdir -p "$STAGE/$name" && cp build/compiler/tools/mkc "$STAGE/$name/mkc"
  tar -C "$STAGE" -cJf .gpu/$name.tar.xz $name
  git checkout -q -- codegen
done
ninja -C build mkc > /dev/null
ls -la .gpu/*.tar.xz
