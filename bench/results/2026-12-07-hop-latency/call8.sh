#!/usr/bin/env bash
# Call 8, run later on 2026-12-07 with call 7 in one call (README: "Calls 7 and 8"): two kernel
# changes, each a patch over the commit that adds this file, against it.
#   early-poll.patch          the controller polls the task's counters once
#                             as the task starts, before any thread asks for
#                             its first weights, and the wait polls no more
#                             where that poll found them reached (NOTES item
#                             25: if the poll waits behind the weights).
#                             Predicted: the 1B shape -2 to -4% (gate_up's
#                             and down's tasks seldom wait), the small
#                             shapes -2 to -5%; nothing if call 7's probe
#                             finds the poll does not queue.
#   skip-norm-barriers.patch  an attention chunk's barrier after the q and k
#                             head norms only where the model has them
#                             (uniform per operation). Predicted -0.3 to -1%
#                             on the small shapes, nothing on Qwen3 (q/k
#                             norms).
#   aw                        no patch: HEAD's `--gemv-first-weights=
#                             after-wait` (every warp's first batch after
#                             the wait, so that nothing queues before the
#                             poll; the weights' latency then follows it).
#                             Predicted: slower where tasks wait (the 1B
#                             shape, +2-5%), and a measure of the same
#                             question as early-poll where they seldom do.
# pack.sh makes what it carries. Needs, made on the CPU machine from the
# commit: .gpu/head.tar.xz
# (build/compiler/tools/mkc and build/runtime/mkrun/mkrun), and
# .gpu/ep.tar.xz, .gpu/snb.tar.xz (ep/mkc, snb/mkc: mkc built with each
# patch applied, then reverted). Compiled here without spills (106 / 118 /
# 128 / 128 registers on the tiny layers, SmolLM2, the 1B shape and
# Qwen2.5-1.5B, as HEAD).
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
mkdir -p .gpu/head && tar -C .gpu/head -xJf .gpu/head.tar.xz
for b in ep snb; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for s in layer-cost-64x256:t smollm2-135m-shaped:s llama-3.2-1b-shaped:l qwen3-0.6b-shaped:q; do
  python3 scripts/fused_module.py bench/configs/${s%:*}.json -o $W/${s#*:}.mlir
done
PIDS=""
for m in t s l q; do for v in head ep snb aw; do
  c=.gpu/$v/mkc; extra=""; [ $v = head ] && c=.gpu/head/build/compiler/tools/mkc
  [ $v = aw ] && c=.gpu/head/build/compiler/tools/mkc && extra=--gemv-first-weights=after-wait
  ( timeout 240 $c compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 $extra -o $W/$m-$v.mk 2>&1 | grep -E "error|spill" | sed "s/^/$m-$v: /" ) &
  PIDS="$PIDS $!"
done; done
wait $PIDS
echo "compiled at ${SECONDS}s"
R=.gpu/head/build/runtime/mkrun/mkrun
runb() { # build position
  rm -f $W/st.csv
  timeout 60 $R $W/$1.mk --device gpu --start-position $2 --prompt-tokens 7 -n 33 \
      --step-times $W/st.csv > $W/o-$1.txt 2>&1 || { echo "FAILED $1"; tail -5 $W/o-$1.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 position $2: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for m in t s l q; do for v in head ep snb aw; do runb $m-$v 480; done; done; done
for m in t s l q; do for v in head ep snb aw; do runb $m-$v 40; done; done
TOKENS=1,7,42,3,99,5,11,64,8,250,17,2
for m in t s l q; do for v in head ep snb aw; do
  timeout 60 $R $W/$m-$v.mk --device gpu --tokens $TOKENS --logits $W/g-$m-$v.npy > $W/c.txt 2>&1 ||
    { echo "logits $m-$v FAILED"; tail -5 $W/c.txt; }
done
  python3 -c "
import numpy as np
a = np.load('$W/g-$m-head.npy')
for v in ('ep', 'snb', 'aw'):
    b = np.load('$W/g-$m-' + v + '.npy')
    print('logits $m:', v, 'against HEAD', 'bit for bit' if a.shape == b.shape and (a.view(np.uint32) == b.view(np.uint32)).all() else 'DIFFER max %g' % abs(a - b).max())"
done
for m in s l; do
  timeout 60 $R $W/$m-ep.mk --device gpu --start-position 480 --prompt-tokens 7 -n 9 --trace $W/t.json > /dev/null 2>&1
  .gpu/head/build/compiler/tools/mkc inspect $W/$m-ep.mk --format=json -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-$m-ep.txt 2>&1
  echo "$m-ep: $(head -1 $OUT/trace-$m-ep.txt)"; grep -A1 "^between tasks\|^hops over" $OUT/trace-$m-ep.txt
done
echo "done at ${SECONDS}s"
