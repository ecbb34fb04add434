#!/usr/bin/env bash
# The harness on the landed kernel (.gpu/g3, call 3's): the 1B shape and
# SmolLM2-135M, mkc only (the baselines are in results/2026-12-03-h200-harness-2).
[ -d .gpu/g3 ] || tar -C .gpu -xJf .gpu/g3.tar.xz; mkdir -p $OUT
python3 bench/harness.py --out $OUT/run --shapes llama-3.2-1b,smollm2-135m --baselines none \
  --batches none --prompts none --also-small-context --no-long-check --build .gpu/g3 \
  --work /tmp/hw > $OUT/harness.txt 2>&1
