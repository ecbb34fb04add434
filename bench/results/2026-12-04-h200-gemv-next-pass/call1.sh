#!/usr/bin/env bash
# Each pass of a gemv's rows issues the next pass's first batch as soon as
# its last batch is summed, so that the loads are in flight through the
# pass's shuffles, epilogue and store (.gpu/g4), against the kernel landed
# before it (916eb38, .gpu/g3), and that kernel with the loader's L2
# prefetch of the next task's first 128 KiB (--prefetch-bytes=131072: a
# second batch's worth past the first batch in registers). Fixtures and
# task kinds against the CPU executor, logits against 916eb38's and run to
# run, ms/token alternating over two rounds, a trace.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in g4 g3; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/g4; H=.gpu/g3
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b smollm2-135m qwen3-0.6b qwen2.5-1.5b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for m in "llama-3.2-1b l 544" "llama-3.2-1b L 32800" "qwen3-0.6b q 544" "smollm2-135m s 544" "qwen2.5-1.5b w 544"; do
    set -- $m; echo "$N $1 $2-n $3"; echo "$H $1 $2-h $3"; done
  echo "$H llama-3.2-1b l-p 544 --prefetch-bytes=131072"; } |
  xargs -P 14 -L 1 bash -c 'timeout 200 $0/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 ${@:4} -o '$W'/$2.mk 2>&1 | grep -E "error|registers|spill" | sed "s/^/$2: /"' &
CP=$!
kc() { timeout 100 $N/tests/gpu/mk-task-kind-check $@ > $W/k.txt 2>&1; echo "kind-check $* rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
kc Gemv tests/fixtures/llama3_ts17.onnx
kc Gemv tests/fixtures/qwen2_dynamo18.onnx
gc() { timeout 100 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep FAIL $W/g.txt | head -3; }
gc tests/fixtures/llama3_ts17.onnx --max-context=64
gc tests/fixtures/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
gc tests/fixtures/qwen2_dynamo18.onnx --max-context=64
wait $CP
lg() { timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position 0 --tokens 1,7,42 --logits $2 > /dev/null 2>&1 || echo "FAILED $1"; }
for m in l-n q-n w-n s-n L-n; do
  lg $m $W/a.npy; lg $m $W/c.npy; lg ${m%-*}-h $W/d.npy
  cmp -s $W/a.npy $W/c.npy && echo "$m logits bit-identical run to run" || echo "$m logits DIFFER run to run"
  cmp -s $W/a.npy $W/d.npy && echo "$m logits bit-identical to 916eb38's" || echo "$m logits DIFFER from 916eb38's"
done
run() { echo "$1 position $2: $(timeout 30 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for m in l-n l-h l-p q-n q-h w-n w-h s-n s-h; do for p in 1 480; do run $m $p; done; done
  for m in L-n L-h; do for p in 512 4096; do run $m $p; done; done
done
timeout 30 $N/runtime/mkrun/mkrun $W/l-n.mk --device gpu --start-position 480 --prompt-tokens 1 -n 9 --trace $W/l-n.json > /dev/null
$N/compiler/tools/mkc inspect $W/l-n.mk --format=json > $W/l-n.inspect.json
python3 bench/trace_summary.py $W/l-n.json $W/l-n.inspect.json > $OUT/trace-l-n.txt 2>&1; echo "trace l-n: $(head -1 $OUT/trace-l-n.txt)"
