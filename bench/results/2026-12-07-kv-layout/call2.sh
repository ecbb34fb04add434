#!/usr/bin/env bash
# NOT YET RUN: the same question inside the kernel, timing only. The
# staging ring of a long chunk reads the caches as if they were
# head-major (head-major-timing.patch: the same bytes and bounds, wrong
# values; the ptxas account of the 1B build for 32800 goes from 24 to 40 B
# spilled), against main, builds for 32800 with bf16 caches at 32700 (two
# rounds) and 4064. Pack first, from the repository root of main's
# checkout with its build:
#   scripts/pack_builds.sh .gpu/kvl.tar.xz head= hm=bench/results/2026-12-07-kv-layout/head-major-timing.patch
# and carry .gpu/kvl.tar.xz. Predicted (item 28): if call 1 finds
# position-major reads at 2.5-3.5 TB/s and head-major at 4.3-4.5, the 1B
# shape at 32700 1.275 -> ~1.05 ms, Qwen3-0.6B 2.35 -> ~1.7; at 4064 a
# few %. The logits differ from main's (the ring reads other rows): only
# the times count here.
set -uo pipefail
mkdir -p $OUT
tar -C .gpu -xJf .gpu/kvl.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B=.gpu/builds C=bench/configs
timeout 560 python3 bench/ab_builds.py --builds head=$B/head hm=$B/hm \
  --shapes l=$C/llama-3.2-1b-shaped.json,q=$C/qwen3-0.6b-shaped.json \
  --context 32800 --positions 32700,4064 --rounds 2 --out $OUT/ab 2>&1 | tee $OUT/log.txt
rm -f $OUT/ab/*.mk $OUT/ab/*.npy $OUT/ab/*.mlir $OUT/ab/steps.csv
