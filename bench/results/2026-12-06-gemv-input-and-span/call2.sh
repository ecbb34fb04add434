#!/usr/bin/env bash
# Call 2. Two batches of weights staged before the wait where the rows'
# input takes at most 64 KiB (`s2`: main with s2-two-staged-batches.patch)
# against main (`m0`, 0e957c2): the 1B shape built for 544 with batches of
# 4 and 8 (bf16 KV caches), 1, 4 and 8 rows from 480, two rounds; both
# traced at 4 rows; s2's batch checks.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in m0 s2; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
R=.gpu/s2 # mkrun and the batch checks (the runtime is main's in both)
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
PIDS=""
for b in m0 s2; do
  ( timeout 300 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4,8 -o $W/$b.mk 2>&1 | grep -E "error|registers|spill|wrote" | sed "s/^/$b: /" ) &
  PIDS="$PIDS $!"
done
wait $PIDS
prompts() { local ps=""; for i in $(seq 1 $1); do ps="$ps --prompt-tokens $((i+6))"; done; echo $ps; }
runb() { # mk rows position
  timeout 60 $R/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 $(prompts $2) -n 33 --step-times $W/st.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2"; tail -5 $W/o.txt; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 rows $2 position $3: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in 1 4 8; do for k in m0 s2; do runb $k $b 480; done; done; done
for k in m0 s2; do
  timeout 60 $R/runtime/mkrun/mkrun $W/$k.mk --device gpu --start-position 480 $(prompts 4) -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace $k FAILED"
  $R/compiler/tools/mkc inspect $W/$k.mk --step=batch:4 --format=json -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-$k-batch4.txt 2>&1; echo "trace $k: $(head -1 $OUT/trace-$k-batch4.txt)"
done
bc() { timeout 150 $R/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "s2 batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL|rror" $W/b.txt | head -3; grep -E "teacher-forced|sampled rows" $W/b.txt | head -2; }
bc $W/l.mlir --batch=4 --max-context=544 --kv-cache=bf16 --against-decode
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/qwen3_ts17.onnx --batch=8 --kv-cache=bf16
bc tests/fixtures/phi3_ts17.onnx --batch=4
bc $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode
bc tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048 --kv-cache=bf16
