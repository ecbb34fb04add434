#!/usr/bin/env bash
# Call 3, binaries .gpu/f1 (322e152, the landed form): the GPU tests that
# run the interpreter's other paths with three queue entries (inline
# merges, tensor-parallel ranks on one GPU, a batch of 8, the end-to-end
# check of the bundled example through mkrun), by the ctests' commands.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/f1 ] || tar -C .gpu -xJf .gpu/f1.tar.xz
B=.gpu/f1
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
check() { local t0=$SECONDS; local f=$W/f-$RANDOM$RANDOM.txt; timeout 240 "$@" > $f 2>&1
  echo "== $* rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(tail -1 $f)"; grep FAIL $f | head -3; }
F=tests/fixtures
check $B/tests/gpu/mk-gpu-check --toy
check $B/tests/gpu/mk-gpu-check --toy --inline-merge
check $B/tests/gpu/mk-gpu-check $F/llama3_ts17.onnx --max-context=64 --inline-merge
check $B/tests/gpu/mk-gpu-check $F/qwen3_ts17.onnx --max-context=2048 --inline-merge --kv-cache=bf16
check python3 tests/gpu/check_tensor_parallel.py --mkc $B/compiler/tools/mkc --mkrun $B/runtime/mkrun/mkrun --one-gpu $F/llama3_ts17.onnx --max-context=256 --num-sms=64
check $B/tests/gpu/mk-gpu-batch-check $F/qwen2_dynamo18.onnx --batch=8 --max-context=2048
check python3 scripts/gpu_check.py --build $B
echo "all done at $SECONDS s"
