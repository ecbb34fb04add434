#!/usr/bin/env bash
# The cause found in the schedule (not in the chunks' cost): in builds for
# 32800 positions an SM's two chunk tasks were chunk c of KV heads h and
# h + 4, so at short positions the chunks with work ran two to an SM, one
# behind the other. sched: the scheduler places an operation's chunks by
# chunk index (mid's kernel, a new schedule). Logits bit for bit against
# mid, GPU against CPU, mk-gpu-check on a fixture, then ms/token alternating.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in mid sched; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/sched
exec > >(tee $OUT/log.txt) 2>&1
timeout 120 $N/tests/gpu/mk-gpu-check tests/fixtures/qwen3_ts17.onnx --max-context=4096 > $W/g.txt 2>&1; echo "mk-gpu-check qwen3_ts17 4096 rc=$?"; grep FAIL $W/g.txt | head -5
for s in llama-3.2-1b qwen3-0.6b; do python3 scripts/fused_module.py bench/configs/$s-shaped.json -o $W/$s.mlir; done
{ for b in mid sched; do echo "llama-3.2-1b $b l32k"; echo "qwen3-0.6b $b q32k"; done; } |
  xargs -P 4 -L 1 bash -c 'timeout 150 .gpu/$1/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --max-context=32800 -o '$W'/$2-$1.mk 2>&1 | grep -E "error"'
for m in l32k q32k; do for b in mid sched; do
  timeout 30 .gpu/$b/runtime/mkrun/mkrun $W/$m-$b.mk --device gpu --start-position 32700 --tokens 1,7,42,3 --logits $W/g32k-$m-$b.npy > /dev/null
  timeout 30 .gpu/$b/runtime/mkrun/mkrun $W/$m-$b.mk --device gpu --tokens 1,7,42,3,99,5,11,64 --logits $W/g0-$m-$b.npy > /dev/null; done
  cmp $W/g32k-$m-mid.npy $W/g32k-$m-sched.npy && cmp $W/g0-$m-mid.npy $W/g0-$m-sched.npy && echo "$m: logits at 0-7 and 32700-32703, mid and sched identical"; done
timeout 100 $N/runtime/mkrun/mkrun $W/l32k-sched.mk --device cpu --tokens 1,7,42,3,99,5,11,64 --logits $W/c.npy > /dev/null && echo "1B at 0-7 GPU vs CPU: $(python3 scripts/compare_logits.py $W/g0-l32k-sched.npy $W/c.npy --rtol 1e-3)"
run() { echo "$1 $2 position $3: $(timeout 40 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu --start-position $3 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for p in 1 100 512 4096 32736; do for b in mid sched; do run l32k $b $p; done; done
  for p in 1 512; do for b in mid sched; do run q32k $b $p; done; done
done
echo done
