#!/usr/bin/env bash
# The gemvs' first batch copied while they wait (--gemv-early-copy, "e")
# against not (the new default), one binary (.gpu/new2), on the 1B,
# Qwen3-0.6B and SmolLM2 shapes, alternating, two rounds; fixtures checked
# again with the new default; then the harness (bf16 KV caches, the new
# default) with what is left of the call.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/new2 ] || tar -C .gpu -xJf .gpu/new2.tar.xz
N=.gpu/new2
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b qwen3-0.6b smollm2-135m; do python3 scripts/fused_module.py bench/configs/$s-shaped.json -o $W/$s.mlir; done
{ echo "llama-3.2-1b l544 544"; echo "llama-3.2-1b l544e 544 --gemv-early-copy";
  echo "qwen3-0.6b q544 544"; echo "qwen3-0.6b q544e 544 --gemv-early-copy";
  echo "smollm2-135m s528 528"; echo "smollm2-135m s528e 528 --gemv-early-copy";
  echo "llama-3.2-1b l32k 32800"; echo "llama-3.2-1b l32ke 32800 --gemv-early-copy"; } |
  xargs -P 8 -L 1 bash -c 'timeout 200 '$N'/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$2 $3 -o '$W'/$1.mk 2>&1 | grep -E "error|registers"'
gc() { timeout 150 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep FAIL $W/g.txt | head -3; }
gc --toy; gc tests/fixtures/llama3_ts17.onnx --max-context=64; gc tests/fixtures/qwen2_dynamo18.onnx --max-context=64 --kv-cache=bf16
lg() { timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position 470 --tokens 1,7,42,3 --logits $2 > /dev/null || echo "FAILED $1"; }
for m in l544 q544 s528; do lg $m $W/a.npy; lg ${m}e $W/b.npy; cmp $W/a.npy $W/b.npy && echo "$m: early copy on and off identical at 470-473"; done
run() { echo "$1 position $2: $(timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for m in l544 q544 s528; do for p in 1 480; do run $m $p; run ${m}e $p; done; done
  for p in 1 512 4096; do run l32k $p; run l32ke $p; done
done
rm -f $W/*.mk
left=$((585 - SECONDS)); echo "harness with ${left} s"
timeout $left python3 bench/harness.py --out $OUT/run --build $N --shapes llama-3.2-1b,qwen3-0.6b,smollm2-135m --baselines eager,graph --baselines-shapes llama-3.2-1b --also-small-context > $OUT/harness-stdout.txt 2>&1; echo "harness rc=$?"
tail -3 $OUT/harness-stdout.txt
cd $OUT && tar -czf harness.tgz run && rm -rf run
