#!/usr/bin/env bash
# Call 2, the same binary (`.gpu/x3`): the rest of CTest's batch checks
# (each now also of the shared weights and of the repetition penalty by
# each row's own tokens), the Argmax task kind (one row's penalty, whose
# device function the batch's now shares) and a whole-model check.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/x3 ] || tar -C .gpu -xJf .gpu/x3.tar.xz
R=.gpu/x3
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
bc() { timeout 150 $R/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL|rror|penalty|weights|sampled rows" $W/b.txt | head -6; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/phi3_ts17.onnx --batch=4
bc tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048
bc $W/l.mlir --batch=8 --kv-cache=bf16 --against-decode
bc $W/l.mlir --batch=20 --max-context=544 --kv-cache=bf16 --against-decode
echo "batch checks done at ${SECONDS}s"
for m in llama3_ts17 qwen3_ts17; do
  timeout 100 $R/tests/gpu/mk-task-kind-check Argmax tests/fixtures/$m.onnx > $W/k.txt 2>&1; echo "kind Argmax $m rc=$?"; tail -2 $W/k.txt
done
timeout 120 $R/tests/gpu/mk-gpu-check tests/fixtures/llama3_ts17.onnx > $W/g.txt 2>&1; echo "gpu-check llama3_ts17 rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep -E "FAIL|rror" $W/g.txt | head -3
echo "done at ${SECONDS}s"
