#!/usr/bin/env bash
# call 3's timing part alone (call 3 ran out of time after its checks):
# time to the first token on the 1B shape built for 32800 (bf16 KV) against
# HF SDPA in the same run. Binaries: .gpu/p2.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/p2 ] || tar -C .gpu -xJf .gpu/p2.tar.xz
N=.gpu/p2
exec > >(tee $OUT/log.txt) 2>&1
[ -f $W/1b.mk ] || { python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
  timeout 100 $N/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 -o $W/1b.mk 2>&1 | grep -E "error" | head -3; }
timeout 200 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/1b.mk --mkrun $N/runtime/mkrun/mkrun --lengths 512,2048,4096,32000 --by-step 512 --repeats 2 --out $OUT
