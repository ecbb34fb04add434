#!/usr/bin/env bash
# The fixture checks with the free-memory refusal, the sampler's exactness and
# cost, racecheck on a two-layer model of the Llama-3.2-1B shape's dimensions.
set -uo pipefail
mkdir -p /tmp/stash $OUT; cp .xfer/* /tmp/stash/ 2>/dev/null
rm -rf .gpu/new; tar -C .gpu -xJf .gpu/new.tar.xz; N=$PWD/.gpu/new; W=/tmp/w; mkdir -p $W
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
echo "== fixture checks (mk-gpu-check)"
for f in llama3_ts17 llama3_fp16_ts17 qwen2_ts17 qwen3_ts17 mistral_dynamo18 qwen3_dynamo23; do timeout 60 $N/tests/gpu/mk-gpu-check tests/fixtures/$f.onnx --max-context=64 > $W/g.txt 2>&1; rc=$?
  echo "$f rc=$rc $(grep -c FAIL $W/g.txt) FAIL"; [ $rc != 0 ] && grep FAIL $W/g.txt | cut -c1-300; done
grep -E "free device memory" $W/g.txt | cut -c1-600
timeout 60 $N/tests/gpu/mk-gpu-check --toy > $W/toy.txt 2>&1; echo "toy rc=$? $(grep -c FAIL $W/toy.txt) FAIL"; grep FAIL $W/toy.txt | cut -c1-300
echo "== Argmax kind (every sampling setting against the CPU)"
for m in --toy tests/fixtures/qwen3_ts17.onnx tests/fixtures/llama3_ts17.onnx; do
  timeout 60 $N/tests/gpu/mk-task-kind-check Argmax $m > $W/kind.txt 2>&1; rc=$?
  echo "Argmax $(basename -- $m) rc=$rc | $(grep -iE 'largest|sampl' $W/kind.txt | tail -2 | tr '\n' ' ')"; [ $rc != 0 ] && tail -6 $W/kind.txt; done
echo "== sampling cost (SmolLM2 shape, 256 tokens from position 0)"
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/smol.mlir
timeout 60 $N/compiler/tools/mkc compile $W/smol.mlir --emit=mk --random-weights --max-context=512 -o $W/smol.mk 2>&1 | tail -1
for flags in "" "--temperature 0.8 --top-p 0.9 --seed 7" "--temperature 0.8 --top-k 40 --min-p 0.05 --repetition-penalty 1.1 --seed 7" "--temperature 0.8 --seed 7" "--stream"; do
  timeout 60 $N/runtime/mkrun/mkrun $W/smol.mk --device gpu --prompt-tokens 1,2,3 -n 256 $flags > $W/s.txt 2>&1; rc=$?
  echo "[$flags] rc=$rc: $(grep -E '^generation' $W/s.txt)"; [ $rc != 0 ] && tail -3 $W/s.txt
done
echo "== racecheck, Llama-3.2-1B dimensions with 2 layers (one step)"
python3 - <<'PY'
import json; c=json.load(open("bench/configs/llama-3.2-1b-shaped.json")); c["num_hidden_layers"]=2
json.dump(c, open("/tmp/w/1b-2layers.json","w"))
PY
python3 scripts/fused_module.py $W/1b-2layers.json -o $W/1b2.mlir
timeout 60 $N/compiler/tools/mkc compile $W/1b2.mlir --emit=mk --random-weights --max-context=512 -o $W/1b2.mk 2>&1 | tail -1
start=$(date +%s)
timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 $N/runtime/mkrun/mkrun $W/1b2.mk --device gpu --prompt-tokens 1 -n 1 > $W/cs.txt 2>&1; rc=$?
echo "1b-2layers racecheck rc=$rc ($(( $(date +%s) - start )) s) | $(grep -E 'RACECHECK SUMMARY' $W/cs.txt | tail -1)"; tail -4 $W/cs.txt
echo done
