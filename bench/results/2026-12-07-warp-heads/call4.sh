#!/usr/bin/env bash
# Call 4: call 3 put the small shapes' +1.4 to +3% on two-positions-a-lane
# (their chunks of 16 take one slot, the same work). The patch rewrote
# the one-slot loops: the score as `t < count ? rowScore(t) : -inf` and
# o as a loop over slots with a bound of min(count, 32 (slot + 1)).
# two-positions-one-loop.patch (with frequency-once.patch folded in) keeps
# the commit's shape of both (an `if` around the score, one loop over the
# chunk's positions, the weight's slot picked by t, which the warp shares)
# and is what would land. Builds (scripts/pack_builds.sh .gpu/ab4.tar.xz
# head= both=two-positions-a-lane.patch+frequency-once.patch
# new=two-positions-one-loop.patch), then new's seven warp-heads kind
# checks.
# Predicted: new as the commit on the tiny layers and SmolLM2 (within
# +-0.5%, logits bit for bit), as both on the 1B shape and Qwen3-0.6B
# (-3% and -2 to -5%, the same logits as both's).
set -uo pipefail
mkdir -p $OUT
tar -C .gpu -xJf .gpu/ab4.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B=.gpu/builds C=bench/configs
python3 bench/ab_builds.py --builds head=$B/head both=$B/both new=$B/new \
  --shapes t=$C/layer-cost-64x256.json,s=$C/smollm2-135m-shaped.json \
           l=$C/llama-3.2-1b-shaped.json,q=$C/qwen3-0.6b-shaped.json \
  --positions 480,40 --rounds 2 --out $OUT/ab 2>&1 | tee $OUT/log.txt
rm -f $OUT/ab/*.mk $OUT/ab/*.npy $OUT/ab/*.mlir $OUT/ab/steps.csv
tar -xJf .gpu/checks4.tar.xz
mkdir -p build/compiler/tools build/runtime/mkrun
cp $B/new/compiler/tools/mkc build/compiler/tools/ && cp $B/head/runtime/mkrun/mkrun build/runtime/mkrun/
echo "new's warp-heads kind checks:" | tee -a $OUT/log.txt
PARALLEL=8 MATCH=warp-heads timeout 150 python3 scripts/gpu_tests.py 2>&1 | tee -a $OUT/log.txt
