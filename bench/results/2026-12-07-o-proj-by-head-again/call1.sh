#!/usr/bin/env bash
# o_proj by head (`--o-proj-by-head=on`) again on the shapes whose tiles
# pass 32 KiB (the 1B shape, Qwen2.5-1.5B), which the default leaves on
# merge tasks. On 2026-12-06 it cost the 1B shape +2.5%: its tiles start
# streaming only when the SM's chunk ends. The chunks of those shapes are
# now on the warp-heads path (the 1B shape's 48 positions since
# two-positions-one-loop, ~1.5 us a layer less): does by head win now?
# Predicted: the 1B shape -1 to +1%, Qwen2.5-1.5B -1 to -3% (its merge
# phase and hop gone; tiles of 36 KiB). Build: main with
# two-positions-one-loop.patch (.gpu/ab5.tar.xz, mkc and mkrun).
set -uo pipefail
mkdir -p $OUT
tar -C .gpu -xJf .gpu/ab5.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B=.gpu/builds C=bench/configs
python3 bench/ab_builds.py --builds merge=$B/new byhead=$B/new --build-flags "byhead=--o-proj-by-head=on" \
  --shapes l=$C/llama-3.2-1b-shaped.json,w=$C/qwen2.5-1.5b-shaped.json \
  --positions 480,40 --rounds 2 --out $OUT/ab 2>&1 | tee $OUT/log.txt
rm -f $OUT/ab/*.mk $OUT/ab/*.npy $OUT/ab/*.mlir $OUT/ab/steps.csv
