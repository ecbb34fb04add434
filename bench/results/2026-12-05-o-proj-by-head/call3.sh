#!/usr/bin/env bash
# Call 3, binaries .gpu/b3 (as call 2) and .gpu/c2 (mkc with
# head-prefetch.patch, timing only: as each task starts, the loader warp
# asks L2 for the next task's weights when it is a HeadProjection tile, so
# that o_proj's weights stream while the SM's attention chunk runs). Builds
# for 544 of the 1B shape, Qwen3-0.6B and SmolLM2: merge tasks (d), by head
# (h), by head with the prefetch (p), at 40 and 480 (one round: little
# device time was left); a trace of the 1B shape's p at 480.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/b3 ] || tar -C .gpu -xJf .gpu/b3.tar.xz
[ -d .gpu/c2 ] || tar -C .gpu -xJf .gpu/c2.tar.xz
B=.gpu/b3
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for s in llama-3.2-1b smollm2-135m qwen3-0.6b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for f in d h p; do echo "$f llama-3.2-1b l"; echo "$f smollm2-135m s"; echo "$f qwen3-0.6b q"; done; } |
  xargs -P 9 -L 1 bash -c 'M=.gpu/b3; F=""; [ $0 != d ] && F=--o-proj-by-head; [ $0 = p ] && M=.gpu/c2; timeout 300 $M/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 $F -o '$W'/$2-$0.mk 2>&1 | grep -E "error|megakernel" | sed "s/^/$2-$0: /"'
echo "builds done at $SECONDS s"
run() { echo "$1 position $2: $(timeout 60 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1; do for f in d h p; do
  for m in l q s; do for x in 40 480; do run $m-$f $x; done; done
done; done
echo "timings done at $SECONDS s"
timeout 60 $B/runtime/mkrun/mkrun $W/l-p.mk --device gpu --start-position 480 --prompt-tokens 7 -n 3 --trace $W/trace-l-p.json > /dev/null
$B/compiler/tools/mkc inspect $W/l-p.mk --format=json -o $W/l-p.json
python3 bench/trace_summary.py --skip-steps 2 $W/trace-l-p.json $W/l-p.json > $OUT/trace-l-p.txt 2>&1; head -1 $OUT/trace-l-p.txt
echo "all done at $SECONDS s"
