#!/usr/bin/env bash
# Call 1, binaries .gpu/m1 (main, 287d051) and .gpu/p1 (main with the
# head prefetch: as each task starts, the loader warp asks L2 for the next
# task's weights when it is a HeadProjection tile, so that o_proj's
# weights stream while the SM's attention chunk runs: head-prefetch.patch
# of this folder, prefetchHeadProjectionTile in codegen/device/
# Prefetch.cuh; measured slower and not landed).
#   checks   with the prefetch: the HeadProjection kind against its CPU
#            reference, whole models on the GPU against the CPU executor,
#            by head (as call 1 of 2026-12-05)
#   timings  builds for 544 (the 1B shape, SmolLM2, Qwen3-0.6B, 64 tiny
#            layers) at 40 and 480, the 1B shape built for 32800 at 512 and
#            4096: merge tasks (d), by head (h), by head with the prefetch
#            (p), two rounds; traces of the 1B shape's h and p at 480.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in m1 p1; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
B=.gpu/p1 # the checks; mkrun and inspect are the same as m1's
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
check() { local t0=$SECONDS; local f=$W/f-$RANDOM$RANDOM.txt; timeout 200 $B/tests/gpu/"$@" > $f 2>&1
  echo "== $* rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(tail -1 $f)"; grep FAIL $f | head -3; }
F=tests/fixtures
checks() {
  check mk-task-kind-check HeadProjection $F/llama3_ts17.onnx --o-proj-by-head
  check mk-task-kind-check HeadProjection $F/qwen3_ts17.onnx --o-proj-by-head --max-context=2048 --kv-cache=bf16
  check mk-task-kind-check HeadProjection $F/phi3_ts17.onnx --o-proj-by-head
  check mk-task-kind-check Embed $F/llama3_ts17.onnx --o-proj-by-head
  check mk-task-kind-check Gemv $F/llama3_ts17.onnx --o-proj-by-head
  check mk-gpu-check $F/llama3_ts17.onnx --max-context=64 --o-proj-by-head
  check mk-gpu-check $F/qwen2_dynamo18.onnx --max-context=2048 --kv-cache=bf16 --o-proj-by-head
  check mk-gpu-check $F/extra/mistral_window6_ts17.onnx --max-context=64 --o-proj-by-head
  check mk-gpu-check $F/phi3_ts17.onnx --max-context=64 --o-proj-by-head
  check mk-gpu-check $F/extra/gemma3_ts17.onnx --max-context=64 --o-proj-by-head
}
checks > $W/checks.txt 2>&1 &
CHECKS=$!
for s in llama-3.2-1b smollm2-135m qwen3-0.6b layer-cost-64x256; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for f in d h p; do echo "$f llama-3.2-1b l 544"; echo "$f smollm2-135m s 544"; echo "$f qwen3-0.6b q 544"; echo "$f layer-cost-64x256 t 544"; echo "$f llama-3.2-1b L 32800"; done; } |
  xargs -P 8 -L 1 bash -c 'M=.gpu/m1; F=""; [ $0 != d ] && F=--o-proj-by-head; [ $0 = p ] && M=.gpu/p1; timeout 300 $M/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 $F -o '$W'/$2-$0.mk 2>&1 | grep -E "error|megakernel" | sed "s/^/$2-$0: /"'
echo "builds done at $SECONDS s"
wait $CHECKS; cat $W/checks.txt
echo "checks done at $SECONDS s"
run() { echo "$1 position $2: $(timeout 60 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do for f in d h p; do
  for m in l s q t; do for x in 40 480; do run $m-$f $x; done; done
  for x in 512 4096; do run L-$f $x; done
done; done
echo "timings done at $SECONDS s"
for m in l-h l-p s-p; do
  timeout 60 $B/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 7 -n 3 --trace $W/trace-$m.json > /dev/null
  $B/compiler/tools/mkc inspect $W/$m.mk --format=json -o $W/$m.json
  python3 bench/trace_summary.py --skip-steps 2 $W/trace-$m.json $W/$m.json > $OUT/trace-$m.txt 2>&1; head -1 $OUT/trace-$m.txt
done
echo "all done at $SECONDS s"
