#!/usr/bin/env bash
# The prompt attention with a KV head's group sharing each staged block
# (128 query rows a CTA, K by ldmatrix, masks only on the diagonal, the
# longest tiles first) and the first new token picked from the prompt's
# last row (.gpu/n2) against the landed binaries (.gpu/p3): prefill checks
# and two fixtures end to end (a 40-token prompt against by step) of the
# new binaries, then time to the first token on the 1B shape built for
# 32800 (bf16 KV) by both, and the new one's profile.
# (As run, it ended in a bare `wait`, which also waited for the log's tee
# and hung after the checks: call1.log. The waits name the compiles now.)
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for p in n2 p3; do [ -d .gpu/$p ] || tar -C .gpu -xJf .gpu/$p.tar.xz; done
N=.gpu/n2; O=.gpu/p3
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/smol.mlir
( timeout 150 $N/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 -o $W/1b-new.mk 2>&1 | grep -E "error|prompt kernels" ) & pids=($!)
( timeout 150 $O/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 -o $W/1b-old.mk 2>&1 | grep -E "error|prompt kernels" ) & pids+=($!)
check() { timeout 150 $N/tests/gpu/mk-gpu-prefill-check "$@" 2>&1 | grep -E "ok|FAIL|layer by layer in|rror"; echo "prefill-check $* rc=${PIPESTATUS[0]}"; }
check tests/fixtures/llama3_ts17.onnx
check tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16
check tests/fixtures/qwen2_dynamo18.onnx --max-context=512 --prompt=300
check tests/fixtures/mistral_ts17.onnx
timeout 120 python3 scripts/gpu_check.py --build $N tests/fixtures/llama3_ts17.onnx tests/fixtures/qwen2_dynamo18.onnx; echo "gpu_check rc=$?"
wait "${pids[@]}"
timeout 200 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/1b-new.mk --mkrun $N/runtime/mkrun/mkrun --lengths 512,2048,4096,32000 --repeats 2 --no-hf --profile --out $OUT/new
timeout 120 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/1b-old.mk --mkrun $O/runtime/mkrun/mkrun --lengths 512,2048,4096,32000 --repeats 2 --no-hf --out $OUT/old
check $W/smol.mlir --max-context=700 --prompt=650
check $W/1b.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16
