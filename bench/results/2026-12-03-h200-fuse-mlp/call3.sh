#!/usr/bin/env bash
# Call 3, .gpu/m3: the Mlp reads down transposed, [I, N] (its slice is a
# contiguous run of rows; before, 128 bytes of each of N rows 16 KB apart),
# a chunk of 8 outputs a thread, summed over every kGroups-th row, the
# groups' sums met by shuffles. Checks, logits fused against unfused, then
# ms/token alternating and a trace.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/m3 ] || tar -C .gpu -xJf .gpu/m3.tar.xz
N=.gpu/m3
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b smollm2-135m layer-cost-64x256; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ echo "llama-3.2-1b l 544"; echo "llama-3.2-1b lf 544 --fuse-mlp";
  echo "smollm2-135m s 544"; echo "smollm2-135m sf 544 --fuse-mlp";
  echo "layer-cost-64x256 t 544"; echo "layer-cost-64x256 tf 544 --fuse-mlp"; } |
  xargs -P 8 -L 1 bash -c 'timeout 200 '$N'/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$2 $3 -o '$W'/$1.mk 2>&1 | grep -E "error|registers" | sed "s/^/$1: /"'
kc() { timeout 100 $N/tests/gpu/mk-task-kind-check $@ > $W/k.txt 2>&1; echo "kind-check $* rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
kc Mlp tests/fixtures/llama3_ts17.onnx --fuse-mlp --num-sms=8
kc Mlp tests/fixtures/qwen3_ts17.onnx --fuse-mlp
gc() { timeout 100 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep FAIL $W/g.txt | head -3; }
gc tests/fixtures/llama3_ts17.onnx --max-context=64 --fuse-mlp
run() { echo "$1 position $2: $(timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for m in l s; do for p in 1 480; do run $m $p; run ${m}f $p; run $m $p; run ${m}f $p; done; done
run t 1; run tf 1; run t 1; run tf 1
lg() { timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 --tokens 1,7,42,3 --logits $2 > /dev/null 2>&1 || echo "FAILED $1"; }
rel() { python3 -c "import numpy as n,sys;a=n.load(sys.argv[1]);b=n.load(sys.argv[2]);print('$1: max rel err %.2e, argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))" $W/a.npy $W/b.npy; }
for m in l s; do lg ${m}f $W/a.npy 470; lg ${m}f $W/c.npy 470; cmp -s $W/a.npy $W/c.npy && echo "$m fused logits bit-identical run to run" || echo "$m fused logits DIFFER run to run"; lg $m $W/b.npy 470; rel "$m fused vs unfused at 470"; done
gc tests/fixtures/qwen2_dynamo18.onnx --max-context=64 --fuse-mlp
timeout 60 $N/runtime/mkrun/mkrun $W/lf.mk --device gpu --start-position 480 --prompt-tokens 1 -n 9 --trace $W/lf.json > /dev/null 2>&1
$N/compiler/tools/mkc inspect $W/lf.mk --format=json > $W/lf.inspect.json
python3 bench/trace_summary.py $W/lf.json $W/lf.inspect.json > $OUT/trace-lf.txt 2>&1; echo "trace lf: $(head -1 $OUT/trace-lf.txt)"
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 $N/tests/gpu/mk-task-kind-check Mlp tests/fixtures/llama3_ts17.onnx --fuse-mlp --num-sms=8 > $W/cs.txt 2>&1
echo "compute-sanitizer racecheck Mlp kind rc=$? $(grep -E 'RACECHECK SUMMARY' $W/cs.txt | head -1)"
