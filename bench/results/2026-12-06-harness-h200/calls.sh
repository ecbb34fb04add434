#!/usr/bin/env bash
# The commands of this folder (../2026-12-06-harness-h100/calls.sh with
# .gpu/h9: main at 38e1983, whose kernels are 9dacc72's), on an H200 only
# (on another GPU it runs nothing): PART=1 writes callA, PART=2 callB.
#   PART=1  the 1B shape with HF eager and one CUDA graph, its prompts,
#           batches and waterfall
#   PART=2  Qwen3-0.6B, SmolLM2 and the 64 tiny layers, no baselines
set -uo pipefail
mkdir -p $OUT
[ -d .gpu/h9 ] || tar -C .gpu -xJf .gpu/h9.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
if [ "${PART:-1}" = 1 ]; then
  timeout 570 python3 bench/harness.py --out $OUT/run --build .gpu/h9 \
    --shapes llama-3.2-1b --baselines eager,graph --also-small-context > $OUT/harness-1.txt 2>&1
  echo "harness part 1 rc=$?"; tail -3 $OUT/harness-1.txt
else
  timeout 400 python3 bench/harness.py --out $OUT/run --build .gpu/h9 \
    --shapes qwen3-0.6b,smollm2-135m --baselines none --also-small-context > $OUT/harness-2.txt 2>&1
  echo "harness part 2 rc=$?"; tail -3 $OUT/harness-2.txt
  left=$((470 - SECONDS))
  timeout $left python3 bench/harness.py --out $OUT/run --build .gpu/h9 --no-trace \
    --shapes layer-cost-64x256 --baselines none > $OUT/harness-3.txt 2>&1
  echo "harness part 3 rc=$?"; tail -3 $OUT/harness-3.txt
fi
# What comes back: the report, its JSON and pictures, not the parts.
mkdir -p /tmp/parts && mv $OUT/run/parts /tmp/parts/ 2>/dev/null; ls $OUT/run
