#!/usr/bin/env bash
# Three folders of stripped binaries side by side: old (1d214b4, before the
# attention ring), mid (4e40e69, the ring as landed: register path under
# 256 positions, the merge's single round) and new (mid + empty chunks
# passed over). 1. the kinds against their CPU references (new); 2. every
# fixture's logits and greedy tokens through each build, bit for bit (old
# vs mid, mid vs new); GPU against the CPU executor and the sanitizers on
# builds whose chunks are mostly empty; 3. ms/token, builds alternating.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in old mid new; do rm -rf .gpu/$b; tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/new
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for m in "AttentionChunk --toy" "AttentionChunk tests/fixtures/llama3_ts17.onnx" \
         "AttentionChunk tests/fixtures/llama3_ts17.onnx --max-context=4096 --num-sms=8 --longest-attention-chunk=1024" \
         "AttentionMerge tests/fixtures/qwen3_ts17.onnx --max-context=512"; do
  timeout 90 $N/tests/gpu/mk-task-kind-check $m > $W/k.txt 2>&1; echo "[$m] rc=$? | $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; done
for b in old mid new; do mkdir -p $W/fx-$b; for m in tests/fixtures/*.onnx; do
  echo ".gpu/$b/compiler/tools/mkc compile $m --emit=mk -o $W/fx-$b/$(basename $m .onnx).mk --max-context=64"; done; done |
  xargs -P 14 -I{} bash -c "{} > /dev/null 2>&1 || echo 'FAILED: {}'"
for b in old mid new; do timeout 200 scripts/logit_identity.sh record .gpu/$b $W/fx-$b --device gpu > /dev/null; echo "record $b rc=$?"; done
scripts/logit_identity.sh compare $W/fx-old $W/fx-mid; echo "old vs mid rc=$?"
scripts/logit_identity.sh compare $W/fx-mid $W/fx-new; echo "mid vs new rc=$?"
for m in "tests/fixtures/llama3_ts17.onnx --max-context=64" "tests/fixtures/qwen3_ts17.onnx --max-context=4096"; do
  timeout 120 $N/tests/gpu/mk-gpu-check $m > $W/g.txt 2>&1; echo "mk-gpu-check [$m] rc=$? $(grep -c FAIL $W/g.txt) FAIL | $(tail -1 $W/g.txt)"; done
$N/compiler/tools/mkc compile tests/fixtures/llama3_ts17.onnx --emit=mk --max-context=4096 -o $W/l3.mk > /dev/null 2>&1
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $N/runtime/mkrun/mkrun $W/l3.mk --device gpu --start-position 40 --prompt-tokens 1,2 -n 3 > $W/cs.txt 2>&1
  echo "$tool rc=$? | $(grep -E 'SUMMARY' $W/cs.txt | tail -1)"; done
run() { echo "$1 $2 position $3: $(timeout 40 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu --start-position $3 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for s in llama-3.2-1b smollm2-135m; do python3 scripts/fused_module.py bench/configs/$s-shaped.json -o $W/$s.mlir; done
{ for b in mid new; do echo "llama-3.2-1b $b 32800 l32k"; echo "llama-3.2-1b $b 528 l528"; done
  for b in old mid new; do echo "smollm2-135m $b 528 s528"; done; } |
  xargs -P 8 -L 1 bash -c 'timeout 120 .gpu/$1/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --max-context=$2 -o '$W'/$3-$1.mk 2>&1 | grep -E "error|spilled"'
for b in mid new; do timeout 30 .gpu/$b/runtime/mkrun/mkrun $W/l32k-$b.mk --device gpu --start-position 32700 --tokens 1,7,42,3 --logits $W/g32k-$b.npy > /dev/null
  timeout 30 .gpu/$b/runtime/mkrun/mkrun $W/l32k-$b.mk --device gpu --tokens 1,7,42,3,99,5,11,64 --logits $W/g0-$b.npy > /dev/null; done
cmp $W/g32k-mid.npy $W/g32k-new.npy && cmp $W/g0-mid.npy $W/g0-new.npy && echo "1B 32800 build, logits at 0-7 and 32700-32703: mid and new identical"
timeout 90 $N/runtime/mkrun/mkrun $W/l32k-new.mk --device cpu --start-position 32700 --tokens 1,7,42,3 --logits $W/c.npy > /dev/null && echo "1B at 32700 GPU vs CPU: $(python3 scripts/compare_logits.py $W/g32k-new.npy $W/c.npy --rtol 1e-3)"
for r in 1 2; do
  for p in 1 512 4096 32736; do run l32k mid $p; run l32k new $p; done
  for p in 1 480; do run l528 mid $p; run l528 new $p; done
  for p in 1 480; do run s528 old $p; run s528 mid $p; run s528 new $p; done
done
echo done
