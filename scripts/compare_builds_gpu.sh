#!/usr/bin/env bash
# On a machine with a GPU: does a new build compute what an old one did, bit
# for bit, and is it as fast? For changes that must not move what the kernel
# computes (a reshaping of the code, a new task kind beside the old ones).
#
#   scripts/compare_builds_gpu.sh OLD_BUILD NEW_BUILD OUT [CONFIG.json]
#
# 1. Every fixture through each build on the GPU (logit_identity.sh record
#    --device gpu: its own .mk, teacher-forced logits, a greedy generation),
#    the two recordings compared byte for byte.
# 2. The model shape CONFIG (default: the Llama-3.2-1B shape) written as mk IR
#    and compiled by each build with the same random weights; teacher-forced
#    logits of 8 tokens compared byte for byte; then bench/decode_bench.py
#    (streaming floor and mkc, no PyTorch) for each, one after the other.
# Exits 1 when a comparison differs. A BUILD is a folder holding
# compiler/tools/mkc and runtime/mkrun/mkrun.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
old="$(cd "$1" && pwd)" new="$(cd "$2" && pwd)" out="$3"
config="${4:-$ROOT/bench/configs/llama-3.2-1b-shaped.json}"
mkdir -p "$out"
status=0

echo "== fixtures, old and new build, on the GPU"
"$ROOT/scripts/logit_identity.sh" record "$old" "$out/old" --device gpu >/dev/null || status=1
"$ROOT/scripts/logit_identity.sh" record "$new" "$out/new" --device gpu >/dev/null || status=1
"$ROOT/scripts/logit_identity.sh" compare "$out/old" "$out/new" || status=1

echo "== $(basename "$config"), old and new build"
python3 "$ROOT/scripts/fused_module.py" "$config" -o "$out/shape.mlir" || exit 1
for build in old new; do
  tools="$old"
  [[ "$build" == new ]] && tools="$new"
  "$tools/compiler/tools/mkc" compile "$out/shape.mlir" --emit=mk --random-weights \
    --max-context=512 -o "$out/shape-$build.mk" || status=1
  "$tools/runtime/mkrun/mkrun" "$out/shape-$build.mk" --device gpu --tokens 1,7,42,3,99,5,11,64 \
    --logits "$out/shape-$build.npy" >/dev/null || status=1
done
if cmp -s "$out/shape-old.npy" "$out/shape-new.npy"; then
  echo "shape logits: identical"
else
  echo "shape logits: DIFFERENT"; status=1
fi
for build in old new; do
  tools="$old"
  [[ "$build" == new ]] && tools="$new"
  echo "-- decode bench, $build build"
  python3 "$ROOT/bench/decode_bench.py" --mk "$out/shape-$build.mk" --config "$config" \
    --build "$tools" --no-pytorch --out "$out/bench-$build" | tail -12 || status=1
  rm -f "$out/shape-$build.mk"
done
exit "$status"
