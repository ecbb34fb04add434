#!/usr/bin/env bash
# Staged passes (--stage-first-pass): the copy engine brings each gate/up
# gemv's first pass into shared memory after the wait of the task that
# follows qkv (the attention chunk), so HBM streams through the attention.
# Binaries: .gpu/a0 HEAD (c389d6c), .gpu/a1 the one-batch next-pass patch
# as run in ../2026-12-04-h200-gemv-next-pass/call2 (wrong: gate_up and down
# reused pass 0's first batch), .gpu/b1 that patch fixed, .gpu/c1 the fixed
# patch + early slots sized to what the gemvs use + staged passes (off
# unless --stage-first-pass).
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in a0 a1 b1 c1; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
A=.gpu/a0; N=.gpu/c1
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b smollm2-135m qwen3-0.6b qwen2.5-1.5b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ echo "$A llama-3.2-1b l-a 544"; echo ".gpu/b1 llama-3.2-1b l-b 544"; echo "$N llama-3.2-1b l-c 544"; echo "$N llama-3.2-1b l-s 544 --stage-first-pass"
  echo "$A qwen3-0.6b q-a 544"; echo "$N qwen3-0.6b q-c 544"; echo "$N qwen3-0.6b q-s 544 --stage-first-pass"
  echo "$A llama-3.2-1b L-a 32800"; echo "$N llama-3.2-1b L-c 32800"
  echo "$A smollm2-135m s-a 544"; echo "$N smollm2-135m s-c 544"; } |
  xargs -P 11 -L 1 bash -c 'timeout 300 $0/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 ${@:4} -o '$W'/$2.mk 2>&1 | grep -E "error|registers|spill" | sed "s/^/$2: /"' &
CP=$!
kc() { b=$1; shift; timeout 300 $b/tests/gpu/mk-task-kind-check $@ > $W/k.txt 2>&1; echo "kind-check ($b) $* rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
kc .gpu/a1 Gemv $W/llama-3.2-1b.mlir --sample=3 --kv-cache=bf16
kc $N Gemv $W/llama-3.2-1b.mlir --sample=3 --kv-cache=bf16
kc $N Gemv $W/qwen2.5-1.5b.mlir --sample=3 --kv-cache=bf16
kc $N Gemv tests/fixtures/llama3_ts17.onnx
gc() { timeout 200 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep FAIL $W/g.txt | head -3; }
gc tests/fixtures/llama3_ts17.onnx --max-context=64
gc tests/fixtures/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
gc tests/fixtures/qwen2_dynamo18.onnx --max-context=64
wait $CP
ls $W/*.mk | wc -l
lg() { timeout 120 $N/runtime/mkrun/mkrun $W/$1.mk --device $2 --start-position 0 --tokens 1,7,42 --logits $3 > /dev/null 2>&1 || echo "FAILED $1 $2"; }
rel() { python3 -c "import numpy as n,sys;a=n.load(sys.argv[1]);b=n.load(sys.argv[2]);print('$1: max err %.2e of max |logit|, argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))" $2 $3; }
same() { lg $1 gpu $W/x.npy; lg $2 gpu $W/y.npy; cmp -s $W/x.npy $W/y.npy && echo "$1 logits bit-identical to $2's" || rel "$1 vs $2" $W/x.npy $W/y.npy; }
for m in l-s q-s l-c; do
  lg $m gpu $W/a.npy; lg $m gpu $W/c.npy
  cmp -s $W/a.npy $W/c.npy && echo "$m logits bit-identical run to run" || echo "$m logits DIFFER run to run"
  lg $m cpu $W/b.npy; rel "$m GPU vs CPU executor" $W/a.npy $W/b.npy
done
same l-s l-c; same q-s q-c; same l-c l-a; same l-b l-a; same q-c q-a; same L-c L-a; same s-c s-a
for tool in memcheck synccheck; do
  timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 $N/runtime/mkrun/mkrun $W/q-s.mk --device gpu --prompt-tokens 1,2 -n 3 > $W/cs.txt 2>&1
  echo "compute-sanitizer $tool q-s rc=$? $(grep -E 'ERROR SUMMARY' $W/cs.txt | head -1)"
done
run() { echo "$1 position $2: $(timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2 3; do
  for m in l-a l-b l-c l-s q-a q-c q-s s-a s-c; do for p in 1 480; do run $m $p; done; done
  for m in L-a L-c; do for p in 512 4096; do run $m $p; done; done
done
for m in l-s l-c q-s; do
  timeout 60 $N/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 1 -n 9 --trace $W/$m.json > /dev/null
  $N/compiler/tools/mkc inspect $W/$m.mk --format=json > $W/$m.inspect.json
  python3 bench/trace_summary.py $W/$m.json $W/$m.inspect.json > $OUT/trace-$m.txt 2>&1; echo "trace $m: $(head -1 $OUT/trace-$m.txt)"
done
