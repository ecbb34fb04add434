#!/usr/bin/env bash
# Packs what call2.sh carries, from a clean checkout of the commit that adds
# this file with its build (scripts/setup.sh), run from the repository root:
#   .gpu/head.tar.xz  mkc, mkrun, mk-task-kind-check and the GPU tests'
#                     CTestTestfile.cmake as committed
#   .gpu/tpl.tar.xz   mkc, mk-task-kind-check and CTestTestfile.cmake with
#                     two-positions-a-lane.patch applied (as tpl/build/...),
#                     the tree restored after
set -euo pipefail
HERE=bench/results/2026-12-07-warp-heads
git diff --quiet -- codegen core tests || { echo "pack2.sh: codegen/, core/ or tests/ has changes" >&2; exit 1; }
mkdir -p .gpu
pack() { # stage directory, with mkrun or not
  mkdir -p "$1/build/compiler/tools" "$1/build/runtime/mkrun" "$1/build/tests/gpu"
  cp build/compiler/tools/mkc "$1/build/compiler/tools/"
  cp build/runtime/mkrun/mkrun "$1/build/runtime/mkrun/"
  cp build/tests/gpu/mk-task-kind-check build/tests/gpu/CTestTestfile.cmake "$1/build/tests/gpu/"
}
STAGE=$(mktemp -d); trap 'rm -rf "$STAGE"; git checkout -q -- codegen core docs tests' EXIT
(cd build && cmake . > /dev/null && ninja mkc mkrun mk-task-kind-check > /dev/null)
pack "$STAGE/head" && tar -C "$STAGE/head" -cJf .gpu/head.tar.xz build
git apply "$HERE/two-positions-a-lane.patch"
(cd build && cmake . > /dev/null && ninja mkc mkrun mk-task-kind-check > /dev/null)
pack "$STAGE/tpl" && tar -C "$STAGE" -cJf .gpu/tpl.tar.xz tpl
git checkout -q -- codegen core docs tests
(cd build && cmake . > /dev/null && ninja mkc mkrun mk-task-kind-check > /dev/null)
ls -la .gpu/head.tar.xz .gpu/tpl.tar.xz
