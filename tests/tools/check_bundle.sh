#!/usr/bin/env bash
# The relocatable bundle works away from the build: pack it, unpack it in a
# temporary folder, and run a fixture through it (compile, teacher-forced
# logits against onnxruntime, generation) on the CPU executor.
#   check_bundle.sh PYTHON FIXTURE.onnx
set -euo pipefail
PYTHON="$1"
FIXTURE="$2"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
bash "$ROOT/scripts/bundle.sh" "$TMP/mkc-bundle.tar.gz"
tar xzf "$TMP/mkc-bundle.tar.gz" -C "$TMP"
PYTHON="$PYTHON" "$TMP/mkc/scripts/run_model.sh" --onnx "$FIXTURE" --work "$TMP/work" \
  --device cpu --max-context 64 -n 8
# The bundled trace summary reads a trace of the bundled mkrun (CPU executor).
"$TMP/mkc/bin/mkrun" "$TMP/work/model.mk" --device cpu --prompt-tokens 1,2,3 -n 4 \
  --trace "$TMP/trace.json" > /dev/null
"$TMP/mkc/bin/mkc" inspect "$TMP/work/model.mk" --format=json > "$TMP/graph.json"
"$PYTHON" "$TMP/mkc/bench/trace_summary.py" "$TMP/trace.json" "$TMP/graph.json" > "$TMP/summary.txt"
grep -q "steps, median wall" "$TMP/summary.txt"
grep -q "r(free, end)" "$TMP/summary.txt"
grep -q "between tasks over all operations" "$TMP/summary.txt"
"$PYTHON" "$TMP/mkc/bench/decode_bench.py" --help > /dev/null
# The bundled harness plans with the bundled tools and reports without torch.
"$PYTHON" "$TMP/mkc/bench/harness.py" --dry-run --out "$TMP/results" --shapes llama-3.2-1b > /dev/null
"$PYTHON" "$TMP/mkc/bench/harness.py" --out "$TMP/results" --device cpu --no-stream --baselines none \
  --shapes "$TMP/mkc/bench/configs/smollm2-135m-shaped.json" --positions 1 --steps 1 --repeats 1 \
  --no-long-check --check-tokens 1 --no-trace --work "$TMP/harness-work" > /dev/null
grep -q "| smollm2-135m | 1 |" "$TMP/results/README.md"
# The bundled streaming probe (the floor's rate on a GPU machine) builds
# from the bundle alone, where nvcc is present to build it.
if command -v nvcc > /dev/null; then
  nvcc -O3 -arch=sm_90 -o "$TMP/stream_bandwidth" "$TMP/mkc/bench/stream/stream_bandwidth.cu"
fi
