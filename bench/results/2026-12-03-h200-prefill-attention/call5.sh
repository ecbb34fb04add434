#!/usr/bin/env bash
# .gpu/n5: call 4's binaries with the norm and epilogue kernels taking four
# elements a thread (16-byte loads where the rows are aligned). Two fixture
# prefill checks, time to the first token on the 1B shape built for 32800
# (bf16 KV; no HF, no profile: the device time left was short), then the
# 1B shape's prefill check.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/n5 ] || tar -C .gpu -xJf .gpu/n5.tar.xz
N=.gpu/n5
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
( timeout 150 $N/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 -o $W/1b-n5.mk 2>&1 | grep -E "error|prompt kernels" ) & pid=$!
check() { timeout 120 $N/tests/gpu/mk-gpu-prefill-check "$@" 2>&1 | grep -E "ok|FAIL|layer by layer in|rror"; echo "prefill-check $* rc=${PIPESTATUS[0]}"; }
check tests/fixtures/llama3_ts17.onnx
check tests/fixtures/qwen2_dynamo18.onnx --max-context=512 --prompt=300
wait $pid
timeout 90 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/1b-n5.mk --mkrun $N/runtime/mkrun/mkrun --lengths 4096,512,32000 --repeats 3 --no-hf --out $OUT/n5
check $W/1b.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16
