#!/usr/bin/env bash
# Call 1, binaries .gpu/b1 (main with --o-proj-by-head): o_proj cut by q
# head, each HeadProjection task merging its head's chunks and adding its
# rows' share into a fixed64 output that the residual's producer seeds, so
# that a layer has no merge phase.
#   checks   the HeadProjection kind against its CPU reference on three
#            fixtures, the seeding Embed and Gemvs, whole models on the GPU
#            against the CPU executor with --o-proj-by-head
#   timings  builds for 544 (SmolLM2, the 1B shape, Qwen3-0.6B, 64 tiny
#            layers) at 40 and 480, and the 1B shape built for 32800 at
#            512, 4096 and 32700: merge tasks (d) against by head (h), two
#            rounds; then traces of SmolLM2 and the 1B shape at 480.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/b1 ] || tar -C .gpu -xJf .gpu/b1.tar.xz
B=.gpu/b1
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
{ for f in d h; do echo "$f llama-3.2-1b l 544"; echo "$f smollm2-135m s 544"; echo "$f qwen3-0.6b q 544"; echo "$f layer-cost-64x256 t 544"; echo "$f llama-3.2-1b L 32800"; done; } |
  xargs -P 10 -L 1 bash -c 'F=""; [ $0 = h ] && F=--o-proj-by-head; timeout 300 '$B'/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 $F -o '$W'/$2-$0.mk 2>&1 | grep -E "error|megakernel" | sed "s/^/$2-$0: /"'
echo "builds done at $SECONDS s"
wait $CHECKS; cat $W/checks.txt
echo "checks done at $SECONDS s"
run() { echo "$1 position $2: $(timeout 60 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do for f in d h; do
  for m in s l q t; do for x in 40 480; do run $m-$f $x; done; done
  for x in 512 4096 32700; do run L-$f $x; done
done; done
echo "timings done at $SECONDS s"
for f in d h; do for m in s l; do
  timeout 60 $B/runtime/mkrun/mkrun $W/$m-$f.mk --device gpu --start-position 480 --prompt-tokens 7 -n 3 --trace $W/trace-$m-$f.json > /dev/null
  $B/compiler/tools/mkc inspect $W/$m-$f.mk --format=json -o $W/$m-$f.json
  python3 bench/trace_summary.py --skip-steps 2 $W/trace-$m-$f.json $W/$m-$f.json > $OUT/trace-$m-$f.txt 2>&1; head -1 $OUT/trace-$m-$f.txt
done; done
echo "all done at $SECONDS s"
