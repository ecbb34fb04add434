#!/usr/bin/env bash
# Call 2, .gpu/m2: the Mlp task issues its first batch of down rows before
# gate and up, and keeps two batches of down rows in registers (one in
# flight while the other is summed); random weights draw the same values
# fused or not (compiler/driver/RandomWeights.cpp), so fused and unfused
# builds compare logits. Checks, then ms/token alternating, then traces.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/m2 ] || tar -C .gpu -xJf .gpu/m2.tar.xz
N=.gpu/m2
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b smollm2-135m qwen3-0.6b layer-cost-64x256; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ echo "llama-3.2-1b l 544"; echo "llama-3.2-1b lf 544 --fuse-mlp";
  echo "llama-3.2-1b L 32800"; echo "llama-3.2-1b Lf 32800 --fuse-mlp";
  echo "smollm2-135m s 544"; echo "smollm2-135m sf 544 --fuse-mlp";
  echo "qwen3-0.6b q 544"; echo "qwen3-0.6b qf 544 --fuse-mlp";
  echo "layer-cost-64x256 t 544"; echo "layer-cost-64x256 tf 544 --fuse-mlp"; } |
  xargs -P 10 -L 1 bash -c 'timeout 200 '$N'/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$2 $3 -o '$W'/$1.mk 2>&1 | grep -E "error|registers" | sed "s/^/$1: /"'
kc() { timeout 200 $N/tests/gpu/mk-task-kind-check $@ > $W/k.txt 2>&1; echo "kind-check $* rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
kc Mlp tests/fixtures/llama3_ts17.onnx --fuse-mlp
kc Mlp tests/fixtures/llama3_ts17.onnx --fuse-mlp --num-sms=8
kc Mlp tests/fixtures/qwen3_ts17.onnx --fuse-mlp
gc() { timeout 200 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep FAIL $W/g.txt | head -3; }
gc tests/fixtures/llama3_ts17.onnx --max-context=64 --fuse-mlp
gc tests/fixtures/mistral_ts17.onnx --max-context=64 --fuse-mlp
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $N/tests/gpu/mk-task-kind-check Mlp tests/fixtures/llama3_ts17.onnx --fuse-mlp --num-sms=8 > $W/cs.txt 2>&1
echo "compute-sanitizer racecheck Mlp kind rc=$? $(grep -E 'RACECHECK SUMMARY' $W/cs.txt | head -1)"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $N/tests/gpu/mk-gpu-check tests/fixtures/qwen3_ts17.onnx --max-context=64 --fuse-mlp > $W/cs.txt 2>&1
echo "compute-sanitizer memcheck qwen3 fused rc=$? $(grep -E 'ERROR SUMMARY' $W/cs.txt | head -1)"
lg() { timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 --tokens 1,7,42,3 --logits $2 > /dev/null 2>&1 || echo "FAILED $1"; }
rel() { python3 -c "import numpy as n,sys;a=n.load(sys.argv[1]);b=n.load(sys.argv[2]);print('$1: max rel err %.2e, argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))" $W/a.npy $W/b.npy; }
for m in l s q t; do lg ${m}f $W/a.npy 470; lg ${m}f $W/c.npy 470; cmp -s $W/a.npy $W/c.npy && echo "$m fused logits bit-identical run to run" || echo "$m fused logits DIFFER run to run"; lg $m $W/b.npy 470; rel "$m fused vs unfused at 470"; done
lg Lf $W/a.npy 32700; lg L $W/b.npy 32700; rel "L fused vs unfused at 32700"
run() { echo "$1 position $2: $(timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for m in l s q t; do for p in 1 480; do run $m $p; run ${m}f $p; done; done
  for p in 1 4064 32700; do run L $p; run Lf $p; done
done
for m in lf sf; do
  timeout 60 $N/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 1 -n 9 --trace $W/$m.json > /dev/null 2>&1
  $N/compiler/tools/mkc inspect $W/$m.mk --format=json > $W/$m.inspect.json
  python3 bench/trace_summary.py $W/$m.json $W/$m.inspect.json > $OUT/trace-$m.txt 2>&1; echo "trace $m: $(head -1 $OUT/trace-$m.txt)"
done
