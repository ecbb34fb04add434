#!/usr/bin/env bash
# Time to the first token on the 1B shape built for 32800 (bf16 KV) against
# HF SDPA in the same run; the prompt one token a step at 512 beside it.
# Binaries: .gpu/p1 (as call 1).
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/p1 ] || tar -C .gpu -xJf .gpu/p1.tar.xz
N=.gpu/p1
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
start=$(date +%s)
timeout 300 $N/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 -o $W/1b.mk 2>&1 | grep -E "error|note" | head -5
echo "compile: $(( $(date +%s) - start )) s"
P=$(python3 -c "print(','.join(str((i*7)%128255+1) for i in range(1,1001)))")
echo "$P" > $W/p1000.txt
for i in 1 2; do timeout 60 $N/runtime/mkrun/mkrun $W/1b.mk --device gpu --batch-file $W/p1000.txt -n 4 2>&1 | grep -E "^(prompt|generation)|error"; done
timeout 420 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/1b.mk --mkrun $N/runtime/mkrun/mkrun --lengths 512,4096,32000 --by-step 512 --repeats 2 --out $OUT
