#!/usr/bin/env bash
# Right after call 5, on the same machine (its 1B .mk still in /tmp/w):
# the same binaries (.gpu/n5) at 512, 2048 and 4096 against HF SDPA and the
# dense matmul rate in the same run.
set -uo pipefail
mkdir -p $OUT
tar -C .gpu -xJf .gpu/n5.tar.xz
timeout 110 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk /tmp/w/1b-n5.mk --mkrun .gpu/n5/runtime/mkrun/mkrun --lengths 512,2048,4096 --repeats 3 --out $OUT/n5-hf
