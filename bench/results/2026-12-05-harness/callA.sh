#!/usr/bin/env bash
# The harness on main c784f3a (tensor-core chunks, evict-first weights and the merges of 64 dimensions the defaults): the 1B,
# Qwen3-0.6B and SmolLM2 shapes with HF eager and one CUDA graph on the 1B
# and the builds for 544, then the 64-layer tiny shape (the fixed cost per
# layer). Parts land in $OUT/run, as callB.sh's; `harness.py --report`
# merges them.
set -uo pipefail
mkdir -p $OUT
[ -d .gpu/h4 ] || tar -C .gpu -xJf .gpu/h4.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 420 python3 bench/harness.py --out $OUT/run --build .gpu/h4 \
  --shapes llama-3.2-1b,qwen3-0.6b,smollm2-135m --baselines eager,graph \
  --baselines-shapes llama-3.2-1b --also-small-context > $OUT/harness-a.txt 2>&1
echo "harness a rc=$?"; tail -3 $OUT/harness-a.txt
left=$((580 - SECONDS)); echo "layer-cost with ${left} s"
timeout $left python3 bench/harness.py --out $OUT/run --build .gpu/h4 --no-trace \
  --shapes layer-cost-64x256 --baselines none > $OUT/harness-a2.txt 2>&1
echo "harness a2 rc=$?"; tail -3 $OUT/harness-a2.txt
# At most 8 files come back: the merged report (README.md, decode.json, the
# pictures) and the logs, not the parts it was merged from.
mkdir -p /tmp/parts && mv $OUT/run/parts /tmp/parts/ 2>/dev/null; ls $OUT/run
