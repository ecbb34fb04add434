#!/usr/bin/env bash
# A gemv's first weights issued as its wait ends, under the input's load and
# norm (--gemv-first-weights), and one batch of weights in flight ahead of
# the one being summed (--gemv-batches-ahead); rows shared by warps where a
# tile leaves warps idle (Qwen3-0.6B's down). Binaries: .gpu/g1. Fixtures
# and task kinds against the CPU executor, the shapes' logits GPU against
# CPU executor and run to run, compute-sanitizer, then ms/token alternating
# over the variants, and traces of the default and the old order.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/g1 ] || tar -C .gpu -xJf .gpu/g1.tar.xz
N=.gpu/g1
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b smollm2-135m qwen3-0.6b layer-cost-64x256; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
AI="--gemv-first-weights=after-input --gemv-batches-ahead=0"
{ echo "llama-3.2-1b l-aw1 544"; echo "llama-3.2-1b l-aw0 544 --gemv-batches-ahead=0";
  echo "llama-3.2-1b l-bw1 544 --gemv-first-weights=before-wait";
  echo "llama-3.2-1b l-bw0 544 --gemv-first-weights=before-wait --gemv-batches-ahead=0";
  echo "llama-3.2-1b l-ai0 544 $AI"; echo "llama-3.2-1b l-ai1 544 --gemv-first-weights=after-input";
  echo "llama-3.2-1b L-aw1 32800"; echo "llama-3.2-1b L-ai0 32800 $AI";
  echo "qwen3-0.6b q-aw1 544"; echo "qwen3-0.6b q-ai0 544 $AI";
  echo "smollm2-135m s-aw1 544"; echo "smollm2-135m s-ai0 544 $AI";
  echo "layer-cost-64x256 t-aw1 544"; echo "layer-cost-64x256 t-ai0 544 $AI"; } |
  xargs -P 14 -L 1 bash -c 'timeout 300 '$N'/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$2 ${@:3} -o '$W'/$1.mk 2>&1 | grep -E "error|registers|spill" | sed "s/^/$1: /"' &
CP=$!
kc() { timeout 200 $N/tests/gpu/mk-task-kind-check $@ > $W/k.txt 2>&1; echo "kind-check $* rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
kc Gemv tests/fixtures/llama3_ts17.onnx
kc Gemv tests/fixtures/qwen2_dynamo18.onnx
gc() { timeout 200 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep FAIL $W/g.txt | head -3; }
gc tests/fixtures/llama3_ts17.onnx --max-context=64
gc tests/fixtures/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
gc tests/fixtures/qwen2_dynamo18.onnx --max-context=64
gc tests/fixtures/mistral_ts17.onnx --max-context=64
for tool in memcheck synccheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $N/tests/gpu/mk-gpu-check tests/fixtures/llama3_ts17.onnx --max-context=64 > $W/cs.txt 2>&1
  echo "compute-sanitizer $tool llama3 rc=$? $(grep -E 'ERROR SUMMARY' $W/cs.txt | head -1)"
done
wait $CP
ls $W/*.mk | wc -l
lg() { timeout 120 $N/runtime/mkrun/mkrun $W/$1.mk --device $2 --start-position 0 --tokens 1,7,42 --logits $3 > /dev/null 2>&1 || echo "FAILED $1 $2"; }
rel() { python3 -c "import numpy as n,sys;a=n.load(sys.argv[1]);b=n.load(sys.argv[2]);print('$1: max err %.2e of max |logit|, argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))" $2 $3; }
for m in q-aw1 l-aw1 s-aw1; do
  lg $m gpu $W/a.npy; lg $m gpu $W/c.npy
  cmp -s $W/a.npy $W/c.npy && echo "$m logits bit-identical run to run" || echo "$m logits DIFFER run to run"
  lg $m cpu $W/b.npy; rel "$m GPU vs CPU executor" $W/a.npy $W/b.npy
done
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 $N/runtime/mkrun/mkrun $W/q-aw1.mk --device gpu --prompt-tokens 1,2 -n 2 > $W/cs.txt 2>&1; echo "compute-sanitizer memcheck q-aw1 rc=$? $(grep -E 'ERROR SUMMARY' $W/cs.txt | head -1)"
timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 $N/runtime/mkrun/mkrun $W/q-aw1.mk --device gpu --prompt-tokens 1 -n 1 > $W/cs.txt 2>&1; echo "compute-sanitizer racecheck q-aw1 rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $W/cs.txt | head -1)"
run() { echo "$1 position $2: $(timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for m in l-aw1 l-aw0 l-bw1 l-bw0 l-ai0 l-ai1 q-aw1 q-ai0 s-aw1 s-ai0 t-aw1 t-ai0; do for p in 1 480; do run $m $p; done; done
  for m in L-aw1 L-ai0; do for p in 512 4096; do run $m $p; done; done
done
for m in l-aw1 l-ai0; do
  timeout 60 $N/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 1 -n 9 --trace $W/$m.json > /dev/null
  $N/compiler/tools/mkc inspect $W/$m.mk --format=json > $W/$m.inspect.json
  python3 bench/trace_summary.py $W/$m.json $W/$m.inspect.json > $OUT/trace-$m.txt 2>&1; echo "trace $m: $(head -1 $OUT/trace-$m.txt)"
done
