#!/usr/bin/env bash
# Two questions after call 1: (a) does main's batch kernel (`m0`, b214b2c)
# also fail the sampled rows of qwen3_ts17 at 8 rows in bf16 (s1 did, 43 of
# 48 draws; the teacher-forced logits passed)? (b) where do a staged team's
# chunk task and the gemvs of several rows spend their time (`diag2`: s1
# with marks-2.patch, clock64 marks printed for layer 8, steps 3-4; timing
# only)?
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in m0 diag2; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
M=.gpu/m0; D=.gpu/diag2
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
( timeout 300 $D/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4,8 -o $W/diag2.mk 2>&1 | grep -E "error|registers|spill|wrote" ) &
P=$!
bc() { timeout 120 $M/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "m0 batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL|rror" $W/b.txt | head -3; }
bc tests/fixtures/qwen3_ts17.onnx --batch=8 --kv-cache=bf16
bc tests/fixtures/qwen3_ts17.onnx --batch=8
bc tests/fixtures/llama3_ts17.onnx --batch=8 --kv-cache=bf16
wait $P
for b in 1 4 8; do
  ps=""; for i in $(seq 1 $b); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 $M/runtime/mkrun/mkrun $W/diag2.mk --device gpu --start-position 480 $ps -n 6 > $OUT/marks-batch$b.txt 2>&1 || echo "diag2 $b FAILED"
  echo "marks batch $b: $(grep -c chunkmark $OUT/marks-batch$b.txt) chunk lines, $(grep -c gemvmark $OUT/marks-batch$b.txt) gemv lines"
done
