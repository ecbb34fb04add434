#!/usr/bin/env bash
# Call 1 found the pass-over (new) slower everywhere, also where no chunk is
# empty. Two other forms against mid (4e40e69): v3, an empty chunk stores
# its partials and returns without waiting for its inputs (no change to the
# interpreter's loop); v4, v3 with the chunk's span and the merge's chunk
# count computed in 32 bits (a 64-bit division is a long subroutine on the
# device). Fixtures bit for bit (mid vs v4), the chunk kind and mk-gpu-check
# (v4), then ms/token, builds alternating.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in mid v3 v4; do rm -rf .gpu/$b; tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/v4
exec > >(tee $OUT/log.txt) 2>&1
for m in "AttentionChunk --toy" "AttentionChunk tests/fixtures/llama3_ts17.onnx" "AttentionMerge tests/fixtures/qwen3_ts17.onnx --max-context=512"; do
  timeout 90 $N/tests/gpu/mk-task-kind-check $m > $W/k.txt 2>&1; echo "[$m] rc=$? | $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; done
for b in mid v4; do mkdir -p $W/fx-$b; for m in tests/fixtures/*.onnx; do
  echo ".gpu/$b/compiler/tools/mkc compile $m --emit=mk -o $W/fx-$b/$(basename $m .onnx).mk --max-context=64"; done; done |
  xargs -P 14 -I{} bash -c "{} > /dev/null 2>&1 || echo 'FAILED: {}'"
for b in mid v4; do timeout 200 scripts/logit_identity.sh record .gpu/$b $W/fx-$b --device gpu > /dev/null; echo "record $b rc=$?"; done
scripts/logit_identity.sh compare $W/fx-mid $W/fx-v4 | grep -v identical; echo "mid vs v4 rc=${PIPESTATUS[0]}"
for b in mid v4; do timeout 120 .gpu/$b/tests/gpu/mk-gpu-check tests/fixtures/llama3_ts17.onnx --max-context=64 > $W/g.txt 2>&1; echo "mk-gpu-check $b rc=$?"; grep -E "FAIL" $W/g.txt | head -5; done
run() { echo "$1 $2 position $3: $(timeout 40 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu --start-position $3 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for s in llama-3.2-1b smollm2-135m; do python3 scripts/fused_module.py bench/configs/$s-shaped.json -o $W/$s.mlir; done
{ for b in mid v3 v4; do echo "llama-3.2-1b $b 32800 l32k"; echo "llama-3.2-1b $b 528 l528"; echo "smollm2-135m $b 528 s528"; done; } |
  xargs -P 9 -L 1 bash -c 'timeout 150 .gpu/$1/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --max-context=$2 -o '$W'/$3-$1.mk 2>&1 | grep -E "error"'
for b in mid v4; do timeout 30 .gpu/$b/runtime/mkrun/mkrun $W/l32k-$b.mk --device gpu --start-position 32700 --tokens 1,7,42,3 --logits $W/g32k-$b.npy > /dev/null
  timeout 30 .gpu/$b/runtime/mkrun/mkrun $W/l32k-$b.mk --device gpu --tokens 1,7,42,3,99,5,11,64 --logits $W/g0-$b.npy > /dev/null; done
cmp $W/g32k-mid.npy $W/g32k-v4.npy && cmp $W/g0-mid.npy $W/g0-v4.npy && echo "1B 32800 build, logits at 0-7 and 32700-32703: mid and v4 identical"
for r in 1 2; do
  for p in 1 512 4096 32736; do for b in mid v3 v4; do run l32k $b $p; done; done
  for p in 1 480; do for b in mid v3 v4; do run l528 $b $p; done; done
  for p in 1 480; do for b in mid v3 v4; do run s528 $b $p; done; done
done
echo done
