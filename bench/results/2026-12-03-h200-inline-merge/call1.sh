#!/usr/bin/env bash
# Two changes, one call. (a) Attention merges run inline (mkc compile
# --inline-merge): the chunk whose trigger completes its KV head's event
# runs the merge on its own SM, with no hop. (b) The staged chunk's scores
# and o read whole 16-byte units of keys and values (and float4s of q), o by
# (head, unit) owners whose sums meet in shared memory. Binaries: .gpu/i2
# (both changes), .gpu/c1 mkc-NONE (d134424, before them).
# Fixtures and task kinds against the CPU executor, compute-sanitizer;
# greedy tokens and logits inline against queued; ms/token alternating,
# two rounds; a trace of the 1B builds for 544 at 480 (bench/trace_summary.py).
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for p in i2 c1; do [ -d .gpu/$p ] || tar -C .gpu -xJf .gpu/$p.tar.xz; done
N=.gpu/i2; OLD=.gpu/c1/compiler/tools/mkc-NONE
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b qwen3-0.6b smollm2-135m layer-cost-64x256; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ echo "llama-3.2-1b l544 544"; echo "llama-3.2-1b l544i 544 --inline-merge";
  echo "llama-3.2-1b l32k 32800"; echo "llama-3.2-1b l32ki 32800 --inline-merge";
  echo "qwen3-0.6b q32k 32800";
  echo "smollm2-135m s544 544"; echo "smollm2-135m s544i 544 --inline-merge";
  echo "layer-cost-64x256 t544 544"; echo "layer-cost-64x256 t544i 544 --inline-merge"; } |
  xargs -P 5 -L 1 bash -c 'timeout 200 '$N'/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$2 $3 -o '$W'/$1.mk 2>&1 | grep -E "error|registers" | sed "s/^/$1: /"'
{ echo "llama-3.2-1b l32ko"; echo "qwen3-0.6b q32ko"; } | xargs -P 2 -L 1 bash -c 'timeout 200 '$OLD' compile '$W'/$0.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 -o '$W'/$1.mk 2>&1 | grep -E "error|registers" | sed "s/^/$1: /"'
gc() { timeout 200 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep FAIL $W/g.txt | head -3; }
gc --toy --inline-merge; gc tests/fixtures/llama3_ts17.onnx --max-context=64 --inline-merge
gc tests/fixtures/qwen3_ts17.onnx --max-context=2048 --inline-merge --kv-cache=bf16
gc --toy; gc tests/fixtures/llama3_ts17.onnx --max-context=2048 --kv-cache=bf16; gc tests/fixtures/qwen3_ts17.onnx --max-context=64
kc() { timeout 200 $N/tests/gpu/mk-task-kind-check $@ > $W/k.txt 2>&1; echo "kind-check $* rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
F=tests/fixtures/llama3_ts17.onnx
kc AttentionChunk $F --max-context=4096 --num-sms=8 --longest-attention-chunk=1024
kc AttentionChunk $F --max-context=4096 --num-sms=8 --longest-attention-chunk=1024 --kv-cache=bf16
kc AttentionChunk tests/fixtures/qwen3_ts17.onnx --max-context=4096 --num-sms=8 --longest-attention-chunk=1024 --kv-cache=bf16
kc AttentionMerge $F
for tool in memcheck racecheck synccheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $N/tests/gpu/mk-gpu-check --toy --inline-merge > $W/cs.txt 2>&1
  echo "compute-sanitizer $tool toy inline rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/cs.txt | head -2)"
done
timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $N/tests/gpu/mk-task-kind-check AttentionChunk $F --max-context=4096 --num-sms=8 --longest-attention-chunk=1024 --kv-cache=bf16 > $W/cs.txt 2>&1
echo "compute-sanitizer racecheck staged chunk rc=$? $(grep -E 'RACECHECK SUMMARY' $W/cs.txt | head -1)"
tk() { timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device $2 --start-position $3 --prompt-tokens 1,7,42 -n 48 2>&1 | grep '^tokens'; }
for m in l544 s544 t544; do
  a=$(tk ${m}i gpu 400); b=$(tk $m gpu 400); c=$(tk ${m}i cpu 400)
  [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] && echo "$m: greedy tokens equal, inline GPU, queued GPU, inline CPU" || echo "$m: TOKENS DIFFER: $a | $b | $c"
done
lg() { timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 --tokens 1,7,42,3 --logits $2 > /dev/null || echo "FAILED $1"; }
for m in l544 s544 t544; do lg ${m}i $W/a.npy 470; lg $m $W/b.npy 470; cmp $W/a.npy $W/b.npy && echo "$m: logits inline and queued identical"; done
lg l32ki $W/a.npy 32700; lg l32k $W/b.npy 32700; cmp $W/a.npy $W/b.npy && echo "l32k: logits inline and queued identical at 32700"
rel() { python3 -c "import numpy as n,sys;a=n.load(sys.argv[1]);b=n.load(sys.argv[2]);print('$1 new against old chunk at $2: max rel err %.2e, argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))" $W/a.npy $W/b.npy; }
for p in 4064 32700; do lg l32k $W/a.npy $p; lg l32ko $W/b.npy $p; rel l32k $p; lg q32k $W/a.npy $p; lg q32ko $W/b.npy $p; rel q32k $p; done
run() { echo "$1 position $2: $(timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for m in l544 s544 t544; do for p in 1 480; do run $m $p; run ${m}i $p; done; done
  for p in 1 480 4064 32700; do run l32ko $p; run l32k $p; run l32ki $p; done
  for p in 4064 32700; do run q32ko $p; run q32k $p; done
done
for m in l544 l544i; do
  timeout 60 $N/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 1 -n 9 --trace $W/$m.json > /dev/null
  $N/compiler/tools/mkc inspect $W/$m.mk --format=json > $W/$m.inspect.json
  python3 bench/trace_summary.py $W/$m.json $W/$m.inspect.json > $OUT/trace-$m.txt 2>&1; echo "trace $m: $(head -2 $OUT/trace-$m.txt | tail -1)"
done
