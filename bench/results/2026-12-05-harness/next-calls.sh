#!/usr/bin/env bash
# The README's table on the H200, next time: callA.sh of this folder ran
# past its 420 s on an H100 before SmolLM2 started, so its shapes go in two
# calls. Pack main's build as .gpu/h9 (compiler/tools/mkc, runtime/mkrun/mkrun,
# tests/gpu's checks), then run PART=1 and PART=2 as two calls (each
# writes its own report under $OUT/run), then `bench/readme_table.py` over
# the two for the README.
#   PART=1  the 1B shape with HF eager and one CUDA graph, its prompts,
#           batches and waterfall
#   PART=2  Qwen3-0.6B, SmolLM2 and the 64 tiny layers, no baselines
set -uo pipefail
mkdir -p $OUT
[ -d .gpu/h9 ] || tar -C .gpu -xJf .gpu/h9.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "${PART:-1}" = 1 ]; then
  timeout 570 python3 bench/harness.py --out $OUT/run --build .gpu/h9 \
    --shapes llama-3.2-1b --baselines eager,graph --also-small-context > $OUT/harness-1.txt 2>&1
  echo "harness part 1 rc=$?"; tail -3 $OUT/harness-1.txt
else
  timeout 400 python3 bench/harness.py --out $OUT/run --build .gpu/h9 \
    --shapes qwen3-0.6b,smollm2-135m --baselines none --also-small-context > $OUT/harness-2.txt 2>&1
  echo "harness part 2 rc=$?"; tail -3 $OUT/harness-2.txt
  left=$((580 - SECONDS))
  timeout $left python3 bench/harness.py --out $OUT/run --build .gpu/h9 --no-trace \
    --shapes layer-cost-64x256 --baselines none > $OUT/harness-3.txt 2>&1
  echo "harness part 3 rc=$?"; tail -3 $OUT/harness-3.txt
fi
# What comes back: the report, its JSON and pictures, not the parts.
mkdir -p /tmp/parts && mv $OUT/run/parts /tmp/parts/ 2>/dev/null; ls $OUT/run
