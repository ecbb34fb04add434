#!/usr/bin/env bash
# Batches on the GPU (a kernel of B rows a step, row r sequence r, the
# batch's kernel in ROWKERNELS), the attention chunks sized evenly (a build
# for 32800: 16 chunks of 2064) and --gemv-double-buffer. Binaries:
# .gpu/f1. Correctness first (batches against each sequence alone on the
# CPU executor and the decode kernel; decode fixtures against the CPU after
# the ABI change; memcheck on a batch), then ms/token and ms/step.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/f1 ] || tar -C .gpu -xJf .gpu/f1.tar.xz
N=.gpu/f1
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b smollm2-135m qwen3-0.6b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ echo "llama-3.2-1b l 32800"; echo "llama-3.2-1b l2048 32800 --longest-attention-chunk=2048";
  echo "qwen3-0.6b q 32800"; echo "qwen3-0.6b q2048 32800 --longest-attention-chunk=2048";
  echo "llama-3.2-1b s 544 --batch=2,4,8"; echo "llama-3.2-1b sd 544 --gemv-double-buffer";
  echo "smollm2-135m m 544 --batch=4,8"; echo "smollm2-135m md 544 --gemv-double-buffer"; } |
  xargs -P 8 -L 1 bash -c 'timeout 300 '$N'/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$2 $3 -o '$W'/$1.mk 2>&1 | grep -E "error|registers|note" | sed "s/^/$1: /"'
bc() { timeout 150 $N/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "batch-check $* rc=$?"; cat $W/b.txt | grep -v "^$" | head -12; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
bc tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048
gc() { timeout 150 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL; $(tail -1 $W/g.txt)"; grep FAIL $W/g.txt | head -3; }
gc tests/fixtures/llama3_ts17.onnx --max-context=64
gc tests/fixtures/llama3_ts17.onnx --max-context=3000
gc tests/fixtures/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
kc() { timeout 120 $N/tests/gpu/mk-task-kind-check $@ > $W/k.txt 2>&1; echo "kind-check $* rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
kc Gemv $W/qwen3-0.6b.mlir --gemv-double-buffer --sample=4
kc Gemv tests/fixtures/qwen2_dynamo18.onnx
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $N/tests/gpu/mk-gpu-batch-check tests/fixtures/llama3_ts17.onnx --batch=4 > $W/cs.txt 2>&1
echo "compute-sanitizer memcheck batch-check rc=$? $(grep -E 'ERROR SUMMARY' $W/cs.txt | head -1)"
lg() { timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 --tokens 1,7,42,3 --logits $2 > /dev/null || echo "FAILED $1"; }
lg sd $W/a.npy 470; lg s $W/b.npy 470; python3 -c "import numpy as n;a=n.load('$W/a.npy');b=n.load('$W/b.npy');print('double buffer vs default at 470: max rel %.2e argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))"
lg l $W/a.npy 32760; lg l2048 $W/b.npy 32760; python3 -c "import numpy as n;a=n.load('$W/a.npy');b=n.load('$W/b.npy');print('1B chunks of 2064 vs 1936 at 32760: max rel %.2e argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))"
run() { echo "$1 position $2: $(timeout 90 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 31 2>&1 | grep -E '^generation|error')"; }
P1=$(python3 -c "print(','.join(str((i*7919)%1000+3) for i in range(1)))")
P480=$(python3 -c "print(','.join(str((i*7919)%1000+3) for i in range(480)))")
batch() { # model rows promptTokens newTokens
  args=""; for i in $(seq 1 $2); do args="$args --prompt-tokens $3"; done
  echo "$1 batch of $2, prompt $(echo $3 | tr ',' ' ' | wc -w), -n $4: $(timeout 90 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu $args -n $4 2>&1 | grep -E '^batch|error' | sed 's/.*tokens in/in/')"; }
single() { echo "$1 alone, prompt $(echo $2 | tr ',' ' ' | wc -w), -n $3: $(timeout 90 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --prompt-tokens $2 -n $3 2>&1 | grep -E '^(prompt|generation)|error' | tr '\n' ' ')"; }
for m in l l2048 q q2048; do for p in 1 512 4096 32700 32768; do run $m $p; done; done
for r in 1 2; do
  for m in s sd m md; do for p in 1 480; do run $m $p; done; done
  for m in s m; do
    single $m $P1 64; for b in 2 4 8; do batch $m $b $P1 64; done
    single $m $P480 32; for b in 4 8; do batch $m $b $P480 32; done
  done
done
