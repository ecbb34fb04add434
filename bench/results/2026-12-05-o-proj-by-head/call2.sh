#!/usr/bin/env bash
# Call 2, binaries .gpu/b1 (as call 1) and .gpu/c1 (mkc with
# contiguous-tiles.patch, timing only: each HeadProjection tile reads one
# contiguous block of the same size, as a [head][rows][headDim] layout of
# o_proj would give it). Does the 1B shape's by-head o_proj lose its time
# to its strided 128-byte rows? Builds for 544 of SMolLM2, the 1B shape and
# Qwen3-0.6B: merge tasks (d), by head (h), by head contiguous (c) at 40
# and 480, two rounds; the checks again (the card may differ from call 1's);
# a trace of the 1B shape's c at 480.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/b1 ] || tar -C .gpu -xJf .gpu/b1.tar.xz
[ -d .gpu/c1 ] || tar -C .gpu -xJf .gpu/c1.tar.xz
B=.gpu/b1
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
check() { local t0=$SECONDS; local f=$W/f-$RANDOM$RANDOM.txt; timeout 200 $B/tests/gpu/"$@" > $f 2>&1
  echo "== $* rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(tail -1 $f)"; grep FAIL $f | head -3; }
F=tests/fixtures
checks() {
  check mk-task-kind-check HeadProjection $F/llama3_ts17.onnx --o-proj-by-head
  check mk-task-kind-check HeadProjection $F/qwen3_ts17.onnx --o-proj-by-head --max-context=2048 --kv-cache=bf16
  check mk-gpu-check $F/llama3_ts17.onnx --max-context=64 --o-proj-by-head
  check mk-gpu-check $F/qwen2_dynamo18.onnx --max-context=2048 --kv-cache=bf16 --o-proj-by-head
}
checks > $W/checks.txt 2>&1 &
CHECKS=$!
for s in llama-3.2-1b smollm2-135m qwen3-0.6b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for f in d h c; do echo "$f llama-3.2-1b l"; echo "$f smollm2-135m s"; echo "$f qwen3-0.6b q"; done; } |
  xargs -P 9 -L 1 bash -c 'M=.gpu/b1; F=""; [ $0 != d ] && F=--o-proj-by-head; [ $0 = c ] && M=.gpu/c1; timeout 300 $M/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 $F -o '$W'/$2-$0.mk 2>&1 | grep -E "error|megakernel" | sed "s/^/$2-$0: /"'
echo "builds done at $SECONDS s"
wait $CHECKS; cat $W/checks.txt
echo "checks done at $SECONDS s"
run() { echo "$1 position $2: $(timeout 60 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do for f in d h c; do
  for m in s l q; do for x in 40 480; do run $m-$f $x; done; done
done; done
echo "timings done at $SECONDS s"
for f in c; do for m in l; do
  timeout 60 $B/runtime/mkrun/mkrun $W/$m-$f.mk --device gpu --start-position 480 --prompt-tokens 7 -n 3 --trace $W/trace-$m-$f.json > /dev/null
  $B/compiler/tools/mkc inspect $W/$m-$f.mk --format=json -o $W/$m-$f.json
  python3 bench/trace_summary.py --skip-steps 2 $W/trace-$m-$f.json $W/$m-$f.json > $OUT/trace-$m-$f.txt 2>&1; head -1 $OUT/trace-$m-$f.txt
done; done
echo "all done at $SECONDS s"
