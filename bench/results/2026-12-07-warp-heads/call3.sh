#!/usr/bin/env bash
# Call 3: which half of call 2's patch slowed the tiny layers (+1.8%) and
# SmolLM2 (+0.8 to +1.7%) while the 1B shape (-2.3 to -3.8%) and
# Qwen3-0.6B (-2.3 to -5.1%) gained? Builds (scripts/pack_builds.sh
# .gpu/ab3.tar.xz head= tpl=two-positions-a-lane.patch
# freq=frequency-once.patch both=...+...): the commit; two positions a lane
# alone; the rotary frequency loaded once alone (warpHeadsChunkRow's own,
# none before the branch); both (call 2's patch).
# Predicted: tpl and both as call 2 on the 1B shape and Qwen3-0.6B; on the
# tiny layers and SmolLM2, whose chunks of 16 take kSlots = 1, tpl within
# code generation's noise (+-2%) of the commit, freq -0 to -1% (one L2
# round trip a thread fewer before the wait).
set -uo pipefail
mkdir -p $OUT
tar -C .gpu -xJf .gpu/ab3.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B=.gpu/builds C=bench/configs
python3 bench/ab_builds.py --builds head=$B/head tpl=$B/tpl freq=$B/freq both=$B/both \
  --shapes t=$C/layer-cost-64x256.json,s=$C/smollm2-135m-shaped.json \
           l=$C/llama-3.2-1b-shaped.json,q=$C/qwen3-0.6b-shaped.json \
  --positions 480,40 --rounds 2 --out $OUT/ab 2>&1 | tee $OUT/log.txt
rm -f $OUT/ab/*.mk $OUT/ab/*.npy $OUT/ab/*.mlir $OUT/ab/steps.csv
