#!/usr/bin/env bash
# Call 1, timing: is a layer's fixed cost a matter of how many SMs take part
# in each phase? The same kernels (main's build, .gpu/h10) scheduled for
# fewer SMs (`mkc compile --num-sms=N`: N CTAs, every gemv cut into N
# tiles, every event N triggers): the 64 tiny layers at 16, 33, 66 and 132
# SMs, SmolLM2-135M at 33, 66 and 132, all built for 544
# with bf16 caches, from 480, two rounds; then traces (where a layer's time
# goes) of the tiny layers at 33 and 132 SMs and of both shapes' 64 KiB tiles
# below and their 132 SMs.
# Beside them, on all 132 SMs: the gemvs of fewer bytes cut into fewer
# tiles (.gpu/h11: main's compiler with `--least-gemv-tile-bytes=N`, each
# tile at least N bytes of weights), the tiny layers and SmolLM2 at 16 and
# 64 KiB ("t132-16k": tiny layers, 132 SMs, 16 KiB tiles).
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
B=.gpu/h10
for b in h10 h11; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for s in layer-cost-64x256:t smollm2-135m-shaped:s; do
  python3 scripts/fused_module.py bench/configs/${s%:*}.json -o $W/${s#*:}.mlir
done
BUILDS="t16 t33 t66 t132 s33 s66 s132 t132-16k t132-64k s132-16k s132-64k"
PIDS=""
for b in $BUILDS; do
  m=${b:0:1}; n=${b:1}; n=${n%-*}; c=$B/compiler/tools/mkc; extra=""
  case $b in *-16k) c=.gpu/h11/compiler/tools/mkc; extra=--least-gemv-tile-bytes=16384;;
             *-64k) c=.gpu/h11/compiler/tools/mkc; extra=--least-gemv-tile-bytes=65536;; esac
  ( timeout 240 $c compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 --num-sms=$n $extra -o $W/$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" ) &
  PIDS="$PIDS $!"
done
wait $PIDS
echo "compiled at ${SECONDS}s"
runb() { # build position
  rm -f $W/st.csv
  timeout 60 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 7 -n 33 \
      --step-times $W/st.csv > $W/o-$1.txt 2>&1 || { echo "FAILED $1"; tail -5 $W/o-$1.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 position $2: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in $BUILDS; do runb $b 480; done; done
for b in t33 t132 t132-64k s132 s132-64k; do
  timeout 40 $B/runtime/mkrun/mkrun $W/$b.mk --device gpu --start-position 480 --prompt-tokens 7 -n 9 \
      --trace $W/t.json > /dev/null 2>&1 || echo "trace $b FAILED"
  $B/compiler/tools/mkc inspect $W/$b.mk --format=json -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-$b.txt 2>&1
  echo "$b: $(head -1 $OUT/trace-$b.txt)"
  grep -E "^layer30\.|^layer15\.|^lm_head|^argmax" $OUT/trace-$b.txt | head -12
done
echo "done at ${SECONDS}s"
