#!/usr/bin/env bash
# Correctness on the GPU of what landed since the last H200 run: the sampler
# in scan order (launch ABI 5), the fixtures, compute-sanitizer on sampled
# runs, the Python package and the OpenAI-compatible server on the GPU, and
# the loader (mmap, pieces, progress) on the Llama-3.2-1B shape.
set -uo pipefail
mkdir -p /tmp/stash $OUT; cp .xfer/* /tmp/stash/ 2>/dev/null
rm -rf .gpu/new; tar -C .gpu -xJf .gpu/new.tar.xz; N=$PWD/.gpu/new; W=/tmp/w; mkdir -p $W
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
echo "== Argmax kind: sampling against the CPU (ABI 5 scans)"
for m in --toy tests/fixtures/qwen3_ts17.onnx tests/fixtures/llama3_ts17.onnx; do
  timeout 60 $N/tests/gpu/mk-task-kind-check Argmax $m > $W/k.txt 2>&1; echo "Argmax $(basename -- $m) rc=$? | $(grep -iE 'sampl' $W/k.txt | tail -1)"; done
echo "== fixtures (mk-gpu-check)"
for f in tests/fixtures/*.onnx; do timeout 60 $N/tests/gpu/mk-gpu-check $f --max-context=64 > $W/g.txt 2>&1; rc=$?; echo "$(basename $f) rc=$rc $(grep -c FAIL $W/g.txt) FAIL"; [ $rc != 0 ] && grep FAIL $W/g.txt | cut -c1-300; done
timeout 60 $N/tests/gpu/mk-gpu-check --toy > $W/g.txt 2>&1; echo "toy rc=$?"; grep -E "FAIL|note" $W/g.txt
echo "== compute-sanitizer on sampled runs (llama3_ts17, 3-token prompt, 8 new)"
$N/compiler/tools/mkc compile tests/fixtures/llama3_ts17.onnx --emit=mk --max-context=64 -o $W/l3.mk > /dev/null 2>&1
for flags in "--temperature 0.8 --seed 3" "--temperature 0.8 --top-p 0.9 --seed 3" "--temperature 0.8 --top-k 40 --min-p 0.05 --repetition-penalty 1.1 --seed 3"; do
  for tool in memcheck racecheck synccheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $N/runtime/mkrun/mkrun $W/l3.mk --device gpu --prompt-tokens 1,2,3 -n 8 $flags > $W/cs.txt 2>&1
    echo "[$flags] $tool rc=$? | $(grep -E 'SUMMARY' $W/cs.txt | tail -1)"; done; done
echo "== the Python package and the server on the GPU"
(cd python/tests && export MKC=$N/compiler/tools/mkc MKRUN=$N/runtime/mkrun/mkrun MKRT_LIBRARY=$N/runtime/mkrt/libmkrt.so PYTHONPATH=..:/tmp/site
 timeout 120 python3 test_gpu.py -v 2>&1 | tail -4
 MKRT_TEST_DEVICE=gpu timeout 240 python3 test_serve.py -v 2>&1 | tail -25)
echo "== the loader: mmap, pieces, progress (Llama-3.2-1B shape)"
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
/usr/bin/time -v $N/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --max-context=512 -o $W/1b.mk 2>&1 | grep -E "wrote|Maximum resident|Elapsed"
script -qc "$N/runtime/mkrun/mkrun $W/1b.mk --device gpu --prompt-tokens 1,2,3 -n 8" /dev/null | tr '\r' '\n' | tail -6
/usr/bin/time -v $N/runtime/mkrun/mkrun $W/1b.mk --device gpu --tokens 1,7,42,3 --logits $W/1b-gpu.npy 2>&1 | grep -E "Maximum resident|Elapsed"
$N/runtime/mkrun/mkrun $W/1b.mk --device cpu --tokens 1,7,42,3 --logits $W/1b-cpu.npy > /dev/null && python3 scripts/compare_logits.py $W/1b-gpu.npy $W/1b-cpu.npy --rtol 1e-3
echo done
