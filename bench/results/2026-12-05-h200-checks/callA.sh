#!/usr/bin/env bash
# Call A: the checks of what 2026-12-04/05 wrote and no GPU had run, binaries
# packed as .gpu/c1, four groups side by side on the one GPU (checks, not
# timings):
#   cudnn  mk-gpu-prefill-check with MKRT_PREFILL_ATTENTION=cudnn (qwen3_ts17
#          bf16, the SmolLM2 and Llama-3.2-1B shapes), and the 1B shape with
#          the prompt kernels' own attention;
#   batch  mk-gpu-batch-check, whose last check runs every other row's prompt
#          layer by layer into the batch's caches (two fixtures, the 1B shape);
#   ranks  tests/gpu/check_tensor_parallel.py --one-gpu (two fixtures, the 1B
#          shape): the kernel of ranks, both ranks on one GPU;
#   decode mk-gpu-check on four fixtures (the one-rank kernel's launch checks
#          grew with the ranks).
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/c1 ] || tar -C .gpu -xJf .gpu/c1.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
export NCCL_NVLS_ENABLE=0
B=.gpu/c1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
E=$(python3 bench/cudnn_library.py); echo "cuDNN: $E"
python3 -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())"
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/s.mlir
cudnn() {
  for args in "tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16" \
              "$W/s.mlir --max-context=700 --prompt=650 --kv-cache=bf16" \
              "$W/l.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16"; do
    local t0=$SECONDS; env $E MKRT_PREFILL_ATTENTION=cudnn timeout 300 $B/tests/gpu/mk-gpu-prefill-check $args
    echo "== cudnn $args rc=$? ($((SECONDS-t0)) s)"
  done
  local t0=$SECONDS; timeout 300 $B/tests/gpu/mk-gpu-prefill-check $W/l.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16
  echo "== own 1B rc=$? ($((SECONDS-t0)) s)"
}
batch() {
  for args in "tests/fixtures/llama3_ts17.onnx --batch=4" \
              "tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16" \
              "$W/l.mlir --batch=4 --max-context=544 --kv-cache=bf16 --against-decode"; do
    local t0=$SECONDS; timeout 300 $B/tests/gpu/mk-gpu-batch-check $args
    echo "== batch $args rc=$? ($((SECONDS-t0)) s)"
  done
}
ranks() {
  for args in "tests/fixtures/llama3_ts17.onnx --max-context=256 --num-sms=64" \
              "tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16 --num-sms=64" \
              "$W/l.mlir --random-weights --kv-cache=bf16 --max-context=544 --num-sms=66"; do
    local t0=$SECONDS; timeout 300 python3 tests/gpu/check_tensor_parallel.py --mkc $B/compiler/tools/mkc \
      --mkrun $B/runtime/mkrun/mkrun --one-gpu $args
    echo "== ranks $args rc=$? ($((SECONDS-t0)) s)"
  done
}
decode() {
  for f in llama3_ts17 qwen3_ts17 qwen2_dynamo18 mistral_ts17; do
    local t0=$SECONDS; timeout 200 $B/tests/gpu/mk-gpu-check tests/fixtures/$f.onnx
    echo "== decode $f rc=$? ($((SECONDS-t0)) s)"
  done
}
cudnn > $OUT/cudnn.txt 2>&1 & P1=$!
batch > $OUT/batch.txt 2>&1 & P2=$!
ranks > $OUT/ranks.txt 2>&1 & P3=$!
decode > $OUT/decode.txt 2>&1 & P4=$!
for p in $P1 $P2 $P3 $P4; do wait $p; done
grep -h -E "^== |FAIL" $OUT/cudnn.txt $OUT/batch.txt $OUT/ranks.txt $OUT/decode.txt
echo "done at $SECONDS s"
