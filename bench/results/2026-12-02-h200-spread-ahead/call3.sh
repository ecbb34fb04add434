#!/usr/bin/env bash
# The harness (3 shapes, baselines for the 1B shape), as bench/NOTES.md
# runs it, on the binaries in .gpu/new (here 4eee648); its report is
# call3-harness.md, its output call3.log.
set -uo pipefail
mkdir -p $OUT
[ -d .gpu/new ] || tar -C .gpu -xJf .gpu/new.tar.xz
timeout 560 python3 bench/harness.py --out $OUT/run --build .gpu/new --shapes llama-3.2-1b,qwen3-0.6b,smollm2-135m --baselines eager,graph --baselines-shapes llama-3.2-1b --also-small-context > $OUT/harness-stdout.txt 2>&1; echo "harness rc=$?"
tail -5 $OUT/harness-stdout.txt
cd $OUT && tar -czf harness.tgz run && rm -rf run
