#!/usr/bin/env bash
# The Llama-3.2-1B-shaped model end to end, on a machine with a GPU, torch and
# transformers: export with random weights (dynamo, opset 18), compile to a
# .mk for context 512, compare the GPU's teacher-forced logits with HF
# transformers (f32 math on the same bf16-rounded weights the .mk holds:
# rtol 2e-2, argmax compared where the top-2 gap exceeds 0.1), then time
# generation up to position 512.
#   scripts/check_1b_shaped.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
BUILD=${1:-build}
WORK=${2:-/tmp/mk-1b}
TOKENS=1,7,42,3,99,5,11,64
mkdir -p "$WORK"

python3 scripts/export_onnx.py --config bench/configs/llama-3.2-1b-shaped.json \
  --exporter dynamo --opset 18 -o "$WORK/model.onnx" --hf-logits "$WORK/hf.npy" --tokens $TOKENS \
  --round-weights-bf16 \
  2>&1 | grep -E '^exported'
/usr/bin/time -f 'mkc compile: %e s, %M KB peak' \
  "$BUILD/compiler/tools/mkc" compile "$WORK/model.onnx" --emit=mk --max-context=512 -o "$WORK/model.mk"
"$BUILD/runtime/mkrun/mkrun" "$WORK/model.mk" --device gpu --tokens $TOKENS --logits "$WORK/gpu.npy"
status=0
python3 - "$WORK/gpu.npy" "$WORK/hf.npy" <<'PY' || status=1
import sys
import numpy as np
gpu, hf = np.load(sys.argv[1]), np.load(sys.argv[2])
err = float(np.max(np.abs(gpu - hf)) / np.max(np.abs(hf)))
clear = agree = 0
for g, h in zip(gpu, hf):
    top2 = np.sort(h)[-2:]
    if top2[1] - top2[0] > 0.1:
        clear += 1
        agree += int(np.argmax(g) == np.argmax(h))
print(f"GPU vs HF transformers: max relative error {err:.2e} (limit 2e-2), "
      f"greedy agreement {agree}/{clear} clear steps")
sys.exit(0 if err <= 2e-2 and agree == clear else 1)
PY
PROMPT=$(python3 -c 'print(",".join(str((7 * i) % 1000 + 1) for i in range(256)))')
"$BUILD/runtime/mkrun/mkrun" "$WORK/model.mk" --device gpu --max-context 512 \
  --prompt-tokens "$PROMPT" -n 256 | tail -1
echo "weights in the .mk: $(stat -c %s "$WORK/model.mk") bytes (file size)"
exit $status
