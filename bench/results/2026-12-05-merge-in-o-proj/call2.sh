#!/usr/bin/env bash
# Call 2, binaries .gpu/h7: call 1's merge in o_proj with each head's chunk
# weights computed once a head (a warp, lanes over the chunks) instead of
# once an element: the kind and whole-model checks again, then the merge
# tasks (d) against the merge in o_proj (m), one round, and a trace.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/h7 ] || tar -C .gpu -xJf .gpu/h7.tar.xz
B=.gpu/h7
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
check() { local t0=$SECONDS; local f=$W/f-$RANDOM$RANDOM.txt; timeout 120 $B/tests/gpu/"$@" > $f 2>&1
  echo "== $* rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(tail -1 $f)"; grep FAIL $f | head -3; }
F=tests/fixtures
{ check mk-task-kind-check Gemv $F/llama3_ts17.onnx --merge-in-o-proj
  check mk-task-kind-check Gemv $F/extra/gemma3_ts17.onnx --merge-in-o-proj
  check mk-gpu-check $F/qwen2_dynamo18.onnx --max-context=2048 --kv-cache=bf16 --merge-in-o-proj
  check mk-gpu-check $F/extra/mistral_window6_ts17.onnx --max-context=64 --merge-in-o-proj; } > $W/checks.txt 2>&1 &
CHECKS=$!
for s in llama-3.2-1b smollm2-135m qwen3-0.6b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for f in d m; do echo "$f llama-3.2-1b l 544"; echo "$f smollm2-135m s 544"; echo "$f qwen3-0.6b q 544"; echo "$f llama-3.2-1b L 32800"; done; } |
  xargs -P 8 -L 1 bash -c 'F=""; [ $0 = m ] && F=--merge-in-o-proj; timeout 200 '$B'/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 $F -o '$W'/$2-$0.mk 2>&1 | grep -E "error|megakernel" | sed "s/^/$2-$0: /"'
wait $CHECKS; cat $W/checks.txt
echo "builds and checks done at $SECONDS s"
run() { echo "$1 position $2: $(timeout 30 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for f in d m; do
  for m in s l q; do for x in 40 480; do run $m-$f $x; done; done
  for x in 512 32700; do run L-$f $x; done
done
echo "timings done at $SECONDS s"
timeout 30 $B/runtime/mkrun/mkrun $W/s-m.mk --device gpu --start-position 480 --prompt-tokens 7 -n 3 --trace $W/trace-s-m.json > /dev/null
$B/compiler/tools/mkc inspect $W/s-m.mk --format=json -o $W/s-m.json
python3 bench/trace_summary.py --skip-steps 2 $W/trace-s-m.json $W/s-m.json > $OUT/trace-s-m.txt 2>&1; head -1 $OUT/trace-s-m.txt
grep -E "layer15\." $OUT/trace-s-m.txt
echo "all done at $SECONDS s"
