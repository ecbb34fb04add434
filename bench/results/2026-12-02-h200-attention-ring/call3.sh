#!/usr/bin/env bash
# Where the staging ring's time goes: traces of the Llama-3.2-1B shape built
# for 32800 positions, old and new build, at positions 1 and 32735
# (bench/trace_summary.py), and the small positions timed again, old and new
# alternating three times.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in old new; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
for b in new old; do
  timeout 120 .gpu/$b/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --max-context=32800 -o $W/1b-$b.mk 2>&1 | grep -E "error"
  .gpu/$b/compiler/tools/mkc inspect $W/1b-$b.mk --format=json > $W/1b-$b.json
  for P in 1 32735; do
    timeout 60 .gpu/$b/runtime/mkrun/mkrun $W/1b-$b.mk --device gpu --start-position $P --prompt-tokens 1 -n 4 --trace $W/t.json > /dev/null
    python3 bench/trace_summary.py $W/t.json $W/1b-$b.json > $OUT/trace-$b-$P.txt 2>&1
  done
done
for r in 1 2 3; do for P in 1 512; do for b in old new; do
  echo "$b position $P: $(timeout 40 .gpu/$b/runtime/mkrun/mkrun $W/1b-$b.mk --device gpu --start-position $P --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"
done; done; done
echo done
