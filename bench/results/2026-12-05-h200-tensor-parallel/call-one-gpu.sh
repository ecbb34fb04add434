#!/usr/bin/env bash
# The kernel of ranks on one H200 (MKRT_RANKS_ON_ONE_GPU=1: both ranks on
# GPU 0, each on its share of the SMs, the peers' memory through
# MkRanks.bases instead of NCCL), binaries packed as .gpu/c1: the
# AllReduce, the waits across ranks and the system-scope releases against
# the CPU executor's ranks and the whole model on one GPU
# (tests/gpu/check_tensor_parallel.py), on two fixtures and the
# Llama-3.2-1B shape; then the one-rank decode kernel of the same build on
# the fixtures (mk-gpu-check), whose launch checks grew with the ranks.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/c1 ] || tar -C .gpu -xJf .gpu/c1.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
export NCCL_NVLS_ENABLE=0
B=.gpu/c1
tp() { local t0=$SECONDS; timeout 240 python3 tests/gpu/check_tensor_parallel.py --mkc $B/compiler/tools/mkc \
  --mkrun $B/runtime/mkrun/mkrun --one-gpu "$@"; echo "rc=$? ($((SECONDS-t0)) s): $*"; }
tp tests/fixtures/llama3_ts17.onnx --max-context=256 --num-sms=64
tp tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16 --num-sms=64
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
tp $W/l.mlir --random-weights --kv-cache=bf16 --max-context=544 --num-sms=66
for f in llama3_ts17 qwen3_ts17 qwen2_dynamo18 mistral_ts17; do
  timeout 120 $B/tests/gpu/mk-gpu-check tests/fixtures/$f.onnx > $W/g.txt 2>&1
  echo "mk-gpu-check $f rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep FAIL $W/g.txt | head -3
done
echo "done at $SECONDS s"
