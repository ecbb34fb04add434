#!/usr/bin/env bash
# Where a batch step's time goes: the 1B shape built for 544 positions with
# batches of 2, 4 and 8 (bf16 KV caches), one sequence and each batch timed
# from position 480 (mkrun --start-position, 33 steps, three launches), and
# a trace of 9 steps of each (mkc inspect --step=batch:B for its graph,
# bench/trace_summary.py). Also the batch checks of the fixtures and the 1B
# shape, since runBatch changed (a trace, a start position).
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in t1; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/t1
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
( timeout 400 $N/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=2,4,8 -o $W/l.mk 2>&1 | grep -E "error|registers|spill" ) &
CP=$!
bc() { timeout 300 $N/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL" $W/b.txt | head -3; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
wait $CP
ls -la $W/l.mk
runb() { # rows position
  local ps=""; for i in $(seq 1 $1); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 $N/runtime/mkrun/mkrun $W/l.mk --device gpu --start-position $2 $ps -n 33 --step-times $W/s.csv > $W/o.txt 2>&1 || { echo "FAILED $1"; cat $W/o.txt; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/s.csv'))][1:];print('rows $1 position $2: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2 3; do for b in 1 2 4 8; do runb $b 480; done; done
for b in 1 2 4 8; do runb $b 1; done
for b in 2 4 8; do
  ps=""; for i in $(seq 1 $b); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 $N/runtime/mkrun/mkrun $W/l.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t$b.json > /dev/null 2>&1 || echo "trace $b FAILED"
  $N/compiler/tools/mkc inspect $W/l.mk --step=batch:$b --format=json -o $W/i$b.json
  python3 bench/trace_summary.py $W/t$b.json $W/i$b.json > $OUT/trace-batch$b.txt 2>&1; echo "trace batch $b: $(head -1 $OUT/trace-batch$b.txt)"
done
timeout 60 $N/runtime/mkrun/mkrun $W/l.mk --device gpu --start-position 480 --prompt-tokens 1 -n 9 --trace $W/t1.json > /dev/null
$N/compiler/tools/mkc inspect $W/l.mk --format=json -o $W/i1.json
python3 bench/trace_summary.py $W/t1.json $W/i1.json > $OUT/trace-batch1.txt 2>&1; echo "trace one: $(head -1 $OUT/trace-batch1.txt)"
for b in 2 4 8; do timeout 200 $N/compiler/tools/mkc compile $W/l.mlir --emit=cubin --kv-cache=bf16 --max-context=544 --batch=$b --step=batch:$b -o $W/c$b.cubin 2>&1 | tail -2; done
bc $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode
