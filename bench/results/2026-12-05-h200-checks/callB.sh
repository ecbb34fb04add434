#!/usr/bin/env bash
# Call B: timings. The Llama-3.2-1B shape built for 32800 (bf16 caches):
# prefill_bench own and cuDNN's attention at 512, 4096, 32000 with the
# profile and HF SDPA in the same run; then 4 and 8 prompts of 2000 tokens
# through a batch (built for 4096, --batch=4,8), layer by layer and by step.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/c1 ] || tar -C .gpu -xJf .gpu/c1.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
B=.gpu/c1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
( timeout 300 $B/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 \
    --max-context=4096 --batch=4,8 -o $W/lb.mk 2>&1 | grep -E "error|spill" ) &
P=$!
timeout 300 $B/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 \
    --max-context=32800 -o $W/l.mk 2>&1 | grep -E "error|spill"
timeout 400 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json \
  --mk $W/l.mk --mkrun $B/runtime/mkrun/mkrun --lengths 512,4096,32000 --repeats 2 \
  --attention own,cudnn --profile --out $OUT
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
  timeout 100 $B/runtime/mkrun/mkrun $W/lb.mk --device gpu --batch-file $W/prompts$n.txt -n 32 $mode \
    > $W/o.txt 2>&1; echo "$n prompts of 2000 ${mode:-layer by layer}: rc=$?"; grep -E "batch:|error" $W/o.txt
done; done
echo "done at $SECONDS s"
