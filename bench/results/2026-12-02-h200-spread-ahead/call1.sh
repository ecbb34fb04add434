#!/usr/bin/env bash
# Two changes against b844481 (old), one call:
#  new:   a step spreads its positions over the chunks of one round over the
#         SMs (the attention operation's chunksPerRound, 16 for 8 KV heads on
#         132 SMs), not over all the compiled chunks (33 in a build for 32800)
#  ahead: new, built with --prefetch-ahead-bytes=N: while an attention task
#         waits, its SM asks L2 for its coming gemvs' weights
# Logits: new against old where the spans are equal (0-7, 32700-32703),
# GPU against the CPU executor where they differ (510-513), ahead against
# new bit for bit; then ms/token, alternating, two rounds; traces at 512.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in old new; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/new
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b qwen3-0.6b smollm2-135m; do python3 scripts/fused_module.py bench/configs/$s-shaped.json -o $W/$s.mlir; done
{ echo "llama-3.2-1b old l32k 32800"; echo "llama-3.2-1b new l32k 32800";
  echo "llama-3.2-1b new l32k-a256 32800 --prefetch-ahead-bytes=262144";
  echo "llama-3.2-1b old l544 544"; echo "llama-3.2-1b new l544-a128 544 --prefetch-ahead-bytes=131072";
  echo "llama-3.2-1b new l544-a256 544 --prefetch-ahead-bytes=262144";
  echo "qwen3-0.6b old q32k 32800"; echo "qwen3-0.6b new q32k 32800";
  echo "smollm2-135m old s528 528"; echo "smollm2-135m new s528-a256 528 --prefetch-ahead-bytes=262144"; } |
  xargs -P 10 -L 1 bash -c 'timeout 200 .gpu/$1/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --max-context=$3 $4 -o '$W'/$2-$1.mk 2>&1 | grep -E "error"'
ls $W/*.mk | wc -l
timeout 150 $N/tests/gpu/mk-gpu-check tests/fixtures/qwen3_ts17.onnx --max-context=4096 > $W/g.txt 2>&1; echo "mk-gpu-check qwen3_ts17 4096 rc=$?"; grep FAIL $W/g.txt | head -5
lg() { timeout 40 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu $3 --logits $4 > /dev/null || echo "FAILED $1 $2 $3"; }
for m in l32k q32k; do
  for b in old new; do lg $m $b "--start-position 32700 --tokens 1,7,42,3" $W/g32k-$m-$b.npy; lg $m $b "--tokens 1,7,42,3,99,5,11,64" $W/g0-$m-$b.npy; done
  cmp $W/g32k-$m-old.npy $W/g32k-$m-new.npy && cmp $W/g0-$m-old.npy $W/g0-$m-new.npy && echo "$m: logits at 0-7 and 32700-32703, old and new identical"
  lg $m new "--start-position 510 --tokens 1,7,42,3" $W/g510-$m.npy
  timeout 200 $N/runtime/mkrun/mkrun $W/$m-new.mk --device cpu --start-position 510 --tokens 1,7,42,3 --logits $W/c510-$m.npy > /dev/null && echo "$m new at 510-513 GPU vs CPU: $(python3 scripts/compare_logits.py $W/g510-$m.npy $W/c510-$m.npy --rtol 1e-3)"
done
for p in "l32k-a256 new" "l544-a256 new" "s528-a256 new"; do set -- $p; lg $1 $2 "--start-position 510 --tokens 1,7,42,3" $W/ga-$1.npy; done
lg l32k new "--start-position 510 --tokens 1,7,42,3" $W/gb-l32k.npy; cmp $W/ga-l32k-a256.npy $W/gb-l32k.npy && echo "l32k ahead and new identical at 510-513"
lg l544 old "--start-position 510 --tokens 1,7,42,3" $W/gb-l544.npy; cmp $W/ga-l544-a256.npy $W/gb-l544.npy && echo "l544 ahead (new) and old identical at 510-513"
lg s528 old "--start-position 510 --tokens 1,7,42,3" $W/gb-s528.npy; cmp $W/ga-s528-a256.npy $W/gb-s528.npy && echo "s528 ahead (new) and old identical at 510-513"
run() { echo "$1 $2 position $3: $(timeout 40 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu --start-position $3 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for p in 1 512; do run l32k old $p; run l32k new $p; run l32k-a256 new $p; run l544 old $p; run l544-a128 new $p; run l544-a256 new $p; done
  for p in 4096 32736; do run l32k old $p; run l32k new $p; run l32k-a256 new $p; done
  for p in 512 4096; do run q32k old $p; run q32k new $p; done
  for p in 1 480; do run s528 old $p; run s528-a256 new $p; done
done
for m in "l32k old" "l32k new" "l32k-a256 new" "l544 old" "l544-a256 new"; do set -- $m
  timeout 40 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu --start-position 511 --prompt-tokens 1 -n 5 --trace $W/t.json > /dev/null
  .gpu/$2/compiler/tools/mkc inspect $W/$1-$2.mk --format=json > $W/g.json
  python3 bench/trace_summary.py $W/t.json $W/g.json > $OUT/trace-$1-$2-512.txt 2>&1; echo "$1 $2: $(head -1 $OUT/trace-$1-$2-512.txt)"
  python3 bench/waterfall.py $W/t.json $W/g.json --layer 8 > $OUT/waterfall-$1-$2.txt 2>&1 || tail -2 $OUT/waterfall-$1-$2.txt
done
echo done
