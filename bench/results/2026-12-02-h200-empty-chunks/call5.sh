#!/usr/bin/env bash
# The waterfall at 514 in the harness (results/2026-12-02-h200-decode) had
# the chunks of the build for 32800 at ~3.5 us each for spans of 32
# positions: the ring's cost for a short span. new2: a chunk of a build
# with the ring takes it only where its span fills a block, else the
# register path (two instantiations), the merge's batch 11. Against sched
# (4e40e69's kernel, 3d4a2b5's scheduler): logits bit for bit at 0-7
# (register path now, ring before) and 32700 (ring both), GPU vs CPU, the
# chunk kind on ring builds, mk-gpu-check and memcheck on a ring build at
# short positions; then ms/token alternating.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in sched new2; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/new2
exec > >(tee $OUT/log.txt) 2>&1
for m in "AttentionChunk tests/fixtures/llama3_ts17.onnx --max-context=4096 --num-sms=8 --longest-attention-chunk=1024" \
         "AttentionChunk tests/fixtures/qwen3_ts17.onnx --max-context=8192" "AttentionMerge tests/fixtures/qwen3_ts17.onnx --max-context=512"; do
  timeout 90 $N/tests/gpu/mk-task-kind-check $m > $W/k.txt 2>&1; echo "[$m] rc=$? | $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; done
timeout 150 $N/tests/gpu/mk-gpu-check tests/fixtures/llama3_ts17.onnx --max-context=32768 > $W/g.txt 2>&1; echo "mk-gpu-check llama3_ts17 32768 rc=$?"; grep FAIL $W/g.txt | head -5
$N/compiler/tools/mkc compile tests/fixtures/llama3_ts17.onnx --emit=mk --max-context=32768 -o $W/l3.mk > /dev/null 2>&1
for P in 40 20000; do timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $N/runtime/mkrun/mkrun $W/l3.mk --device gpu --start-position $P --prompt-tokens 1,2 -n 3 > $W/cs.txt 2>&1
  echo "memcheck at $P rc=$? | $(grep -E 'SUMMARY' $W/cs.txt | tail -1)"; done
for s in llama-3.2-1b qwen3-0.6b smollm2-135m; do python3 scripts/fused_module.py bench/configs/$s-shaped.json -o $W/$s.mlir; done
{ for b in sched new2; do echo "llama-3.2-1b $b l32k"; echo "qwen3-0.6b $b q32k"; echo "smollm2-135m $b s32k"; done; } |
  xargs -P 6 -L 1 bash -c 'timeout 150 .gpu/$1/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --max-context=32800 -o '$W'/$2-$1.mk 2>&1 | grep -E "error|spilled"'
for m in l32k q32k; do for b in sched new2; do
  timeout 30 .gpu/$b/runtime/mkrun/mkrun $W/$m-$b.mk --device gpu --start-position 32700 --tokens 1,7,42,3 --logits $W/g32k-$m-$b.npy > /dev/null
  timeout 30 .gpu/$b/runtime/mkrun/mkrun $W/$m-$b.mk --device gpu --tokens 1,7,42,3,99,5,11,64 --logits $W/g0-$m-$b.npy > /dev/null; done
  cmp $W/g0-$m-sched.npy $W/g0-$m-new2.npy && echo "$m: logits at 0-7 identical"; cmp $W/g32k-$m-sched.npy $W/g32k-$m-new2.npy && echo "$m: logits at 32700-32703 identical"; done
timeout 100 $N/runtime/mkrun/mkrun $W/l32k-new2.mk --device cpu --tokens 1,7,42,3,99,5,11,64 --logits $W/c.npy > /dev/null && echo "1B at 0-7 GPU vs CPU: $(python3 scripts/compare_logits.py $W/g0-l32k-new2.npy $W/c.npy --rtol 1e-3)"
run() { echo "$1 $2 position $3: $(timeout 40 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu --start-position $3 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for p in 1 512 4096 32736; do for b in sched new2; do run l32k $b $p; done; done
  for p in 1 512; do for b in sched new2; do run q32k $b $p; run s32k $b $p; done; done
done
echo done
