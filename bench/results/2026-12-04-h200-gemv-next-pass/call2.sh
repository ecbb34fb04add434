#!/usr/bin/env bash
# (a) The next pass's first batch issued at the end of each pass, only for
# gemvs of one batch a pass (lm_head, qkv: next-pass-one-batch.patch, .gpu/a1)
# against HEAD (.gpu/a0); (b) the builds for 32800 that spill more since the
# first weights went before the wait (Qwen2.5-1.5B 36 -> 252 B), timed
# against b869aee's mkc (.gpu/h0) at 1, 4096 and 32700.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in a0 a1 h0; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/a1; B=.gpu/a0; H=.gpu/h0
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b smollm2-135m qwen3-0.6b qwen2.5-1.5b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for m in "llama-3.2-1b l 544" "llama-3.2-1b L 32800" "qwen3-0.6b q 544" "smollm2-135m s 544" "qwen2.5-1.5b W 32800"; do
    set -- $m; echo "$N $1 $2-n $3"; echo "$B $1 $2-b $3"; done
  echo "$H qwen2.5-1.5b W-h 32800"; } |
  xargs -P 11 -L 1 bash -c 'timeout 300 $0/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 ${@:4} -o '$W'/$2.mk 2>&1 | grep -E "error|registers|spill" | sed "s/^/$2: /"' &
CP=$!
kc() { timeout 200 $N/tests/gpu/mk-task-kind-check $@ > $W/k.txt 2>&1; echo "kind-check $* rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
kc Gemv tests/fixtures/llama3_ts17.onnx
kc Gemv tests/fixtures/qwen2_dynamo18.onnx
gc() { timeout 200 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep FAIL $W/g.txt | head -3; }
gc tests/fixtures/llama3_ts17.onnx --max-context=64
gc tests/fixtures/qwen2_dynamo18.onnx --max-context=64
wait $CP
ls $W/*.mk | wc -l
lg() { timeout 120 $N/runtime/mkrun/mkrun $W/$1.mk --device $2 --start-position 0 --tokens 1,7,42 --logits $3 > /dev/null 2>&1 || echo "FAILED $1 $2"; }
rel() { python3 -c "import numpy as n,sys;a=n.load(sys.argv[1]);b=n.load(sys.argv[2]);print('$1: max err %.2e of max |logit|, argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))" $2 $3; }
for m in l q s W; do
  lg $m-n gpu $W/a.npy; lg $m-n gpu $W/c.npy
  cmp -s $W/a.npy $W/c.npy && echo "$m-n logits bit-identical run to run" || echo "$m-n logits DIFFER run to run"
  lg $m-b gpu $W/d.npy; cmp -s $W/a.npy $W/d.npy && echo "$m-n logits bit-identical to HEAD's" || rel "$m-n vs HEAD" $W/a.npy $W/d.npy
done
run() { echo "$1 position $2: $(timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2 3; do
  for m in l-n l-b q-n q-b s-n s-b; do for p in 1 480; do run $m $p; done; done
  for m in L-n L-b; do for p in 512 4096; do run $m $p; done; done
  for m in W-n W-b W-h; do for p in 1 4096 32700; do run $m $p; done; done
done
for m in l-n W-b; do
  p=480; [ $m = W-b ] && p=4096
  timeout 60 $N/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position $p --prompt-tokens 1 -n 9 --trace $W/$m.json > /dev/null
  $N/compiler/tools/mkc inspect $W/$m.mk --format=json > $W/$m.inspect.json
  python3 bench/trace_summary.py $W/$m.json $W/$m.inspect.json > $OUT/trace-$m.txt 2>&1; echo "trace $m: $(head -1 $OUT/trace-$m.txt)"
done
