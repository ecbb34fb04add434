#!/usr/bin/env bash
# Call 1, one binary (`.gpu/x3`: main with the changes below).
# (a) Batch kernels loaded on the decode kernel's weights, and the
# repetition penalty in GPU batches (each row's own tokens): the batch
# checks (which check both), and mkrun's batches with a penalty.
# (b) The gemvs' first batch of weights before the wait for every warp but
# the controller's (`--gemv-first-weights=before-wait-but-controller`,
# `bc`) against every warp's (`before-wait`, the default, `bw`): the 1B
# shape built for 544 with batches of 4 and 8 (bf16 KV caches) at 1, 4
# and 8 rows from 480, two rounds, and Qwen3-0.6B's shape at one row;
# one-row traces of the 1B shape (the hops into gate_up and down); logits
# of both builds compared bit for bit.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/x3 ] || tar -C .gpu -xJf .gpu/x3.tar.xz
R=.gpu/x3
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
python3 scripts/fused_module.py bench/configs/qwen3-0.6b-shaped.json -o $W/q.mlir
PIDS=""
mk() { # mode model out options...
  local m=$1 md=$2 o=$3; shift 3
  ( timeout 200 $R/compiler/tools/mkc compile $W/$md.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --gemv-first-weights=$m "$@" -o $W/$o.mk 2>&1 | grep -E "error|spill" | sed "s/^/$o: /" ) &
  PIDS="$PIDS $!"
}
mk before-wait l bw-l --batch=4,8; mk before-wait-but-controller l bc-l --batch=4,8
mk before-wait q bw-q; mk before-wait-but-controller q bc-q
bc() { timeout 120 $R/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL|rror|weights|sampled rows" $W/b.txt | head -6; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
wait $PIDS
echo "compiled and checked at ${SECONDS}s"
# mkrun's batches with a penalty (they were refused before), sampled and greedy.
for s in "--temperature 0.8 --top-k 40 --seed 3" "--temperature 0"; do
  timeout 60 $R/runtime/mkrun/mkrun $W/bw-l.mk --device gpu --prompt-tokens 5,6,7,5,6 --prompt-tokens 9,9,9 --prompt-tokens 11 -n 12 --repetition-penalty 1.4 $s > $W/p.txt 2>&1; echo "mkrun batch, penalty 1.4, $s: rc=$?"; grep -v -i "^mkrun:" $W/p.txt | head -4
done
runb() { # mk rows position
  local ps=""; for i in $(seq 1 $2); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 $R/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 $ps -n 33 --step-times $W/st.csv > $W/o-$1-$2.txt 2>&1 || { echo "FAILED $1 $2"; tail -5 $W/o-$1-$2.txt; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 rows $2 position $3: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do
  for b in 1 4 8; do for k in bw-l bc-l; do runb $k $b 480; done; done
  [ $r = 1 ] && for k in bw-q bc-q; do runb $k 1 480; done
done
for b in 4 8; do cmp -s <(grep -v -i "ms\|time\|step" $W/o-bw-l-$b.txt) <(grep -v -i "ms\|time\|step" $W/o-bc-l-$b.txt) && echo "rows $b: same tokens" || { echo "rows $b: tokens DIFFER"; head -3 $W/o-bw-l-$b.txt $W/o-bc-l-$b.txt; }; done
T=$(seq -s, 1 24)
for k in bw-l bc-l bw-q bc-q; do timeout 60 $R/runtime/mkrun/mkrun $W/$k.mk --device gpu --tokens $T --logits $W/$k.npy > /dev/null 2>&1 || echo "logits $k FAILED"; done
python3 -c "
import numpy as np
for m in 'lq':
  a,b=np.load('$W/bw-%s.npy'%m),np.load('$W/bc-%s.npy'%m); print(m, a.shape, 'logits bit-identical' if np.array_equal(a,b) else 'logits DIFFER max %g'%np.abs(a-b).max())"
echo "runs done at ${SECONDS}s"
for k in bw-l bc-l; do
  [ $SECONDS -gt 540 ] && { echo "skipped trace $k"; continue; }
  timeout 40 $R/runtime/mkrun/mkrun $W/$k.mk --device gpu --start-position 480 --prompt-tokens 7 -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace $k FAILED"
  $R/compiler/tools/mkc inspect $W/$k.mk --format=json -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-$k.txt 2>&1; echo "$k: $(head -1 $OUT/trace-$k.txt)"
  grep -E "^layer(5|9)\.(qkv|gate_up|down|o_proj) " $OUT/trace-$k.txt | head -16
done
echo "done at ${SECONDS}s"
