#!/usr/bin/env bash
# The ring with blocks of up to 128 rows whose keys share their reads of q
# (the form that landed): the chunk kind against its CPU reference, a
# fixture end to end, the sanitizers, the logits at position 32700 against
# the CPU executor, and ms/token old (before the ring) and new alternating.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in old new; do rm -rf .gpu/$b; tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/new
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for m in "--toy" "tests/fixtures/llama3_ts17.onnx" "tests/fixtures/qwen3_ts17.onnx --max-context=8192"; do
  timeout 90 $N/tests/gpu/mk-task-kind-check AttentionChunk $m > $W/k.txt 2>&1; echo "AttentionChunk [$m] rc=$? | $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; done
timeout 60 $N/tests/gpu/mk-gpu-check tests/fixtures/llama3_ts17.onnx --max-context=64 > $W/g.txt 2>&1; echo "mk-gpu-check llama3_ts17 rc=$? $(grep -c FAIL $W/g.txt) FAIL"
$N/compiler/tools/mkc compile tests/fixtures/llama3_ts17.onnx --emit=mk --max-context=32768 -o $W/l3.mk > /dev/null 2>&1
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $N/runtime/mkrun/mkrun $W/l3.mk --device gpu --start-position 20000 --prompt-tokens 1,2 -n 1 > $W/cs.txt 2>&1
  echo "$tool rc=$? | $(grep -E 'SUMMARY' $W/cs.txt | tail -1)"; done
run() { echo "$1 $2 position $3: $(timeout 40 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu --start-position $3 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for spec in llama-3.2-1b:32800:1,512,4096,32736 qwen3-0.6b:32800:1,32736 smollm2-135m:528:1,480; do
  IFS=: read shape ctx positions <<< "$spec"
  python3 scripts/fused_module.py bench/configs/$shape-shaped.json -o $W/$shape.mlir
  for b in new old; do timeout 90 .gpu/$b/compiler/tools/mkc compile $W/$shape.mlir --emit=mk --random-weights --max-context=$ctx -o $W/$shape-$b.mk 2>&1 | grep -E "error"; done
  P=$((ctx - 100))
  timeout 30 $N/runtime/mkrun/mkrun $W/$shape-new.mk --device gpu --start-position $P --tokens 1,7,42,3 --logits $W/g.npy > /dev/null && timeout 90 $N/runtime/mkrun/mkrun $W/$shape-new.mk --device cpu --start-position $P --tokens 1,7,42,3 --logits $W/c.npy > /dev/null && echo "$shape at $P: $(python3 scripts/compare_logits.py $W/g.npy $W/c.npy --rtol 1e-3)"
  for p in ${positions//,/ }; do run $shape old $p; run $shape new $p; done
  rm -f $W/$shape-*.mk
done
echo done
