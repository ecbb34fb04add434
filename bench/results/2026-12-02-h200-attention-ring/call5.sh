#!/usr/bin/env bash
# The landed form: the ring only for chunks of 256 positions or more, the
# register path below. The chunk kind on both paths, the SmolLM2-135M shape
# built for 528 positions (register path) old and new, the 1B shape built
# for 32800 (ring) at 32736 with its logits against the CPU executor.
# Not run yet: the session's device time ran out before it (README.md).
# .gpu/old.tar.xz and .gpu/new.tar.xz: stripped build trees (compiler/tools/mkc,
# runtime/mkrun/mkrun, tests/gpu/mk-task-kind-check) of 1d214b4 and of this
# change, under old/ and new/.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in old new; do rm -rf .gpu/$b; tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/new
exec > >(tee $OUT/log.txt) 2>&1
for m in "tests/fixtures/llama3_ts17.onnx" "tests/fixtures/llama3_ts17.onnx --max-context=4096 --num-sms=8 --longest-attention-chunk=1024"; do
  timeout 60 $N/tests/gpu/mk-task-kind-check AttentionChunk $m > $W/k.txt 2>&1; echo "AttentionChunk [$m] rc=$? | $(tail -1 $W/k.txt)"; done
run() { echo "$1 $2 position $3: $(timeout 30 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu --start-position $3 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/s.mlir
for b in new old; do timeout 60 .gpu/$b/compiler/tools/mkc compile $W/s.mlir --emit=mk --random-weights --max-context=528 -o $W/s-$b.mk 2>&1 | grep error; done
for r in 1 2; do run s old 480; run s new 480; done
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
timeout 60 $N/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --max-context=32800 -o $W/l-new.mk 2>&1 | grep error
timeout 30 $N/runtime/mkrun/mkrun $W/l-new.mk --device gpu --start-position 32700 --tokens 1,7,42,3 --logits $W/g.npy > /dev/null && timeout 60 $N/runtime/mkrun/mkrun $W/l-new.mk --device cpu --start-position 32700 --tokens 1,7,42,3 --logits $W/c.npy > /dev/null && python3 scripts/compare_logits.py $W/g.npy $W/c.npy --rtol 1e-3
run l new 32736
echo done
