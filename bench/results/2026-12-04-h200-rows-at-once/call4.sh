#!/usr/bin/env bash
# p5 = p3 with each warp's units of a batch gemv asked into L2 (one bulk
# prefetch a weight row's part) before the wait. Timing p3 / p5 in rounds;
# the batch checks of p5; p5's trace at 4 rows.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W; rm -f $W/*.mk
for b in p3 p5; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
mk() { # binary name source options...
  local b=$1 n=$2 s=$3; shift 3
  ( timeout 300 .gpu/$b/compiler/tools/mkc compile $s --emit=mk --random-weights --kv-cache=bf16 $@ -o $W/$n-$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$n-$b: /" | cut -c1-150 ) &
  P="$P $!"
}
P=""
for b in p3 p5; do mk $b l $W/l.mlir --max-context=544 --batch=2,4,8; done
bc() { local v=$1; shift; local t0=$SECONDS; timeout 150 .gpu/$v/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "$v batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL ($((SECONDS-t0)) s)"; grep -E "FAIL|max error" $W/b.txt | head -4; }
bc p5 tests/fixtures/llama3_ts17.onnx --batch=4
bc p5 tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048
bc p5 tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
for p in $P; do wait $p; done
runb() { # binary model rows position
  local ps=""; for i in $(seq 1 $3); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 .gpu/$1/runtime/mkrun/mkrun $W/$2-$1.mk --device gpu --start-position $4 $ps -n 33 --step-times $W/st.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2 $3 $4"; tail -3 $W/o.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 $2 rows $3 position $4: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do
  for b in 2 4 8; do for v in p3 p5; do runb $v l $b 480; done; done
  runb p3 l 1 480; runb p5 l 1 480
done
ps=""; for i in 1 2 3 4; do ps="$ps --prompt-tokens $((i+6))"; done
timeout 60 .gpu/p5/runtime/mkrun/mkrun $W/l-p5.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace FAILED"
.gpu/p5/compiler/tools/mkc inspect $W/l-p5.mk --step=batch:4 --format=json -o $W/i.json
python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-p5-batch4.txt 2>&1; head -1 $OUT/trace-p5-batch4.txt
xz -T8 -c $W/t.json > $OUT/trace-p5-batch4.json.xz
echo "at $SECONDS s"
bc p5 $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode
echo "done at $SECONDS s"
