#!/usr/bin/env bash
# Where the build for 32800 positions still loses ~7 us a layer at position
# 512 against the build for 544 (both main at 3d4a2b5's scheduler): traces
# of 4 steps from 511 of the 1B shape, bench/trace_summary.py of each, and
# the traces and task graphs kept (gzip) for a task-by-task comparison.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/sched ] || tar -C .gpu -xJf .gpu/sched.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
printf "32800\n544\n" | xargs -P 2 -I{} bash -c 'timeout 100 .gpu/sched/compiler/tools/mkc compile '$W'/1b.mlir --emit=mk --random-weights --max-context={} -o '$W'/1b-{}.mk 2>&1 | grep -E "error"; .gpu/sched/compiler/tools/mkc inspect '$W'/1b-{}.mk --format=json > '$W'/1b-{}.json'
for c in 32800 544; do
  timeout 40 .gpu/sched/runtime/mkrun/mkrun $W/1b-$c.mk --device gpu --start-position 511 --prompt-tokens 1 -n 5 --trace $W/t-$c.json > /dev/null
  python3 bench/trace_summary.py $W/t-$c.json $W/1b-$c.json > $OUT/trace-$c-512.txt 2>&1
  echo "$c: $(head -1 $OUT/trace-$c-512.txt)"
  gzip -c $W/t-$c.json > $OUT/t-$c.json.gz; gzip -c $W/1b-$c.json > $OUT/g-$c.json.gz
done
echo done
