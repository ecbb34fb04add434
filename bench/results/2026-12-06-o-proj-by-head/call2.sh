#!/usr/bin/env bash
# Call 2, binaries .gpu/a1: `--o-proj-by-head=auto` the default (o_proj cut
# by head where a tile's weights are at most 32 KiB: the fixtures, SmolLM2,
# Qwen3-0.6B, the 64 tiny layers; not the 1B shape), `=off` for merge tasks.
#   checks   default builds (by head) and =off builds on the GPU against
#            the CPU executor, the kinds of both forms, prompts layer by
#            layer and a batch of 4 beside a decode kernel by head
#   timings  builds for 544 of the four shapes, default against =off, at 40
#            and 480, two rounds
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/a1 ] || tar -C .gpu -xJf .gpu/a1.tar.xz
B=.gpu/a1
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
check() { local t0=$SECONDS; local f=$W/f-$RANDOM$RANDOM.txt; timeout 200 $B/tests/gpu/"$@" > $f 2>&1
  echo "== $* rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(tail -1 $f)"; grep FAIL $f | head -3; }
F=tests/fixtures
checks() {
  check mk-task-kind-check HeadProjection $F/llama3_ts17.onnx
  check mk-task-kind-check AttentionMerge $F/llama3_ts17.onnx --o-proj-by-head=off
  check mk-task-kind-check Gemv $F/llama3_ts17.onnx --o-proj-by-head=off
  check mk-task-kind-check Embed $F/llama3_ts17.onnx --o-proj-by-head=off
  check mk-gpu-check $F/llama3_ts17.onnx --max-context=64
  check mk-gpu-check $F/llama3_ts17.onnx --max-context=64 --o-proj-by-head=off
  check mk-gpu-check $F/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
  check mk-gpu-check $F/extra/gemma3_ts17.onnx --max-context=64
  check mk-gpu-prefill-check $F/llama3_ts17.onnx
  check mk-gpu-prefill-check $F/qwen3_ts17.onnx --kv-cache=bf16
  check mk-gpu-batch-check $F/llama3_ts17.onnx --batch=4
}
checks > $W/checks.txt 2>&1 &
CHECKS=$!
for s in llama-3.2-1b smollm2-135m qwen3-0.6b layer-cost-64x256; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for f in a o; do echo "$f llama-3.2-1b l"; echo "$f smollm2-135m s"; echo "$f qwen3-0.6b q"; echo "$f layer-cost-64x256 t"; done; } |
  xargs -P 8 -L 1 bash -c 'F=""; [ $0 = o ] && F=--o-proj-by-head=off; timeout 300 '$B'/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 $F -o '$W'/$2-$0.mk 2>&1 | grep -E "error|megakernel" | sed "s/^/$2-$0: /"'
echo "builds done at $SECONDS s"
wait $CHECKS; cat $W/checks.txt
echo "checks done at $SECONDS s"
run() { echo "$1 position $2: $(timeout 60 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do for f in a o; do
  for m in l s q t; do for x in 40 480; do run $m-$f $x; done; done
done; done
echo "all done at $SECONDS s"
