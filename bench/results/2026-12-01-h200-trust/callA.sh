#!/usr/bin/env bash
# Fixture checks (the free-memory refusal among them) and compute-sanitizer's
# four tools on the fixtures and on the Llama-3.2-1B shape.
set -uo pipefail
mkdir -p /tmp/stash $OUT; cp .xfer/* /tmp/stash/ 2>/dev/null
tar -C .gpu -xJf .gpu/new.tar.xz; N=$PWD/.gpu/new; W=/tmp/w; mkdir -p $W
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv,noheader
compute-sanitizer --version | tail -1
echo "== fixture checks (mk-gpu-check)"
for f in tests/fixtures/*.onnx; do timeout 60 $N/tests/gpu/mk-gpu-check $f --max-context=64 > $W/g.txt 2>&1; rc=$?
  echo "$(basename $f) rc=$rc $(grep -c FAIL $W/g.txt) FAIL"; [ $rc != 0 ] && tail -8 $W/g.txt; done
grep -E "free device memory|timeout|WAIT_TIMEOUT" $W/g.txt | cut -c1-400
timeout 60 $N/tests/gpu/mk-gpu-check --toy > $W/toy.txt 2>&1; echo "toy rc=$? $(grep -c FAIL $W/toy.txt) FAIL"
echo "== compute-sanitizer on the fixtures (mkrun, 3-token prompt, 8 new tokens)"
for f in llama3_ts17 qwen2_ts17 qwen3_ts17 mistral_dynamo18; do
  $N/compiler/tools/mkc compile tests/fixtures/$f.onnx --emit=mk --max-context=64 -o $W/$f.mk > /dev/null 2>&1 || echo "compile $f FAILED"
  for tool in memcheck racecheck synccheck initcheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $N/runtime/mkrun/mkrun $W/$f.mk --device gpu --prompt-tokens 1,2,3 -n 8 > $W/cs.txt 2>&1; rc=$?
    echo "$f $tool rc=$rc | $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/cs.txt | tail -1)"; [ $rc != 0 ] && tail -6 $W/cs.txt
  done
done
f=llama3_ts17
for flags in "--temperature 0.8 --top-k 40 --top-p 0.9 --min-p 0.05 --repetition-penalty 1.1 --seed 7" "--stream" "--cancel-after 3"; do
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $N/runtime/mkrun/mkrun $W/$f.mk --device gpu --prompt-tokens 1,2,3 -n 8 $flags > $W/cs.txt 2>&1; rc=$?
  echo "$f memcheck [$flags] rc=$rc | $(grep -E 'ERROR SUMMARY' $W/cs.txt | tail -1)"; [ $rc != 0 ] && tail -6 $W/cs.txt
done
for k in Gemv AttentionChunk AttentionMerge Embed Argmax; do
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $N/tests/gpu/mk-task-kind-check $k --toy > $W/cs.txt 2>&1; rc=$?
  echo "kind $k memcheck rc=$rc | $(grep -E 'ERROR SUMMARY' $W/cs.txt | tail -1)"; [ $rc != 0 ] && tail -6 $W/cs.txt
done
echo "== compute-sanitizer on the Llama-3.2-1B shape (random weights, context 512; 4-token prompt, 2 new tokens)"
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
timeout 90 $N/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --max-context=512 -o $W/1b.mk 2>&1 | tail -1
for tool in memcheck synccheck initcheck racecheck; do
  start=$(date +%s)
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $N/runtime/mkrun/mkrun $W/1b.mk --device gpu --prompt-tokens 1,2,3,4 -n 2 > $W/cs.txt 2>&1; rc=$?
  echo "1b $tool rc=$rc ($(( $(date +%s) - start )) s) | $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/cs.txt | tail -1)"; [ $rc != 0 ] && tail -6 $W/cs.txt
done
echo done
