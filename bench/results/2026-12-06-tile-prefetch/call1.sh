#!/usr/bin/env bash
# Call 1, binaries .gpu/m2 (main, 65d7f41: mkc only) and .gpu/t1 (the tile
# prefetch: the interpreter keeps three queue entries in shared memory, the
# loader copying the one after the next, so that the next task's entry is
# whole as a task starts; an attention chunk whose next task on its SM is a
# HeadProjection tile asks L2 for the tile's weights, a prefetch a 128-byte
# line, as it starts).
#   checks   t1: the HeadProjection kind, whole models by head (the default)
#            and with merge tasks against the CPU executor, a batch of 4
#   timings  builds for 544 at 40 and 480: the 1B shape with merge tasks
#            (=off) and by head (=on), old (m2) and new (t1); SmolLM2,
#            Qwen3-0.6B and the 64 tiny layers by default (by head), old
#            and new; the 1B shape built for 32800 at 512 and 4096, old
#            =off, new =off, new =on. Two rounds; traces of the 1B shape
#            by head at 480, old and new.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in m2 t1; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
B=.gpu/t1
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
check() { local t0=$SECONDS; local f=$W/f-$RANDOM$RANDOM.txt; timeout 200 $B/tests/gpu/"$@" > $f 2>&1
  echo "== $* rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(tail -1 $f)"; grep FAIL $f | head -3; }
F=tests/fixtures
checks() {
  check mk-task-kind-check HeadProjection $F/llama3_ts17.onnx
  check mk-task-kind-check HeadProjection $F/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
  check mk-gpu-check $F/llama3_ts17.onnx --max-context=64
  check mk-gpu-check $F/llama3_ts17.onnx --max-context=64 --o-proj-by-head=off
  check mk-gpu-check $F/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
  check mk-gpu-check $F/qwen2_dynamo18.onnx --max-context=2048 --kv-cache=bf16
  check mk-gpu-check $F/phi3_ts17.onnx --max-context=64
  check mk-gpu-check $F/extra/gemma3_ts17.onnx --max-context=64
  check mk-gpu-batch-check $F/llama3_ts17.onnx --batch=4
}
checks > $W/checks.txt 2>&1 &
CHECKS=$!
for s in llama-3.2-1b smollm2-135m qwen3-0.6b layer-cost-64x256; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
# name: shape binaries flag context
cat > $W/builds.txt <<'LIST'
l-mo llama-3.2-1b m2 --o-proj-by-head=off 544
l-to llama-3.2-1b t1 --o-proj-by-head=off 544
l-mh llama-3.2-1b m2 --o-proj-by-head=on 544
l-th llama-3.2-1b t1 --o-proj-by-head=on 544
s-m smollm2-135m m2 --o-proj-by-head=auto 544
s-t smollm2-135m t1 --o-proj-by-head=auto 544
q-m qwen3-0.6b m2 --o-proj-by-head=auto 544
q-t qwen3-0.6b t1 --o-proj-by-head=auto 544
t-m layer-cost-64x256 m2 --o-proj-by-head=auto 544
t-t layer-cost-64x256 t1 --o-proj-by-head=auto 544
L-mo llama-3.2-1b m2 --o-proj-by-head=off 32800
L-to llama-3.2-1b t1 --o-proj-by-head=off 32800
L-th llama-3.2-1b t1 --o-proj-by-head=on 32800
LIST
xargs -P 8 -L 1 bash -c 'timeout 300 .gpu/$2/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$4 $3 -o '$W'/$0.mk 2>&1 | grep -E "error|megakernel" | sed "s/^/$0: /"' < $W/builds.txt
echo "builds done at $SECONDS s"
wait $CHECKS; cat $W/checks.txt
echo "checks done at $SECONDS s"
run() { echo "$1 position $2: $(timeout 60 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for m in l-mo l-to l-mh l-th s-m s-t q-m q-t t-m t-t; do for x in 40 480; do run $m $x; done; done
  for m in L-mo L-to L-th; do for x in 512 4096; do run $m $x; done; done
done
echo "timings done at $SECONDS s"
for m in l-mh l-th; do
  timeout 60 $B/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 7 -n 3 --trace $W/trace-$m.json > /dev/null
  $B/compiler/tools/mkc inspect $W/$m.mk --format=json -o $W/$m.json
  python3 bench/trace_summary.py --skip-steps 2 $W/trace-$m.json $W/$m.json > $OUT/trace-$m.txt 2>&1; head -1 $OUT/trace-$m.txt
done
echo "all done at $SECONDS s"
