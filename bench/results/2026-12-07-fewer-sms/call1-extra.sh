#!/usr/bin/env bash
# After call1.sh, in the same call: (1) are the builds of fewer SMs and of
# fewer, larger tiles right on the GPU? Teacher-forced logits of 12 tokens
# (step by step through the decode kernel) against the CPU executor's on
# the same .mk; (2) the shapes whose gemvs are all large enough for 64 KiB
# tiles to change little (the 1B shape: o_proj's 8.4 MB is 128 tiles) or
# somewhat (Qwen3-0.6B): 64 KiB tiles against the default, two rounds.
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
B=.gpu/h10; C11=.gpu/h11/compiler/tools/mkc
exec > >(tee $OUT/log-extra.txt) 2>&1
for s in llama-3.2-1b-shaped:l qwen3-0.6b-shaped:q; do
  python3 scripts/fused_module.py bench/configs/${s%:*}.json -o $W/${s#*:}.mlir
done
PIDS=""
for b in l132 l132-64k q132 q132-64k; do
  m=${b:0:1}; extra=""; case $b in *-64k) extra=--least-gemv-tile-bytes=65536;; esac
  ( timeout 200 $C11 compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 $extra -o $W/$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" ) &
  PIDS="$PIDS $!"
done
TOKENS=1,7,42,3,99,5,11,64,8,250,17,2
for b in t16 t33 t132-16k t132-64k s33 s132-16k s132-64k; do
  [ -f $W/$b.mk ] || { echo "check $b: no build"; continue; }
  timeout 60 $B/runtime/mkrun/mkrun $W/$b.mk --device gpu --tokens $TOKENS --logits $W/g.npy > $W/c.txt 2>&1 &&
  timeout 120 $B/runtime/mkrun/mkrun $W/$b.mk --device cpu --tokens $TOKENS --logits $W/c.npy >> $W/c.txt 2>&1 &&
  echo "check $b: $(python3 scripts/compare_logits.py $W/g.npy $W/c.npy --rtol 1e-4 --per-step 2>&1 | tail -1)" ||
  { echo "check $b FAILED"; tail -5 $W/c.txt; }
done
wait $PIDS
echo "compiled at ${SECONDS}s"
runb() { # build position
  rm -f $W/st.csv
  timeout 60 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 7 -n 33 \
      --step-times $W/st.csv > $W/o-$1.txt 2>&1 || { echo "FAILED $1"; tail -5 $W/o-$1.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 position $2: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in l132 l132-64k q132 q132-64k; do runb $b 480; done; done
echo "done at ${SECONDS}s"
