#!/usr/bin/env bash
# Records, or compares, the exact logits every fixture gives through a build:
# a refactoring that must not change what the kernel computes is checked by
# recording with the old build and comparing with the new one, bit for bit.
#
#   scripts/logit_identity.sh record BUILD DIR [--device cpu|gpu]
#   scripts/logit_identity.sh compare DIR_BEFORE DIR_AFTER
#
# `record` compiles every fixture to DIR/NAME.mk (context 64) and writes the
# teacher-forced logits of a 12-token sequence and a 16-token greedy
# generation to DIR/NAME.DEVICE.npy and DIR/NAME.DEVICE.tokens. `compare`
# compares every file of the two folders byte for byte (not the .mk files,
# which carry versions) and exits 1 on any difference.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOKENS=1,7,42,3,99,5,11,64,2,8,13,21

case "${1:-}" in
record)
  build="$2" out="$3" device="${5:-cpu}"
  mkdir -p "$out"
  for model in "$ROOT"/tests/fixtures/*.onnx; do
    name="$(basename "$model" .onnx)"
    if [[ ! -f "$out/$name.mk" ]]; then
      "$build/compiler/tools/mkc" compile "$model" --emit=mk -o "$out/$name.mk" --max-context=64 \
        >/dev/null
    fi
    "$build/runtime/mkrun/mkrun" "$out/$name.mk" --device "$device" --tokens "$TOKENS" \
      --logits "$out/$name.$device.npy" >/dev/null
    "$build/runtime/mkrun/mkrun" "$out/$name.mk" --device "$device" --prompt-tokens 1,2,3 -n 16 |
      grep '^tokens:' >"$out/$name.$device.tokens"
    echo "$name: recorded on $device"
  done
  ;;
compare)
  before="$2" after="$3" status=0
  for file in "$before"/*.npy "$before"/*.tokens; do
    name="$(basename "$file")"
    if [[ ! -f "$after/$name" ]]; then
      echo "$name: missing in $after"; status=1
    elif cmp -s "$file" "$after/$name"; then
      echo "$name: identical"
    else
      echo "$name: DIFFERENT"; status=1
    fi
  done
  exit "$status"
  ;;
*)
  sed -n '2,14p' "$0" >&2
  exit 1
  ;;
esac
