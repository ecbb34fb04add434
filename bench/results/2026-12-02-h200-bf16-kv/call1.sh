#!/usr/bin/env bash
# bf16 KV caches (--kv-cache=bf16) against f32 ones, one binary (.gpu/new):
# the attention chunk against its CPU reference (register and staged paths),
# whole fixtures against the CPU executor, then ms/token alternating f32 and
# bf16 builds of the 1B and Qwen3-0.6B shapes; and the gemvs' early copies
# off (--no-gemv-early-copy) against on, with traces of the hops at 512.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/new ] || tar -C .gpu -xJf .gpu/new.tar.xz
N=.gpu/new
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for s in llama-3.2-1b qwen3-0.6b; do python3 scripts/fused_module.py bench/configs/$s-shaped.json -o $W/$s.mlir; done
{ echo "llama-3.2-1b l32k 32800 --kv-cache=f32"; echo "llama-3.2-1b l32kb 32800 --kv-cache=bf16";
  echo "qwen3-0.6b q32k 32800 --kv-cache=f32"; echo "qwen3-0.6b q32kb 32800 --kv-cache=bf16";
  echo "llama-3.2-1b l544 544 --kv-cache=f32"; echo "llama-3.2-1b l544n 544 --no-gemv-early-copy"; } |
  xargs -P 6 -L 1 bash -c 'timeout 200 '$N'/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --max-context=$2 $3 -o '$W'/$1.mk 2>&1 | grep -E "error|registers"'
ls $W/*.mk | wc -l
kc() { timeout 200 $N/tests/gpu/mk-task-kind-check AttentionChunk tests/fixtures/$1.onnx ${@:2} > $W/k.txt 2>&1; echo "kind-check $* rc=$? $(grep -c FAIL $W/k.txt) FAIL: $(grep 'AttentionChunk:' $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
kc llama3_ts17; kc llama3_ts17 --kv-cache=bf16; kc qwen3_ts17 --kv-cache=bf16
kc llama3_ts17 --max-context=4096 --num-sms=8 --longest-attention-chunk=1024
kc llama3_ts17 --max-context=4096 --num-sms=8 --longest-attention-chunk=1024 --kv-cache=bf16
kc qwen3_ts17 --max-context=4096 --num-sms=8 --longest-attention-chunk=1024 --kv-cache=bf16
gc() { timeout 150 $N/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep FAIL $W/g.txt | head -3; }
gc --toy --kv-cache=bf16; gc tests/fixtures/llama3_ts17.onnx --max-context=2048 --kv-cache=bf16
gc tests/fixtures/qwen3_ts17.onnx --max-context=64 --kv-cache=bf16; gc tests/fixtures/qwen2_ts17.onnx --max-context=64 --kv-cache=bf16
gc tests/fixtures/llama3_ts17.onnx --max-context=64; gc --toy
lg() { timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device $2 $3 --logits $4 > /dev/null || echo "FAILED $1 $2 $3"; }
for m in l32kb q32kb; do for at in 510 32700; do
  lg $m gpu "--start-position $at --tokens 1,7,42,3" $W/g.npy; lg $m cpu "--start-position $at --tokens 1,7,42,3" $W/c.npy
  echo "$m at $at-$((at+3)) GPU vs CPU: $(python3 scripts/compare_logits.py $W/g.npy $W/c.npy --rtol 1e-3)"; done; done
lg l544 gpu "--start-position 510 --tokens 1,7,42,3" $W/a.npy; lg l544n gpu "--start-position 510 --tokens 1,7,42,3" $W/b.npy
cmp $W/a.npy $W/b.npy && echo "l544: early copies on and off identical at 510-513"
run() { echo "$1 position $2: $(timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for p in 1 512 4096 32736; do run l32k $p; run l32kb $p; done
  for p in 4096 32736; do run q32k $p; run q32kb $p; done
  for p in 1 512; do run l544 $p; run l544n $p; done
done
for m in l544 l544n l32kb; do
  timeout 60 $N/runtime/mkrun/mkrun $W/$m.mk --device gpu --start-position 511 --prompt-tokens 1 -n 5 --trace $W/t.json > /dev/null
  $N/compiler/tools/mkc inspect $W/$m.mk --format=json > $W/g.json
  python3 bench/trace_summary.py $W/t.json $W/g.json > $OUT/trace-$m-512.txt 2>&1; echo "$m: $(head -1 $OUT/trace-$m-512.txt)"
  python3 bench/waterfall.py $W/t.json $W/g.json --layer 8 > $OUT/waterfall-$m.txt 2>&1 || tail -2 $OUT/waterfall-$m.txt
done
echo "done in $SECONDS s"
