#!/usr/bin/env bash
# The main job on the bundled example: import a Llama-3-style ONNX model into
# mk IR, run it token by token with mkc's reference interpreter, and check its
# logits against onnxruntime's.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh

MODEL=tests/fixtures/llama3_ts17.onnx
TOKENS=1,7,42,3,99,5,11,64
MKC=build/compiler/tools/mkc
PYTHON=.venv/bin/python
MKC_LOGITS=/tmp/mkc-demo-logits.npy
ORT_LOGITS=/tmp/mkc-demo-ort-logits.npy

step() { printf '\n==> %s\n' "$*"; }

if [[ ! -x "$MKC" ]]; then
  echo "demo.sh: $MKC was not built" >&2
  exit 1
fi

step "mkc import $MODEL (the model as mk IR)"
"$MKC" import "$MODEL"

step "mkc eval: logits of tokens $TOKENS -> $MKC_LOGITS"
"$MKC" eval "$MODEL" --tokens "$TOKENS" --logits "$MKC_LOGITS"

step "onnxruntime: the same tokens -> $ORT_LOGITS"
"$PYTHON" scripts/ort_logits.py "$MODEL" --tokens "$TOKENS" --logits "$ORT_LOGITS"

step "mkc against onnxruntime"
"$PYTHON" scripts/compare_logits.py "$MKC_LOGITS" "$ORT_LOGITS" --rtol 1e-4
