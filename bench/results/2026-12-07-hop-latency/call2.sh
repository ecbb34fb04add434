#!/usr/bin/env bash
# Call 2 (either card), after call 1 found that most small-model tasks do
# not wait at all: the interpreter's time between a task's end and the next
# task's wait (1.1-2 us) is on the critical path. (1) where it goes:
# release-marks.patch (.gpu/rmarks, on gemv-marks.patch) prints, at each
# marked gemv's entry, how long the controller's red.release took and the
# time from its return to the entry; (2) last-warp-releases.patch
# (.gpu/lastwarp): the last consumer warp releases, the controller goes on
# to the next task meanwhile; timed against main (.gpu/main) on the 64 tiny
# layers, SmolLM2-135M and the 1B shape (built for 544, bf16 caches, from
# 480, two rounds), its logits compared with main's on the GPU (bit for
# bit) and traced.
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
for b in main rmarks lastwarp; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
B=.gpu/main
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for s in layer-cost-64x256:t smollm2-135m-shaped:s llama-3.2-1b-shaped:l; do
  python3 scripts/fused_module.py bench/configs/${s%:*}.json -o $W/${s#*:}.mlir
done
PIDS=""
for b in t s l trm srm lrm tlw slw llw; do
  m=${b:0:1}; c=$B/compiler/tools/mkc
  case $b in ?rm) c=.gpu/rmarks/mkc;; ?lw) c=.gpu/lastwarp/mkc;; esac
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
for r in 1 2; do for b in t tlw s slw l llw; do runb $b 480; done; done
TOKENS=1,7,42,3,99,5,11,64,8,250,17,2
for m in t s l; do
  timeout 60 $B/runtime/mkrun/mkrun $W/$m.mk --device gpu --tokens $TOKENS --logits $W/g-$m.npy > $W/c.txt 2>&1 &&
  timeout 60 $B/runtime/mkrun/mkrun $W/${m}lw.mk --device gpu --tokens $TOKENS --logits $W/g-${m}lw.npy >> $W/c.txt 2>&1 &&
  python3 -c "
import numpy as np; a=np.load('$W/g-$m.npy'); b=np.load('$W/g-${m}lw.npy')
print('logits $m: main against last-warp', 'bit for bit' if a.shape==b.shape and (a.view(np.uint32)==b.view(np.uint32)).all() else 'DIFFER max %g'%abs(a-b).max(), a.shape)" ||
  { echo "check $m FAILED"; tail -5 $W/c.txt; }
done
for b in trm srm lrm; do
  timeout 60 $B/runtime/mkrun/mkrun $W/$b.mk --device gpu --start-position 480 --prompt-tokens 7 -n 6 \
      > $W/o-$b.txt 2>&1 || { echo "marks $b FAILED"; tail -5 $W/o-$b.txt; }
  grep "^MARK" $W/o-$b.txt > $OUT/marks-$b.txt; echo "marks $b: $(wc -l < $OUT/marks-$b.txt) lines"
done
for b in tlw slw llw; do
  timeout 60 $B/runtime/mkrun/mkrun $W/$b.mk --device gpu --start-position 480 --prompt-tokens 7 -n 9 \
      --trace $W/t-$b.json > /dev/null 2>&1 || echo "trace $b FAILED"
  $B/compiler/tools/mkc inspect $W/$b.mk --format=json -o $W/i-$b.json
  python3 bench/trace_summary.py $W/t-$b.json $W/i-$b.json > $OUT/trace-$b.txt 2>&1
  echo "$b: $(head -1 $OUT/trace-$b.txt)"; grep -A1 "^between tasks\|^hops over" $OUT/trace-$b.txt
done
echo "done at ${SECONDS}s"
