#!/usr/bin/env bash
# The attention chunks' staging ring on the H200: correctness (the chunk
# kind against its CPU reference at long chunks, every fixture, the
# sanitizers on a run whose chunks cycle the ring), then the 1B shape's
# context curve with the build before (old) and after (new), same call.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in old new; do rm -rf .gpu/$b; tar -C .gpu -xJf .gpu/$b.tar.xz; done
O=$PWD/.gpu/old N=$PWD/.gpu/new
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv,noheader
echo "== AttentionChunk against the CPU reference"
for m in "--toy" "tests/fixtures/qwen3_ts17.onnx" "tests/fixtures/llama3_ts17.onnx" "tests/fixtures/llama3_ts17.onnx --max-context=32768" "tests/fixtures/qwen3_ts17.onnx --max-context=8192"; do
  timeout 120 $N/tests/gpu/mk-task-kind-check AttentionChunk $m > $W/k.txt 2>&1; echo "[$m] rc=$? | $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; done
for k in AttentionMerge Gemv; do timeout 120 $N/tests/gpu/mk-task-kind-check $k tests/fixtures/llama3_ts17.onnx > $W/k.txt 2>&1; echo "$k rc=$? | $(tail -1 $W/k.txt)"; done
echo "== fixtures (mk-gpu-check, new)"
for f in tests/fixtures/*.onnx; do for c in 64 4096; do timeout 90 $N/tests/gpu/mk-gpu-check $f --max-context=$c > $W/g.txt 2>&1; rc=$?; echo "$(basename $f) ctx $c rc=$rc $(grep -c FAIL $W/g.txt) FAIL"; [ $rc != 0 ] && grep FAIL $W/g.txt | cut -c1-300 | head -3; done; done
echo "== compute-sanitizer (llama3_ts17 built for 32768, 6 steps from 20000: chunks of many blocks)"
$N/compiler/tools/mkc compile tests/fixtures/llama3_ts17.onnx --emit=mk --max-context=32768 -o $W/l3.mk > /dev/null 2>&1
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $N/runtime/mkrun/mkrun $W/l3.mk --device gpu --start-position 20000 --prompt-tokens 1,2,3 -n 3 > $W/cs.txt 2>&1
  echo "$tool rc=$? | $(grep -E 'SUMMARY' $W/cs.txt | tail -1)"; done
$N/runtime/mkrun/mkrun $W/l3.mk --device gpu --start-position 30000 --tokens 1,7,42,3 --logits $W/g.npy > /dev/null && $N/runtime/mkrun/mkrun $W/l3.mk --device cpu --start-position 30000 --tokens 1,7,42,3 --logits $W/c.npy > /dev/null && python3 scripts/compare_logits.py $W/g.npy $W/c.npy --rtol 1e-3
echo "== harness: llama-3.2-1b, old then new build"
for b in new old; do
  timeout 260 python3 bench/harness.py --out $W/h-$b --build .gpu/$b --shapes llama-3.2-1b --positions 1,512,4096,32768 --baselines none --no-trace --work $W/work-$b 2>&1 | tail -12
done
tar -C $W -czf $OUT/harness.tar.gz h-new h-old
echo done
