#!/usr/bin/env bash
# Call 2, timing only: `q2` (the tensor-core gemvs of several rows whose
# input is 8192 wide and has no norm, i.e. down, copy a quarter of each
# row's input: wrong sums, same weights) against `h9` (main's kernels) in
# the same call. The rest of each row's input is zeroed in shared memory
# (plain stores), so the logits stay finite. The 1B shape built for 544 with batches of 4 and 8 (bf16
# KV caches), at 1, 4 and 8 rows from 480, two rounds; all traced at 4
# rows, h9 and q2 at 8 too, down's span read from the traces.
# Beside them, `f2` and `c4`: the same gemvs' mmas into two (hi and lo
# halves of the input) or four (and by k16 half) independent accumulators
# instead of one chain (chains.patch; c4 spills 16 bytes). f2 carries the
# GPU checks: mk-gpu-batch-check, each row against its own teacher-forced
# logits, and the 1B shape at 8 rows against the decode kernel.
# (Call 1 was the same with `q1`, whose zeros were missing: its logits
# were NaN and its launches stopped.)
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in h9 q2 f2 c4; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
PIDS=""
for b in h9 q2 f2 c4; do
  ( timeout 240 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4,8 -o $W/$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" ) &
  PIDS="$PIDS $!"
done
R=.gpu/f2
bc() { timeout 150 $R/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL|rror|sampled rows" $W/b.txt | head -6; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048
bc tests/fixtures/phi3_ts17.onnx --batch=4
wait $PIDS
echo "compiled and checked at ${SECONDS}s"
runb() { # binary rows position
  local ps=""; for i in $(seq 1 $2); do ps="$ps --prompt-tokens $((i+6))"; done
  rm -f $W/st.csv
  timeout 60 .gpu/$1/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 $ps -n 33 --step-times $W/st.csv > $W/o-$1-$2.txt 2>&1 || { echo "FAILED $1 $2"; tail -5 $W/o-$1-$2.txt; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 rows $2 position $3: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do
  for b in 1 4 8; do for k in h9 q2 f2 c4; do runb $k $b 480; done; done
done
for b in 4 8; do for k in f2 c4; do cmp -s <(grep -v -i "ms\|time\|step\|GiB" $W/o-h9-$b.txt) <(grep -v -i "ms\|time\|step\|GiB" $W/o-$k-$b.txt) && echo "$k rows $b: the same tokens as h9" || echo "$k rows $b: tokens differ from h9's"; done; done
echo "runs done at ${SECONDS}s"
bc $W/l.mlir --batch=8 --kv-cache=bf16 --against-decode
for bk in 4:h9 4:q2 4:f2 4:c4 8:h9 8:q2; do b=${bk%:*}; k=${bk#*:}
  [ $SECONDS -gt 540 ] && { echo "skipped trace $k $b"; continue; }
  ps=""; for i in $(seq 1 $b); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 40 .gpu/$k/runtime/mkrun/mkrun $W/$k.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace $k $b FAILED"
  .gpu/$k/compiler/tools/mkc inspect $W/$k.mk --format=json --step=batch:$b -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-$k-rows$b.txt 2>&1; echo "$k rows $b: $(head -1 $OUT/trace-$k-rows$b.txt)"
  grep -E "^layer7\.(qkv|attention|o_proj|gate_up|down) |^lm_head" $OUT/trace-$k-rows$b.txt | head -8
done
echo "done at ${SECONDS}s"
