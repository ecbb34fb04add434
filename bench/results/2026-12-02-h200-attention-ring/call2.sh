#!/usr/bin/env bash
# The context curve of the Llama-3.2-1B and Qwen3-0.6B shapes (random
# weights, built for 32800 positions) with the build before (old) and after
# (new) the staging ring, in one call: the streaming rate, the new build's
# logits against the CPU executor at position 32700, then mkrun's median
# ms/token over 32 steps from each position, old and new alternating.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in old new; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python3 -c "
import sys, subprocess; sys.path.insert(0, 'bench'); import floor
rate, _ = floor.streaming_rate('$W', lambda c: subprocess.run(c, check=True, capture_output=True, text=True).stdout)
print('streaming rate %.3f TB/s' % (rate / 1e12))"
for shape in llama-3.2-1b qwen3-0.6b; do
  python3 scripts/fused_module.py bench/configs/$shape-shaped.json -o $W/$shape.mlir
  for b in new old; do
    timeout 120 .gpu/$b/compiler/tools/mkc compile $W/$shape.mlir --emit=mk --random-weights --max-context=32800 -o $W/$shape-$b.mk 2>&1 | grep -E "wrote|error|spill"
  done
  N=.gpu/new/runtime/mkrun/mkrun
  timeout 60 $N $W/$shape-new.mk --device gpu --start-position 32700 --tokens 1,7,42,3 --logits $W/g.npy > /dev/null && timeout 120 $N $W/$shape-new.mk --device cpu --start-position 32700 --tokens 1,7,42,3 --logits $W/c.npy > /dev/null && python3 scripts/compare_logits.py $W/g.npy $W/c.npy --rtol 1e-3
  for P in 1 512 4096 32736; do
    for b in new old; do
      echo "$shape $b position $P: $(timeout 40 .gpu/$b/runtime/mkrun/mkrun $W/$shape-$b.mk --device gpu --start-position $P --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"
    done
  done
  rm -f $W/$shape-*.mk
done
echo "== racecheck, memcheck: llama3_ts17 built for 32768, 2 steps from 20000"
.gpu/new/compiler/tools/mkc compile tests/fixtures/llama3_ts17.onnx --emit=mk --max-context=32768 -o $W/l3.mk > /dev/null 2>&1
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 .gpu/new/runtime/mkrun/mkrun $W/l3.mk --device gpu --start-position 20000 --prompt-tokens 1,2 -n 1 > $W/cs.txt 2>&1
  echo "$tool rc=$? | $(grep -E 'SUMMARY' $W/cs.txt | tail -1)"; done
echo done
