#!/usr/bin/env bash
# Call 3, binaries .gpu/a2: call 2's, mk-gpu-batch-check mended (a failed
# batch launch is a FAIL: its layered-prompts case had failed unseen since
# it was written) and the kernel's launch check of a batch's rows bounded
# by each row's activeUntil (a row that starts at its last prompt token and
# idles after one step no longer trips MK_ERROR_LAUNCH_MISMATCH beside a
# longer row: codegen/device/Interpreter.cuh, launchMismatch). The batch
# ctests' commands, whose decode kernels now project by head (the fixtures'
# default), and a SmolLM2-shape build by head with a batch of 4 through
# mkrun (prompts of 40 and 41 tokens layer by layer, 3 and 1 by step).
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/a2 ] || tar -C .gpu -xJf .gpu/a2.tar.xz
B=.gpu/a2
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F=tests/fixtures
check() { local t0=$SECONDS; timeout 200 $B/tests/gpu/"$@" > $W/c.txt 2>&1; local rc=$?
  echo "== $* rc=$rc ($((SECONDS-t0)) s) $(grep -c FAIL $W/c.txt) FAIL"; cat $W/c.txt; }
check mk-gpu-batch-check $F/llama3_ts17.onnx --batch=4
check mk-gpu-batch-check $F/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
check mk-gpu-batch-check $F/qwen2_dynamo18.onnx --batch=8 --max-context=2048
python3 scripts/fused_module.py bench/configs/smollm2-135m*.json -o $W/s.mlir
timeout 300 $B/compiler/tools/mkc compile $W/s.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4 -o $W/s.mk 2>&1 | grep -E "error|megakernel"
P=$(python3 -c "print(','.join(str(i % 1000 + 7) for i in range(40)))")
timeout 60 $B/runtime/mkrun/mkrun $W/s.mk --device gpu --prompt-tokens $P -n 16 2>&1 | grep -vE "^mkrt"
timeout 60 $B/runtime/mkrun/mkrun $W/s.mk --device gpu --prompt-tokens $P --prompt-tokens 5,6,7 --prompt-tokens $P,9 --prompt-tokens 11 -n 16 2>&1 | grep -vE "^mkrt"
echo "all done at $SECONDS s"
