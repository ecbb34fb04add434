#!/usr/bin/env bash
# A batch's attention teams staging their whole chunk of keys and values in
# shared memory before the wait (`s1`) against main (`m0`), and where a
# chunk task of a batch spends its time (`diag`: main with
# chunk-marks.patch, clock64 marks printed by each team's first thread of a
# few chunk tasks of layer 8, steps 3-4; timing only). The batch checks on
# s1; the 1B shape built for 544 positions with batches of 2, 4 and 8 (bf16
# KV caches), each binary on the .mk its own mkc wrote, timed from position
# 480 in two rounds (mkrun --step-times, 32 steps); s1 and m0 traced at 4
# rows. (A first try of this call waited on its own log's tee: `wait` with
# no argument waits for the process substitution too.)
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in m0 s1 diag; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
M=.gpu/m0; S=.gpu/s1 # m0: main's mkc alone (the runtime is the same)
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
PIDS=""
for b in m0 s1 diag; do
  ( timeout 300 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=2,4,8 -o $W/$b.mk 2>&1 | grep -E "error|registers|spill|wrote" | sed "s/^/$b: /" ) &
  PIDS="$PIDS $!"
done
bc() { timeout 120 $S/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL|rror" $W/b.txt | head -3; tail -1 $W/b.txt; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/llama3_ts17.onnx --batch=2
bc tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
bc tests/fixtures/qwen3_ts17.onnx --batch=8 --kv-cache=bf16
bc tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048 --kv-cache=bf16
bc tests/fixtures/phi3_ts17.onnx --batch=4
wait $PIDS
ls -la $W/*.mk
runb() { # mk rows position
  local ps=""; for i in $(seq 1 $2); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 $S/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 $ps -n 33 --step-times $W/s.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2"; tail -5 $W/o.txt; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/s.csv'))][1:];print('$1 rows $2 position $3: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in 1 2 4 8; do runb m0 $b 480; runb s1 $b 480; done; done
for b in 1 4 8; do
  ps=""; for i in $(seq 1 $b); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 $S/runtime/mkrun/mkrun $W/diag.mk --device gpu --start-position 480 $ps -n 6 > $OUT/marks-batch$b.txt 2>&1 || echo "diag $b FAILED"
  echo "marks batch $b: $(grep -c chunkmark $OUT/marks-batch$b.txt) lines"
done
ps=""; for i in $(seq 1 4); do ps="$ps --prompt-tokens $((i+6))"; done
for b in m0 s1; do
  timeout 60 $S/runtime/mkrun/mkrun $W/$b.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace $b FAILED"
  $M/compiler/tools/mkc inspect $W/$b.mk --step=batch:4 --format=json -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-$b-batch4.txt 2>&1; echo "trace $b: $(head -1 $OUT/trace-$b-batch4.txt)"
done
bc $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode
