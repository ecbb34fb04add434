#!/usr/bin/env bash
# Where the build for 32800 positions loses ~4 us a layer at position 1
# against the build for 528: traces (4 steps from position 1) of the 1B
# shape, mid (4e40e69) built for 32800 and for 528, v3 built for 32800;
# bench/trace_summary.py of each, and the traces and task graphs kept
# (gzip) for the critical path.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in mid v3; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
printf "mid 32800\nv3 32800\nmid 528\n" | xargs -P 3 -L 1 bash -c 'timeout 150 .gpu/$0/compiler/tools/mkc compile '$W'/1b.mlir --emit=mk --random-weights --max-context=$1 -o '$W'/1b-$0-$1.mk 2>&1 | grep -E "error"; .gpu/$0/compiler/tools/mkc inspect '$W'/1b-$0-$1.mk --format=json > '$W'/1b-$0-$1.json'
for c in mid-32800 v3-32800 mid-528; do
  b=${c%-*}
  timeout 60 .gpu/$b/runtime/mkrun/mkrun $W/1b-$c.mk --device gpu --start-position 1 --prompt-tokens 1 -n 5 --trace $W/t-$c.json > /dev/null
  python3 bench/trace_summary.py $W/t-$c.json $W/1b-$c.json > $OUT/trace-$c-1.txt 2>&1
  echo "$c: $(head -1 $OUT/trace-$c-1.txt)"
  gzip -c $W/t-$c.json > $OUT/t-$c.json.gz; gzip -c $W/1b-$c.json > $OUT/g-$c.json.gz
done
ls -la $OUT
echo done
