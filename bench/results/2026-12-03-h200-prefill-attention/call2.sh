#!/usr/bin/env bash
# Call 1's timing and shape checks, which it never reached: its bare `wait`
# also waited for the log's tee (a process substitution) and hung. Time to
# the first token on the 1B shape built for 32800 (bf16 KV), new (.gpu/n2,
# with the profile) and landed (.gpu/p3), one launch each; then the
# SmolLM2 and 1B shape prefill checks of the new binaries.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for p in n2 p3; do [ -d .gpu/$p ] || tar -C .gpu -xJf .gpu/$p.tar.xz; done
N=.gpu/n2; O=.gpu/p3
exec > >(tee $OUT/log.txt) 2>&1
[ -f $W/1b.mlir ] || python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
[ -f $W/smol.mlir ] || python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/smol.mlir
pids=()
for v in new old; do
  T=$N; [ $v = old ] && T=$O
  [ -f $W/1b-$v.mk ] || { ( timeout 150 $T/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 -o $W/1b-$v.mk 2>&1 | grep -E "error|prompt kernels" ) & pids+=($!); }
done
[ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"
date
timeout 150 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/1b-new.mk --mkrun $N/runtime/mkrun/mkrun --lengths 512,4096,32000 --repeats 1 --no-hf --profile --out $OUT/new
date
timeout 100 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json --mk $W/1b-old.mk --mkrun $O/runtime/mkrun/mkrun --lengths 512,4096,32000 --repeats 1 --no-hf --out $OUT/old
date
check() { timeout 150 $N/tests/gpu/mk-gpu-prefill-check "$@" 2>&1 | grep -E "ok|FAIL|layer by layer in|rror"; echo "prefill-check $* rc=${PIPESTATUS[0]}"; }
check $W/smol.mlir --max-context=700 --prompt=650
check $W/1b.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16
