#!/usr/bin/env bash
# Two kernel options against the default, each in the same call, one binary
# (.gpu/m1, main's build): (1) --weight-l2=evict-first (e) against normal (n) on builds
# for 544 positions: the policy changes no arithmetic, so the logits must be
# the same bits; (2) --chunk-attention=tensor-cores (m) against cuda-cores
# (c) on builds for 32800 positions (long chunks staged): the kind checks
# against the CPU executor, the logits against the CPU executor and the
# cuda-cores build, then the timings.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
B=m1; [ -d .gpu/$B ] || tar -C .gpu -xJf .gpu/$B.tar.xz
N=.gpu/$B; M=$N/compiler/tools/mkc; R=$N/runtime/mkrun/mkrun
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
for s in llama-3.2-1b smollm2-135m qwen3-0.6b layer-cost-64x256; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for p in n e; do echo "$p llama-3.2-1b l 544 --weight-l2"; echo "$p smollm2-135m s 544 --weight-l2"; echo "$p qwen3-0.6b q 544 --weight-l2"; echo "$p layer-cost-64x256 t 544 --weight-l2"; done
  for p in c m; do echo "$p llama-3.2-1b L 32800 --chunk-attention"; echo "$p qwen3-0.6b Q 32800 --chunk-attention"; done; } |
  xargs -P 12 -L 1 bash -c 'case $0 in n) P=normal;; e) P=evict-first;; c) P=cuda-cores;; m) P=tensor-cores;; esac; timeout 300 '$M' compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 $4=$P -o '$W'/$2-$0.mk 2>&1 | grep -E "error|registers" | sed "s/^/$2-$0: /" | sed "s/bytes of shared.*spilled/.../"' &
CP=$!
kc() { timeout 150 $N/tests/gpu/mk-task-kind-check $@ > $W/k.txt 2>&1; echo "kind-check $* rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"; grep FAIL $W/k.txt | head -3; }
kc Gemv tests/fixtures/llama3_ts17.onnx --weight-l2=evict-first
for f in llama3_ts17 qwen3_ts17 qwen2_dynamo18; do kc AttentionChunk tests/fixtures/$f.onnx --max-context=4000 --num-sms=8 --kv-cache=bf16 --chunk-attention=tensor-cores; done
wait $CP
ls $W/*.mk | wc -l
lg() { timeout 150 $R $W/$1.mk --device $2 --start-position $4 --tokens 1,7,42,9 --logits $3 > /dev/null 2>&1 || echo "FAILED $1 $2"; }
rel() { python3 -c "import numpy as n,sys;a=n.load(sys.argv[1]);b=n.load(sys.argv[2]);print('$1: max err %.2e of max |logit|, argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))" $2 $3; }
for m in l s q t; do
  lg $m-e gpu $W/a.npy 100; lg $m-e gpu $W/c.npy 100
  cmp -s $W/a.npy $W/c.npy && echo "$m-e logits bit-identical run to run" || echo "$m-e logits DIFFER run to run"
  lg $m-n gpu $W/d.npy 100; cmp -s $W/a.npy $W/d.npy && echo "$m-e logits bit-identical to $m-n's" || rel "$m-e vs $m-n" $W/a.npy $W/d.npy
done
for m in L Q; do
  lg $m-m gpu $W/a.npy 30000; lg $m-m gpu $W/c.npy 30000
  cmp -s $W/a.npy $W/c.npy && echo "$m-m logits bit-identical run to run" || echo "$m-m logits DIFFER run to run"
  lg $m-c gpu $W/d.npy 30000; rel "$m-m vs $m-c at 30000" $W/a.npy $W/d.npy
done
lg Q-m cpu $W/b.npy 30000; rel "Q-m GPU vs CPU executor at 30000" $W/a.npy $W/b.npy; rel "Q-c GPU vs CPU executor at 30000" $W/d.npy $W/b.npy
# Timings only once the checks run beside this call (call1-families.sh) are done.
while [ -e $W/families.running ]; do sleep 1; done
run() { echo "$1 position $2: $(timeout 60 $R $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for m in L Q; do for p in c m; do for x in 512 4096 16000 32700; do run $m-$p $x; done; done; done
  for m in l s q; do for p in n e; do for x in 1 480; do run $m-$p $x; done; done; done
  for p in n e; do run t-$p 1; done
done
for m in l s q; do for p in n e; do run $m-$p 480; done; done
for m in L-c L-m; do
  timeout 60 $R $W/$m.mk --device gpu --start-position 32700 --prompt-tokens 1 -n 9 --trace $W/$m.json > /dev/null
  $M inspect $W/$m.mk --format=json > $W/$m.inspect.json
  python3 bench/trace_summary.py $W/$m.json $W/$m.inspect.json > $OUT/trace-$m.txt 2>&1; echo "trace $m: $(head -1 $OUT/trace-$m.txt)"
done
timeout 100 $N/tests/gpu/mk-task-kind-check AttentionChunk $W/llama-3.2-1b.mlir --max-context=32800 --kv-cache=bf16 --chunk-attention=tensor-cores > $W/k.txt 2>&1; echo "kind-check 1B 32800 tensor-cores rc=$? $(grep -c FAIL $W/k.txt) FAIL; $(tail -1 $W/k.txt)"
