#!/usr/bin/env bash
set -uo pipefail
N=.gpu/new; W=/tmp/w; mkdir -p $W $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
echo "== kind checks (weight ring on)"
for m in --toy tests/fixtures/qwen3_ts17.onnx tests/fixtures/llama3_ts17.onnx tests/fixtures/qwen2_ts17.onnx; do
  timeout 60 $N/tests/gpu/mk-task-kind-check Gemv $m > $W/kind.txt 2>&1; rc=$?
  echo "Gemv $(basename -- $m) rc=$rc | $(grep -iE 'largest' $W/kind.txt | tail -1)"; [ $rc != 0 ] && tail -5 $W/kind.txt; done
for k in AttentionChunk Embed Argmax AttentionMerge; do m=tests/fixtures/qwen3_ts17.onnx
  timeout 60 $N/tests/gpu/mk-task-kind-check $k $m > $W/kind.txt 2>&1; rc=$?
  echo "$k $(basename -- $m) rc=$rc | $(grep -iE 'largest' $W/kind.txt | tail -1)"; [ $rc != 0 ] && tail -5 $W/kind.txt; done
echo "== fixture checks"
for f in llama3_ts17 qwen2_ts17 qwen3_ts17 qwen3_dynamo23; do timeout 60 $N/tests/gpu/mk-gpu-check tests/fixtures/$f.onnx --max-context=64 > $W/g.txt 2>&1; rc=$?; echo "$f rc=$rc $(grep -c FAIL $W/g.txt) FAIL"; [ $rc != 0 ] && tail -8 $W/g.txt; done
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/smol.mlir
bench() { # name mlir config extra-flags...
  local name=$1 m=$2 c=$3; shift 3
  timeout 60 $N/compiler/tools/mkc compile $m --emit=mk --random-weights --max-context=512 "$@" -o $W/$name.mk 2>&1 | grep -o "compiled.*spilled" | head -1
  timeout 30 $N/runtime/mkrun/mkrun $W/$name.mk --device gpu --tokens 1,7,42,3,99,5,11,64 --logits $W/$name.npy > $W/run.txt 2>&1 || { echo "$name: logits run FAILED"; tail -5 $W/run.txt; }
  timeout 30 $N/runtime/mkrun/mkrun $W/$name.mk --device gpu --tokens 1,7,42,3,99,5,11,64 --logits $W/$name-2.npy > /dev/null 2>&1
  cmp -s $W/$name.npy $W/$name-2.npy && echo "$name: logits run to run identical" || echo "$name: logits run to run DIFFERENT"
  timeout 100 python3 bench/decode_bench.py --mk $W/$name.mk --config $c --build $N --no-pytorch --out $OUT/bench-$name 2>&1 | grep -E "^\| mkc|Floor|rror" | sed "s/^/$name: /"
  rm -f $W/$name.mk
}
echo "== decode at 480-511, built for 512"
bench smol-ring $W/smol.mlir bench/configs/smollm2-135m-shaped.json
bench smol-plain $W/smol.mlir bench/configs/smollm2-135m-shaped.json --no-weight-ring
bench 1b-ring $W/1b.mlir bench/configs/llama-3.2-1b-shaped.json
bench 1b-plain $W/1b.mlir bench/configs/llama-3.2-1b-shaped.json --no-weight-ring
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
echo done
