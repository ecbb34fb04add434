#!/usr/bin/env bash
# Where the 64 tiny layers' 12.5 us a layer goes now (main d112756: the
# warp-heads chunks of up to 64 positions, the release by the last warp):
# a trace of four steps from 480 in a build for 544 with bf16 caches, and
# the same for SmolLM2 and the 1B shape, each summarized here by bench/trace_summary.py and
# bench/waterfall.py (the traces stay on the GPU machine; what comes back
# is their summaries and the middle layer's waterfall). NOT YET RUN: pack
# first, from the repository root of main's checkout with its build:
#   scripts/pack_builds.sh .gpu/ab5.tar.xz new=
# and carry .gpu/ab5.tar.xz. SHAPES=CONFIG:NAME:LAYER,... traces other
# shapes (call2.sh), and PACK=1 packs what it writes into $OUT/traced.tar.xz
# (a call brings back only so many files).
set -uo pipefail
mkdir -p $OUT
tar -C .gpu -xJf .gpu/ab5.tar.xz
B=.gpu/builds/new W=/tmp/ws; mkdir -p $W
R=$OUT; [ -n "${PACK:-}" ] && R=/tmp/traced && mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
SHAPES=${SHAPES:-layer-cost-64x256:t:32,smollm2-135m-shaped:s:15,llama-3.2-1b-shaped:l:8}
for s in ${SHAPES//,/ }; do
  IFS=: read cfg m layer <<< "$s"
  python3 scripts/fused_module.py bench/configs/$cfg.json -o $W/$m.mlir
  $B/compiler/tools/mkc compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
    --max-context=544 -o $W/$m.mk 2>&1 | tail -1
  $B/compiler/tools/mkc inspect $W/$m.mk --format=json > $W/$m.json
  $B/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 7 -n 5 \
    --trace $W/$m-trace.json > /dev/null
  python3 bench/trace_summary.py $W/$m-trace.json $W/$m.json --skip-steps 1 > $R/$m-summary.txt 2>&1
  python3 bench/waterfall.py $W/$m-trace.json $W/$m.json --layer $layer --png $R/$m-waterfall.png --json $R/$m-waterfall.json \
    > $R/$m-waterfall.txt 2>&1
  tail -30 $R/$m-summary.txt
done
[ -n "${PACK:-}" ] && tar -C /tmp -cJf $OUT/traced.tar.xz traced
