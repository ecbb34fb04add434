#!/usr/bin/env bash
# The commands of this folder (next-calls.sh of ../2026-12-05-harness with
# .gpu/m1, main at 9dacc72): PART=1 wrote callA, PART=2 callB.
#   PART=1  the 1B shape with HF eager and one CUDA graph, its prompts,
#           batches and waterfall
#   PART=2  Qwen3-0.6B, SmolLM2 and the 64 tiny layers, no baselines
set -uo pipefail
mkdir -p $OUT
[ -d .gpu/m1 ] || tar -C .gpu -xJf .gpu/m1.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "${PART:-1}" = 1 ]; then
  timeout 570 python3 bench/harness.py --out $OUT/run --build .gpu/m1 \
    --shapes llama-3.2-1b --baselines eager,graph --also-small-context > $OUT/harness-1.txt 2>&1
  echo "harness part 1 rc=$?"; tail -3 $OUT/harness-1.txt
else
  timeout 400 python3 bench/harness.py --out $OUT/run --build .gpu/m1 \
    --shapes qwen3-0.6b,smollm2-135m --baselines none --also-small-context > $OUT/harness-2.txt 2>&1
  echo "harness part 2 rc=$?"; tail -3 $OUT/harness-2.txt
  left=$((470 - SECONDS))
  timeout $left python3 bench/harness.py --out $OUT/run --build .gpu/m1 --no-trace \
    --shapes layer-cost-64x256 --baselines none > $OUT/harness-3.txt 2>&1
  echo "harness part 3 rc=$?"; tail -3 $OUT/harness-3.txt
fi
# What comes back: the report, its JSON and pictures, not the parts.
mkdir -p /tmp/parts && mv $OUT/run/parts /tmp/parts/ 2>/dev/null; ls $OUT/run
