#!/usr/bin/env bash
# The landed binaries (.gpu/p3): one prefill check, then time to the first
# token on the 1B shape built for 1100 positions (a last GEMM size of 1024
# warmed up from a context under 4096), no HF.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/p3 ] || tar -C .gpu -xJf .gpu/p3.tar.xz
N=.gpu/p3
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
( timeout 60 $N/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=1100 -o $W/1b.mk 2>&1 | grep -E "error|prompt kernels" ) &
timeout 60 $N/tests/gpu/mk-gpu-prefill-check tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16 2>&1 | grep -E "ok|FAIL|layer by layer in"; echo "prefill-check rc=${PIPESTATUS[0]}"
wait
timeout 60 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/1b.mk --mkrun $N/runtime/mkrun/mkrun --lengths 512,1000 --repeats 2 --no-hf --out $OUT
