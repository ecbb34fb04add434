#!/usr/bin/env bash
# p6 = p3 with the next batch of a gemv of several rows asked into L2
# (prefetch.global.L2, the lane's addresses) while the current one is
# summed. Timing of p3 / p6 at 4 and 8 rows (tensor-core gemvs), one check.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W; rm -f $W/*.mk
for b in p3 p6; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
P=""
for b in p3 p6; do ( timeout 200 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4,8 -o $W/l-$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" | cut -c1-150 ) & P="$P $!"; done
timeout 100 .gpu/p6/tests/gpu/mk-gpu-batch-check tests/fixtures/llama3_ts17.onnx --batch=4 > $W/b.txt 2>&1; echo "p6 batch-check llama3_ts17 4 rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL" $W/b.txt | head -3
for p in $P; do wait $p; done
runb() { # binary rows
  local ps=""; for i in $(seq 1 $2); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 30 .gpu/$1/runtime/mkrun/mkrun $W/l-$1.mk --device gpu --start-position 480 $ps -n 33 --step-times $W/st.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2"; tail -3 $W/o.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 rows $2 position 480: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in 4 8; do for v in p3 p6; do runb $v $b; done; done; done
echo "done at $SECONDS s"
