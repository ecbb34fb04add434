#!/usr/bin/env bash
# Call 1 as run: beside call1.sh's compiles and kind checks (main's binaries,
# .gpu/m1), the checks of what no GPU had run (binaries .gpu/w1, main's as
# well since the work landed, 3be33e5: sliding windows in the task kinds and
# the prompt kernels, Gemma's GELU-gated MLP, Gemma 3):
#   families  bench/NOTES.md, item 17: the Phi-3 and Granite fixtures through
#             the decode kernel at 64 and 2048 positions and through the
#             prompt kernels;
#   windows   tests/gpu/CMakeLists.txt's sliding-window tests: the chunk and
#             merge kinds past Mistral's window of 4096, a window of 6 through
#             the kernel, the prompt kernels and a batch; Gemma's
#             gelu_tanh_mul epilogue the same way.
# call1.sh's timings wait until both are done; CHECKS_ONLY=1 runs the checks
# alone.
set -uo pipefail
mkdir -p $OUT /tmp/w
for b in m1 w1; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/w1
check() { local t0=$SECONDS; local f=/tmp/w/f-$RANDOM$RANDOM.txt; env $1 timeout 300 $N/tests/gpu/${@:2} > $f 2>&1
  echo "== ${*:2} ($1) rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(tail -1 $f)"; grep FAIL $f | head -3; }
families() {
  for f in phi3_ts17 phi3_dynamo18 phi3_dynamo23 granite_ts17 granite_dynamo18 granite_dynamo23; do
    check X=1 mk-gpu-check tests/fixtures/$f.onnx --max-context=64
  done
  for f in phi3_ts17 granite_ts17; do check X=1 mk-gpu-check tests/fixtures/$f.onnx --max-context=2048; done
  for a in X=1 MKRT_PREFILL_ATTENTION=own; do
    check $a mk-gpu-prefill-check tests/fixtures/phi3_ts17.onnx
    check $a mk-gpu-prefill-check tests/fixtures/granite_ts17.onnx --kv-cache=bf16
  done
}
windows() {
  local m=tests/fixtures/extra/mistral_sliding_ts17.onnx
  for k in AttentionChunk AttentionMerge; do check X=1 mk-task-kind-check $k $m --max-context=10000 --num-sms=8 --kv-cache=bf16; done
  check X=1 mk-task-kind-check AttentionChunk $m --max-context=10000 --num-sms=8 --kv-cache=bf16 --chunk-attention=tensor-cores
  check X=1 mk-task-kind-check AttentionChunk $m --max-context=10000
  for f in mistral_window6_ts17 mistral_window6_dynamo23 gemma_ts17 gemma_dynamo23 gemma3_ts17; do
    check X=1 mk-gpu-check tests/fixtures/extra/$f.onnx --max-context=64
    check X=1 mk-gpu-prefill-check tests/fixtures/extra/$f.onnx --max-context=256 --prompt=200
    check X=1 mk-gpu-batch-check tests/fixtures/extra/$f.onnx --batch=3 --max-context=64
  done
  check X=1 mk-gpu-prefill-check tests/fixtures/extra/mistral_window6_ts17.onnx --max-context=256 --prompt=200 --kv-cache=bf16
}
touch /tmp/w/families.running
( families > $OUT/families.txt 2>&1 & F=$!; windows > $OUT/windows.txt 2>&1; wait $F; rm -f /tmp/w/families.running ) &
# CHECKS_ONLY=1: the checks alone, where device time is short.
if [ "${CHECKS_ONLY:-0}" = 1 ]; then wait; else bash bench/results/2026-12-05-h200-l2-and-chunk-mma/call1.sh; fi
echo "---- families"; cat $OUT/families.txt; echo "---- windows"; cat $OUT/windows.txt
