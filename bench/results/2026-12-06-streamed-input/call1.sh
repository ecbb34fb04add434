#!/usr/bin/env bash
# Call 1: `s1` (the tensor-core gemvs of several rows without a norm, o_proj
# and down, stream their input beside each batch of weights instead of
# copying it whole first) against `m1` (main's kernels) in the same call.
# The batch checks of s1 (each row against its own teacher-forced logits;
# the 1B shape against the decode kernel); the 1B shape built for 544 with
# batches of 4 and 8 (bf16 KV caches), both binaries, at 1, 4 and 8 rows
# from 480, two rounds; the greedy tokens of both compared; s1 traced at 4
# and 8 rows.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in m1 s1; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
PIDS=""
for b in m1 s1; do
  ( timeout 240 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4,8 -o $W/$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" ) &
  PIDS="$PIDS $!"
done
R=.gpu/s1
bc() { timeout 150 $R/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL|rror|sampled rows" $W/b.txt | head -6; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048
bc tests/fixtures/phi3_ts17.onnx --batch=4
wait $PIDS
echo "compiled and checked at ${SECONDS}s"
runb() { # mk rows position
  local ps=""; for i in $(seq 1 $2); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 .gpu/$1/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 $ps -n 33 --step-times $W/st.csv > $W/o-$1-$2.txt 2>&1 || { echo "FAILED $1 $2"; tail -5 $W/o-$1-$2.txt; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 rows $2 position $3: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do
  for b in 1 4 8; do for k in m1 s1; do runb $k $b 480; done; done
done
for b in 4 8; do cmp -s <(grep -v -i "ms\|time\|step" $W/o-m1-$b.txt) <(grep -v -i "ms\|time\|step" $W/o-s1-$b.txt) && echo "rows $b: same tokens" || { echo "rows $b: tokens DIFFER"; head -3 $W/o-m1-$b.txt $W/o-s1-$b.txt; }; done
echo "runs done at ${SECONDS}s"
bc $W/l.mlir --batch=8 --kv-cache=bf16 --against-decode
for b in 4 8; do
  [ $SECONDS -gt 530 ] && { echo "skipped trace $b"; continue; }
  ps=""; for i in $(seq 1 $b); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 40 $R/runtime/mkrun/mkrun $W/s1.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace $b FAILED"
  $R/compiler/tools/mkc inspect $W/s1.mk --format=json -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-s1-rows$b.txt 2>&1; echo "rows $b: $(head -1 $OUT/trace-s1-rows$b.txt)"
  grep -E "^layer7\.(qkv|attention|o_proj|gate_up|down) |^lm_head" $OUT/trace-s1-rows$b.txt | head -8
done
echo "done at ${SECONDS}s"
