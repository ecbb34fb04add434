#!/usr/bin/env bash
# The H200 harness on main 54d3619 (builds packed by
# `scripts/pack_builds.sh .gpu/h200a.tar.xz new=`, carried), a part a call:
#   PART=1  the 1B shape with HF eager and one CUDA graph, its prompts,
#           batches and waterfall
#   PART=2  Qwen3-0.6B, SmolLM2 and the 64 tiny layers, no baselines
# What comes back is run.tar.xz (the parts and the report).
set -uo pipefail
mkdir -p $OUT
[ -d .gpu/builds/new ] || tar -C .gpu -xJf .gpu/h200a.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
R=/tmp/run; mkdir -p $R
if [ "${PART:-1}" = 1 ]; then
  timeout 540 python3 bench/harness.py --out $R --build .gpu/builds/new \
    --shapes llama-3.2-1b --baselines eager,graph --also-small-context > $OUT/harness-1.txt 2>&1
  echo "harness part 1 rc=$?"; tail -5 $OUT/harness-1.txt
else
  timeout 380 python3 bench/harness.py --out $R --build .gpu/builds/new \
    --shapes qwen3-0.6b,smollm2-135m --baselines none --also-small-context > $OUT/harness-2.txt 2>&1
  echo "harness part 2 rc=$?"; tail -3 $OUT/harness-2.txt
  left=$((${BUDGET:-520} - SECONDS))
  timeout $left python3 bench/harness.py --out $R --build .gpu/builds/new --no-trace \
    --shapes layer-cost-64x256 --baselines none > $OUT/harness-3.txt 2>&1
  echo "harness part 3 rc=$?"; tail -3 $OUT/harness-3.txt
fi
tar -C /tmp -cJf $OUT/run.tar.xz run
