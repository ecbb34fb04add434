#!/usr/bin/env bash
set -uo pipefail
N=$PWD/.gpu/new; W=/tmp/w; mkdir -p $W $OUT
exec > >(tee $OUT/log.txt) 2>&1
echo "== kind checks (default kernel)"
for k in Gemv AttentionChunk Embed Argmax AttentionMerge; do for m in --toy tests/fixtures/qwen3_ts17.onnx tests/fixtures/llama3_ts17.onnx; do
  timeout 60 $N/tests/gpu/mk-task-kind-check $k $m > $W/kind.txt 2>&1; rc=$?
  echo "$k $(basename -- $m) rc=$rc | $(grep -iE 'largest' $W/kind.txt | tail -1)"; [ $rc != 0 ] && tail -6 $W/kind.txt; done; done
echo "== fixture checks (logits, sampling, streaming, cancel)"
for f in tests/fixtures/*.onnx; do timeout 60 $N/tests/gpu/mk-gpu-check $f --max-context=64 > $W/g.txt 2>&1; rc=$?; echo "$(basename $f) rc=$rc $(grep -c FAIL $W/g.txt) FAIL"; [ $rc != 0 ] && tail -8 $W/g.txt; done
cp $W/g.txt $OUT/last-fixture-check.txt
echo "== gpu_check.py"
timeout 150 python3 scripts/gpu_check.py --build $N > $OUT/gpu_check.txt 2>&1; echo "gpu_check rc=$?"; tail -6 $OUT/gpu_check.txt
echo "== python package on the GPU"
(cd python/tests && MKC=$N/compiler/tools/mkc MKRUN=$N/runtime/mkrun/mkrun MKRT_LIBRARY=$N/runtime/mkrt/libmkrt.so PYTHONPATH=.. timeout 90 python3 test_gpu.py -v > $OUT/python-gpu.txt 2>&1; echo "python test_gpu rc=$?"); tail -5 $OUT/python-gpu.txt
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/smol.mlir
bench() { # name mlir config extra-flags...
  local name=$1 m=$2 c=$3; shift 3
  timeout 60 $N/compiler/tools/mkc compile $m --emit=mk --random-weights --max-context=512 "$@" -o $W/$name.mk 2>&1 | grep -o "compiled.*spilled\|error.*" | head -2
  timeout 100 python3 bench/decode_bench.py --mk $W/$name.mk --config $c --build $N --no-pytorch --out $OUT/bench-$name 2>&1 | grep -E "^\| mkc|Floor|rror" | sed "s/^/$name: /"
}
echo "== decode at 480-511, built for 512"
bench 1b $W/1b.mlir bench/configs/llama-3.2-1b-shaped.json
bench smol $W/smol.mlir bench/configs/smollm2-135m-shaped.json
echo "== sampling and streaming cost (SmolLM2 shape, 256 tokens from position 0)"
for flags in "" "--temperature 0.8 --top-p 0.9 --seed 7" "--temperature 0.8 --top-k 40 --min-p 0.05 --repetition-penalty 1.1 --seed 7" "--stream" "--temperature 0.8 --top-p 0.9 --seed 7 --stream"; do
  timeout 60 $N/runtime/mkrun/mkrun $W/smol.mk --device gpu --prompt-tokens 1,2,3 -n 256 $flags > $W/s.txt 2>&1; rc=$?
  echo "[$flags] rc=$rc: $(grep -iE 'ms/token|ms per token|tokens/s' $W/s.txt | tail -2 | tr '\n' ' ')"; [ $rc != 0 ] && tail -3 $W/s.txt
done
echo done
