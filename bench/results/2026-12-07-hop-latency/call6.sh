#!/usr/bin/env bash
# Call 6 (either card): an attention chunk's invFreq loaded before its wait
# (codegen/device/AttentionChunkTask.cuh, PairRotation: the rotation's load
# of invFreq was a round trip to L2 after the wait, between q's load and the
# scores). The working tree's build (.gpu/c3) against HEAD's (.gpu/c2's
# mkc and mkrun, .gpu/head.tar.xz): the 64 tiny layers, SmolLM2 and the 1B
# shape built for 544 with bf16 caches, from 480 and from 40, two rounds;
# logits on the GPU against HEAD's (bit for bit expected: the same angle and
# sincos); then the GPU tests of attention chunks and a whole model of each
# family, four at a time (run_gpu_tests.py: call4.sh's runner).
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
mkdir -p .gpu/head && tar -C .gpu/head -xJf .gpu/head.tar.xz
tar -xJf .gpu/c3.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for s in layer-cost-64x256:t smollm2-135m-shaped:s llama-3.2-1b-shaped:l qwen3-0.6b-shaped:q; do
  python3 scripts/fused_module.py bench/configs/${s%:*}.json -o $W/${s#*:}.mlir
done
PIDS=""
for b in t s l q tn sn ln qn; do
  m=${b:0:1}; c=.gpu/head/build/compiler/tools/mkc
  case $b in ?n) c=build/compiler/tools/mkc;; esac
  ( timeout 240 $c compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 -o $W/$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" ) &
  PIDS="$PIDS $!"
done
wait $PIDS
echo "compiled at ${SECONDS}s"
R=build/runtime/mkrun/mkrun
runb() { # build position
  rm -f $W/st.csv
  timeout 60 $R $W/$1.mk --device gpu --start-position $2 --prompt-tokens 7 -n 33 \
      --step-times $W/st.csv > $W/o-$1.txt 2>&1 || { echo "FAILED $1"; tail -5 $W/o-$1.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 position $2: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in t tn s sn l ln; do runb $b 480; done; done
for b in t tn s sn q qn; do runb $b 40; done
TOKENS=1,7,42,3,99,5,11,64,8,250,17,2
for m in t s l q; do
  timeout 60 $R $W/$m.mk --device gpu --tokens $TOKENS --logits $W/g-$m.npy > $W/c.txt 2>&1 &&
  timeout 60 $R $W/${m}n.mk --device gpu --tokens $TOKENS --logits $W/g-${m}n.npy >> $W/c.txt 2>&1 &&
  python3 -c "
import numpy as np; a=np.load('$W/g-$m.npy'); b=np.load('$W/g-${m}n.npy')
print('logits $m: HEAD against the tree', 'bit for bit' if a.shape==b.shape and (a.view(np.uint32)==b.view(np.uint32)).all() else 'DIFFER max %g'%abs(a-b).max(), a.shape)" ||
  { echo "check $m FAILED"; tail -5 $W/c.txt; }
done
echo "timed at ${SECONDS}s"
T=$(grep -oE "add_test\(\[=\[[^]]*" build/tests/gpu/CTestTestfile.cmake | sed 's/add_test(\[=\[//' |
    grep -E "^gpu\.kind\.AttentionChunk\.|^gpu\.(toy|llama3_ts17\.context64|qwen3_ts17\.context2048\.inline-merge\.bf16|phi3_ts17\.context64|extra\.gemma3_dynamo23\.context64|extra\.mistral_window6_ts17\.context64|mistral_window6_ts17\.context64\.merge-in-o-proj|granite_ts17\.context2048|qwen2_dynamo18\.context2048\.merge-tasks\.bf16)$" | paste -sd,)
ONLY=$T ROOT=$PWD timeout $((290 - SECONDS)) python3 bench/results/2026-12-07-hop-latency/run_gpu_tests.py
echo "done at ${SECONDS}s"
