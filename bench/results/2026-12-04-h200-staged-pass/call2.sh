#!/usr/bin/env bash
# What lands, against HEAD in one call: .gpu/a0 HEAD (c389d6c); .gpu/b1 the
# next pass's first batch for gemvs of one batch a pass (fixed); .gpu/c2
# that and the gemvs' shared-memory weight slots sized to what the gemvs
# use (none on the 1B shape: 32 KiB of dynamic shared memory, not 160).
# Each binary runs the .mk files its own mkc wrote.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in a0 b1 c2; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/c2
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b smollm2-135m qwen3-0.6b qwen2.5-1.5b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for b in a0 b1 c2; do echo "$b llama-3.2-1b l 544"; echo "$b qwen3-0.6b q 544"; done
  for b in a0 c2; do echo "$b llama-3.2-1b L 32800"; echo "$b smollm2-135m s 544"; echo "$b qwen2.5-1.5b W 32800"; done; } |
  xargs -P 12 -L 1 bash -c 'timeout 300 .gpu/$0/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 -o '$W'/$2-$0.mk 2>&1 | grep -E "error|registers|spill" | sed "s/^/$2-$0: /"' &
CP=$!
kc() { timeout 300 $N/tests/gpu/mk-task-kind-check $@ > $W/k.txt 2>&1; echo "kind-check $* rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
kc Gemv $W/llama-3.2-1b.mlir --sample=3 --kv-cache=bf16
kc Gemv $W/qwen3-0.6b.mlir --sample=3 --kv-cache=bf16
kc Gemv tests/fixtures/qwen2_dynamo18.onnx
gc() { timeout 200 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep FAIL $W/g.txt | head -3; }
gc tests/fixtures/llama3_ts17.onnx --max-context=64
gc tests/fixtures/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
gc tests/fixtures/mistral_ts17.onnx --max-context=64
wait $CP
ls $W/*.mk | wc -l
lg() { timeout 120 .gpu/${1##*-}/runtime/mkrun/mkrun $W/$1.mk --device $2 --start-position 0 --tokens 1,7,42 --logits $3 > /dev/null 2>&1 || echo "FAILED $1 $2"; }
rel() { python3 -c "import numpy as n,sys;a=n.load(sys.argv[1]);b=n.load(sys.argv[2]);print('$1: max err %.2e of max |logit|, argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))" $2 $3; }
for m in l q L s W; do
  lg $m-c2 gpu $W/a.npy; lg $m-c2 gpu $W/c.npy
  cmp -s $W/a.npy $W/c.npy && echo "$m-c2 logits bit-identical run to run" || echo "$m-c2 logits DIFFER run to run"
  lg $m-a0 gpu $W/d.npy; cmp -s $W/a.npy $W/d.npy && echo "$m-c2 logits bit-identical to HEAD's" || rel "$m-c2 vs HEAD" $W/a.npy $W/d.npy
done
lg q-c2 cpu $W/b.npy; lg q-c2 gpu $W/a.npy; rel "q-c2 GPU vs CPU executor" $W/a.npy $W/b.npy
run() { echo "$1 position $2: $(timeout 60 .gpu/${1##*-}/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2 3; do
  for m in l-a0 l-b1 l-c2 q-a0 q-b1 q-c2 s-a0 s-c2; do for p in 1 480; do run $m $p; done; done
  for m in L-a0 L-c2; do for p in 512 4096; do run $m $p; done; done
  for m in W-a0 W-c2; do for p in 1 4096; do run $m $p; done; done
done
m=l-c2; timeout 60 $N/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 1 -n 9 --trace $W/$m.json > /dev/null
$N/compiler/tools/mkc inspect $W/$m.mk --format=json > $W/$m.inspect.json
python3 bench/trace_summary.py $W/$m.json $W/$m.inspect.json > $OUT/trace-$m.txt 2>&1; echo "trace $m: $(head -1 $OUT/trace-$m.txt)"
