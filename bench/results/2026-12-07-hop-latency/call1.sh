#!/usr/bin/env bash
# Call 1 (either card): (1) the hop probe with its check of every mode's
# value (bench/stream/hop_latency.cu); (2) item 22: where a one-row gemv
# task's time goes, from clock64 marks in gemvOneRowTask (a timing-only
# build, gemv-marks.patch, .gpu/marks) on the 64 tiny layers, SmolLM2-135M
# and the 1B shape, built for 544 with bf16 caches, 6 steps from 480, the
# first and last tile of every gemv printed at steps 3 and 4; (3) main's
# builds (.gpu/main) of the same shapes timed from 480 (two rounds) and
# traced, with trace_summary's new time between tasks.
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
for b in main marks; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
B=.gpu/main
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
nvcc -O3 -arch=sm_90 -o $W/hop_latency bench/stream/hop_latency.cu &&
  $W/hop_latency 2000 3 > $OUT/hop.json; echo "probe rc=$?"; cat $OUT/hop.json
for s in layer-cost-64x256:t smollm2-135m-shaped:s llama-3.2-1b-shaped:l; do
  python3 scripts/fused_module.py bench/configs/${s%:*}.json -o $W/${s#*:}.mlir
done
PIDS=""
for b in t s l tm sm lm; do
  m=${b:0:1}; c=$B/compiler/tools/mkc; case $b in ?m) c=.gpu/marks/mkc;; esac
  ( timeout 240 $c compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 -o $W/$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" ) &
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
for r in 1 2; do for b in t s l; do runb $b 480; done; done
for b in tm sm lm; do
  timeout 60 $B/runtime/mkrun/mkrun $W/$b.mk --device gpu --start-position 480 --prompt-tokens 7 -n 6 \
      > $W/o-$b.txt 2>&1 || { echo "marks $b FAILED"; tail -5 $W/o-$b.txt; }
  grep "^MARK" $W/o-$b.txt > $OUT/marks-$b.txt; echo "marks $b: $(wc -l < $OUT/marks-$b.txt) lines"
done
for b in t s l; do
  timeout 60 $B/runtime/mkrun/mkrun $W/$b.mk --device gpu --start-position 480 --prompt-tokens 7 -n 9 \
      --trace $W/t-$b.json > /dev/null 2>&1 || echo "trace $b FAILED"
  $B/compiler/tools/mkc inspect $W/$b.mk --format=json -o $W/i-$b.json
  python3 bench/trace_summary.py $W/t-$b.json $W/i-$b.json > $OUT/trace-$b.txt 2>&1
  echo "$b: $(head -1 $OUT/trace-$b.txt)"; grep -A3 "^between tasks" $OUT/trace-$b.txt
done
echo "done at ${SECONDS}s"
