#!/usr/bin/env bash
# Call 3. The landed mk-gpu-batch-check (main at its commit, `c3`) as CTest's
# batch tests run it: llama3_ts17 at 4 rows, qwen3_ts17 at 3 with bf16
# caches, qwen2_dynamo18 at 8 and 2048 positions, the 1B shape at 8 and 20
# rows against the decode kernel.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/c3 ] || tar -C .gpu -xJf .gpu/c3.tar.xz
B=.gpu/c3/tests/gpu/mk-gpu-batch-check
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
bc() { timeout 150 $B $@ > $W/b.txt 2>&1; echo "batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL|rror" $W/b.txt | head -3; grep -E "sampled" $W/b.txt | head -2; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
bc tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048
bc $W/l.mlir --batch=8 --kv-cache=bf16 --against-decode
bc $W/l.mlir --batch=20 --max-context=544 --kv-cache=bf16 --against-decode
