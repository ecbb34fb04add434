#!/usr/bin/env bash
# Call D, right after call C on the same machine (its /tmp/w/l.mk, the 1B
# shape built for 32800 by c3's mkc): the shorter prompts with c3, cuDNN's
# attention, HF SDPA and the dense matmul rate in the same run.
set -uo pipefail; mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/c3 ] || tar -C .gpu -xJf .gpu/c3.tar.xz; B=.gpu/c3
[ -f $W/l.mk ] || { python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
  $B/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 \
    -o $W/l.mk 2>&1 | grep -E "error|spill"; }
timeout 240 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/l.mk \
  --mkrun $B/runtime/mkrun/mkrun --lengths 512,2048,4096 --repeats 2 --attention cudnn --out $OUT 2>&1 | tail -8
