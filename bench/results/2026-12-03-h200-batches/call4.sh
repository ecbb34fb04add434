#!/usr/bin/env bash
# Batches with the gemvs on tensor cores (mma.m16n8k16, inputs as bf16 twice:
# value and rest), the warps splitting short tiles. Binaries: .gpu/f3. The
# batch checks again, then ms/step of batches of 2, 4 and 8 against one
# sequence alone, on the 1B and SmolLM2 shapes built for 544.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/f3 ] || tar -C .gpu -xJf .gpu/f3.tar.xz
N=.gpu/f3
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b smollm2-135m; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ echo "llama-3.2-1b s 544 --batch=2,4,8"; echo "smollm2-135m m 544 --batch=2,4,8"; } |
  xargs -P 2 -L 1 bash -c 'timeout 300 '$N'/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$2 $3 -o '$W'/$1.mk 2>&1 | grep -E "error|registers|note" | sed "s/^/$1: /"'
bc() { timeout 150 $N/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "batch-check $* rc=$?"; grep -E "ok|FAIL" $W/b.txt | head -8; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048
bc tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
bc tests/fixtures/mistral_ts17.onnx --batch=2
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $N/tests/gpu/mk-gpu-batch-check tests/fixtures/llama3_ts17.onnx --batch=8 > $W/cs.txt 2>&1
echo "compute-sanitizer memcheck batch-check 8 rc=$? $(grep -E 'ERROR SUMMARY' $W/cs.txt | head -1)"
P1=3
P480=$(python3 -c "print(','.join(str((i*7919)%1000+3) for i in range(480)))")
batch() { args=""; for i in $(seq 1 $2); do args="$args --prompt-tokens $3"; done
  echo "$1 batch of $2, prompt $(echo $3 | tr ',' ' ' | wc -w), -n $4: $(timeout 90 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu $args -n $4 2>&1 | grep -E '^batch|error' | sed 's/.*tokens in/in/')"; }
single() { echo "$1 alone, prompt $(echo $2 | tr ',' ' ' | wc -w), -n $3: $(timeout 90 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --prompt-tokens $2 -n $3 2>&1 | grep -E '^(prompt|generation)|error' | tr '\n' ' ')"; }
for r in 1; do
  for m in s m; do
    single $m $P1 64; for b in 2 4 8; do batch $m $b $P1 64; done
    for b in 4 8; do batch $m $b $P480 32; done
  done
done
