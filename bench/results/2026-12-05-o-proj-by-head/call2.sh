#!/usr/bin/env bash
# Call 2, binaries .gpu/b3 (main with prompts from decode graphs without
# merge tasks, runtime/gpu/PrefillPlan.h's promptGraph, and a head's chunk
# weights in one device function, weighHeadChunks) and .gpu/c1 (mkc
# with contiguous-tiles.patch, timing only: each HeadProjection tile reads
# one contiguous block of the same size, as a [head][rows][headDim] layout
# of o_proj would give it).
#   checks   the kinds of both merges in o_proj (the Gemv merging every
#            head, HeadProjection) against the CPU; prompts layer by layer
#            against the decode kernel of the same file, for
#            --o-proj-by-head and --merge-in-o-proj builds; whole models
#   timings  builds for 544 of SmolLM2, the 1B shape and Qwen3-0.6B: merge
#            tasks (d), by head (h), by head contiguous (c) at 40 and 480,
#            two rounds; prompts of 512 tokens (d, h); a trace of the 1B
#            shape's c at 480. Does the 1B shape's by-head o_proj lose its
#            time to its strided 128-byte rows, or to weights no longer
#            streaming during the merge phase?
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/b3 ] || tar -C .gpu -xJf .gpu/b3.tar.xz
[ -d .gpu/c1 ] || tar -C .gpu -xJf .gpu/c1.tar.xz
B=.gpu/b3
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
check() { local t0=$SECONDS; local f=$W/f-$RANDOM$RANDOM.txt; timeout 240 $B/tests/gpu/"$@" > $f 2>&1
  echo "== $* rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(tail -1 $f)"; grep FAIL $f | head -3; }
F=tests/fixtures
for s in llama-3.2-1b smollm2-135m qwen3-0.6b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
checks() {
  check mk-task-kind-check Gemv $F/llama3_ts17.onnx --merge-in-o-proj
  check mk-task-kind-check Gemv $F/extra/gemma3_ts17.onnx --merge-in-o-proj
  check mk-task-kind-check HeadProjection $F/qwen3_ts17.onnx --o-proj-by-head --max-context=2048 --kv-cache=bf16
  check mk-task-kind-check HeadProjection $F/phi3_ts17.onnx --o-proj-by-head
  check mk-gpu-check $F/llama3_ts17.onnx --max-context=64 --merge-in-o-proj
  check mk-gpu-prefill-check $F/llama3_ts17.onnx --o-proj-by-head
  check mk-gpu-prefill-check $F/qwen3_ts17.onnx --kv-cache=bf16 --o-proj-by-head
  check mk-gpu-prefill-check $F/llama3_ts17.onnx --merge-in-o-proj
  check mk-gpu-prefill-check $W/smollm2-135m.mlir --max-context=700 --prompt=650 --o-proj-by-head
  check mk-task-kind-check HeadProjection $F/llama3_ts17.onnx --o-proj-by-head
  check mk-gpu-check $F/qwen2_dynamo18.onnx --max-context=2048 --kv-cache=bf16 --o-proj-by-head
}
checks > $W/checks.txt 2>&1 &
CHECKS=$!
{ for f in d h c; do echo "$f llama-3.2-1b l"; echo "$f smollm2-135m s"; echo "$f qwen3-0.6b q"; done; } |
  xargs -P 9 -L 1 bash -c 'M=.gpu/b3; F=""; [ $0 != d ] && F=--o-proj-by-head; [ $0 = c ] && M=.gpu/c1; timeout 300 $M/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 $F -o '$W'/$2-$0.mk 2>&1 | grep -E "error|megakernel" | sed "s/^/$2-$0: /"'
echo "builds done at $SECONDS s"
wait $CHECKS; cat $W/checks.txt
echo "checks done at $SECONDS s"
run() { echo "$1 position $2: $(timeout 60 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do for f in d h c; do
  for m in s l q; do for x in 40 480; do run $m-$f $x; done; done
done; done
echo "timings done at $SECONDS s"
P=$(python3 -c "print(','.join(str((i*37)%1000+1) for i in range(512)))")
for f in d h; do for m in s l; do
  echo "$m-$f prompt 512: $(timeout 60 $B/runtime/mkrun/mkrun $W/$m-$f.mk --device gpu --prompt-tokens $P -n 1 2>&1 | grep -E '^prompt|error' | head -2 | tr '\n' ' ')"
done; done
timeout 60 $B/runtime/mkrun/mkrun $W/l-c.mk --device gpu --start-position 480 --prompt-tokens 7 -n 3 --trace $W/trace-l-c.json > /dev/null
$B/compiler/tools/mkc inspect $W/l-c.mk --format=json -o $W/l-c.json
python3 bench/trace_summary.py --skip-steps 2 $W/trace-l-c.json $W/l-c.json > $OUT/trace-l-c.txt 2>&1; head -1 $OUT/trace-l-c.txt
echo "all done at $SECONDS s"
