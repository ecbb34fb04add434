#!/usr/bin/env bash
# A batch's long prompts layer by layer (runtime/mkrt/GpuEngine.cpp's
# layBatchPrompts: each prompt of 32 tokens or more through the decode
# model's prompt kernels into its sequence's caches of the batch, the batch
# kernel starting that row at its last prompt token), binaries packed as
# .gpu/c1.
# 1. mk-gpu-batch-check (its new last check: every other row's prompt
#    layer by layer, against the batch fed every prompt by step) on two
#    fixtures and the Llama-3.2-1B shape;
# 2. mkrun, the 1B shape built for 4096 with --batch=4,8: 4 and 8 prompts of
#    2000 tokens, 32 new tokens each, layer by layer and --prompt-by-step.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/c1 ] || tar -C .gpu -xJf .gpu/c1.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
B=.gpu/c1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
( timeout 300 $B/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 \
    --max-context=4096 --batch=4,8 -o $W/l.mk 2>&1 | grep -E "error|spill" ) &
P=$!
ck() { local t0=$SECONDS; timeout 300 $B/tests/gpu/mk-gpu-batch-check "$@" > $W/b.txt 2>&1
  echo "batch-check $* rc=$? ($((SECONDS-t0)) s)"; grep -E "FAIL|layer by layer" $W/b.txt; }
ck tests/fixtures/llama3_ts17.onnx --batch=4
ck tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
ck $W/l.mlir --batch=4 --max-context=544 --kv-cache=bf16 --against-decode
wait $P
python3 - <<'PY'
import random
random.seed(3)
for n in (4, 8):
    with open(f"/tmp/w/prompts{n}.txt", "w") as f:
        for s in range(n):
            f.write(",".join(str(random.randrange(1, 128000)) for _ in range(2000)) + "\n")
PY
for n in 4 8; do for mode in "" --prompt-by-step; do
  timeout 200 $B/runtime/mkrun/mkrun $W/l.mk --device gpu --batch-file $W/prompts$n.txt -n 32 $mode \
    > $W/o.txt 2>&1; echo "$n prompts of 2000 ${mode:-layer by layer}: rc=$?"; grep -E "batch:|error" $W/o.txt
done; done
echo "done at $SECONDS s"
