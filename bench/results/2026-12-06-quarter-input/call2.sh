#!/usr/bin/env bash
# Call 2, timing only: `q2` (the tensor-core gemvs of several rows whose
# input is 8192 wide and has no norm, i.e. down, copy a quarter of each
# row's input: wrong sums, same weights) against `h9` (main's kernels) in
# the same call. The rest of each row's input is zeroed in shared memory
# (plain stores), so the logits stay finite. The 1B shape built for 544 with batches of 4 and 8 (bf16
# KV caches), at 1, 4 and 8 rows from 480, two rounds; both traced at 4
# and 8 rows, down's span read from the traces.
# Beside them, `c2` and `c4`: the same gemvs' mmas into two (hi and lo
# halves of the input) or four (and by k16 half) independent accumulators
# instead of one chain (chains.patch; c4 spills 16 bytes).
# (Call 1 was the same with `q1`, whose zeros were missing: its logits
# were NaN and its launches stopped.)
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in h9 q2 c2 c4; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
PIDS=""
for b in h9 q2 c2 c4; do
  ( timeout 240 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4,8 -o $W/$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" ) &
  PIDS="$PIDS $!"
done
wait $PIDS
echo "compiled at ${SECONDS}s"
runb() { # binary rows position
  local ps=""; for i in $(seq 1 $2); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 .gpu/$1/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 $ps -n 33 --step-times $W/st.csv > $W/o-$1-$2.txt 2>&1 || { echo "FAILED $1 $2"; tail -5 $W/o-$1-$2.txt; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 rows $2 position $3: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do
  for b in 1 4 8; do for k in h9 q2 c2 c4; do runb $k $b 480; done; done
done
for b in 4 8; do for k in c2 c4; do cmp -s <(grep -v -i "ms\|time\|step\|GiB" $W/o-h9-$b.txt) <(grep -v -i "ms\|time\|step\|GiB" $W/o-$k-$b.txt) && echo "$k rows $b: the same tokens as h9" || echo "$k rows $b: tokens differ from h9's"; done; done
echo "runs done at ${SECONDS}s"
for b in 4 8; do for k in h9 q2 c2 c4; do
  [ $SECONDS -gt 540 ] && { echo "skipped trace $k $b"; continue; }
  ps=""; for i in $(seq 1 $b); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 40 .gpu/$k/runtime/mkrun/mkrun $W/$k.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace $k $b FAILED"
  .gpu/$k/compiler/tools/mkc inspect $W/$k.mk --format=json --step=batch:$b -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-$k-rows$b.txt 2>&1; echo "$k rows $b: $(head -1 $OUT/trace-$k-rows$b.txt)"
  grep -E "^layer7\.(qkv|attention|o_proj|gate_up|down) |^lm_head" $OUT/trace-$k-rows$b.txt | head -8
done; done
echo "done at ${SECONDS}s"
