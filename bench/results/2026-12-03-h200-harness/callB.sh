#!/usr/bin/env bash
# The harness on 0daf189: Qwen2.5-1.5B and Qwen3-1.7B (no baselines), then
# Llama-3.1-8B at 512 and 4096 with what is left of the call.
set -uo pipefail
mkdir -p $OUT
[ -d .gpu/h1 ] || tar -C .gpu -xJf .gpu/h1.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
timeout 300 python3 bench/harness.py --out $OUT/run --build .gpu/h1 --no-trace \
  --shapes qwen2.5-1.5b,qwen3-1.7b --baselines none > $OUT/harness-b.txt 2>&1
echo "harness b rc=$?"; tail -3 $OUT/harness-b.txt
left=$((585 - SECONDS)); echo "8B with ${left} s"
timeout $left python3 bench/harness.py --out $OUT/run --build .gpu/h1 --no-trace \
  --shapes llama-3.1-8b --baselines none > $OUT/harness-b2.txt 2>&1
echo "harness b2 rc=$?"; tail -3 $OUT/harness-b2.txt
