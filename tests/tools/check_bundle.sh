#!/usr/bin/env bash
# The relocatable bundle works away from the build: pack it, unpack it in a
# temporary folder, and run a fixture through it (compile, teacher-forced
# logits against onnxruntime, generation) on the CPU executor.
#   check_bundle.sh PYTHON FIXTURE.onnx
set -euo pipefail
PYTHON="$1"
FIXTURE="$2"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
bash "$ROOT/scripts/bundle.sh" "$TMP/mkc-bundle.tar.gz"
tar xzf "$TMP/mkc-bundle.tar.gz" -C "$TMP"
PYTHON="$PYTHON" "$TMP/mkc/scripts/run_model.sh" --onnx "$FIXTURE" --work "$TMP/work" \
  --device cpu --max-context 64 -n 8
