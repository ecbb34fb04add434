#!/usr/bin/env bash
# .gpu/n3: two m16 tiles a warp in the prompt attention for heads of up to
# 64 (4 warps a CTA, each K and V fragment serving both), q, k and v (gate
# and up) as one GEMM where their weights are adjacent, and each epilogue
# writing the next Gemv's bf16 input (normed) instead of a norm launch,
# the attention writing o_proj's. Prefill checks, then time to the first
# token on the 1B shape built for 32800 (bf16 KV) with its profile, against
# HF SDPA and the dense matmul rate in the same run.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/n3 ] || tar -C .gpu -xJf .gpu/n3.tar.xz
N=.gpu/n3
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/smol.mlir
( timeout 150 $N/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 -o $W/1b-n3.mk 2>&1 | grep -E "error|prompt kernels" ) & pid=$!
check() { timeout 120 $N/tests/gpu/mk-gpu-prefill-check "$@" 2>&1 | grep -E "ok|FAIL|layer by layer in|rror"; echo "prefill-check $* rc=${PIPESTATUS[0]}"; }
check tests/fixtures/llama3_ts17.onnx
check tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16
check tests/fixtures/qwen2_dynamo18.onnx --max-context=512 --prompt=300
check tests/fixtures/mistral_ts17.onnx
wait $pid
date
timeout 200 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/1b-n3.mk --mkrun $N/runtime/mkrun/mkrun --lengths 512,2048,4096,32000 --repeats 2 --profile --out $OUT/n3
date
check $W/1b.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16
check $W/smol.mlir --max-context=700 --prompt=650
