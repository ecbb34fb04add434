#!/usr/bin/env bash
set -uo pipefail
N=.gpu/new; W=/tmp/w; mkdir -p $W $OUT
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/smol.mlir
bench() { # name mlir config extra-flags...
  local name=$1 m=$2 c=$3; shift 3
  timeout 60 $N/compiler/tools/mkc compile $m --emit=mk --random-weights --max-context=512 "$@" -o $W/$name.mk 2>&1 | grep -o "compiled.*spilled\|error.*" | head -2
  timeout 30 $N/runtime/mkrun/mkrun $W/$name.mk --device gpu --tokens 1,7,42,3,99,5,11,64 --logits $W/$name.npy > $W/run.txt 2>&1 || { echo "$name: logits run FAILED"; tail -5 $W/run.txt; }
  timeout 100 python3 bench/decode_bench.py --mk $W/$name.mk --config $c --build $N --no-pytorch --out $OUT/bench-$name 2>&1 | grep -E "^\| mkc|Floor|rror" | sed "s/^/$name: /"
  rm -f $W/$name.mk
}
trace() { # name mlir extra-flags
  local name=$1 m=$2; shift 2
  timeout 60 $N/compiler/tools/mkc compile $m --emit=mk --random-weights --max-context=528 "$@" -o $W/t.mk > /dev/null 2>&1
  timeout 30 $N/runtime/mkrun/mkrun $W/t.mk --device gpu --start-position 512 --prompt-tokens 1 -n 4 --trace $W/$name.json > /dev/null
  $N/compiler/tools/mkc inspect $W/t.mk --format=json > $W/$name-i.json
  echo "-- trace $name"; python3 bench/trace_summary.py $W/$name.json $W/$name-i.json > $OUT/summary-$name.txt 2>&1; head -22 $OUT/summary-$name.txt; tail -3 $OUT/summary-$name.txt

}
echo "== decode at 480-511, built for 512"
bench 1b-ring $W/1b.mlir bench/configs/llama-3.2-1b-shaped.json
bench 1b-plain $W/1b.mlir bench/configs/llama-3.2-1b-shaped.json --no-weight-ring
bench smol-ring $W/smol.mlir bench/configs/smollm2-135m-shaped.json
bench smol-plain $W/smol.mlir bench/configs/smollm2-135m-shaped.json --no-weight-ring
python3 - <<'PY'
import numpy as np
for m in ["smol", "1b"]:
    try:
        a = np.load(f"/tmp/w/{m}-ring.npy"); b = np.load(f"/tmp/w/{m}-plain.npy")
        rel = np.abs(a - b).max() / np.abs(b).max()
        print(f"{m}: ring vs plain logits, max rel err {rel:.2e}, argmax agree {np.mean(a.argmax(-1) == b.argmax(-1)):.2f}")
    except Exception as e:
        print(m, "compare failed", e)
PY
trace ring $W/1b.mlir
trace plain $W/1b.mlir --no-weight-ring
echo done
