#!/usr/bin/env bash
# The batch gemvs' residuals asked for as the wait ends (`r1`: 4a4f58c with
# early-residuals.patch) against the staged teams alone (`s1`, 4a4f58c) and
# main before them (`m0`, b214b2c), each binary on the .mk its own mkc wrote
# (the 1B shape built for 544 positions with batches of 4 and 8, bf16 KV
# caches), timed from position 480 in two rounds; r1's batch checks and
# trace at 4 rows.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in m0 s1 r1; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
R=.gpu/r1 # its mkrun and checks; m0 and s1 are mkc alone (the runtime is the same)
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
PIDS=""
for b in m0 s1 r1; do
  ( timeout 300 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4,8 -o $W/$b.mk 2>&1 | grep -E "error|registers|spill|wrote" | sed "s/^/$b: /" ) &
  PIDS="$PIDS $!"
done
wait $PIDS
runb() { # mk rows position
  local ps=""; for i in $(seq 1 $2); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 $R/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 $ps -n 33 --step-times $W/s.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2"; tail -5 $W/o.txt; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/s.csv'))][1:];print('$1 rows $2 position $3: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in 1 4 8; do for k in m0 s1 r1; do runb $k $b 480; done; done; done
bc() { timeout 120 $R/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "r1 batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL|rror" $W/b.txt | head -3; grep "teacher-forced" $W/b.txt | head -1; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
bc tests/fixtures/phi3_ts17.onnx --batch=4
bc tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048 --kv-cache=bf16
ps=""; for i in $(seq 1 4); do ps="$ps --prompt-tokens $((i+6))"; done
timeout 60 $R/runtime/mkrun/mkrun $W/r1.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace FAILED"
$R/compiler/tools/mkc inspect $W/r1.mk --step=batch:4 --format=json -o $W/i.json
python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-r1-batch4.txt 2>&1; echo "trace r1: $(head -1 $OUT/trace-r1-batch4.txt)"
bc $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode
