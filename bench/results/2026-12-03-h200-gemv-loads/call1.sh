#!/usr/bin/env bash
# Loads in flight per gemv lane (--gemv-loads) 8 (default), 12 and 16 on the
# 1B shape built for 544 (bf16 caches), at 1 and 480, alternating, two
# rounds; logits compared at 470.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/h2 ] || tar -C .gpu -xJf .gpu/h2.tar.xz
N=.gpu/h2
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
for n in 8 12 16; do echo $n; done | xargs -P 3 -I{} bash -c 'timeout 100 '$N'/compiler/tools/mkc compile '$W'/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --gemv-loads={} -o '$W'/l{}.mk 2>&1 | grep -E "error|registers"'
for n in 8 12 16; do timeout 30 $N/runtime/mkrun/mkrun $W/l$n.mk --device gpu --start-position 470 --tokens 1,7,42,3 --logits $W/g$n.npy > /dev/null || echo "FAILED $n"; done
cmp $W/g8.npy $W/g12.npy && cmp $W/g8.npy $W/g16.npy && echo "logits identical at 8, 12, 16"
run() { echo "loads $1 position $2: $(timeout 30 $N/runtime/mkrun/mkrun $W/l$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do for p in 1 480; do for n in 8 12 16; do run $n $p; done; done; done
