#!/usr/bin/env bash
# NOT YET RUN (written after the session's device time was spent): where a
# layer of Qwen3-0.6B and of Qwen2.5-1.5B goes. On the H200 (../2026-12-07-
# h200-harness) Qwen3-0.6B built for 544 takes 0.755 ms at 512: past
# lm_head's 311 MB, ~24.5 us a layer for 30.5 MB (6.9 us at the streaming
# rate), against ~15 us a layer on SmolLM2 for 9 MB; neither shape has a
# trace since 2026-12-04. The same as call1.sh for these two shapes (builds
# for 544, bf16 caches, four steps from 480; layer 14 of 28 and the middle
# one), everything it writes packed into one file (a call brings back only
# so many files: call 1 lost the tiny layers' summaries that way). Needs
# .gpu/ab5.tar.xz (`scripts/pack_builds.sh .gpu/ab5.tar.xz new=` on the
# commit to trace).
set -uo pipefail
mkdir -p $OUT
tar -C .gpu -xJf .gpu/ab5.tar.xz
B=.gpu/builds/new W=/tmp/ws R=/tmp/traced; mkdir -p $W $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
for s in qwen3-0.6b-shaped:q:14 qwen2.5-1.5b-shaped:w:14; do
  IFS=: read cfg m layer <<< "$s"
  python3 scripts/fused_module.py bench/configs/$cfg.json -o $W/$m.mlir
  $B/compiler/tools/mkc compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
    --max-context=544 -o $W/$m.mk 2>&1 | tail -1
  $B/compiler/tools/mkc inspect $W/$m.mk --format=json > $W/$m.json
  $B/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 7 -n 5 \
    --trace $W/$m-trace.json > /dev/null
  python3 bench/trace_summary.py $W/$m-trace.json $W/$m.json --skip-steps 1 > $R/$m-summary.txt 2>&1
  python3 bench/waterfall.py $W/$m-trace.json $W/$m.json --layer $layer --png $R/$m-waterfall.png \
    --json $R/$m-waterfall.json > $R/$m-waterfall.txt 2>&1
  head -3 $R/$m-summary.txt; cat $R/$m-waterfall.txt
done
tar -C /tmp -cJf $OUT/traced.tar.xz traced
