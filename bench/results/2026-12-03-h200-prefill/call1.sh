#!/usr/bin/env bash
# Prompts layer by layer on the GPU (cuBLASLt GEMMs and the prompt kernels of
# the decode CUBIN). Binaries: .gpu/p1. The prefill checks against the decode
# kernel, a decode check, compute-sanitizer on one prefill check, then time
# to the first token on the 1B shape built for 32800 against HF SDPA.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/p1 ] || tar -C .gpu -xJf .gpu/p1.tar.xz
N=.gpu/p1
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
( timeout 300 $N/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 -o $W/1b.mk > $W/compile.txt 2>&1; echo "compile rc=$?" >> $W/compile.txt ) &
pc() { timeout 200 $N/tests/gpu/mk-gpu-prefill-check "$@" > $W/p.txt 2>&1; echo "prefill-check $* rc=$?"; grep -vE "^\s*$" $W/p.txt | head -12; }
pc tests/fixtures/llama3_ts17.onnx
pc tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16
pc tests/fixtures/qwen2_dynamo18.onnx --max-context=512 --prompt=300
pc tests/fixtures/mistral_ts17.onnx --max-context=300 --prompt=260
pc $W/1b.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16
timeout 150 $N/tests/gpu/mk-gpu-check tests/fixtures/llama3_ts17.onnx > $W/g.txt 2>&1; echo "gpu-check llama3 rc=$?"; tail -4 $W/g.txt
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $N/tests/gpu/mk-gpu-prefill-check tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16 --prompt=100 > $W/cs.txt 2>&1
echo "memcheck prefill-check rc=$? $(grep -E 'ERROR SUMMARY' $W/cs.txt | head -1)"; grep -E "Invalid|FAIL" $W/cs.txt | head -5
wait; cat $W/compile.txt | grep -E "error|rc=" | head
timeout 400 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/1b.mk --mkrun $N/runtime/mkrun/mkrun --lengths 512,4096,32000 --by-step 512 --out $OUT
