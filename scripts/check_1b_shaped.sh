#!/usr/bin/env bash
# The Llama-3.2-1B-shaped model end to end, on a machine with a GPU, torch and
# transformers: export with random weights (dynamo, opset 18), rounded to bf16
# first so that HF transformers (f32 math) and the .mk hold the same numbers;
# HF generates 32 tokens greedily after an 8-token prompt; the .mk (context
# 512) generates on the GPU from the same prompt, then runs HF's sequence
# teacher-forced. Every step's logits must be within 2e-2 of HF's (relative
# to the largest logit), and tokens must agree wherever HF's top-2 gap
# exceeds 0.1 (scripts/compare_logits.py --per-step).
#   scripts/check_1b_shaped.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
BUILD=${1:-build}
WORK=${2:-/tmp/mk-1b}
PROMPT=1,7,42,3,99,5,11,64
NEW=32
MKRUN="$BUILD/runtime/mkrun/mkrun"
mkdir -p "$WORK"

python3 scripts/export_onnx.py --config bench/configs/llama-3.2-1b-shaped.json \
  --exporter dynamo --opset 18 -o "$WORK/model.onnx" --round-weights-bf16 \
  --tokens $PROMPT --hf-generate $NEW --hf-logits "$WORK/hf.npy" --hf-tokens "$WORK/hf.json" \
  2>&1 | grep -E '^exported'
/usr/bin/time -f 'mkc compile: %e s, %M KB peak' \
  "$BUILD/compiler/tools/mkc" compile "$WORK/model.onnx" --emit=mk --max-context=512 -o "$WORK/model.mk"
echo "the .mk: $(stat -c %s "$WORK/model.mk") bytes"

# HF's sequence: the prompt and its generated tokens but the last (returned, not fed).
SEQUENCE=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); print(",".join(map(str, t["prompt"] + t["generated"][:-1])))' "$WORK/hf.json")
"$MKRUN" "$WORK/model.mk" --device gpu --prompt-tokens $PROMPT -n $NEW | tee "$WORK/gpu-generate.txt"
GENERATED=$(sed -n 's/^tokens: //p' "$WORK/gpu-generate.txt" | tr ' ' ',')
"$MKRUN" "$WORK/model.mk" --device gpu --tokens "$SEQUENCE" --logits "$WORK/gpu.npy"
echo "HF generated: $(python3 -c 'import json,sys; print(*json.load(open(sys.argv[1]))["generated"])' "$WORK/hf.json")"
echo -n "GPU vs HF transformers: "
python3 scripts/compare_logits.py "$WORK/gpu.npy" "$WORK/hf.npy" --rtol 2e-2 --per-step \
  --generated "$GENERATED" --prompt-length 8
