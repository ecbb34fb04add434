#!/usr/bin/env bash
# p2 = p1 with a step of one row compiled as before (the decode kernel's
# cubin identical to h0's but for the merge's register names); q = p2 with
# the shortest attention span and chunk 64. Timing of h0 / p2 / q in rounds;
# a raw trace of p2's batch of 4; the batch checks of p2.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W; rm -f $W/*.mk
for b in h0 p2 q; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/s.mlir
python3 scripts/fused_module.py bench/configs/qwen3-0.6b-shaped.json -o $W/q.mlir
mk() { # binary name source options...
  local b=$1 n=$2 s=$3; shift 3
  ( timeout 300 .gpu/$b/compiler/tools/mkc compile $s --emit=mk --random-weights --kv-cache=bf16 $@ -o $W/$n-$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$n-$b: /" | cut -c1-140 ) &
  P="$P $!"
}
P=""
for b in h0 p2 q; do mk $b l $W/l.mlir --max-context=544 --batch=2,4,8; done
for b in h0 q; do mk $b s $W/s.mlir --max-context=544; mk $b q $W/q.mlir --max-context=544; done
bc() { local v=$1; shift; local t0=$SECONDS; timeout 150 .gpu/$v/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "$v batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL ($((SECONDS-t0)) s)"; grep -E "FAIL|max error" $W/b.txt | head -4; }
bc p2 tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048
bc p2 tests/fixtures/llama3_ts17.onnx --batch=4
bc q tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
for p in $P; do wait $p; done
runb() { # binary model rows position
  local ps=""; for i in $(seq 1 $3); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 .gpu/$1/runtime/mkrun/mkrun $W/$2-$1.mk --device gpu --start-position $4 $ps -n 33 --step-times $W/st.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2 $3 $4"; tail -3 $W/o.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 $2 rows $3 position $4: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do
  for b in 1 2 4 8; do for v in h0 p2 q; do runb $v l $b 480; done; done
  for v in h0 q; do runb $v s 1 480; runb $v s 1 40; runb $v q 1 480; runb $v q 1 1; done
done
ps=""; for i in 1 2 3 4; do ps="$ps --prompt-tokens $((i+6))"; done
timeout 60 .gpu/p2/runtime/mkrun/mkrun $W/l-p2.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace FAILED"
.gpu/p2/compiler/tools/mkc inspect $W/l-p2.mk --step=batch:4 --format=json -o $W/i.json
python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-p2-batch4.txt 2>&1; head -1 $OUT/trace-p2-batch4.txt
xz -T8 -c $W/t.json > $OUT/trace-p2-batch4.json.xz; xz -T8 -c $W/i.json > $OUT/inspect-p2-batch4.json.xz; ls -la $OUT
echo "at $SECONDS s"
bc p2 $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode
echo "done at $SECONDS s"
