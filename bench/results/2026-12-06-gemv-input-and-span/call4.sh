#!/usr/bin/env bash
# Call 4. Where the gemvs' tails come from: main (`c3`) on the 1B shape
# built for 544 with a batch of 4 (bf16 KV caches), traced at one row and
# at 4 rows from 480, summarized with trace_summary.py's tail split (each
# operation's tail against when its SMs came free and against its runs).
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/c3 ] || tar -C .gpu -xJf .gpu/c3.tar.xz
R=.gpu/c3
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
timeout 200 $R/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4 -o $W/l.mk 2>&1 | grep -E "error|wrote"
for rows in 1 4; do
  ps=""; for i in $(seq 1 $rows); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 $R/runtime/mkrun/mkrun $W/l.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace $rows FAILED"
  step=""; [ $rows -gt 1 ] && step="--step=batch:$rows"
  $R/compiler/tools/mkc inspect $W/l.mk $step --format=json -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-rows$rows.txt 2>&1; echo "rows $rows: $(head -1 $OUT/trace-rows$rows.txt)"
done
