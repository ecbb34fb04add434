#!/usr/bin/env bash
# The harness of call 3 found the builds for 544 positions slower than the
# day's earlier harness (1B 0.914 / 0.935 against 0.902 / 0.922; Qwen3-0.6B
# 0.869 / 0.913 against 0.834 / 0.884), though their spans did not change.
# One round, alternating: old (b844481), u32 (4eee648: records of 352 bytes
# a queue entry) and new2 (the same with numChunks and chunksPerRound as
# 32-bit counts: entries of 336 bytes, as old); then the harness on new2
# with what is left of the call's 10 minutes.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in old u32 new2; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
python3 scripts/fused_module.py bench/configs/qwen3-0.6b-shaped.json -o $W/q.mlir
for b in old u32 new2; do echo "1b $b l544 544"; echo "q $b q544 544"; echo "1b $b l32k 32800"; done |
  xargs -P 9 -L 1 bash -c 'timeout 150 .gpu/$1/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --max-context=$3 -o '$W'/$2-$1.mk 2>&1 | grep -E "error"'
timeout 40 .gpu/new2/runtime/mkrun/mkrun $W/l32k-new2.mk --device gpu --start-position 510 --tokens 1,7,42,3 --logits $W/a.npy > /dev/null
timeout 40 .gpu/u32/runtime/mkrun/mkrun $W/l32k-u32.mk --device gpu --start-position 510 --tokens 1,7,42,3 --logits $W/b.npy > /dev/null
cmp $W/a.npy $W/b.npy && echo "l32k at 510-513: new2 and u32 identical"
run() { echo "$1 $2 position $3: $(timeout 40 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu --start-position $3 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for m in l544 q544; do for p in 1 480; do for b in old u32 new2; do run $m $b $p; done; done; done
for p in 1 512; do for b in old u32 new2; do run l32k $b $p; done; done
rm -f $W/*.mk
left=$((580 - SECONDS)); echo "harness with ${left} s"
timeout $left python3 bench/harness.py --out $OUT/run --build .gpu/new2 --shapes llama-3.2-1b,qwen3-0.6b,smollm2-135m --baselines eager,graph --baselines-shapes llama-3.2-1b --also-small-context > $OUT/harness-stdout.txt 2>&1; echo "harness rc=$?"
tail -3 $OUT/harness-stdout.txt
cd $OUT && tar -czf harness.tgz run && rm -rf run
