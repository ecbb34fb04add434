#!/usr/bin/env bash
# Export, compile and run one model where the GPU is: a Hugging Face model
# folder (or a random-weight config), exported to ONNX with transformers,
# compiled to a .mk, run teacher-forced against onnxruntime, then generating.
# Works from the repository (tools in build/) or from an unpacked bundle
# (tools in bin/, see scripts/bundle.sh).
#   scripts/run_model.sh (--model HF_DIR | --config CONFIG.json | --onnx MODEL.onnx)
#                        [--work DIR] [--device gpu|cpu|auto] [--max-context N] [-n N]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOP="$(dirname "$HERE")"
if [[ -x "$TOP/bin/mkc" ]]; then
  MKC="$TOP/bin/mkc" MKRUN="$TOP/bin/mkrun"
else
  MKC="$TOP/build/compiler/tools/mkc" MKRUN="$TOP/build/runtime/mkrun/mkrun"
fi
PYTHON="${PYTHON:-python3}"

SOURCE="" KIND="" WORK=/tmp/mkc-run DEVICE=auto CONTEXT=512 NEW=64
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model|--config|--onnx) KIND="$1" SOURCE="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --device) DEVICE="$2"; shift 2 ;;
    --max-context) CONTEXT="$2"; shift 2 ;;
    -n) NEW="$2"; shift 2 ;;
    *) echo "run_model.sh: unknown argument '$1'" >&2; exit 1 ;;
  esac
done
if [[ -z "$SOURCE" ]]; then
  echo "usage: run_model.sh (--model HF_DIR | --config CONFIG.json | --onnx MODEL.onnx) [--work DIR] [--device gpu|cpu|auto] [--max-context N] [-n N]" >&2
  exit 1
fi
mkdir -p "$WORK"
TOKENS=1,7,42,3,99,5,11,64
step() { printf '\n==> %s\n' "$*"; }

ONNX="$WORK/model.onnx"
case "$KIND" in
  --onnx) ONNX="$SOURCE" ;;
  --model) step "export $SOURCE"; "$PYTHON" "$HERE/export_onnx.py" --model "$SOURCE" -o "$ONNX" ;;
  --config) step "export a random-weight model of $SOURCE"
    "$PYTHON" "$HERE/export_onnx.py" --config "$SOURCE" -o "$ONNX" ;;
esac

step "mkc compile --emit=mk (context $CONTEXT)"
"$MKC" compile "$ONNX" --emit=mk --max-context="$CONTEXT" -o "$WORK/model.mk"

step "teacher-forced logits on $DEVICE against onnxruntime (bf16 weights: rtol 2e-2)"
"$MKRUN" "$WORK/model.mk" --device "$DEVICE" --tokens "$TOKENS" --logits "$WORK/mkrun.npy"
"$PYTHON" "$HERE/ort_logits.py" "$ONNX" --tokens "$TOKENS" --logits "$WORK/ort.npy"
"$PYTHON" "$HERE/compare_logits.py" "$WORK/mkrun.npy" "$WORK/ort.npy" --rtol 2e-2

step "generate $NEW tokens on $DEVICE"
"$MKRUN" "$WORK/model.mk" --device "$DEVICE" --max-context "$CONTEXT" --prompt-tokens 1,2,3 -n "$NEW"
