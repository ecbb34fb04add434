#!/usr/bin/env bash
# The main job on the bundled example: import a Llama-3-style ONNX model into
# mk IR, run it token by token with mkc's reference interpreter, and check its
# logits against onnxruntime's; then compile it to a .mk file, inspect its
# task graph and schedule, and run it with mkrun: generation on the GPU if
# there is one (else the CPU executor), and teacher-forced logits on the CPU
# executor checked against onnxruntime (bf16 weights, so within 2e-2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh

MODEL=tests/fixtures/llama3_ts17.onnx
TOKENS=1,7,42,3,99,5,11,64
MKC=build/compiler/tools/mkc
MKRUN=build/runtime/mkrun/mkrun
ARTIFACT=/tmp/mkc-demo-llama3.mk
MKRUN_LOGITS=/tmp/mkc-demo-mkrun-logits.npy
PYTHON=.venv/bin/python
MKC_LOGITS=/tmp/mkc-demo-logits.npy
ORT_LOGITS=/tmp/mkc-demo-ort-logits.npy

step() { printf '\n==> %s\n' "$*"; }

for tool in "$MKC" "$MKRUN"; do
  if [[ ! -x "$tool" ]]; then
    echo "demo.sh: $tool was not built" >&2
    exit 1
  fi
done

step "mkc import $MODEL (the model as mk IR)"
"$MKC" import "$MODEL"

step "mkc eval: logits of tokens $TOKENS -> $MKC_LOGITS"
"$MKC" eval "$MODEL" --tokens "$TOKENS" --logits "$MKC_LOGITS"

step "onnxruntime: the same tokens -> $ORT_LOGITS"
"$PYTHON" scripts/ort_logits.py "$MODEL" --tokens "$TOKENS" --logits "$ORT_LOGITS"

step "mkc against onnxruntime"
"$PYTHON" scripts/compare_logits.py "$MKC_LOGITS" "$ORT_LOGITS" --rtol 1e-4

step "mkc compile --emit=mk: the compiled model in one file -> $ARTIFACT"
"$MKC" compile "$MODEL" --emit=mk -o "$ARTIFACT" --max-context=64

step "mkc inspect $ARTIFACT: the task graph and the schedule"
"$MKC" inspect "$ARTIFACT"

step "mkrun --device auto (the GPU if there is one, else the CPU executor): 16 new tokens after 1,2,3"
"$MKRUN" "$ARTIFACT" --device auto --prompt-tokens 1,2,3 -n 16

step "mkrun --device cpu: logits of tokens $TOKENS -> $MKRUN_LOGITS, against onnxruntime"
"$MKRUN" "$ARTIFACT" --device cpu --tokens "$TOKENS" --logits "$MKRUN_LOGITS"
"$PYTHON" scripts/compare_logits.py "$MKRUN_LOGITS" "$ORT_LOGITS" --rtol 2e-2
