#!/usr/bin/env bash
# The landed form, to run before anything else on the next H200 call: the
# ring only for chunks of 256 positions or more, the register path below,
# and the merge's single round of loads when its chunks fit one batch.
# Not run yet (README.md).
#   1. the chunk kind on both paths (--num-sms=8 --longest-attention-chunk
#      =1024 cycles the ring) and the merge kind against the CPU reference;
#   2. scripts/compare_builds_gpu.sh: every fixture's logits and greedy
#      tokens bit for bit against the build before (old), then the 1B shape
#      built for 512 positions, its logits bit for bit and both timed;
#   3. SmolLM2-135M built for 528 at 480, old and new alternating; the 1B
#      shape built for 32800 at 32736 with its logits against the CPU.
# .gpu/old.tar.xz and .gpu/new.tar.xz: stripped build trees under old/ and
# new/ (compiler/tools/mkc, runtime/mkrun/mkrun, tests/gpu/mk-task-kind-check)
# of 1d214b4 and of the change.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in old new; do rm -rf .gpu/$b; tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/new
exec > >(tee $OUT/log.txt) 2>&1
for m in "AttentionChunk tests/fixtures/llama3_ts17.onnx" \
         "AttentionChunk tests/fixtures/llama3_ts17.onnx --max-context=4096 --num-sms=8 --longest-attention-chunk=1024" \
         "AttentionMerge tests/fixtures/qwen3_ts17.onnx --max-context=512"; do
  timeout 90 $N/tests/gpu/mk-task-kind-check $m > $W/k.txt 2>&1; echo "[$m] rc=$? | $(tail -1 $W/k.txt)"; done
timeout 300 scripts/compare_builds_gpu.sh .gpu/old .gpu/new $W/cmp 2>&1 | tail -20
run() { echo "$1 $2 position $3: $(timeout 30 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu --start-position $3 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/s.mlir
for b in new old; do timeout 60 .gpu/$b/compiler/tools/mkc compile $W/s.mlir --emit=mk --random-weights --max-context=528 -o $W/s-$b.mk 2>&1 | grep -E "error|spilled"; done
for r in 1 2; do run s old 480; run s new 480; done
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
timeout 60 $N/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --max-context=32800 -o $W/l-new.mk 2>&1 | grep -E "error|spilled"
timeout 30 $N/runtime/mkrun/mkrun $W/l-new.mk --device gpu --start-position 32700 --tokens 1,7,42,3 --logits $W/g.npy > /dev/null && timeout 60 $N/runtime/mkrun/mkrun $W/l-new.mk --device cpu --start-position 32700 --tokens 1,7,42,3 --logits $W/c.npy > /dev/null && python3 scripts/compare_logits.py $W/g.npy $W/c.npy --rtol 1e-3
run l new 32736
echo done
