#!/usr/bin/env bash
# The prompt kernels warmed up at load, the GEMMs' rows in powers of two,
# and the attention's keys and values double-buffered (cp.async for bf16
# caches) with V's fragments by ldmatrix.trans. Binaries: .gpu/p2. The
# prefill checks again (a memcheck of one), then time to the first token on
# the 1B shape built for 32800 against HF SDPA in the same run.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/p2 ] || tar -C .gpu -xJf .gpu/p2.tar.xz
N=.gpu/p2
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
python3 scripts/fused_module.py bench/configs/qwen3-0.6b-shaped.json -o $W/q3.mlir
( timeout 300 $N/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 -o $W/1b.mk > $W/compile.txt 2>&1; echo "compile rc=$?" >> $W/compile.txt ) &
pc() { timeout 200 $N/tests/gpu/mk-gpu-prefill-check "$@" > $W/p.txt 2>&1; echo "prefill-check $* rc=$?"; grep -E "ok|FAIL|layer by layer in" $W/p.txt | head -8; }
pc tests/fixtures/llama3_ts17.onnx
pc tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16
pc tests/fixtures/qwen2_dynamo18.onnx --max-context=512 --prompt=300
pc $W/1b.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16
pc $W/1b.mlir --max-context=1024 --prompt=1000
pc $W/q3.mlir --max-context=600 --prompt=520 --kv-cache=bf16
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $N/tests/gpu/mk-gpu-prefill-check tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16 --prompt=100 > $W/cs.txt 2>&1
echo "memcheck prefill-check rc=$? $(grep -E 'ERROR SUMMARY' $W/cs.txt | head -1)"; grep -E "Invalid|FAIL" $W/cs.txt | head -5
wait; grep -E "error|rc=" $W/compile.txt | head
timeout 300 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/1b.mk --mkrun $N/runtime/mkrun/mkrun --lengths 512,2048,4096,32000 --by-step 512 --repeats 3 --out $OUT
