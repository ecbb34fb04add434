#!/usr/bin/env bash
# Gemvs of several rows: every row's input by cp.async and the norms from
# shared memory, each warp's first batch of weights copied before the
# wait (.gpu/t2), against the kernel before (.gpu/t1), on the 1B shape built
# for 544 with batches of 2, 4 and 8: each binary's own .mk, one sequence
# and each batch from position 480 (33 steps), alternating; traces of t2's
# batches; the batch checks (fixtures, the 1B shape at 8 and at 20 rows,
# whose inputs come in slices and whose norms take the first pass).
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in t1 t2; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/t2
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
for b in t1 t2; do ( timeout 400 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=2,4,8 -o $W/l-$b.mk 2>&1 | grep -E "error|registers|spill" | sed "s/^/$b: /" ) & done
bc() { timeout 300 $N/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL" $W/b.txt | head -3; tail -2 $W/b.txt; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
bc tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048
wait
ls -la $W/*.mk
runb() { # binary rows position
  local ps=""; for i in $(seq 1 $2); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 .gpu/$1/runtime/mkrun/mkrun $W/l-$1.mk --device gpu --start-position $3 $ps -n 33 --step-times $W/s.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2"; cat $W/o.txt; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/s.csv'))][1:];print('$1 rows $2 position $3: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in 1 2 4 8; do for v in t1 t2; do runb $v $b 480; done; done; done
for b in 1 2 4 8; do runb t2 $b 1; done
for b in 4 8; do
  ps=""; for i in $(seq 1 $b); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 $N/runtime/mkrun/mkrun $W/l-t2.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t$b.json > /dev/null 2>&1 || echo "trace $b FAILED"
  $N/compiler/tools/mkc inspect $W/l-t2.mk --step=batch:$b --format=json -o $W/i$b.json
  python3 bench/trace_summary.py $W/t$b.json $W/i$b.json > $OUT/trace-batch$b.txt 2>&1; echo "trace batch $b: $(head -1 $OUT/trace-batch$b.txt)"
done
bc $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode
bc $W/l.mlir --batch=20 --max-context=544 --kv-cache=bf16 --against-decode
