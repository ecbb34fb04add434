#!/usr/bin/env bash
# Call 2, binaries .gpu/m2 (main, 65d7f41: mkc only), .gpu/t3 (call 1's
# tile prefetch with one row a thread and no loop, and only for tiles of at
# most 32 KiB: the form to land) and .gpu/t4 (t3 and, as every task starts,
# one thread asks L2 for the SM's next Gemv tile's weights when they are at
# most 32 KiB: an experiment).
#   checks   t3: the HeadProjection kind, whole models by head (the default)
#            and with merge tasks against the CPU executor, a batch of 4,
#            prompts layer by layer; t4: whole models by head
#   timings  builds for 544 at 40 and 480: SmolLM2, Qwen3-0.6B and the 64
#            tiny layers by default (by head) for m2, t3, t4; the 1B shape
#            with merge tasks (the default) and by head (=on) for m2 and
#            t3. Two rounds; traces of SmolLM2 at 480 for each.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in m2 t3 t4; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
B=.gpu/t3
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
check() { local t0=$SECONDS; local f=$W/f-$RANDOM$RANDOM.txt; timeout 200 "$@" > $f 2>&1
  echo "== $* rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(grep -c '^  ok' $f) ok; $(tail -1 $f)"; grep FAIL $f | head -3; }
F=tests/fixtures
checks() {
  check $B/tests/gpu/mk-task-kind-check HeadProjection $F/llama3_ts17.onnx
  check $B/tests/gpu/mk-task-kind-check HeadProjection $F/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
  check $B/tests/gpu/mk-task-kind-check HeadProjection $F/phi3_ts17.onnx
  check $B/tests/gpu/mk-gpu-check $F/llama3_ts17.onnx --max-context=64
  check $B/tests/gpu/mk-gpu-check $F/llama3_ts17.onnx --max-context=64 --o-proj-by-head=off
  check $B/tests/gpu/mk-gpu-check $F/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
  check $B/tests/gpu/mk-gpu-check $F/qwen2_dynamo18.onnx --max-context=2048 --kv-cache=bf16
  check $B/tests/gpu/mk-gpu-check $F/phi3_ts17.onnx --max-context=64
  check $B/tests/gpu/mk-gpu-check $F/extra/mistral_window6_ts17.onnx --max-context=64
  check $B/tests/gpu/mk-gpu-batch-check $F/llama3_ts17.onnx --batch=4
  check $B/tests/gpu/mk-gpu-prefill-check $F/qwen3_ts17.onnx --kv-cache=bf16
  check .gpu/t4/tests/gpu/mk-gpu-check $F/llama3_ts17.onnx --max-context=64
  check .gpu/t4/tests/gpu/mk-gpu-check $F/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
}
checks > $W/checks.txt 2>&1 &
CHECKS=$!
for s in llama-3.2-1b smollm2-135m qwen3-0.6b layer-cost-64x256; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
# name shape binaries flag
cat > $W/builds.txt <<'LIST'
s-m smollm2-135m m2 --o-proj-by-head=auto
s-3 smollm2-135m t3 --o-proj-by-head=auto
s-4 smollm2-135m t4 --o-proj-by-head=auto
q-m qwen3-0.6b m2 --o-proj-by-head=auto
q-3 qwen3-0.6b t3 --o-proj-by-head=auto
q-4 qwen3-0.6b t4 --o-proj-by-head=auto
t-m layer-cost-64x256 m2 --o-proj-by-head=auto
t-3 layer-cost-64x256 t3 --o-proj-by-head=auto
t-4 layer-cost-64x256 t4 --o-proj-by-head=auto
l-m llama-3.2-1b m2 --o-proj-by-head=auto
l-3 llama-3.2-1b t3 --o-proj-by-head=auto
l-mh llama-3.2-1b m2 --o-proj-by-head=on
l-3h llama-3.2-1b t3 --o-proj-by-head=on
LIST
xargs -P 8 -L 1 bash -c 'timeout 300 .gpu/$2/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 $3 -o '$W'/$0.mk 2>&1 | grep -E "error|megakernel" | sed "s/^/$0: /"' < $W/builds.txt
echo "builds done at $SECONDS s"
wait $CHECKS; cat $W/checks.txt
echo "checks done at $SECONDS s"
run() { echo "$1 position $2: $(timeout 60 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for m in s-m s-3 s-4 q-m q-3 q-4 t-m t-3 t-4; do for x in 40 480; do run $m $x; done; done
  for m in l-m l-3 l-mh l-3h; do run $m 480; done
done
echo "timings done at $SECONDS s"
for m in s-m s-3 s-4; do
  timeout 60 $B/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 7 -n 3 --trace $W/trace-$m.json > /dev/null
  $B/compiler/tools/mkc inspect $W/$m.mk --format=json -o $W/$m.json
  python3 bench/trace_summary.py --skip-steps 2 $W/trace-$m.json $W/$m.json > $OUT/trace-$m.txt 2>&1; head -1 $OUT/trace-$m.txt
done
echo "all done at $SECONDS s"
