#!/usr/bin/env bash
# Call 2 again (it hung on a `wait` that waited for its own tee), with the
# qwen2_dynamo18 batch of 8 that call 2 found not bit-identical launch to
# launch: .gpu/t2 (the gemvs' first batches copied before the wait) run
# twice and under compute-sanitizer's racecheck, .gpu/t3 (the same without
# that copy); then the timing of t1 (before) and t2 on the 1B shape.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in t1 t2 t3; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/t2
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
P=""
for b in t1 t2; do ( timeout 300 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=2,4,8 -o $W/l-$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" ) & P="$P $!"; done
bc() { local v=$1; shift; timeout 200 .gpu/$v/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "$v batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL|max error" $W/b.txt | head -3; }
Q="tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048"
bc t2 $Q; bc t2 $Q; bc t3 $Q; bc t3 $Q
bc t2 tests/fixtures/qwen2_dynamo18.onnx --batch=4 --max-context=2048
bc t2 tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=64
timeout 240 compute-sanitizer --tool racecheck --racecheck-report hazard $N/tests/gpu/mk-gpu-batch-check $Q > $W/rc.txt 2>&1; echo "racecheck rc=$?"; grep -E "Error|Warning|hazard|SUMMARY" $W/rc.txt | sort | uniq -c | sort -rn | head -12; grep -m3 -A6 "Error" $W/rc.txt
wait $P
runb() { # binary rows position
  local ps=""; for i in $(seq 1 $2); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 .gpu/$1/runtime/mkrun/mkrun $W/l-$1.mk --device gpu --start-position $3 $ps -n 33 --step-times $W/s.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2"; tail -3 $W/o.txt; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/s.csv'))][1:];print('$1 rows $2 position $3: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in 1 2 4 8; do for v in t1 t2; do runb $v $b 480; done; done; done
for b in 4 8; do
  ps=""; for i in $(seq 1 $b); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 $N/runtime/mkrun/mkrun $W/l-t2.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t$b.json > /dev/null 2>&1 || echo "trace $b FAILED"
  $N/compiler/tools/mkc inspect $W/l-t2.mk --step=batch:$b --format=json -o $W/i$b.json
  python3 bench/trace_summary.py $W/t$b.json $W/i$b.json > $OUT/trace-batch$b.txt 2>&1; echo "trace batch $b: $(head -1 $OUT/trace-batch$b.txt)"
done
bc t2 $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode
