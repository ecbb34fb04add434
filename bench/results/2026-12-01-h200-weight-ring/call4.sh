#!/usr/bin/env bash
set -uo pipefail
N=.gpu/new; W=/tmp/w; mkdir -p $W $OUT
exec > >(tee $OUT/log.txt) 2>&1
for m in --toy tests/fixtures/qwen2_ts17.onnx; do
  timeout 60 $N/tests/gpu/mk-task-kind-check Gemv $m > $W/kind.txt 2>&1; rc=$?
  echo "Gemv $(basename -- $m) rc=$rc | $(grep -iE 'largest' $W/kind.txt | tail -1)"; [ $rc != 0 ] && tail -5 $W/kind.txt; done
for f in llama3_ts17 qwen3_dynamo23; do timeout 60 $N/tests/gpu/mk-gpu-check tests/fixtures/$f.onnx --max-context=64 > $W/g.txt 2>&1; rc=$?; echo "$f rc=$rc $(grep -c FAIL $W/g.txt) FAIL"; [ $rc != 0 ] && tail -8 $W/g.txt; done
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/smol.mlir
bench() { # name mlir config extra-flags...
  local name=$1 m=$2 c=$3; shift 3
  timeout 60 $N/compiler/tools/mkc compile $m --emit=mk --random-weights --max-context=512 "$@" -o $W/$name.mk 2>&1 | grep -o "compiled.*spilled\|error.*" | head -2
  timeout 30 $N/runtime/mkrun/mkrun $W/$name.mk --device gpu --tokens 1,7,42,3,99,5,11,64 --logits $W/$name.npy > $W/run.txt 2>&1 || { echo "$name: logits run FAILED"; tail -5 $W/run.txt; }
  timeout 100 python3 bench/decode_bench.py --mk $W/$name.mk --config $c --build $N --no-pytorch --out $OUT/bench-$name 2>&1 | grep -E "^\| mkc|Floor|rror" | sed "s/^/$name: /"
  rm -f $W/$name.mk
}
bench 1b-plain $W/1b.mlir bench/configs/llama-3.2-1b-shaped.json --no-weight-ring
bench 1b-ring $W/1b.mlir bench/configs/llama-3.2-1b-shaped.json
bench 1b-ring4 $W/1b.mlir bench/configs/llama-3.2-1b-shaped.json --gemv-loads=4
bench 1b-ring16 $W/1b.mlir bench/configs/llama-3.2-1b-shaped.json --gemv-loads=16
bench smol-plain $W/smol.mlir bench/configs/smollm2-135m-shaped.json --no-weight-ring
bench smol-ring $W/smol.mlir bench/configs/smollm2-135m-shaped.json
python3 - <<'PY'
import numpy as np
for a_, b_ in [("smol-ring","smol-plain"), ("1b-ring","1b-plain"), ("1b-ring4","1b-plain")]:
    try:
        a = np.load(f"/tmp/w/{a_}.npy"); b = np.load(f"/tmp/w/{b_}.npy")
        rel = np.abs(a - b).max() / np.abs(b).max()
        print(f"{a_} vs {b_}: max rel err {rel:.2e}, argmax agree {np.mean(a.argmax(-1) == b.argmax(-1)):.2f}")
    except Exception as e:
        print(a_, "compare failed", e)
PY
echo done
