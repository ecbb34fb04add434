#!/usr/bin/env bash
# Attention chunks sized evenly in grains of 16 (a build for 32800: 16
# chunks of 2064, one round at every position) and --gemv-double-buffer.
# Binaries: .gpu/e1. Kind checks and fixture checks against the CPU
# executor, then ms/token: the 1B and Qwen3-0.6B shapes built for 32800,
# default against --longest-attention-chunk=2048 (17 chunks of 1936: two
# rounds from 32768 on, as the powers of two gave), and the double buffer
# on and off on the 1B and SmolLM2 shapes built for 544.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/e1 ] || tar -C .gpu -xJf .gpu/e1.tar.xz
N=.gpu/e1
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b smollm2-135m qwen3-0.6b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ echo "llama-3.2-1b l 32800"; echo "llama-3.2-1b l2048 32800 --longest-attention-chunk=2048";
  echo "qwen3-0.6b q 32800"; echo "qwen3-0.6b q2048 32800 --longest-attention-chunk=2048";
  echo "llama-3.2-1b s 544"; echo "llama-3.2-1b sd 544 --gemv-double-buffer";
  echo "smollm2-135m m 544"; echo "smollm2-135m md 544 --gemv-double-buffer"; } |
  xargs -P 8 -L 1 bash -c 'timeout 300 '$N'/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$2 $3 -o '$W'/$1.mk 2>&1 | grep -E "error|registers|spill" | sed "s/^/$1: /"'
kc() { timeout 300 $N/tests/gpu/mk-task-kind-check $@ > $W/k.txt 2>&1; echo "kind-check $* rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
kc AttentionChunk tests/fixtures/llama3_ts17.onnx --max-context=4000 --num-sms=8
kc AttentionChunk tests/fixtures/qwen3_ts17.onnx --max-context=4000 --num-sms=8 --kv-cache=bf16
kc AttentionChunk tests/fixtures/llama3_ts17.onnx --max-context=180 --num-sms=8
kc AttentionChunk tests/fixtures/llama3_ts17.onnx --max-context=4096 --num-sms=8 --longest-attention-chunk=1024
kc AttentionMerge tests/fixtures/llama3_ts17.onnx --max-context=4000 --num-sms=8
kc Gemv $W/qwen3-0.6b.mlir --gemv-double-buffer
kc Gemv $W/llama-3.2-1b.mlir --gemv-double-buffer
gc() { timeout 300 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL; $(tail -1 $W/g.txt)"; grep FAIL $W/g.txt | head -3; }
gc tests/fixtures/llama3_ts17.onnx --max-context=3000
gc tests/fixtures/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
gc tests/fixtures/llama3_ts17.onnx --max-context=64
tk() { timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1,7,42 -n 24 2>&1 | grep '^tokens'; }
a=$(tk sd 400); b=$(tk sd 400); c=$(tk s 400)
[ -n "$a" ] && [ "$a" = "$b" ] && echo "double buffer: greedy tokens equal run to run" || echo "double buffer: RUN TO RUN DIFFER: $a | $b"
[ "$a" = "$c" ] && echo "double buffer: greedy tokens = default" || echo "double buffer tokens $a | default $c"
lg() { timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 --tokens 1,7,42,3 --logits $2 > /dev/null || echo "FAILED $1"; }
lg sd $W/a.npy 470; lg s $W/b.npy 470; cmp -s $W/a.npy $W/b.npy && echo "double buffer logits bit-identical to default" || echo "double buffer logits differ from default"
lg l $W/a.npy 32760; lg l2048 $W/b.npy 32760; python3 -c "import numpy as n;a=n.load('$W/a.npy');b=n.load('$W/b.npy');print('1B 2064 vs 1936 chunks at 32760: max rel %.2e argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))"
run() { echo "$1 position $2: $(timeout 90 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 31 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for m in l l2048 q q2048; do for p in 1 512 4096 32700 32768; do run $m $p; done; done
  for m in s sd m md; do for p in 1 480; do run $m $p; done; done
done
for m in s sd; do
  timeout 60 $N/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 1 -n 9 --trace $W/$m.json > /dev/null
  $N/compiler/tools/mkc inspect $W/$m.mk --format=json > $W/$m.inspect.json
  python3 bench/trace_summary.py $W/$m.json $W/$m.inspect.json > $OUT/trace-$m.txt 2>&1; echo "trace $m: $(head -2 $OUT/trace-$m.txt | tail -1)"
done
