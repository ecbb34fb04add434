#!/usr/bin/env bash
# The harness on Llama-3.1-8B (512 and 4096), the build of call 1.
set -uo pipefail
mkdir -p $OUT
[ -d .gpu/h2 ] || tar -C .gpu -xJf .gpu/h2.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
timeout 570 python3 bench/harness.py --out $OUT/run --build .gpu/h2 --no-trace \
  --shapes llama-3.1-8b --baselines none > $OUT/harness.txt 2>&1
echo "harness rc=$?"; tail -3 $OUT/harness.txt
cd $OUT && tar -czf run.tgz run && rm -rf run
