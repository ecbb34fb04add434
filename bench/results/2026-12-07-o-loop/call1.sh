#!/usr/bin/env bash
# Two changes to the warp-heads chunk (bench/NOTES.md, item 29), each
# against main in the same call: `oloop`, the loop of o over the chunk's
# positions with one path for every row and four positions unrolled; and
# `split`, the same plus the copies handed to the head warps through a
# named barrier after q is normed and rotated, not before the wait. Builds
# for 544 with bf16 caches, from 480 and 40 (ROUNDS at 480, default 1), on
# SHAPES (default the 64 tiny layers, SmolLM2 and Qwen3-0.6B). Pack first,
# from the repository root of main's checkout with its build:
#   scripts/pack_builds.sh .gpu/split.tar.xz head= oloop=oloop.patch split=split.patch
# (oloop.patch: the change to AttentionChunkWarpHeads.cuh as it landed)
# (split.patch: the whole change against main, o's loop included) and
# carry .gpu/split.tar.xz.
set -uo pipefail
mkdir -p $OUT
tar -C .gpu -xJf .gpu/split.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B=.gpu/builds C=bench/configs
SHAPES=${SHAPES:-t=$C/layer-cost-64x256.json,s=$C/smollm2-135m-shaped.json,q=$C/qwen3-0.6b-shaped.json}
timeout ${AB_S:-540} python3 bench/ab_builds.py --builds head=$B/head oloop=$B/oloop split=$B/split \
  --shapes $SHAPES --context 544 --positions 480,40 --rounds ${ROUNDS:-1} --out $OUT/ab 2>&1 |
  tee $OUT/log.txt
rm -f $OUT/ab/*.mk $OUT/ab/*.npy $OUT/ab/*.mlir $OUT/ab/steps.csv
